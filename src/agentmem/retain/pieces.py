"""A memory's pieces: the sentences of a text that says several things, each embedded alone.

One vector for a chat turn that carries several pieces of news ("Tim: Hey! So much has
happened. Last week I scored 40 points in the final.") blurs them: the sentence that answers a
question is closer to it than the whole turn is. Retain therefore embeds each piece of such a
text as well, with the speaker's prefix ("Tim: Last week I scored 40 points in the final."),
and stores the pieces' unit vectors with the memory (``memories.piece_vectors``); the
reranker reads how much closer the best piece is than the whole (``recall/calibrated.py``).

A text is cut at sentence ends and before a bracketed aside ("[shared an image: ...]").
Pieces of fewer than :data:`MIN_WORDS` words are dropped, and a text left with fewer than two
keeps none: its whole vector already says what its one piece says. Only facts get pieces, not
observations (whose text is rewritten as they grow) nor the clause parts of a turn.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from agentmem.errors import InvalidInputError

if TYPE_CHECKING:
    from agentmem.protocols import Embedder

#: Words a piece needs ("I love it!" says nothing alone worth a vector of its own).
MIN_WORDS = 3
#: Pieces kept per memory (the first ones): bounds the embedding work of one long text.
MAX_PIECES = 16
#: Kinds of memory that get pieces.
PIECE_FACT_TYPES = frozenset({"world", "experience", "opinion"})
# "Name: " at the start of a chat turn's fact (retain/extract.py): up to four words, no colon.
_SPEAKER = re.compile(r"[^\s:]+(?: [^\s:]+){0,3}: (?=\S)")
_CUT = re.compile(r"(?<=[.!?…])\s+|\s+(?=\[)")
# Pieces are stored as little-endian float16 unit vectors: a cosine to within ~1e-3.
_DTYPE = np.dtype("<f2")


def piece_texts(text: str) -> list[str]:
    """The texts to embed for ``text``'s pieces, each with its speaker prefix; none for a
    text with fewer than two pieces."""
    prefix = match.group(0) if (match := _SPEAKER.match(text)) else ""
    body = text[len(prefix) :]
    pieces = [p for p in (s.strip() for s in _CUT.split(body)) if len(p.split()) >= MIN_WORDS]
    if len(pieces) < 2:
        return []
    return [prefix + piece for piece in pieces[:MAX_PIECES]]


def encode_pieces(vectors: np.ndarray) -> str:
    """Piece vectors (one per row) as stored: base64 of their unit vectors in float16."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    units = vectors / np.maximum(norms, 1e-12)
    return base64.b64encode(units.astype(_DTYPE).tobytes()).decode("ascii")


def decode_pieces(text: str, dimension: int) -> np.ndarray:
    """Stored piece vectors as a (pieces, dimension) float32 array.

    Raises:
        InvalidInputError: ``text`` is no base64 of whole, finite vectors of ``dimension``.
    """
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError, TypeError):
        raise InvalidInputError("piece vectors are not base64") from None
    width = dimension * _DTYPE.itemsize
    if not raw or len(raw) % width or len(raw) // width > MAX_PIECES:
        raise InvalidInputError(
            f"piece vectors hold {len(raw)} bytes: not 1 to {MAX_PIECES} vectors of {dimension}"
        )
    vectors = np.frombuffer(raw, dtype=_DTYPE).reshape(-1, dimension).astype(np.float32)
    if not np.isfinite(vectors).all():
        raise InvalidInputError("piece vectors hold a value that is not finite")
    return vectors


def readable(stored: str, dimension: int) -> bool:
    """Whether a stored value decodes (see :func:`decode_pieces`)."""
    try:
        decode_pieces(stored, dimension)
    except InvalidInputError:
        return False
    return True


@dataclass(frozen=True, slots=True)
class Embedded:
    """The vectors of texts, and their pieces' vectors as stored (None: no pieces)."""

    vectors: np.ndarray
    pieces: list[str | None]

    def subset(self, keep: list[int]) -> Embedded:
        return Embedded(self.vectors[keep], [self.pieces[i] for i in keep])


def embed_with_pieces(
    embed: Callable[[list[str]], np.ndarray], texts: list[str], wanted: Sequence[bool]
) -> Embedded:
    """The texts' vectors and the pieces' of the ``wanted`` ones, in one call of ``embed``."""
    cut = [piece_texts(text) if want else [] for text, want in zip(texts, wanted, strict=True)]
    vectors = embed([*texts, *(piece for pieces in cut for piece in pieces)])
    return Embedded(vectors[: len(texts)], _stored(cut, vectors[len(texts) :]))


def stored_pieces(embedder: Embedder, texts: list[str]) -> list[str | None]:
    """The texts' pieces' vectors as stored (None for a text without pieces)."""
    cut = [piece_texts(text) for text in texts]
    flat = [piece for pieces in cut for piece in pieces]
    vectors = np.asarray(embedder.embed(flat), np.float32) if flat else np.zeros((0, 0))
    return _stored(cut, vectors)


def _stored(cut: list[list[str]], vectors: np.ndarray) -> list[str | None]:
    """Each text's slice of the pieces' ``vectors`` (in the order of ``cut``), encoded."""
    stored: list[str | None] = []
    start = 0
    for pieces in cut:
        stored.append(encode_pieces(vectors[start : start + len(pieces)]) if pieces else None)
        start += len(pieces)
    return stored
