"""Memory-to-memory links found at retain: semantic neighbours, cue-phrase causes, explicit edges.

Planned in two steps because memory ids exist only inside the retain transaction:
:func:`plan_links` runs before it (vector look-ups and clause embeddings may be slow or fail,
and nothing must be written then), and :meth:`LinkPlan.rows` turns the plan into link rows
inside it, keeping only targets that still exist.

* **semantic**: each new fact links to its nearest earlier memories (and earlier facts of the
  same call) with cosine ≥ ``semantic_link_threshold``, at most ``semantic_link_k``; weight =
  cosine. Stored once per pair (new → old); walks treat it as symmetric. Parts (clauses split
  off a chat turn) get none: they join the graph through their turn only.
* **caused_by** from cue phrases, offline and conservative (besides the cause clauses the
  extractor stores as facts of their own, ``retain/causes.py``):
  a fact opening with an effect marker ("As a result", "That's why", "Therefore", ...) is
  caused by the fact before it; one opening with a cause marker ("Because ...", "That's
  because ...") causes the fact before it; a fact holding a cause clause ("... because the
  vendor was late", "due to ...", "after the launch failed, she ...", "... led to ...") is
  caused by the earlier memory that best matches the clause, when the match is close
  (``causal_clause_threshold``). Cue-phrase links weigh less than explicit ones.
* **explicit**: ``retain(..., links=[("caused_by", memory_id, 0.9)])`` links every new fact
  to an existing memory.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence, Set
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from agentmem.errors import InvalidInputError, shown
from agentmem.links import normalize_kind, validate_weight
from agentmem.models.cosine import CosineScale
from agentmem.retain.causes import BECAUSE, EFFECT_OPENERS, cause_clauses

if TYPE_CHECKING:
    from agentmem.engine import Engine
    from agentmem.retain.facts import ExtractedFact

# Weight of a cue-phrase link between neighbouring facts: weaker evidence than an explicit link.
CUE_LINK_WEIGHT = 0.8
_SPEAKER = re.compile(r"^[^:\n]{1,80}:\s+")
_CAUSE_OPENERS = re.compile(
    rf"^(?:{BECAUSE}|that'?s because|it'?s because|it was because|the reason (?:is|was))\b",
    re.IGNORECASE,
)
# A cause clause inside a fact; group "cause" is the clause to match against earlier memories.
_CAUSE_CLAUSES = (
    re.compile(rf"\b(?:{BECAUSE}(?: of)?|due to|owing to)\s+(?P<cause>[^.;!?]{{8,160}})", re.I),
    re.compile(
        r"\bafter\s+(?P<cause>[^,.;!?]{8,160}),\s*(?:she|he|they|we|i|it|the\b)", re.IGNORECASE
    ),
    re.compile(r"(?P<cause>[^.;!?]{8,160}?)\s+(?:led to|resulted in|caused)\b", re.IGNORECASE),
)


def validate_explicit_links(links: object) -> list[tuple[str, str, float]]:
    """``retain(links=...)``: (kind, target memory id[, weight]) triples, validated.

    Raises:
        InvalidInputError: Malformed entries, unknown kinds, bad weights.
    """
    if links is None:
        return []
    if isinstance(links, str | bytes) or not isinstance(links, Iterable):
        raise InvalidInputError("links must be a list of (kind, memory_id[, weight]) tuples")
    result: list[tuple[str, str, float]] = []
    for entry in links:
        if not isinstance(entry, tuple | list) or len(entry) not in (2, 3):
            raise InvalidInputError(f"link {shown(entry)} must be (kind, memory_id[, weight])")
        kind = normalize_kind(entry[0])
        target = entry[1]
        if not isinstance(target, str) or not target:
            raise InvalidInputError(f"link target must be a memory id, got {shown(target)}")
        weight = validate_weight(entry[2]) if len(entry) == 3 else 1.0
        result.append((kind, target, weight))
    return result


@dataclass(frozen=True, slots=True)
class LinkPlan:
    """Links of one retain call, by fact index, before the facts have ids.

    A target is a fact index (``int``, a fact of this call) or an existing memory id (``str``).
    """

    semantic: list[tuple[int, int | str, float]] = field(default_factory=list)
    causal: list[tuple[int, int | str, float]] = field(default_factory=list)
    explicit: list[tuple[str, str, float]] = field(default_factory=list)

    def existing_targets(self) -> set[str]:
        """Ids of existing memories the plan links to (to check they still exist)."""
        found = {t for _, t, _ in (*self.semantic, *self.causal) if isinstance(t, str)}
        return found | {t for _, t, _ in self.explicit}

    def rows(
        self, memory_ids: Sequence[str], alive: set[str], parts: Set[str] = frozenset()
    ) -> list[tuple[str, str, str, float]]:
        """(src, dst, kind, weight) rows; links to memories not in ``alive`` are dropped, and
        semantic links to stored ``parts`` (a part joins the graph through its whole only)."""

        def resolve(target: int | str, kind: str) -> str | None:
            if isinstance(target, int):
                return memory_ids[target]
            if kind == "semantic" and target in parts:
                return None
            return target if target in alive else None

        rows: list[tuple[str, str, str, float]] = []
        for kind, links in (("semantic", self.semantic), ("caused_by", self.causal)):
            for index, target, weight in links:
                dst = resolve(target, kind)
                if dst is not None and dst != memory_ids[index]:
                    rows.append((memory_ids[index], dst, kind, round(float(weight), 4)))
        for kind, target, weight in self.explicit:
            if target in alive:
                rows.extend((src, target, kind, weight) for src in memory_ids)
        return list({(r[0], r[1], r[2]): r for r in rows}.values())


#: Rows of new facts compared with the call's earlier facts at once, for semantic links.
_SIMILARITY_ROWS = 512


def plan_links(
    engine: Engine,
    collection: str,
    facts: Sequence[ExtractedFact],
    vectors: np.ndarray,
    explicit: list[tuple[str, str, float]],
) -> LinkPlan:
    """Find the links of new facts (see the module docstring); writes nothing."""
    if not facts:
        return LinkPlan(explicit=explicit)
    config = engine.config.graph
    neighbours = engine.vectors.query_many(collection, vectors, config.semantic_link_k)
    parts = np.array([fact.part_of is not None for fact in facts])
    return LinkPlan(
        semantic=_semantic_links(
            vectors,
            neighbours,
            parts,
            config.semantic_link_threshold,
            config.semantic_link_k,
            engine.cosine_scale,
        ),
        causal=_causal_links(engine, collection, facts, vectors, config.causal_clause_threshold),
        explicit=explicit,
    )


def _semantic_links(
    vectors: np.ndarray,
    neighbours: list[list[tuple[str, float]]],
    parts: np.ndarray,
    threshold: float,
    k: int,
    scale: CosineScale,
) -> list[tuple[int, int | str, float]]:
    """Links of each new fact to its ``k`` closest earlier facts at or above ``threshold``,
    weighted by their cosine; cosines on MiniLM's scale (``scale``)."""
    links: list[tuple[int, int | str, float]] = []
    # The facts of the call among themselves, a block of rows at a time: the whole square of
    # a maximum-size call would not fit in memory.
    for first in range(0, len(vectors), _SIMILARITY_ROWS):
        block = scale.array(
            vectors[first : first + _SIMILARITY_ROWS] @ vectors[: first + _SIMILARITY_ROWS].T
        )
        for row, i in enumerate(range(first, first + len(block))):
            if parts[i]:
                continue
            found: list[tuple[float, int | str]] = [
                (scale(c), m) for m, c in neighbours[i] if scale(c) >= threshold
            ]
            earlier = block[row, :i]
            close = (earlier >= threshold) & ~parts[:i]
            found += [(float(earlier[j]), int(j)) for j in np.flatnonzero(close)]
            found.sort(key=lambda pair: pair[0], reverse=True)
            links.extend((i, target, min(1.0, cosine)) for cosine, target in found[:k])
    return links


def _body(text: str) -> str:
    """A fact's text without its "Speaker: " prefix."""
    return _SPEAKER.sub("", text, count=1).strip()


def _causal_links(
    engine: Engine,
    collection: str,
    facts: Sequence[ExtractedFact],
    vectors: np.ndarray,
    threshold: float,
) -> list[tuple[int, int | str, float]]:
    links: list[tuple[int, int | str, float]] = []
    clauses: list[tuple[int, str]] = []
    # Cause clauses the extractor split off a sentence sit right after it (an LLM's causes
    # come before); the fact "before" a fact is the last one that is not such a clause.
    split_off = {j for i, fact in enumerate(facts) for j in fact.caused_by if j > i}
    previous: int | None = None
    for i, fact in enumerate(facts):
        before, previous = previous, (previous if i in split_off else i)
        if i in split_off:
            continue
        body = _body(fact.text)
        # "Because the supplier was late, the launch slipped" holds its own cause: the fact
        # before it is neither its cause nor its effect.
        self_contained = bool(fact.caused_by) or bool(cause_clauses(body))
        if before is not None and not self_contained and EFFECT_OPENERS.match(body):
            links.append((i, before, CUE_LINK_WEIGHT))
            continue
        if before is not None and not self_contained and _CAUSE_OPENERS.match(body):
            links.append((before, i, CUE_LINK_WEIGHT))
            continue
        for pattern in _CAUSE_CLAUSES:
            match = pattern.search(body)
            if match:
                clauses.append((i, match.group("cause").strip()))
                break
    if clauses:
        links.extend(_match_clauses(engine, collection, clauses, vectors, threshold))
    return links


def _match_clauses(
    engine: Engine,
    collection: str,
    clauses: list[tuple[int, str]],
    vectors: np.ndarray,
    threshold: float,
) -> list[tuple[int, int | str, float]]:
    """Link each fact holding a cause clause to the earlier memory closest to the clause
    (cosine on MiniLM's scale at or above ``threshold``)."""
    embedded = np.asarray(engine.embedder.embed([c for _, c in clauses]), dtype=np.float32)
    existing = engine.vectors.query_many(collection, embedded, 3)
    links: list[tuple[int, int | str, float]] = []
    for (index, _), clause_vector, found in zip(clauses, embedded, existing, strict=True):
        best: tuple[float, Any] | None = max(
            ((c, m) for m, c in found), default=None, key=lambda pair: pair[0]
        )
        if index > 0:  # the call's earlier facts; on a tie the stored memory wins
            earlier = vectors[:index] @ clause_vector
            j = int(np.argmax(earlier))
            if best is None or float(earlier[j]) > best[0]:
                best = (float(earlier[j]), j)
        if best is not None and (cosine := engine.cosine_scale(best[0])) >= threshold:
            links.append((index, best[1], round(CUE_LINK_WEIGHT * min(1.0, cosine), 4)))
    return links
