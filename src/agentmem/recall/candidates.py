"""A memory on its way through recall, carrying what each stage found."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentmem.types import Memory


def cosine_relevance(cosine: float) -> float:
    """Map a MiniLM cosine to [0, 1]: unrelated text sits near 0.1, paraphrases above 0.6."""
    return min(1.0, max(0.0, (cosine - 0.1) / 0.6))


@dataclass(slots=True)
class StrategyHit:
    """One strategy's verdict on one memory: a value, never changed once made (not frozen: a
    frozen dataclass takes five times as long to build, and a recall builds one per hit of
    every arm, ~200).

    Attributes:
        memory_id: The memory found.
        rank: 1-based rank within the strategy's list.
        score: The strategy's raw score (cosine, BM25, activation, closeness).
        normalized: The raw score mapped to [0, 1] for this query (reranker input).
        details: Strategy-specific facts shown in ``strategy_details`` (graph distance, ...).
    """

    memory_id: str
    rank: int
    score: float
    normalized: float
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Candidate:
    """A fused candidate: the memory plus every strategy hit that found it.

    ``cosine`` is the query's cosine similarity with the memory's stored vector, also for a
    candidate that only another arm returned (None when the semantic arm did not run).
    ``piece_cosine`` is the query's cosine with the closest of the memory's pieces, its
    sentences embedded alone (``retain/pieces.py``; None for a memory without pieces).
    ``informative_coverage`` is the share of the query's information the memory's own text
    holds: its content words weighted by their idf in the bank's keyword statistics, so a
    word most memories hold counts little (None when the keyword arm did not run).
    ``entity_kinds`` are the ``(name, kind)`` pairs of the memory's entities. ``reasons`` are
    what the reranker saw in the memory, in words (shown in ``strategy_details["rerank"]``).
    ``superseded_by`` / ``supersedes``: newer / older memories of the same subject and
    attribute (``supersedes`` links, see ``recall/supersession.py``). ``memory`` may be the
    value the bank's in-process rows keep: read it, never change its metadata (recall returns
    copies).
    """

    memory: Memory
    hits: dict[str, StrategyHit] = field(default_factory=dict)
    rrf: float = 0.0
    cosine: float | None = None
    piece_cosine: float | None = None
    informative_coverage: float | None = None
    entity_kinds: tuple[tuple[str, str], ...] = ()
    relevance: float = 0.0
    reasons: list[str] = field(default_factory=list)
    superseded_by: list[str] = field(default_factory=list)
    supersedes: list[str] = field(default_factory=list)
