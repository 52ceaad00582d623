"""Recall strategies: each turns a query into a ranked list of :class:`StrategyHit`.

Every strategy sees the same :class:`~agentmem.recall.context.StrategyContext`, so the
pipeline can run them in parallel and fuse what they return; :data:`STRATEGIES` names them.
"""

from __future__ import annotations

from collections.abc import Callable

from agentmem.recall.analogical import analogical_strategy
from agentmem.recall.candidates import StrategyHit
from agentmem.recall.causal import causal_strategy
from agentmem.recall.context import StrategyContext, ranked
from agentmem.recall.graph import graph_strategy
from agentmem.recall.temporal import temporal, timeline
from agentmem.store.records import filter_clause


def semantic(ctx: StrategyContext) -> list[StrategyHit]:
    """Nearest neighbours of the query embedding (cosine similarity on Chroma's HNSW)."""
    return ctx.semantic_hits()


def keyword(ctx: StrategyContext) -> list[StrategyHit]:
    """BM25 over the fact and its neighbouring turns (store/keyword.py), from the bank's
    in-process mirror (store/keyword_mirror.py) unless hard filters need the SQL."""
    engine = ctx.engine
    clause, params = filter_clause(ctx.config)
    if engine.keyword_mirrors is not None and not clause:
        terms = engine.keyword.query_terms(ctx.query_time.keyword_text)
        scored = engine.keyword_mirrors.search(ctx.bank_id, terms, ctx.pool)
    else:
        scored = engine.keyword.search(
            ctx.bank_id,
            ctx.query_time.keyword_text,
            ctx.pool,
            filter_sql=clause,
            filter_params=params,
        )
    best = scored[0][1] if scored else 1.0
    return ranked(scored, lambda score: score / best if best > 0 else 0.0)


STRATEGIES: dict[str, Callable[[StrategyContext], list[StrategyHit]]] = {
    "semantic": semantic,
    "keyword": keyword,
    "graph": graph_strategy,
    "temporal": temporal,
    "timeline": timeline,
    "causal": causal_strategy,
    "analogical": analogical_strategy,
}
