"""Cosines on one scale: every cosine threshold and weight of recall and retain was set on
MiniLM's, and other embedders place the same pairs elsewhere.

Embedders differ in where their cosines sit: a question and an unrelated chat turn are at
about 0.23 with all-MiniLM-L6-v2 but near 0.78 with multilingual-e5 (whose cosines between
any two texts are high). The calibrated reranker's cosine weight, the semantic arm's
normalisation, the graph's entry similarity, the temporal arm's cosine factor and the
semantic-link threshold all read MiniLM's scale. An embedder with a ``cosine_levels``
attribute ``(unrelated, evidence)`` — the median cosine of a question with the turns that do
not answer it and with those that do — has its cosines mapped linearly so that those two
levels land on MiniLM's (:data:`REFERENCE_LEVELS`); an embedder without one is used as it is.
Both pairs of levels are measured the same way on LoCoMo conversations 1-5.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from agentmem.errors import InvalidInputError

#: MiniLM's levels (median question–turn cosine of non-evidence and of evidence turns).
REFERENCE_LEVELS = (0.234, 0.480)


class CosineScale:
    """The linear map of an embedder's cosines onto MiniLM's scale (identity for MiniLM and
    any embedder without ``cosine_levels``).

    Raises:
        InvalidInputError: ``cosine_levels`` is not two finite numbers, unrelated first and
            lower.
    """

    __slots__ = ("offset", "slope")

    def __init__(self, embedder: Any) -> None:
        levels = getattr(embedder, "cosine_levels", None)
        if levels is None:
            self.slope, self.offset = 1.0, 0.0
            return
        try:
            unrelated, evidence = (float(level) for level in levels)
        except (TypeError, ValueError) as exc:
            raise InvalidInputError(f"cosine_levels must be two numbers, got {levels!r}") from exc
        if not (math.isfinite(unrelated) and math.isfinite(evidence) and unrelated < evidence):
            raise InvalidInputError(
                f"cosine_levels must be (unrelated, evidence) with unrelated < evidence, got "
                f"{levels!r}"
            )
        low, high = REFERENCE_LEVELS
        self.slope = (high - low) / (evidence - unrelated)
        self.offset = low - unrelated * self.slope

    def __call__(self, cosine: float) -> float:
        """One cosine on MiniLM's scale."""
        return self.offset + self.slope * cosine

    def array(self, cosines: np.ndarray) -> np.ndarray:
        """Many cosines on MiniLM's scale."""
        return (
            cosines
            if self.slope == 1.0 and self.offset == 0.0
            else self.offset + self.slope * cosines
        )
