"""Deterministic fakes for tests: yours and ours.

They satisfy agentmem's Protocols (see :mod:`agentmem.protocols`), load no model and touch no
network, and give the same output for the same input in every process, on every machine. Use
them where a test is about your code's use of memory, not about embedding quality::

    from agentmem import AgentMemory
    from agentmem.testing import HashEmbedder

    memory = AgentMemory(tmp_path, embedder=HashEmbedder())

Available fakes:

- :class:`HashEmbedder`: an :class:`~agentmem.protocols.Embedder` built on feature hashing.
  Texts that share words are similar; texts that share nothing are nearly orthogonal.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from agentmem.errors import InvalidInputError

__all__ = ["HashEmbedder"]

_WORD = re.compile(r"\w+")
_WORD_WEIGHT = 1.0
# Trigrams only nudge near-miss spellings ("memory" / "memories") together; words dominate.
_TRIGRAM_WEIGHT = 0.25
# Stands in for a text with no words, so its vector still has unit length.
_EMPTY_FEATURE = "\x00empty"


class HashEmbedder:
    """A fake :class:`~agentmem.protocols.Embedder`: hashed bag of words and character trigrams.

    Each lowercase word adds 1.0, and each character trigram of the word (padded with ``#``)
    adds 0.25, to one coordinate chosen by a blake2b hash of the feature. All coordinates are
    non-negative, so texts sharing a word always have a positive cosine, and more shared words
    give a higher one. The hash is unsalted, so vectors are identical across processes.

    Args:
        dimension: Vector length. Smaller means more hash collisions between unrelated words.

    Raises:
        InvalidInputError: ``dimension`` is below 1.
    """

    def __init__(self, dimension: int = 256) -> None:
        if dimension < 1:
            raise InvalidInputError(f"dimension must be at least 1, got {dimension}")
        self._dimension = dimension

    @property
    def name(self) -> str:
        """``hash-<dimension>``."""
        return f"hash-{self._dimension}"

    @property
    def dimension(self) -> int:
        """Length of every vector."""
        return self._dimension

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed documents.

        Args:
            texts: The texts; an empty sequence gives an empty array.

        Returns:
            float32 array of shape ``(len(texts), dimension)``, rows L2-normalised.

        Raises:
            InvalidInputError: ``texts`` is a string or holds a non-string.
        """
        if isinstance(texts, str):
            raise InvalidInputError("texts must be a sequence of strings, not a single string")
        out = np.zeros((len(texts), self._dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            if not isinstance(text, str):
                raise InvalidInputError(f"texts[{row}] must be a str, got {type(text).__name__}")
            for feature, weight in _features(text):
                out[row, _bucket(feature, self._dimension)] += weight
        out /= np.linalg.norm(out, axis=1, keepdims=True)
        return out

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query.

        Args:
            text: The query.

        Returns:
            float32 vector of shape ``(dimension,)``, L2-normalised.

        Raises:
            InvalidInputError: ``text`` is not a string.
        """
        if not isinstance(text, str):
            raise InvalidInputError(f"query must be a str, got {type(text).__name__}")
        return self.embed([text])[0]


def _features(text: str) -> list[tuple[str, float]]:
    words = _WORD.findall(text.lower())
    if not words:
        return [(_EMPTY_FEATURE, _WORD_WEIGHT)]
    features: list[tuple[str, float]] = []
    for word in words:
        # Prefixes keep a word and a trigram that spell the same ("cat" / "#ca") apart.
        features.append(("w:" + word, _WORD_WEIGHT))
        padded = f"#{word}#"
        features.extend(("t:" + padded[i : i + 3], _TRIGRAM_WEIGHT) for i in range(len(padded) - 2))
    return features


@lru_cache(maxsize=65_536)
def _bucket(feature: str, dimension: int) -> int:
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % dimension
