"""recall: the query's names resolved → strategies (in parallel) → parts dropped (their
wholes hold them) → fuse (RRF) → rerank → supersession → composite score → token budget."""

from __future__ import annotations

from concurrent.futures import Future
from contextvars import copy_context
from dataclasses import fields, replace
from datetime import datetime
from operator import attrgetter
from typing import Any

from agentmem.config import RecallConfig
from agentmem.engine import Engine
from agentmem.errors import AgentMemError, InvalidInputError, StorageError
from agentmem.protocols import Reranker
from agentmem.recall.budget import fit_to_budget
from agentmem.recall.calibrated import weighted_coverage, word_weights
from agentmem.recall.candidates import Candidate, StrategyHit
from agentmem.recall.context import StrategyContext
from agentmem.recall.fusion import reciprocal_rank_fusion
from agentmem.recall.query_names import canonical_query
from agentmem.recall.scoring import Signals, composite_scores, signals
from agentmem.recall.strategies import STRATEGIES
from agentmem.recall.supersession import mark_superseded
from agentmem.store import changes
from agentmem.store.graph import MemoryGraph, bank_graph
from agentmem.store.records import filter_clause, json_list, load_memories_with_kinds, sql_list
from agentmem.types import Memory, RecallHit, RecallResult


def recall(engine: Engine, bank_id: str, collection: str, config: RecallConfig) -> RecallResult:
    """Run one recall; see ``MemoryBank.recall`` for the contract."""
    config = replace(config, query=canonical_query(config.query, bank_graph(engine, bank_id)))
    ctx = StrategyContext(engine, bank_id, collection, config)
    ranked = _without_parts(bank_graph(engine, bank_id), _run_strategies(ctx))
    candidates = _fuse(engine, bank_id, config, ranked)
    _measure_cosines(ctx, candidates)
    _measure_piece_cosines(ctx, candidates)
    _measure_informative_coverage(ctx, candidates)
    reranker = choose_reranker(engine, config.rerank)
    _rerank(reranker, config, candidates)
    mark_superseded(
        engine, bank_id, candidates, demote=ctx.query_time.range is None, now=config.now
    )
    scored = _score(engine, reranker, config, candidates, _recency_reference(ctx))
    hits, total_tokens, dropped = fit_to_budget(scored, config.max_tokens)
    if config.reinforce and hits:
        _reinforce(engine, bank_id, [h.memory.id for h in hits])
    return RecallResult(
        hits=hits,
        query_time_range=ctx.query_time.range,
        total_tokens=total_tokens,
        dropped=dropped,
        strategies=config.strategies,
    )


#: Arms that do not read the query's embedding.
_WITHOUT_VECTOR = frozenset({"keyword", "timeline"})


def _run_strategies(ctx: StrategyContext) -> dict[str, list[StrategyHit]]:
    """Every arm's hits, in the order of ``config.strategies``.

    The arms that need no embedding (and the reranker's word idfs) start on the pool once
    the query's embedding is inside the model, which releases the GIL, so their Python runs
    during the model; the others then run here one after another, since on the pool their
    Python would only take turns with each other.
    """
    names = ctx.config.strategies
    if len(names) == 1:
        return {names[0]: _arm(ctx, names[0])}
    early = [name for name in names if name in _WITHOUT_VECTOR]
    started: list[Future[dict[str, list[StrategyHit]]]] = []

    def start_early() -> None:
        # Once, as one task, so that one thread's Python, not two, runs beside the model. It
        # runs in a copy of this context: it reads the bank's version the call read.
        if early and not started:
            started.append(ctx.engine.executor.submit(copy_context().run, _early_work, ctx, early))

    if len(early) < len(names):
        ctx.embed_query_beside(start_early)  # embed once, before the arms that read it
    start_early()  # nothing to embed, or an embedder that did not call back
    results = {name: _arm(ctx, name) for name in names if name not in early}
    for future in started:
        results.update(future.result())
    return {name: results[name] for name in names}


def _early_work(ctx: StrategyContext, names: list[str]) -> dict[str, list[StrategyHit]]:
    """The hits of the arms that need no embedding, and the query's word idfs the reranker
    reads when the keyword arm runs."""
    hits = {name: _arm(ctx, name) for name in names}
    if "keyword" in ctx.config.strategies:
        _ = ctx.query_word_idfs
    return hits


def _arm(ctx: StrategyContext, name: str) -> list[StrategyHit]:
    """One arm's hits; a failure of the stores under it is a StorageError."""
    try:
        return STRATEGIES[name](ctx)
    except AgentMemError:
        raise
    except Exception as exc:
        raise StorageError(f"recall strategy {name!r} failed: {exc}") from exc


def _without_parts(
    graph: MemoryGraph, ranked: dict[str, list[StrategyHit]]
) -> dict[str, list[StrategyHit]]:
    """Each arm's hits without parts (clauses split off a chat turn, ``part_of`` links), ranks
    renumbered. A part's whole holds its text, and a second memory of one turn would take a
    place from other turns. The causal arm keeps its parts: a turn's clause is the cause it
    reports."""
    with graph.lock:
        if not graph.has_parts:
            return ranked
        found = {h.memory_id for name, hits in ranked.items() if name != "causal" for h in hits}
        parts = {memory_id for memory_id in found if graph.whole_of(memory_id) is not None}
    if not parts:
        return ranked
    return {
        name: hits
        if name == "causal"
        else [
            replace(hit, rank=rank)
            for rank, hit in enumerate((h for h in hits if h.memory_id not in parts), start=1)
        ]
        for name, hits in ranked.items()
    }


def _fuse(
    engine: Engine, bank_id: str, config: RecallConfig, ranked: dict[str, list[StrategyHit]]
) -> list[Candidate]:
    """The first ``rerank_top_n`` candidates in RRF order that pass the hard filters, with every
    arm's hit attached.

    Only those are loaded: the reranker scores no more, and a candidate it did not score is
    never ranked above one it did. Most of a load is a scan of the memories, whatever the
    number of ids, so when hard filters will drop some, every candidate is loaded at once
    rather than in rounds.
    """
    fused = reciprocal_rank_fusion(ranked, k=engine.config.rrf_k)
    position = {memory_id: i for i, (memory_id, _) in enumerate(fused)}
    fused = _arms_best_first(ranked, fused)
    top_n = engine.config.rerank_top_n
    batch = len(fused) if config.has_filters else top_n
    loaded: dict[str, Candidate] = {}
    start = 0
    while len(loaded) < top_n and start < len(fused):
        chunk = fused[start : start + batch]
        start += batch
        ids = [memory_id for memory_id, _ in chunk]
        if engine.recall_rows is not None and not filter_clause(config)[0]:
            memories = engine.recall_rows.memories(bank_id, ids)
        else:
            memories = load_memories_with_kinds(engine.db, bank_id, ids, config)
        for memory_id, rrf in chunk:
            if memory_id in memories:  # else filtered out, or deleted since the arm saw it
                memory, kinds = memories[memory_id]
                loaded[memory_id] = Candidate(memory=memory, rrf=rrf, entity_kinds=kinds)
    chosen = sorted(list(loaded)[:top_n], key=position.__getitem__)  # in RRF order
    candidates = {memory_id: loaded[memory_id] for memory_id in chosen}
    for name, hits in ranked.items():
        for hit in hits:
            if hit.memory_id in candidates:
                candidates[hit.memory_id].hits[name] = hit
    return list(candidates.values())


#: How many of each arm's first hits are reranked whatever their RRF standing: one is what
#: the rare-identifier case needs; three cost a few LoCoMo questions under default weights.
ARM_BEST_RERANKED = 1


def _arms_best_first(
    ranked: dict[str, list[StrategyHit]], fused: list[tuple[str, float]]
) -> list[tuple[str, float]]:
    """The fused list with each arm's first :data:`ARM_BEST_RERANKED` hit(s) moved ahead.

    RRF favours what several arms found: in a bank of near-duplicates ("Locker code K3X2 is
    for Ann" among a hundred others), the one memory holding a query's rare identifier can be
    the keyword arm's first hit and nothing else's, and fall below the reranked head behind
    memories every arm found half-way down. The reranker, which reads the keyword match, is
    the judge: an arm's best hits reach it. The order among candidates stays RRF's.
    """
    best = {hit.memory_id for hits in ranked.values() for hit in hits[:ARM_BEST_RERANKED]}
    return [item for item in fused if item[0] in best] + [
        item for item in fused if item[0] not in best
    ]


def _measure_cosines(ctx: StrategyContext, candidates: list[Candidate]) -> None:
    """Give every candidate its cosine with the query when the semantic arm ran: the arm's
    score, or, for a candidate only other arms returned, one measured on its stored vector
    (a keyword match outside the semantic arm's pool is not therefore unrelated)."""
    if "semantic" not in ctx.config.strategies:
        return
    unmeasured = []
    for candidate in candidates:
        hit = candidate.hits.get("semantic")
        if hit is None:
            unmeasured.append(candidate.memory.id)
        else:
            candidate.cosine = hit.score
    if unmeasured:
        measured = ctx.cosines(unmeasured)
        for candidate in candidates:
            if candidate.cosine is None:
                candidate.cosine = measured.get(candidate.memory.id)


def _measure_piece_cosines(ctx: StrategyContext, candidates: list[Candidate]) -> None:
    """Give every candidate with pieces the cosine of its closest piece, when the semantic
    arm ran (see ``Candidate.piece_cosine``)."""
    if "semantic" not in ctx.config.strategies or not candidates:
        return
    measured = ctx.piece_cosines([candidate.memory.id for candidate in candidates])
    for candidate in candidates:
        candidate.piece_cosine = measured.get(candidate.memory.id)


def _measure_informative_coverage(ctx: StrategyContext, candidates: list[Candidate]) -> None:
    """Give every candidate the share of the query's information its text holds, when the
    keyword arm ran (see ``Candidate.informative_coverage``)."""
    if "keyword" not in ctx.config.strategies or not candidates:
        return
    weights = word_weights(ctx.config.query, ctx.query_word_idfs)
    for candidate in candidates:
        candidate.informative_coverage = weighted_coverage(weights, candidate.memory.text)


def choose_reranker(engine: Engine, rerank: bool | None) -> Reranker:
    """The reranker of one recall: ``rerank=False`` falls back to the offline default,
    ``True`` requires a configured (non-default) one, ``None`` uses whatever is configured.

    Raises:
        InvalidInputError: ``rerank=True`` but no reranker was configured.
    """
    offline = engine.offline_reranker or engine.reranker
    if rerank is False:
        return offline
    if rerank is True and engine.reranker is offline:
        raise InvalidInputError(
            "rerank=True needs a reranker: pass AgentMemory(reranker=CrossEncoderReranker(...)) "
            "or LLMReranker(...); rerank=None uses the offline default"
        )
    return engine.reranker


def _rerank(reranker: Reranker, config: RecallConfig, candidates: list[Candidate]) -> None:
    """Set each candidate's relevance (the ``rerank_top_n`` best by RRF, see :func:`_fuse`)."""
    if candidates:
        scores = reranker.rerank(config.query, candidates)
        for candidate, score in zip(candidates, scores, strict=True):
            candidate.relevance = min(1.0, max(0.0, float(score)))


def _recency_reference(ctx: StrategyContext) -> datetime:
    """When recency is measured from: ``now``, or the end of a past period the query names.

    "What did Alice do in June 2024?" should not punish facts for being learned long ago.
    """
    period = ctx.query_time.range
    if period is not None and ctx.query_time.mode == "occurrence" and period.end < ctx.config.now:
        return period.end
    return ctx.config.now


def _score(
    engine: Engine,
    reranker: Reranker,
    config: RecallConfig,
    candidates: list[Candidate],
    reference: datetime,
) -> list[RecallHit]:
    """The ``top_k`` best candidates by composite score (ties: by RRF), as hits with their
    details; a single timeline or causal walk keeps its own order. Only the hits returned
    have their signals and details written."""
    window, cap = engine.config.recency_window_days, engine.config.reinforcement_cap
    composites = composite_scores(
        ((c.memory, c.relevance) for c in candidates), config.weights, reference, window, cap
    )
    order = list(range(len(candidates)))
    ordered = config.ordered_strategy
    if ordered is not None:
        order.sort(key=lambda i: candidates[i].hits[ordered].rank)
    else:
        order.sort(key=lambda i: (composites[i], candidates[i].rrf), reverse=True)
    hits = []
    for i in order[: config.top_k]:
        candidate = candidates[i]
        s = signals(candidate.memory, candidate.relevance, reference, window, cap)
        details = _details(reranker, candidate, i + 1, s)
        hits.append(RecallHit(_own(candidate.memory), composites[i], details))
    return hits


#: A memory's field values in order, and where its metadata is among them (see :func:`_own`).
_MEMORY_VALUES = attrgetter(*(f.name for f in fields(Memory)))
_METADATA = [f.name for f in fields(Memory)].index("metadata")


def _own(memory: Memory) -> Memory:
    """A hit's memory with metadata of its own: a candidate's may be the value the bank's
    in-process rows keep (``store/recall_rows.py``). Built from its values, at half the cost
    of ``dataclasses.replace``."""
    values = list(_MEMORY_VALUES(memory))
    values[_METADATA] = _json_copy(memory.metadata) if memory.metadata else {}
    return Memory(*values)


def _json_copy(value: Any) -> Any:
    """A copy of a JSON value, what stored metadata is parsed into (dicts, lists and immutable
    scalars), at a quarter of the cost of ``deepcopy``."""
    if type(value) is dict:
        return {key: _json_copy(item) for key, item in value.items()}
    if type(value) is list:
        return [_json_copy(item) for item in value]
    return value


def _details(
    reranker: Reranker, candidate: Candidate, fusion_rank: int, s: Signals
) -> dict[str, Any]:
    """What each stage found for one hit (``RecallHit.strategy_details``)."""
    details: dict[str, Any] = {
        name: {"rank": hit.rank, "score": hit.score, **hit.details}
        for name, hit in candidate.hits.items()
    }
    details["fusion"] = {"rank": fusion_rank, "rrf": candidate.rrf}
    details["rerank"] = {"score": s.relevance, "reranker": reranker.name}
    if candidate.cosine is not None:
        details["rerank"]["cosine"] = candidate.cosine
    if candidate.piece_cosine is not None:
        details["rerank"]["piece_cosine"] = candidate.piece_cosine
    if candidate.reasons:
        details["rerank"]["reasons"] = list(candidate.reasons)
    if candidate.superseded_by:
        details["superseded"] = {"by": list(candidate.superseded_by)}
    if candidate.supersedes:
        details["supersedes"] = {"ids": list(candidate.supersedes)}
    details["scoring"] = {
        "relevance": s.relevance,
        "recency": s.recency,
        "importance": s.importance,
        "reinforcement": s.reinforcement,
    }
    return details


def _reinforce(engine: Engine, bank_id: str, ids: list[str]) -> None:
    with engine.db.transaction() as cur:
        cur.execute(
            "UPDATE memories SET access_count = access_count + 1 "
            f"WHERE list_contains({sql_list('ids')}, id)",
            {"ids": json_list(ids)},
        )
        changes.count_accesses(engine.db, cur, bank_id)
    if engine.recall_rows is not None:
        engine.recall_rows.counted(bank_id, ids)
