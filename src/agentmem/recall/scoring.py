"""Composite scoring (HEBBS): relevance, recency, importance and reinforcement, weighted."""

from __future__ import annotations

import math
from datetime import datetime
from typing import NamedTuple

from agentmem.config import ScoringWeights
from agentmem.types import Memory


class Signals(NamedTuple):
    """The four signals of one memory, each in [0, 1] (a tuple: every recall makes one per
    candidate, several times faster than a frozen dataclass)."""

    relevance: float
    recency: float
    importance: float
    reinforcement: float

    def composite(self, weights: ScoringWeights) -> float:
        """Weighted mean of the signals (weights are divided by their sum)."""
        return (
            weights.w_relevance * self.relevance
            + weights.w_recency * self.recency
            + weights.w_importance * self.importance
            + weights.w_reinforcement * self.reinforcement
        ) / weights.total


def recency(mentioned_at: datetime, now: datetime, window_days: float) -> float:
    """1 for a memory learned now, falling linearly to 0 at ``window_days`` old.

    A memory "from the future" of ``now`` (recall with an earlier ``now``) counts as new.
    """
    age_days = (now - mentioned_at).total_seconds() / 86_400
    return min(1.0, max(0.0, 1.0 - age_days / window_days))


def reinforcement(access_count: int, cap: int) -> float:
    """log2(1 + access_count) / log2(1 + cap), capped at 1."""
    return min(1.0, math.log2(1 + max(0, access_count)) / math.log2(1 + cap))


def signals(
    memory: Memory, relevance: float, now: datetime, window_days: float, cap: int
) -> Signals:
    """The four signals of a memory for one recall."""
    return Signals(
        relevance=min(1.0, max(0.0, relevance)),
        recency=recency(memory.mentioned_at, now, window_days),
        importance=memory.importance,
        reinforcement=reinforcement(memory.access_count, cap),
    )
