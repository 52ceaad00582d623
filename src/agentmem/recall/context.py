"""What every recall strategy sees: :class:`StrategyContext`, one per recall.

It holds the engine, the bank and the validated config, and computes once what several
strategies need (the query's period and embedding, the semantic hits), so the pipeline can run
the strategies side by side.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import numpy as np

from agentmem.config import RecallConfig
from agentmem.engine import Engine
from agentmem.models.embedder import embed_query_beside
from agentmem.recall.calibrated import content_tokens
from agentmem.recall.candidates import StrategyHit, cosine_relevance
from agentmem.recall.people import without_people
from agentmem.recall.query_time import QueryTime, parse_query_time
from agentmem.store.dialect import any_lowered_equals
from agentmem.store.graph import bank_graph
from agentmem.store.records import from_db_time, load_pieces

T = TypeVar("T")


def _nothing() -> None:
    """What runs beside the query's embedding when the recall starts nothing there."""


class _once(Generic[T]):  # noqa: N801 (used as a decorator, like cached_property)
    """A property computed once per recall context, under a lock of that context's and that
    property's own.

    Not ``functools.cached_property``: in Python 3.11 it holds one lock for all instances,
    so one recall loading a bank's graph for its query embedding (seconds, at first use) held
    up every other recall's, of every bank. One lock per property, so the keyword arm's word
    idfs are computed while the query is embedded; a property may read another (the query's
    period, then its embedding), never one that reads it back, so the locks cannot deadlock.
    """

    def __init__(self, compute: Callable[[Any], T]) -> None:
        self._compute = compute
        self._name = compute.__name__
        self.__doc__ = compute.__doc__

    def __get__(self, context: Any, owner: type | None = None) -> T:  # noqa: ANN401
        values = context.__dict__
        if self._name not in values:
            with context._once_locks.setdefault(self._name, threading.Lock()):
                if self._name not in values:
                    values[self._name] = self._compute(context)
        return values[self._name]


@dataclass
class StrategyContext:
    """What a strategy needs: the engine, the bank and the validated recall config."""

    engine: Engine
    bank_id: str
    collection: str
    config: RecallConfig
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _once_locks: dict[str, threading.Lock] = field(default_factory=dict, repr=False)
    _semantic: list[StrategyHit] | None = field(default=None, repr=False)
    _while_embedding: Callable[[], object] = field(default=_nothing, repr=False)

    def semantic_hits(self) -> list[StrategyHit]:
        """The semantic arm's hits, scored by cosine on MiniLM's scale
        (:mod:`agentmem.models.cosine`), computed once per recall for every strategy that
        needs them (graph entry points, the causal seed, analogical candidates)."""
        with self._lock:
            if self._semantic is None:
                where = None
                if self.config.fact_types:
                    where = {"fact_type": {"$in": list(self.config.fact_types)}}
                scored = self.engine.vectors.query(
                    self.collection, self.query_vector, self.pool, where
                )
                scale = self.engine.cosine_scale
                # One pass, positional: what ``ranked`` builds, at two thirds of the cost.
                hits = []
                for rank, (memory_id, cosine) in enumerate(scored, start=1):
                    score = scale(cosine)
                    hits.append(StrategyHit(memory_id, rank, score, cosine_relevance(score)))
                self._semantic = hits
            return self._semantic

    def cosines(self, memory_ids: list[str]) -> dict[str, float]:
        """The query's cosine similarity with these memories' stored vectors on MiniLM's
        scale (the semantic arm's measure, for memories beyond its pool; ids without a vector
        are absent)."""
        rows = self.engine.recall_rows
        if rows is None:
            vectors = self.engine.vectors.get_vectors(self.collection, memory_ids)
        else:
            vectors = rows.vectors(self.bank_id, self.collection, memory_ids)
        if not vectors:
            return {}
        # One product for all: a recall measures a few dozen (graph and keyword candidates).
        matrix = np.stack(list(vectors.values()))
        norms = np.maximum(np.linalg.norm(matrix, axis=1).astype(np.float64), 1e-12)
        cosines = (matrix @ self.unit_query).astype(np.float64) / norms
        return dict(zip(vectors, self.engine.cosine_scale.array(cosines).tolist(), strict=True))

    def piece_cosines(self, memory_ids: list[str]) -> dict[str, float]:
        """The query's cosine with the closest piece of each of these memories, on MiniLM's
        scale (``retain/pieces.py``; memories without pieces are absent)."""
        dimension = self.engine.embedder.dimension
        rows = self.engine.recall_rows
        if rows is None:
            pieces = load_pieces(self.engine.db, self.bank_id, memory_ids, dimension)
        else:
            pieces = rows.pieces(self.bank_id, memory_ids, dimension)
        scale = self.engine.cosine_scale
        query = self.unit_query
        return {memory_id: scale(float((p @ query).max())) for memory_id, p in pieces.items()}

    @_once
    def query_time(self) -> QueryTime:
        """The period the query names (if any), parsed once per recall."""
        last = self.engine.last_mention(self.bank_id)
        return parse_query_time(
            self.config.query,
            self.config.now,
            from_db_time(last),
            date_order=self.config.date_order,
        )

    @_once
    def query_vector(self) -> np.ndarray:
        """The embedding of the query's content, computed once: its time words removed and,
        when the keyword arm runs beside it, the names of people (see ``without_people``)."""
        text = self.query_time.content_query
        if "keyword" in self.config.strategies:
            text = without_people(text, bank_graph(self.engine, self.bank_id))
        beside, self._while_embedding = self._while_embedding, _nothing
        return np.asarray(embed_query_beside(self.engine.embedder, text, beside), dtype=np.float32)

    def embed_query_beside(self, beside: Callable[[], object]) -> np.ndarray:
        """:attr:`query_vector`, with ``beside`` called once while the model runs (see
        ``MiniLMEmbedder.embed_query_beside``): the recall starts there the work that needs no
        embedding, which then runs during the model instead of taking turns with it."""
        self._while_embedding = beside
        return self.query_vector

    @_once
    def unit_query(self) -> np.ndarray:
        """:attr:`query_vector` scaled to unit length (what cosines are taken against)."""
        return self.query_vector / max(float(np.linalg.norm(self.query_vector)), 1e-12)

    @_once
    def query_word_idfs(self) -> dict[str, float]:
        """How informative each of the query's words is in this bank: its keyword idf (a word
        no memory holds gets the largest; stopwords are absent)."""
        mirrors = self.engine.keyword_mirrors
        return self.engine.keyword.term_idfs(
            self.bank_id,
            content_tokens(self.config.query),
            None if mirrors is None else mirrors.document_frequencies,
        )

    def entity_ids(self, name: str) -> list[str]:
        """Ids of the bank's entities with this canonical name or alias (case-insensitive)."""
        wanted = " ".join(name.split()).casefold()
        rows = self.engine.db.fetchall(
            "SELECT id FROM entities WHERE bank_id = $bank AND (lower(name) = $name "
            f"OR {any_lowered_equals(self.engine.db, 'aliases', 'name')})",
            {"bank": self.bank_id, "name": wanted},
        )
        return [r[0] for r in rows]

    @property
    def pool(self) -> int:
        """How many memories a strategy returns (more when hard filters will drop some)."""
        base = max(self.engine.config.candidates_per_strategy, 3 * self.config.top_k)
        return base * 4 if self.config.has_filters else base


def ranked(
    scored: list[tuple[str, float]], normalize: Callable[[float], float]
) -> list[StrategyHit]:
    return [
        StrategyHit(memory_id=memory_id, rank=rank, score=score, normalized=normalize(score))
        for rank, (memory_id, score) in enumerate(scored, start=1)
    ]
