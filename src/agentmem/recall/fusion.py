"""Reciprocal Rank Fusion: merge the strategies' lists into one candidate order.

RRF decides *which* memories are candidates and breaks ties; it does not decide relevance.
Over the top ten it is nearly flat (1/61 … 1/70), so scoring on it alone would let recency
decide the order (research/retrieval-lessons.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from agentmem.recall.candidates import StrategyHit


def reciprocal_rank_fusion(
    ranked_lists: Mapping[str, Sequence[StrategyHit]], k: int = 60
) -> list[tuple[str, float]]:
    """Memory ids with their RRF score Σ 1/(k + rank), best first (ties: first seen)."""
    scores: dict[str, float] = {}
    for hits in ranked_lists.values():
        for hit in hits:
            scores[hit.memory_id] = scores.get(hit.memory_id, 0.0) + 1.0 / (k + hit.rank)
    return sorted(scores.items(), key=lambda item: item[1], reverse=True)
