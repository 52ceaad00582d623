"""The "temporal" and "timeline" strategies (the period a query names is found by
``recall/query_time.py``).

* **temporal**: semantic entry points inside the period or near it (Chroma filtered on the
  facts' time metadata), scored by how much of each fact's interval falls inside (less for
  one just outside, see ``NEAR_SHARE``) and how close it is in meaning, higher when the
  fact's own words date it there (``in_period`` in its details), then one hop along graph
  links to facts that stay inside the period or near it.
* **timeline**: the memories of one entity in time order, within ``start``/``end``.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, NamedTuple

from agentmem._time import EARLIEST, LATEST, optional_utc
from agentmem.errors import InvalidInputError
from agentmem.recall.candidates import StrategyHit, cosine_relevance
from agentmem.recall.query_time import NEAR_WEIGHT, TimeMode
from agentmem.store.graph import bank_graph
from agentmem.store.records import memories_by_id, to_db_time
from agentmem.types import TimeRange

if TYPE_CHECKING:
    from agentmem.recall.context import StrategyContext

EXPANSION_DECAY = 0.8
#: Added to the score of a fact dated inside the period by its own words.
DATED_BONUS = 0.5


def temporal(ctx: StrategyContext) -> list[StrategyHit]:
    """Facts inside the period the query names, closest in meaning first, plus linked facts.

    A query that names no period but asks for one ("When did Caroline ...?") gets the facts
    anchored in time that are closest in meaning.
    """
    period = ctx.query_time.range
    if period is None:
        return _dated(ctx) if ctx.query_time.asks_when else []
    near = ctx.query_time.near
    lo = max(period.start, EARLIEST + near).timestamp() - near.total_seconds()
    hi = min(period.end, LATEST - near).timestamp() + near.total_seconds()
    if ctx.query_time.mode == "mention":
        where = {"$and": [{"mentioned": {"$gte": lo}}, {"mentioned": {"$lt": hi}}]}
    else:
        where = {"$and": [{"t_start": {"$lt": hi}}, {"t_end": {"$gte": lo}}]}
    seeds = ctx.engine.vectors.query(ctx.collection, ctx.query_vector, ctx.pool, where)
    if not seeds:
        return []
    times = _event_times(ctx, (memory_id for memory_id, _ in seeds))
    scores: dict[str, float] = {}
    in_period: dict[str, float] = {}
    for memory_id, cosine in seeds:
        time = times.get(memory_id)
        inside = _inside_fraction(time, period, ctx.query_time.mode, ctx.query_time.near)
        # A fact whose own words date it inside the period ("we hiked last weekend") is
        # likelier about it than one that was merely said then. (Asked about when things
        # were said, a fact's mention is its own time.)
        dated = time is not None and (time.dated or ctx.query_time.mode == "mention")
        in_period[memory_id] = inside if dated else 0.0
        scores[memory_id] = (
            inside * (0.5 + 0.5 * max(0.0, cosine)) + DATED_BONUS * in_period[memory_id]
        )
    for memory_id, score in _expand(ctx, scores, period).items():
        scores.setdefault(memory_id, score)
    ranked = sorted(scores.items(), key=lambda item: item[1], reverse=True)[: ctx.pool]
    return [
        StrategyHit(
            memory_id,
            rank,
            score,
            normalized=min(1.0, score),
            details={"in_period": round(in_period.get(memory_id, 0.0), 3)},
        )
        for rank, (memory_id, score) in enumerate(ranked, start=1)
    ]


def _dated(ctx: StrategyContext) -> list[StrategyHit]:
    # Dated facts far from the query in meaning answer no "When ...?" (see nearest_only).
    scored = ctx.engine.vectors.query(
        ctx.collection, ctx.query_vector, ctx.pool, {"dated": True}, nearest_only=True
    )
    return [
        StrategyHit(memory_id, rank, cosine, normalized=cosine_relevance(cosine))
        for rank, (memory_id, cosine) in enumerate(scored, start=1)
    ]


class _EventTime(NamedTuple):
    start: datetime  # the occurrence, else the mention
    end: datetime
    mentioned: datetime
    dated: bool  # the fact has an occurrence of its own, not only the day it was said


_EVENT_TIME_COLUMNS = """m.id, coalesce(m.occurred_start, m.mentioned_at),
coalesce(m.occurred_end, m.occurred_start, m.mentioned_at), m.mentioned_at,
m.occurred_start IS NOT NULL"""


def _event_times(ctx: StrategyContext, ids: Iterable[str]) -> dict[str, _EventTime]:
    rows = memories_by_id(ctx.engine.db, ctx.bank_id, ids, _EVENT_TIME_COLUMNS)
    return {r[0]: _EventTime(*r[1:4], r[4] and not _when_said(*r[1:4])) for r in rows}


def _when_said(start: datetime, end: datetime, mentioned: datetime) -> bool:
    """Whether an occurrence is the day up to when the fact was said ("I just ran a half
    marathon", "earlier today"): true, but it tells no more of a period than the mention."""
    ends_when_said = timedelta(0) <= mentioned - end <= timedelta(seconds=1)
    return ends_when_said and end - start <= timedelta(days=1, seconds=1)


def _inside_fraction(
    time: _EventTime | None, period: TimeRange, mode: TimeMode, near: timedelta
) -> float:
    """How much of a fact's time falls inside the period: 1 for an event within it; up to
    NEAR_WEIGHT for one just outside it (see NEAR_SHARE)."""
    if time is None:
        return 0.0
    start, end = (time.mentioned, time.mentioned) if mode == "mention" else (time.start, time.end)
    lo, hi = to_db_time(period.start), to_db_time(period.end)
    assert lo is not None and hi is not None
    length = (end - start).total_seconds()
    if length <= 0 and lo <= start < hi:
        return 1.0
    overlap = (min(end, hi) - max(start, lo)).total_seconds()
    if length > 0 and overlap > 0:
        return min(1.0, overlap / length)
    gap = max(lo - end, start - hi)  # the fact ends before the period or starts after it
    return NEAR_WEIGHT * (1 - gap / near) if gap < near else 0.0


def _expand(ctx: StrategyContext, seeds: dict[str, float], period: TimeRange) -> dict[str, float]:
    """One hop along links from the seeds (the bank's graph mirror), to facts that stay
    inside the period."""
    graph = bank_graph(ctx.engine, ctx.bank_id)
    best_link: dict[str, float] = {}  # neighbour → best seed score × link weight
    with graph.lock:
        for seed, score in seeds.items():
            for other, kind, weight, _ in graph.edges_of(seed):
                if kind != "entity" and other not in seeds:
                    best_link[other] = max(best_link.get(other, 0.0), score * weight)
    times = _event_times(ctx, best_link)
    reached: dict[str, float] = {}
    for memory_id, linked in best_link.items():
        inside = _inside_fraction(
            times.get(memory_id), period, ctx.query_time.mode, ctx.query_time.near
        )
        if inside > 0:
            reached[memory_id] = linked * EXPANSION_DECAY * inside
    return reached


TIMELINE_PARAMS = frozenset({"entity", "start", "end", "order"})

_TIMELINE = """
SELECT me.memory_id, me.t
FROM memory_entities AS me
WHERE me.bank_id = $bank AND list_contains($entities, me.entity_id)
  AND me.t >= $start AND me.t < $end
ORDER BY me.t {order}, me.memory_id
LIMIT $limit
"""


def timeline(ctx: StrategyContext) -> list[StrategyHit]:
    """The memories of ``entity`` in time order (newest first unless ``order="asc"``)."""
    params = ctx.config.strategy_params
    entity = params.get("entity")
    if not isinstance(entity, str) or not entity.strip():
        raise InvalidInputError('the "timeline" strategy needs entity="name or alias"')
    order = params.get("order", "desc")
    if order not in ("asc", "desc"):
        raise InvalidInputError('order must be "asc" or "desc"')
    start = optional_utc(params.get("start"), field="start") or EARLIEST
    end = optional_utc(params.get("end"), field="end") or LATEST
    entity_ids = ctx.entity_ids(entity)
    if not entity_ids:
        return []
    rows = ctx.engine.db.fetchall(
        _TIMELINE.replace("{order}", "DESC" if order == "desc" else "ASC"),
        {
            "bank": ctx.bank_id,
            "entities": entity_ids,
            "start": to_db_time(start),
            "end": to_db_time(end),
            "limit": ctx.pool,
        },
    )
    seen: set[str] = set()
    hits: list[StrategyHit] = []
    for memory_id, _ in rows:
        if memory_id not in seen:
            seen.add(memory_id)
            rank = len(hits) + 1
            hits.append(StrategyHit(memory_id, rank, 1.0 / rank, normalized=1.0))
    return hits
