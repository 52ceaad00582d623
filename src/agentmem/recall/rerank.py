"""Rerankers turn fused candidates into a relevance in [0, 1].

The offline default (:class:`ScoreFusionReranker`) needs no model: it blends each arm's raw
score, normalised per query, so a memory that is both the best keyword match and close in
meaning scores near 1, and one found weakly by a single arm scores low.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict

from agentmem.config import FusionWeights
from agentmem.recall.candidates import Candidate


def arm_weights(weights: FusionWeights | Mapping[str, float] | None) -> dict[str, float]:
    """Fusion weights as a dict of arm name to weight (None: the defaults)."""
    if weights is None:
        weights = FusionWeights()
    if isinstance(weights, FusionWeights):
        weights = asdict(weights)
    return dict(weights)


class ScoreFusionReranker:
    """Relevance = weighted mean of the arms' normalised raw scores.

    An arm that found some candidates but not this one contributes 0 for it; arms that found
    nothing are left out of the mean.

    Args:
        weights: Weight per arm; arms without a weight count 0.5.
    """

    name = "score-fusion"

    def __init__(self, weights: FusionWeights | Mapping[str, float] | None = None) -> None:
        self._weights = arm_weights(weights)

    def rerank(self, query: str, candidates: Sequence[Candidate]) -> list[float]:
        """One relevance in [0, 1] per candidate."""
        arms = sorted({name for c in candidates for name in c.hits})
        weights = {arm: self._weights.get(arm, 0.5) for arm in arms}
        total = sum(weights.values()) or 1.0
        # Arm by arm over all candidates, from 0 as ``sum`` adds (the same floats): no
        # generator per candidate.
        sums: list[float] = [0] * len(candidates)
        for arm, w in weights.items():
            for i, c in enumerate(candidates):
                hit = c.hits.get(arm)
                sums[i] += w * (0.0 if hit is None else hit.normalized)
        return [s / total for s in sums]
