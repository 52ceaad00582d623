"""Fit ranked hits into a token budget (cl100k_base tokens of each memory's text).

Hits that do not fit are skipped, not a stop at the first misfit, so one long memory cannot
hide the short ones ranked after it; the top hit is always returned, truncated when it alone
exceeds the budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from agentmem.models.tokens import count_tokens, truncate_to_tokens
from agentmem.types import RecallHit


def fit_to_budget(
    hits: Sequence[RecallHit], max_tokens: int
) -> tuple[list[RecallHit], int, tuple[str, ...]]:
    """Return (kept hits, their total tokens, ids of the hits skipped)."""
    kept: list[RecallHit] = []
    dropped: list[str] = []
    total = 0
    for position, hit in enumerate(hits):
        tokens = count_tokens(hit.memory.text)
        if total + tokens <= max_tokens:
            # Built, not ``replace``d: under half the cost, for every hit of every recall.
            kept.append(RecallHit(hit.memory, hit.score, hit.strategy_details, tokens))
            total += tokens
        elif position == 0:
            text = truncate_to_tokens(hit.memory.text, max_tokens)
            tokens = count_tokens(text)
            details = {**hit.strategy_details, "budget": {"truncated": True}}
            kept.append(
                replace(
                    hit,
                    memory=replace(hit.memory, text=text),
                    tokens=tokens,
                    strategy_details=details,
                )
            )
            total += tokens
        else:
            dropped.append(hit.memory.id)
    return kept, total, tuple(dropped)
