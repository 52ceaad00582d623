"""Composite scoring (HEBBS): relevance, recency, importance and reinforcement, weighted."""

from __future__ import annotations

import math
from collections.abc import Iterable
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


def composite_scores(
    scored: Iterable[tuple[Memory, float]],
    weights: ScoringWeights,
    now: datetime,
    window_days: float,
    cap: int,
) -> list[float]:
    """``signals(memory, relevance, ...).composite(weights)`` of each (memory, relevance).

    Recall scores every candidate (~50) to return ten; the calls and tuples of
    :func:`signals` were most of that cost, so this does the same arithmetic inline, in the
    same order (the same floats), and takes each access count's reinforcement once.
    """
    w_relevance, w_recency = weights.w_relevance, weights.w_recency
    w_importance, w_reinforcement = weights.w_importance, weights.w_reinforcement
    total = weights.total
    log_cap = math.log2(1 + cap)
    reinforcements: dict[int, float] = {}
    composites = []
    for memory, relevance in scored:
        count = memory.access_count
        reinforced = reinforcements.get(count)
        if reinforced is None:
            reinforced = reinforcements[count] = min(1.0, math.log2(1 + max(0, count)) / log_cap)
        age_days = (now - memory.mentioned_at).total_seconds() / 86_400
        composites.append(
            (
                w_relevance * min(1.0, max(0.0, relevance))
                + w_recency * min(1.0, max(0.0, 1.0 - age_days / window_days))
                + w_importance * memory.importance
                + w_reinforcement * reinforced
            )
            / total
        )
    return composites
