"""The period a query names, and how to match it: :func:`parse_query_time`.

It finds the period relative to ``now``: an expression ("in June 2024", "last spring"),
"recently", or "our last conversation". Queries about *when we talked* ("what did we discuss
last week") match on ``mentioned_at``; all others on when things happened. The expression's
words are cut from the query the semantic arm sees, so "June" does not drag in every June that
was mentioned; the keyword arm keeps the words that name the calendar ("the 12th of March",
"2021") and drops those that count from ``now`` ("last week").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from agentmem._time import EARLIEST, LATEST
from agentmem.temporal import ParsedTime, find_time_expressions
from agentmem.types import TimeRange

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
#: Facts just outside a period still count, less: "last Friday" said on a Sunday is the
#: first weekend of October give or take a day, and a trip one came back from the day after
#: "the last two weeks of August" was in them. Within NEAR_SHARE of the named period's length
#: (at least NEAR_MIN; for an open period such as "as of September 2023", of the month named)
#: a fact scores up to NEAR_WEIGHT, falling linearly with the gap.
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
        bounded = period.start > EARLIEST and period.end < LATEST
        near = near_margin(period.end - period.start if bounded else named)
        content = _content(content, query)
        keywords = " ".join([content, *(e.text for e in expressions if e.named)])
        return QueryTime(period, mode, content, asks_when, near, keywords)
    if match := _LAST_CONVERSATION.search(query):
        if last_mention is None:
            return QueryTime(None, mode, query, asks_when)
        day = last_mention.replace(hour=0, minute=0, second=0, microsecond=0)
        cut = query[: match.start()] + " " + query[match.end() :]
        period = TimeRange(day, min(LATEST, last_mention + timedelta(seconds=1)))
        near = near_margin(period.end - period.start)
        return QueryTime(period, "mention", _content(cut, query), asks_when, near)
    if match := _RECENTLY.search(query):
        cut = query[: match.start()] + " " + query[match.end() :]
        period = TimeRange(
            max(EARLIEST + timedelta(days=RECENT_DAYS), now) - timedelta(days=RECENT_DAYS),
            min(LATEST, now + timedelta(seconds=1)),
        )
        near = near_margin(period.end - period.start)
        return QueryTime(period, mode, _content(cut, query), asks_when, near)
    return QueryTime(None, mode, query, asks_when)


def _open_ended(query: str, expression: ParsedTime) -> tuple[datetime, datetime]:
    """The period an expression bounds: "before 2020" is everything up to 2020, not 2020.

    ("the week before 16 November 2023" and "since 2021" are expressions of their own.)
    """
    lead = query[: expression.span[0]]
    if _BEFORE.search(lead):
        return EARLIEST, expression.start
    if _AS_OF.search(lead):
        return EARLIEST, expression.end
    if _AFTER.search(lead):
        return expression.end, LATEST
    return expression.start, expression.end


def _content(stripped: str, query: str) -> str:
    """The query without its time words; the whole query if nothing else is left."""
    words = re.sub(r"\s+", " ", stripped).strip(" ,.;:!?")
    return words if re.search(r"\w{3,}", words) else query


def near_margin(named: timedelta) -> timedelta:
    """How far outside a period of length ``named`` a fact still counts as near it."""
    return max(NEAR_MIN, NEAR_SHARE * named)
