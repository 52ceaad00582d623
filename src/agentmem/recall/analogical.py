"""The "analogical" strategy: memories with the same relational structure in another context.

A past launch that failed because a supplier was late is an analogue of this launch slipping
because the vendor shipped late, though the two share no names. Each text is reduced to a
name-free :class:`Structure` from its spaCy parse:

* **roles**: (subject kind, action, object kind) triples, entities replaced by their kind
  ("org>launch>product"), pronouns by "person";
* **actions**: the verbs, crudely stemmed (the shared pipeline has no lemmatizer);
* **outcome**: failure / success / delay / ... classes of the words (a small lexicon);
* **cause**: the classes and stems of the words in a cause clause ("because ...", "due to");
* **kinds**: the kinds of entities present.

Structural similarity is a weighted Jaccard over those parts that either side has. Only
memories at or above :data:`MIN_STRUCTURE` are analogues: a text that merely sits near the
query in embedding space ("The bakery's new oven works great." for a failed launch) is not,
whatever alpha. Analogues are ordered by ``alpha × embedding relevance + (1 − alpha) ×
structural similarity`` with ``analogical_alpha`` (default 0.5; 0 = structure only, 1 =
embedding only), and a recall of this strategy alone keeps that order. Candidates are the
semantic arm's pool plus a keyword search for the query's actions and outcome words, so an
analogue phrased in other terms can still be found when alpha is low.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentmem.models.nlp import coarse_pos
from agentmem.recall.candidates import StrategyHit, cosine_relevance
from agentmem.retain.entities import LABEL_KINDS
from agentmem.store.records import filter_clause

if TYPE_CHECKING:
    from spacy.tokens import Doc

    from agentmem.recall.context import StrategyContext

DEFAULT_ALPHA = 0.5
#: Structural similarity a memory needs to be an analogue: a fifth of the weighted parts, so
#: one shared part alone (a cause cue, an entity kind, a common verb) is not enough.
MIN_STRUCTURE = 0.2

# Outcome/cause classes and the word stems (prefixes) that signal them; classes let "late"
# match "missed the deadline". A stem may signal several classes ("bug": failure, quality).
_CLASS_STEMS: dict[str, str] = {
    "failure": "fail crash broke break outag bug defect error reject cancel lost lose drop flop "
    "collaps problem issu wrong declin churn",
    "success": "succeed success won win beat grew grow pass approv exceed",
    "delay": "late delay slip behind postpon miss deadlin overdu stuck",
    "supply": "vendor supplier ship deliver logist stock",
    "cost": "budget cost expens price overspend money fund",
    "people": "quit resign fire leav hire sick burnout tired overwork",
    "quality": "qualiti test bug defect review",
}
_STEM_CLASSES: tuple[tuple[str, str], ...] = tuple(
    (prefix, name) for name, stems in _CLASS_STEMS.items() for prefix in stems.split()
)
_CAUSE_CUE = re.compile(r"\b(?:because|due to|owing to|caused by|as a result of|since)\b", re.I)
_PERSON_PRONOUNS = frozenset(
    ("i", "we", "he", "she", "they", "you", "me", "us", "him", "her", "them")
)
_SUFFIXES = ("ing", "ed", "es", "s", "e", "y")
_WEIGHTS = {"roles": 0.25, "actions": 0.15, "outcome": 0.25, "cause": 0.25, "kinds": 0.1}
_SPEAKER = re.compile(r"^[^:\n]{1,80}:\s+")
_CACHE_SIZE = 50_000


def stem(word: str) -> str:
    """A crude suffix-stripping stem: "failed", "fails", "failing" → "fail"."""
    word = word.lower()
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def _classes(stems: Iterable[str]) -> set[str]:
    return {name for s in stems for prefix, name in _STEM_CLASSES if s.startswith(prefix)}


@dataclass(frozen=True, slots=True)
class Structure:
    """The name-free relational structure of one text (see the module docstring)."""

    roles: frozenset[str]
    actions: frozenset[str]
    outcome: frozenset[str]
    cause: frozenset[str]
    kinds: frozenset[str]

    def similarity(self, other: Structure) -> float:
        """Weighted Jaccard over the parts either side has, in [0, 1]."""
        total = score = 0.0
        for part, weight in _WEIGHTS.items():
            a, b = getattr(self, part), getattr(other, part)
            if a or b:
                total += weight
                score += weight * len(a & b) / len(a | b)
        return score / total if total else 0.0


def structure_of(doc: Doc) -> Structure:
    """Extract the :class:`Structure` of a parsed text."""
    kinds: set[str] = set()
    token_kind: dict[int, str] = {}
    for ent in doc.ents:
        kind = LABEL_KINDS.get(ent.label_)
        if kind:
            kinds.add(kind)
            token_kind.update({t.i: kind for t in ent})

    def kind_of(token) -> str:  # noqa: ANN001
        if token.i in token_kind:
            return token_kind[token.i]
        if token.lower_ in _PERSON_PRONOUNS:
            return "person"
        return "thing"

    actions: set[str] = set()
    roles: set[str] = set()
    for token in doc:
        if coarse_pos(token) != "VERB":
            continue
        action = stem(token.text)
        actions.add(action)
        subject = next((c for c in token.children if c.dep_ in ("nsubj", "nsubjpass")), None)
        obj = next((c for c in token.children if c.dep_ in ("dobj", "attr", "pobj")), None)
        roles.add(
            f"{kind_of(subject) if subject is not None else '-'}>{action}>"
            f"{kind_of(obj) if obj is not None else '-'}"
        )
    words = [stem(t.text) for t in doc if t.is_alpha and not t.is_stop]
    cue = _CAUSE_CUE.search(doc.text)
    cause: set[str] = set()
    if cue:
        clause = [stem(w) for w in re.findall(r"[A-Za-z]+", doc.text[cue.end() :])][:12]
        cause = {f"class:{c}" for c in _classes(clause)} | {"causal"}
    return Structure(
        roles=frozenset(roles),
        actions=frozenset(actions),
        outcome=frozenset(_classes(words)),
        cause=frozenset(cause),
        kinds=frozenset(kinds),
    )


class _StructureCache:
    """Structures of memory texts, parsed once per process (texts never change)."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: OrderedDict[str, Structure] = OrderedDict()
        self._lock = threading.Lock()

    def get_many(self, texts: list[str]) -> list[Structure]:
        from agentmem.models.nlp import load_nlp

        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._items))
        parsed = dict(zip(missing, map(structure_of, load_nlp().pipe(missing)), strict=True))
        with self._lock:
            for text, structure in parsed.items():
                self._items[text] = structure
            result = [self._items.get(t) or parsed[t] for t in texts]
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        return result


_CACHE = _StructureCache(_CACHE_SIZE)


def _body(text: str) -> str:
    return _SPEAKER.sub("", text, count=1)


def analogical_strategy(ctx: StrategyContext) -> list[StrategyHit]:
    """Memories structurally like the query, blended with embedding similarity by alpha."""
    alpha = float(ctx.config.strategy_params.get("analogical_alpha", DEFAULT_ALPHA))
    query = _CACHE.get_many([ctx.config.query])[0]
    cosine = {hit.memory_id: hit.score for hit in ctx.semantic_hits()}
    terms = " ".join(sorted(query.actions | {c for c in query.outcome}))
    if terms and alpha < 1:
        clause, params = filter_clause(ctx.config)
        found = ctx.engine.keyword.search(
            ctx.bank_id, terms, ctx.pool, filter_sql=clause, filter_params=params
        )
        cosine.update(ctx.cosines([memory_id for memory_id, _ in found if memory_id not in cosine]))
    if not cosine:
        return []
    ids = list(cosine)
    texts = dict(
        ctx.engine.db.fetchall(
            "SELECT id, text FROM memories WHERE bank_id = $bank AND list_contains($ids, id)",
            {"bank": ctx.bank_id, "ids": ids},
        )
    )
    ids = [i for i in ids if i in texts]
    structures = _CACHE.get_many([_body(texts[i]) for i in ids])
    scored = []
    for memory_id, structure in zip(ids, structures, strict=True):
        shape = query.similarity(structure)
        score = alpha * cosine_relevance(cosine[memory_id]) + (1 - alpha) * shape
        scored.append((memory_id, score, shape))
    scored = sorted(
        (item for item in scored if item[2] >= MIN_STRUCTURE), key=lambda item: (-item[1], item[0])
    )
    return [
        StrategyHit(
            memory_id=memory_id,
            rank=rank,
            score=score,
            normalized=min(1.0, max(0.0, score)),
            details={"structure": round(shape, 4), "cosine": round(cosine[memory_id], 4)},
        )
        for rank, (memory_id, score, shape) in enumerate(scored, start=1)
    ]
