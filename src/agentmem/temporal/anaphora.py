"""Times told from the sentence before: "On Monday I flew to Paris. The next day I visited the
Louvre." The second sentence names no date of its own; it is dated from the first one's.

:func:`follow_on` reads such an expression and places it against the previous occurrence of
the same text (retain calls it for the sentences of one message, in order):

- "the next day" / "the following week" / "the day after" → one unit after it;
- "two days later", "a year afterwards", "three weeks after that" → that many units after;
- "the day before" / "the previous week" / "two days earlier" → before it;
- "that day", "that weekend", "that month", "that year", "the same day" → the unit holding it.

A unit shorter than the previous occurrence says nothing of where in it ("In 2019 I moved.
The next day ..."): nothing is dated then. The words must stand alone: "the day after
Christmas" and "next week" name their own dates and are read by the ordinary rules first.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from agentmem._time import EARLIEST, LATEST
from agentmem.temporal.expressions import NUMBER_WORDS, _add_months, _last_day, _period

__all__ = ["follow_on"]

_UNITS = r"(?P<unit>day|morning|afternoon|evening|night|week|fortnight|month|year)"
_COUNT = rf"(?P<count>a|an|{'|'.join(NUMBER_WORDS)}|\d{{1,3}})"
# Not followed by a date of its own ("the day after Christmas", "the week before May 3").
_ALONE = r"(?!\s+(?:the\s+)?(?:\d|[A-Z]))"
_AFTER = (
    re.compile(rf"\bthe\s+(?:next|following)\s+{_UNITS}\b", re.IGNORECASE),
    re.compile(rf"\bthe\s+{_UNITS}\s+after\b{_ALONE}(?!\s+(?:tomorrow|next)\b)", re.IGNORECASE),
)
_BEFORE = (
    re.compile(rf"\bthe\s+(?:previous|preceding)\s+{_UNITS}\b", re.IGNORECASE),
    re.compile(rf"\bthe\s+{_UNITS}\s+before\b{_ALONE}(?!\s+(?:yesterday|last)\b)", re.IGNORECASE),
)
_LATER = re.compile(
    rf"\b{_COUNT}\s+{_UNITS}s?\s+(?P<way>later|afterwards?|after\s+that|earlier|before\s+that)\b",
    re.IGNORECASE,
)
_THAT = re.compile(
    r"\b(?:that|the\s+same)\s+(?P<unit>day|morning|afternoon|evening|night|weekend|week|month"
    r"|year)\b",
    re.IGNORECASE,
)
# How long each unit is, to tell whether the previous occurrence is narrow enough to count
# from ("the next day" after a whole year says nothing).
_SPANS = {
    "day": timedelta(days=1),
    "weekend": timedelta(days=2),
    "week": timedelta(days=7),
    "fortnight": timedelta(days=14),
    "month": timedelta(days=31),
    "year": timedelta(days=366),
}
_PARTS_OF_DAY = {"morning", "afternoon", "evening", "night"}
_TICK = timedelta(microseconds=1)


def follow_on(text: str, start: datetime, end: datetime) -> tuple[datetime, datetime] | None:
    """The interval ``text`` names relative to the previous occurrence ``[start, end)``, or
    None when it names none that way (or one outside the times agentmem holds)."""
    found = _told(text, start, end)
    if found is None or found[0] < EARLIEST or found[1] - _TICK > LATEST:
        return None
    return found


def _told(text: str, start: datetime, end: datetime) -> tuple[datetime, datetime] | None:
    for patterns, sign in ((_AFTER, 1), (_BEFORE, -1)):
        for pattern in patterns:
            if match := pattern.search(text):
                return _shifted(start, end, _unit(match["unit"]), sign)
    if match := _LATER.search(text):
        word = match["count"].lower()
        count = 1 if word in ("a", "an") else NUMBER_WORDS.get(word) or int(word)
        sign = -1 if match["way"].lower().startswith(("earlier", "before")) else 1
        return _shifted(start, end, _unit(match["unit"]), sign * count)
    if match := _THAT.search(text):
        return _holding(start, end, _unit(match["unit"]))
    return None


def _unit(word: str) -> str:
    """A part of a day counts as the day ("the next morning")."""
    word = word.lower()
    return "day" if word in _PARTS_OF_DAY else word


def _shifted(
    start: datetime, end: datetime, unit: str, count: int
) -> tuple[datetime, datetime] | None:
    if end - start > _SPANS[unit]:
        return None
    try:
        if unit in ("day", "week", "fortnight"):
            step = count * _SPANS[unit]
            return start + step, end + step
        months = count * (12 if unit == "year" else 1)
        if start.day == 1 and end.day == 1:  # whole months stay whole months
            return _plus_months(start, months), _plus_months(end, months)
        moved = _plus_months(start, months)  # a day stays a day ("a month later")
        return moved, moved + (end - start)
    except (OverflowError, ValueError):
        return None  # past the years a datetime holds


def _plus_months(moment: datetime, count: int) -> datetime:
    """``moment`` ``count`` months on, on the same day or the month's last."""
    year, month = _add_months(moment.year, moment.month, count)
    return moment.replace(year=year, month=month, day=min(moment.day, _last_day(year, month).day))


def _holding(start: datetime, end: datetime, unit: str) -> tuple[datetime, datetime] | None:
    """The calendar ``unit`` holding ``start`` ("that week": the week of that day)."""
    if end - start > _SPANS[unit]:
        return None
    try:
        period = _period(unit, start, 0)
    except (OverflowError, ValueError):
        return None
    return period.start, period.end
