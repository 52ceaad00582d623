"""Time in recall: what period a query names, and the "temporal" and "timeline" strategies.

* :func:`parse_query_time` finds the period a query is about, relative to ``now``: an
  expression ("in June 2024", "last spring"), "recently", or "our last conversation". Queries
  about *when we talked* ("what did we discuss last week", "what did you tell me yesterday")
  match on ``mentioned_at``; all others on when things happened (a fact's occurrence interval,
  or its mention time when it has none), whenever the fact was said: a plan for the 12th of
  March said in February is dated the 12th of March. The expression's words are cut from the
  query the semantic arm sees, so "June" does not drag in every June that was mentioned; the
  keyword arm keeps the words that name the calendar ("the 12th of March", "2021"), which a
  turn about that date is likely to repeat, and drops those that count from ``now``
  ("last week").
* **temporal**: semantic entry points inside the period or near it (Chroma filtered on the
  facts' time metadata), scored by how much of each fact's interval falls inside (less for
  one just outside, see ``NEAR_SHARE``) and how close it is in meaning, higher when the
  fact's own words date it there (``in_period`` in its details), then one hop along graph
  links to facts that stay inside the period or near it.
* **timeline** (HEBBS): the memories of one entity in time order, within ``start``/``end``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Literal, NamedTuple

from agentmem._time import optional_utc
from agentmem.errors import InvalidInputError
from agentmem.recall.candidates import StrategyHit, cosine_relevance
from agentmem.store.graph import bank_graph
from agentmem.store.records import memories_by_id, to_db_time
from agentmem.temporal import ParsedTime, find_time_expressions
from agentmem.types import TimeRange

if TYPE_CHECKING:
    from agentmem.recall.strategies import StrategyContext

TimeMode = Literal["occurrence", "mention"]

_TALK = re.compile(
    r"\b(discuss(ed|ing)?|talk(ed|ing)?|chat(ted|ting)?|conversations?|spoke|speak|"
    r"told me|tell me|tell you|told you|mention(ed)?|said|say|went over|covered|asked)\b",
    re.IGNORECASE,
)
# "more recently" compares ("Which pet did she adopt more recently?"); it names no period.
_RECENTLY = re.compile(r"\b(?<!more )(?<!less )(recently|lately|of late)\b", re.IGNORECASE)
_LAST_CONVERSATION = re.compile(
    r"\b(last|latest|previous|most recent) "
    r"(conversation|chat|session|talk|time we (talked|spoke))\b",
    re.IGNORECASE,
)
# Questions that ask for a time: their answer is most likely a fact anchored in time.
_ASKS_WHEN = re.compile(
    r"^\W*(when\b|since when\b|how long ago\b|at what time\b|"
    r"(what|which) (year|month|date|day|week|time)\b|on what (date|day)\b|"
    r"in (what|which) (year|month)\b)",
    re.IGNORECASE,
)
_BEFORE = re.compile(r"\b(?:before|prior\s+to|until|till|up\s+to)\s+(?:the\s+)?$", re.IGNORECASE)
_AS_OF = re.compile(r"\b(?:as\s+of|by)\s+(?:the\s+)?$", re.IGNORECASE)
_AFTER = re.compile(r"\b(?:after|later\s+than)\s+(?:the\s+)?$", re.IGNORECASE)
RECENT_DAYS = 7
# Open-ended ranges are clamped to what the stores can hold.
_FLOOR = datetime(1, 1, 2, tzinfo=UTC)
_CEILING = datetime(9999, 12, 30, tzinfo=UTC)
EXPANSION_DECAY = 0.8
#: Added to the score of a fact dated inside the period by its own words (LoCoMo temporal
#: R@10 .842 -> .848 at 0.3-1.0; 0.5 chosen).
DATED_BONUS = 0.5
#: Facts just outside a period still count, less: "last Friday" said on a Sunday is the
#: first weekend of October give or take a day, and a trip one came back from the day after
#: "the last two weeks of August" was in them. Within NEAR_SHARE of the named period's length
#: (at least NEAR_MIN; for an open period such as "as of September 2023", of the month named)
#: a fact scores up to NEAR_WEIGHT, falling linearly with the gap. On LoCoMo's prebuilt banks:
#: temporal R@10 .846 -> .850, overall .793 -> .795, no category lower; flat for shares
#: 0.1-0.5, minimums of half a day to two days and weights 0.3-1.0.
NEAR_SHARE = 0.25
NEAR_MIN = timedelta(days=1)
NEAR_WEIGHT = 0.5


@dataclass(frozen=True, slots=True)
class QueryTime:
    """The period a query names and how to match it.

    Attributes:
        range: The period, or None when the query names none.
        mode: "occurrence" (when things happened) or "mention" (when they were said).
        content_query: The query without its time words, for the semantic arm.
        asks_when: The query asks for a time ("When did ...?"), so facts anchored in time
            are the likely answers.
        near: How far outside the period a fact still counts as near it (see NEAR_SHARE).
    """

    range: TimeRange | None
    mode: TimeMode
    content_query: str
    asks_when: bool = False
    near: timedelta = timedelta(0)
    keyword_query: str = ""

    @property
    def keyword_text(self) -> str:
        """The query the keyword arm sees: the content plus the words naming the calendar."""
        return self.keyword_query or self.content_query


def parse_query_time(
    query: str, now: datetime, last_mention: datetime | None, *, date_order: str = "MDY"
) -> QueryTime:
    """The period ``query`` is about, relative to ``now``.

    Args:
        query: The recall query.
        now: The reference for relative words.
        last_mention: When the bank last learned something ("our last conversation").
        date_order: The bank's reading of numeric dates ("MDY" or "DMY").
    """
    mode: TimeMode = "mention" if _TALK.search(query) else "occurrence"
    asks_when = bool(_ASKS_WHEN.match(query))
    expressions = find_time_expressions(query, now, date_order=date_order)
    if expressions:
        content = query
        for expression in reversed(expressions):
            lo, hi = expression.span
            content = content[:lo] + " " + content[hi:]
        spans = [_open_ended(query, e) for e in expressions]
        period = TimeRange(min(lo for lo, _ in spans), max(hi for _, hi in spans))
        # "before 2020" is open, but the margin is a share of the year it names.
        named = max(e.end - e.start for e in expressions)
        bounded = period.start > _FLOOR and period.end < _CEILING
        near = _near(period.end - period.start if bounded else named)
        content = _content(content, query)
        keywords = " ".join([content, *(e.text for e in expressions if e.named)])
        return QueryTime(period, mode, content, asks_when, near, keywords)
    if match := _LAST_CONVERSATION.search(query):
        if last_mention is None:
            return QueryTime(None, mode, query, asks_when)
        day = last_mention.replace(hour=0, minute=0, second=0, microsecond=0)
        cut = query[: match.start()] + " " + query[match.end() :]
        period = TimeRange(day, last_mention + timedelta(seconds=1))
        near = _near(period.end - period.start)
        return QueryTime(period, "mention", _content(cut, query), asks_when, near)
    if match := _RECENTLY.search(query):
        cut = query[: match.start()] + " " + query[match.end() :]
        period = TimeRange(now - timedelta(days=RECENT_DAYS), now + timedelta(seconds=1))
        near = _near(period.end - period.start)
        return QueryTime(period, mode, _content(cut, query), asks_when, near)
    return QueryTime(None, mode, query, asks_when)


def _open_ended(query: str, expression: ParsedTime) -> tuple[datetime, datetime]:
    """The period an expression bounds: "before 2020" is everything up to 2020, not 2020.

    ("the week before 16 November 2023" and "since 2021" are expressions of their own.)
    """
    lead = query[: expression.span[0]]
    if _BEFORE.search(lead):
        return _FLOOR, expression.start
    if _AS_OF.search(lead):
        return _FLOOR, expression.end
    if _AFTER.search(lead):
        return expression.end, _CEILING
    return expression.start, expression.end


def _content(stripped: str, query: str) -> str:
    """The query without its time words; the whole query if nothing else is left."""
    words = re.sub(r"\s+", " ", stripped).strip(" ,.;:!?")
    return words if re.search(r"\w{3,}", words) else query


def temporal(ctx: StrategyContext) -> list[StrategyHit]:
    """Facts inside the period the query names, closest in meaning first, plus linked facts.

    A query that names no period but asks for one ("When did Caroline ...?") gets the facts
    anchored in time that are closest in meaning.
    """
    period = ctx.query_time.range
    if period is None:
        return _dated(ctx) if ctx.query_time.asks_when else []
    near = ctx.query_time.near
    lo = max(period.start, _FLOOR + near).timestamp() - near.total_seconds()
    hi = min(period.end, _CEILING - near).timestamp() + near.total_seconds()
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
    dated: bool  # the fact has an occurrence of its own


_EVENT_TIME_COLUMNS = """m.id, coalesce(m.occurred_start, m.mentioned_at),
coalesce(m.occurred_end, m.occurred_start, m.mentioned_at), m.mentioned_at,
m.occurred_start IS NOT NULL"""


def _event_times(ctx: StrategyContext, ids: Iterable[str]) -> dict[str, _EventTime]:
    rows = memories_by_id(ctx.engine.db, ctx.bank_id, ids, _EVENT_TIME_COLUMNS)
    return {r[0]: _EventTime(*r[1:]) for r in rows}


def _near(named: timedelta) -> timedelta:
    """How far outside a period of length ``named`` a fact still counts as near it."""
    return max(NEAR_MIN, NEAR_SHARE * named)


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
    start = optional_utc(params.get("start"), field="start") or _FLOOR
    end = optional_utc(params.get("end"), field="end") or _CEILING
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
