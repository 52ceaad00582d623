"""English time expressions resolved to half-open UTC intervals, offline.

Two entry points: :func:`parse_time_expression` for text that *is* a time expression
("last spring", "June 2024") and :func:`find_time_expressions` for every expression inside a
sentence ("What did Alice do last spring?"). Both resolve relative words against a reference
time: when the words were said (retain) or ``now`` (recall).

How it works: a table of regex rules (``_RULES``), each paired with a resolver, proposes
candidates; a few composition steps build longer expressions out of neighbouring candidates
("early" + "June", "between" March "and" May, "since" 2021, "Friday" + "night"); the longest
non-overlapping candidates win. ``dateparser`` is a fallback of :func:`parse_time_expression`
only, for single-date forms the rules miss ("June 5th at 3pm"); it is imported on first use.

Conventions, where English leaves the choice open:

- Calendar arithmetic is done in UTC, like every time agentmem stores; an aware reference in
  another zone is converted first (so "yesterday" is the UTC day before the reference's UTC day).
- Weeks are ISO weeks, Monday to Sunday. "last week" is the previous Monday-Sunday week, "next
  week" the following one; "last weekend" is the Saturday-Sunday of the previous week; a long
  (three-day, holiday) weekend adds the Friday and the Monday.
- Seasons are meteorological, northern hemisphere: spring Mar-May, summer Jun-Aug, autumn/fall
  Sep-Nov, winter Dec-Feb. "winter 2024" is the winter holding January 2024 (Dec 2023-Feb 2024),
  as in "the 2026 Winter Olympics".
- A calendar name without a year (month, season, holiday, "June 5th", "Q3", "the 28th") is
  read by the tense of its clause (``agentmem.temporal.tense``). Where the clause points
  forward ("we will launch in April", "the invoice is due on March 3", "I'm flying to Kyoto
  on March 3") it is the coming occurrence, the first not yet over: "in April" said on
  2025-02-20 is April 2025, and so is "in February" said that day. A day in a timeless
  present ("my birthday is on May 12") is the coming one too. Otherwise (past tense, or a
  clause that does not say) it is the most recent occurrence that has started by the
  reference: "in June" said on 2025-01-15 is June 2024, said on 2025-06-10 or 2025-07-10 it
  is June 2025. "the 28th" is the 28th of a month, the coming or the latest one likewise
  (months without that day skipped). "last <name>" is the most recent
  occurrence that is entirely over: "last spring" said in January 2025 or in April 2025 is
  spring 2024, said in July 2025 spring 2025; "last June" said in June 2025 is June 2024.
  "this <name>" is the occurrence holding the reference, else the coming one if it starts this
  calendar year, else the one just past; told in the past (not of a plan), the most recent
  that has started ("Phoenix was so hot this summer" said in February: last summer). "next
  <name>" is the first that starts after it.
- A bare weekday ("Friday", "on Friday") is the most recent such day before the reference
  day, unless its clause points forward as above ("we'll meet on Friday", "I can't wait for
  the weekend"): then the next such day (the coming weekend). "this Friday" is the Friday
  of the reference's week (told in the past when it is still to come: the Friday before;
  "this weekend" likewise), "next Friday" the Friday of the following week.
- "N days/weeks/months/years ago" (and "in N ...", "N ... from now", "N ... away") is the
  whole calendar unit (day, ISO week, month, year) holding the reference shifted by N units.
  "the past/last N days" is rolling instead: from midnight N days back up to the reference; so
  is "for N days" in a present perfect ("I've been running for three months"), which holds
  up to the time of speaking (elsewhere "for" + an amount says how long, not when). A
  fortnight is 2 weeks.
- Parts of the day: morning 06-12, afternoon 12-18, evening 18-24, night 18-06. A time of
  day beside a day is that hour ("tomorrow at 6am", "at 3pm on Friday"); a bare hour needs
  a part of the day to say morning or evening ("tonight at 8"), else the day stays.
- "early/mid/late" split a year into Jan-Apr, May-Aug, Sep-Dec, a month into days 1-10, 11-20,
  21-end, a decade into years 0-3, 4-6, 7-9. "beginning/start/end of" are narrower: the first
  or last month of a year (or quarter, season), the first or last 7 days of a month, Mon-Tue or
  Fri-Sun of a week, the first or last two years of a decade.
- "between A and B" / "from A to B" runs from the start of A to the end of B; a bare A is
  taken as its latest occurrence before B ends ("from November to February 2024" starts in
  November 2023), so "between March and May" is the most recent March-May whose May has
  started. "since A" runs from the start of A up to the reference, "after A" (A past) from
  its end up to the reference, "before A" (A to come) from the reference up to A; "by",
  "until" or "through" A (to come; through a day or a month only) through A's end.
- "N units ago" before a time told from now shifts it back: "a year ago yesterday" is the day
  a year before yesterday, "two years ago last month" that month two years earlier. A
  yearly name followed by "this/next/last year" is its occurrence in that calendar year
  ("Thanksgiving this year", "in May next year"); "the first/.../last <weekday> of <month>"
  is read like a date without a year. "the Monday before last" is a week before last Monday,
  "the Friday after next" the Friday of the week after next; "N weekends ago" counts
  weekends as "last weekend" does, "N Fridays ago" counts back from last Friday ("two
  Fridays ago": the one before it). "this coming Friday" / "this coming weekend" are the
  next to come; "a week or so ago" is a week ago, "a week or two ago", "in a day or two",
  "two or three days ago" and "in 2-3 weeks" run from the nearer unit through the farther.
  "Sunday the 15th" is the nearest 15th that is a Sunday, ahead or behind as its clause
  points. A modified date ("in early June", "at the end of May") is read by the tense from
  where its modifier begins.
- "the week before" / "the week after" (and day, night, month, year...) are relative to the
  reference: last week and next week. Followed by a date they count from that date instead,
  as if said on it: "the week before 16 November 2023" is the ISO week before that day's week,
  "two days after May 5" is May 7, "the Sunday before October 25, 2022" is October 23.
- "05/06/2024", "05.06.2024" and "05-06-2024" are month/day/year, or day/month/year with
  ``date_order="DMY"``, unless one of the numbers cannot be a month (> 12).
- "the 90s" is the 1990s; two-digit decades 30-90 and 20 are 19xx, 00 and 10 are 20xx.
- Holidays are the US/Western ones: Thanksgiving is the fourth Thursday of November, Easter
  the Western (Gregorian) date; "Christmas" alone is Dec 24-26, "Christmas Day" Dec 25.
  "The holidays" (the holiday season) are Dec 24-Jan 1, and only when said within 45 days of
  them ("this/last holiday season" whenever said): in July they may be the summer's.
- "Back in March" opening a clause looks back from a while after: the last March that is
  over, even said on March 3 ("I'll be back in March" is a return, read by its tense).

What is deliberately *not* matched, to keep false positives out of retain and recall:

- Month names only when capitalised ("I may go", "they march" are no dates) and, when they
  stand alone, only after a preposition or modifier ("in June", "since May", "early March");
  "June said hi" and "May I ask?" are no dates.
- A bare four-digit year only after a preposition ("in 2021", "since 2021", "of 2021") and not
  glued to other characters or followed by a plural noun ("INV-2021", "room 2021", "in 2000
  cases" are no dates).
- A weekday's abbreviation (Mon, Tue, Wed, Thu, Fri, Sat, Sun) only capitalised and never
  after "the" ("I sat down", "they wed", "in the Sun" are no dates); a year of two digits
  ("'19") only after a preposition, like a bare year.
- A bare weekday or holiday only after a preposition (or "come"), at the end of a clause
  ("What did Alice do Friday?"), before a part of the day ("Friday night") or before a
  preposition of its clause ("met Tuesday for drinks"): "Sunday school", "Friday was fun"
  and "a Christmas tree" are no dates; nor is a holiday between a determiner and a noun of a
  thing even after a preposition ("knocked over the Christmas tree"; "at the Christmas
  party" is).
- Bare seasons, "the weekend" and "the third quarter" only after a preposition; a season
  followed by "of" only with a year: "a spring in her step", "the fall of Rome" are no dates.
- Numeric dates need a four-digit year ("3/4" is a fraction) and are no part of a version
  or a longer run of numbers ("v1.2.2025", "release 1.2.2025", "10.3.2025.1").
- "the 28th" only after "on", "by", "until", "before", "after", "since", "from" or
  "through", and not before a noun: "the 5th floor", "in the 4th" (quarter) are no dates.
"""

from __future__ import annotations

import calendar
import re
from bisect import bisect_right
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, replace
from datetime import MAXYEAR, MINYEAR, UTC, date, datetime, timedelta, timezone
from typing import Literal

from agentmem._pattern_gates import IGNORECASE_TWINS, Gates
from agentmem._time import EARLIEST, LATEST, to_utc
from agentmem.errors import InvalidInputError
from agentmem.temporal.tense import (
    MOVED_FROM,
    RANGE_JOINS,
    STARTING,
    Direction,
    an_occasion_is_due,
    asks_without_a_verb,
    clause_direction,
    in_simple_present,
    lasts_until_now,
    moved_to,
    recurs,
    tells_of_a_plan,
)

__all__ = [
    "DATE_ORDERS",
    "ParsedTime",
    "checked_date_order",
    "find_time_expressions",
    "may_read_tense",
    "names_a_time_of_day",
    "parse_time_expression",
    "time_of_day_alone",
]


@dataclass(frozen=True, slots=True)
class ParsedTime:
    """A time expression found in text, resolved to a half-open UTC interval.

    Attributes:
        start: First instant of the interval, aware UTC, inclusive.
        end: End of the interval, aware UTC, exclusive (like ``agentmem.types.TimeRange``).
        granularity: Size of the interval: "hour", "part_of_day", "day", "week", "weekend",
            "month", "quarter", "half", "season", "year", "decade", "holiday" (a multi-day
            holiday such as Christmas) or "range" (anything built from several units).
        text: The expression as written in the input.
        span: ``(start, end)`` character offsets of ``text`` in the input.
        relative: True when the interval depends on the reference time ("last June"),
            False for absolute expressions ("June 2024").
        named: True when the words name the calendar (a month, a day or year number, a
            holiday: "the 12th of March", "Christmas", "2021"), which a text about that date
            is likely to repeat; False for words that count from the reference ("last week").
    """

    start: datetime
    end: datetime
    granularity: str
    text: str
    span: tuple[int, int]
    relative: bool
    named: bool = False


def parse_time_expression(
    text: str, reference: datetime, *, date_order: str = "MDY"
) -> ParsedTime | None:
    """Parse text that is a time expression as a whole.

    Surrounding punctuation and one leading preposition ("in June", "during 2021") are allowed;
    text holding anything more ("Alice moved in June") gives None — use
    :func:`find_time_expressions` for sentences. Forms the rules miss are handed to
    ``dateparser`` when the text carries a date cue (a month or weekday name, a clock time, a
    numeric date, "ago").

    Args:
        text: The expression, e.g. "last spring", "Q3 2023", "2024-06-05".
        reference: When the expression was said; relative words resolve against it. A naive
            datetime means UTC.
        date_order: How to read a numeric date whose day and month could both be either
            ("03/04/2025"): "MDY" (March 4) or "DMY" (3 April).

    Returns:
        The resolved interval, or None when the text is not a time expression.

    Raises:
        InvalidInputError: ``text`` is not a string, ``reference`` is not a datetime or
            ``date_order`` is not "MDY" or "DMY".
    """
    text = _checked_text(text)
    at = _Reading(to_utc(reference, field="reference"), checked_date_order(date_order))
    covering = [c for c in _candidates(text, at) if _covers_text(text, c)]
    if covering:
        best = min(covering, key=lambda c: (c.start - c.end, c.order))
        return _parsed(text, best)
    return _parse_with_dateparser(text, at)


def find_time_expressions(
    text: str, reference: datetime, *, date_order: str = "MDY"
) -> list[ParsedTime]:
    """Find every time expression inside a sentence or question.

    Longer expressions win over the shorter ones they overlap ("between March and May" over
    "March"); the results do not overlap and are in the order they appear. Only the rules are
    used here, never ``dateparser``, so the call is fast and never invents a date.

    Args:
        text: Any text, e.g. "What happened to Alice in June 2024?".
        reference: When the text was said; relative words resolve against it. A naive datetime
            means UTC.
        date_order: "MDY" or "DMY", as for :func:`parse_time_expression`.

    Returns:
        The expressions found, left to right; empty when there are none.

    Raises:
        InvalidInputError: ``text`` is not a string, ``reference`` is not a datetime or
            ``date_order`` is not "MDY" or "DMY".
    """
    text = _checked_text(text)
    at = _Reading(to_utc(reference, field="reference"), checked_date_order(date_order))
    ranked = sorted(
        (c for c in _candidates(text, at) if c.in_context),
        key=lambda c: (c.start - c.end, c.order),
    )
    # Longest first, each kept unless it overlaps one kept before; the kept spans are
    # disjoint, so by start a new one can only overlap its two neighbours.
    chosen: list[_Candidate] = []
    starts: list[int] = []
    for candidate in ranked:
        i = bisect_right(starts, candidate.start)
        if i > 0 and chosen[i - 1].end > candidate.start:
            continue
        if i < len(chosen) and chosen[i].start < candidate.end:
            continue
        starts.insert(i, candidate.start)
        chosen.insert(i, candidate)
    return [_parsed(text, c) for c in chosen]


# --------------------------------------------------------------------------------------------
# Intervals and calendar arithmetic

_DAY = timedelta(days=1)
_HOUR = timedelta(hours=1)
# Re-anchoring "from November to February 2024" asks for the November before February's end.
_TICK = timedelta(microseconds=1)


@dataclass(frozen=True, slots=True)
class _Interval:
    start: datetime
    end: datetime
    granularity: str
    relative: bool


def _midnight(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


def _days(first: date, last: date, granularity: str, relative: bool) -> _Interval:
    """The days ``first`` to ``last``, both included."""
    return _Interval(_midnight(first), _midnight(last) + _DAY, granularity, relative)


def _add_months(year: int, month: int, count: int) -> tuple[int, int]:
    index = year * 12 + month - 1 + count
    return index // 12, index % 12 + 1


def _months(year: int, month: int, count: int, granularity: str, relative: bool) -> _Interval:
    """``count`` whole months starting with ``month`` of ``year``."""
    end_year, end_month = _add_months(year, month, count)
    return _Interval(
        _midnight(date(year, month, 1)),
        _midnight(date(end_year, end_month, 1)),
        granularity,
        relative,
    )


def _last_day(year: int, month: int) -> date:
    return date(year, month, calendar.monthrange(year, month)[1])


def _monday(day: date) -> date:
    return day - timedelta(days=day.weekday())


def _period(unit: str, moment: datetime, offset: int) -> _Interval:
    """The calendar ``unit`` holding ``moment``, shifted by ``offset`` units (relative)."""
    today = moment.date()
    match unit:
        case "hour":
            start = moment.replace(minute=0, second=0, microsecond=0) + offset * _HOUR
            return _Interval(start, start + _HOUR, unit, True)
        case "day":
            day = today + offset * _DAY
            return _days(day, day, unit, True)
        case "week":
            monday = _monday(today) + timedelta(weeks=offset)
            return _days(monday, monday + 6 * _DAY, unit, True)
        case "weekend":
            saturday = _monday(today) + timedelta(weeks=offset, days=5)
            return _days(saturday, saturday + _DAY, unit, True)
        case "month":
            year, month = _add_months(today.year, today.month, offset)
            return _months(year, month, 1, unit, True)
        case "quarter":
            first_month = (today.month - 1) // 3 * 3 + 1
            year, month = _add_months(today.year, first_month, 3 * offset)
            return _months(year, month, 3, unit, True)
        case "year":
            return _months(today.year + offset, 1, 12, unit, True)
        case "decade":
            return _months(today.year // 10 * 10 + 10 * offset, 1, 120, unit, True)
    raise ValueError(f"unknown calendar unit {unit!r}")


Which = Literal["latest", "last", "this", "next", "coming"]
# A yearly occurrence: its first and last day in the year that names it, e.g. winter 2024 ->
# (2023-12-01, 2024-02-29). Raises ValueError when that year has none (February 29).
Occurrence = Callable[[int], tuple[date, date]]

_WHICH: dict[str | None, Which] = {
    None: "latest",
    "last": "last",
    "previous": "last",
    "this": "this",
    "current": "this",
    "next": "next",
    "coming": "next",
}


def _which(word: str | None) -> Which:
    return _WHICH[word.lower() if word else None]


def _occurrences(occurrence: Occurrence, years: range) -> list[tuple[date, date]]:
    """The occurrences of ``years`` that exist (not February 29 of most years, nor a winter
    before year 1), in order."""
    spans: list[tuple[date, date]] = []
    for year in years:
        with suppress(ValueError):
            spans.append(occurrence(year))
    return spans


def _annual(occurrence: Occurrence, today: date, which: Which) -> tuple[date, date] | None:
    """Pick one yearly occurrence relative to ``today`` (rules in the module docstring)."""
    # February 29 recurs up to eight years apart, so look that far back (and ahead).
    spans = _occurrences(occurrence, range(max(1, today.year - 8), min(9999, today.year + 9) + 1))
    started = [s for s in spans if s[0] <= today]
    over = [s for s in spans if s[1] < today]
    upcoming = [s for s in spans if s[0] > today]
    if which == "this":
        holding = [s for s in started if today <= s[1]]
        if holding:
            return holding[-1]
        if upcoming and upcoming[0][0].year == today.year:
            return upcoming[0]
        return over[-1] if over else None
    if which == "next":
        return upcoming[0] if upcoming else None
    if which == "coming":
        not_over = [s for s in spans if s[1] >= today]
        return not_over[0] if not_over else None
    chosen = started if which == "latest" else over
    return chosen[-1] if chosen else None


DateOrder = Literal["MDY", "DMY"]
DATE_ORDERS: tuple[DateOrder, ...] = ("MDY", "DMY")


@dataclass(frozen=True, slots=True)
class _Reading:
    """How to read the expressions of one text.

    ``ref`` is when the text was said; ``date_order`` how to read "03/04/2025"; ``by_tense``
    False reads a calendar name without a year as its latest occurrence whatever the clause
    says (a range re-anchoring its first end, see ``_join``); ``onward`` as its coming one
    from ``ref`` (a trip's return read from its start, see ``_back_after``).
    """

    ref: datetime
    date_order: DateOrder = "MDY"
    by_tense: bool = True
    onward: bool = False


_SINCE_BEFORE = re.compile(r"\bsince\s+$", re.IGNORECASE)


def _tense_of(match: re.Match[str], at: _Reading) -> Direction | None:
    """The direction of the clause around ``match``, read from where its date begins: at a
    modifier before it ("is at the end of May", "fly out in late April") if there is one."""
    if at.onward:
        return "forward"
    if not at.by_tense:
        return None
    text, start = match.string, match.start()
    modifier = _just_before(_MODIFIER_BEFORE, text, start)
    if modifier is not None:
        start = modifier.start()
    if _just_before(_SINCE_BEFORE, text, start):
        return "past"  # "since Christmas": a time that has begun, whatever the verb
    return clause_direction(text, start, match.end())


def _points_forward(match: re.Match[str], at: _Reading, *, daily: bool) -> bool:
    """Whether a name without a year means its coming occurrence: in a clause that points
    forward, or for a day (``daily``) in a timeless present ("my birthday is on May 12")."""
    direction = _tense_of(match, at)
    return direction == "forward" or (daily and direction == "present")


def _which_for(
    match: re.Match[str], at: _Reading, rel: str | None = None, *, daily: bool = False
) -> Which:
    """The occurrence a calendar name means: as "last/this/next" say, else by the clause's
    tense: the coming one (not yet over) when it points forward, else the latest."""
    if rel:
        which = _which(rel)
        return "latest" if which == "this" and _told_as_past(match, at) else which
    if at.onward:
        return "coming"
    if _just_before(_LOOKING_BACK, match.string, match.start()):
        return "last"
    return "coming" if _points_forward(match, at, daily=daily) else "latest"


def _told_as_past(match: re.Match[str], at: _Reading) -> bool:
    """Whether "this <name>" at ``match`` is told in the past, of the occurrence that has begun
    rather than one to come: "We went camping this weekend" said on a Monday, "Phoenix was so
    hot this summer" said in February; not what was planned, booked or set out to do then
    ("I decided to go to Spain this summer")."""
    return _tense_of(match, at) == "past" and not tells_of_a_plan(
        match.string, match.start(), match.end()
    )


# "Back in March, we ..." opening a clause looks back from a while after: the last March that
# is over ("I'll be back in March" is a return, so it must open the clause).
_LOOKING_BACK = re.compile(
    r"(?:^|[.!?,;:\n]\s*|\bway\s+)back\s+(?:in|on|during|at|over)\s+(?:the\s+)?$", re.IGNORECASE
)


def _yearly(
    occurrence: Occurrence,
    year: int | None,
    match: re.Match[str],
    at: _Reading,
    granularity: str,
    rel: str | None = None,
) -> _Interval | None:
    """An occurrence in an explicit year (absolute) or picked relative to the reference."""
    if year is not None:
        first, last = occurrence(year)
        return _days(first, last, granularity, False)
    if match.groupdict().get("yrel"):
        first, last = occurrence(at.ref.year + _REL_OFFSETS[match["yrel"].lower()])
        return _days(first, last, granularity, True)
    daily = granularity in ("day", "holiday", "range")
    span = _annual(occurrence, at.ref.date(), _which_for(match, at, rel, daily=daily))
    return None if span is None else _days(*span, granularity, True)


# --------------------------------------------------------------------------------------------
# Vocabulary

_MONTH_NUMBERS = {
    name[:3].lower(): number for number, name in enumerate(calendar.month_name) if name
}
_FULL_WEEKDAYS = frozenset(name.lower() for name in calendar.day_name)
_SHORT_WEEKDAYS = ["mon", "tue tues", "wed weds", "thu thur thurs", "fri", "sat", "sun"]
_WEEKDAYS = {name.lower(): number for number, name in enumerate(calendar.day_name)} | {
    short: number for number, shorts in enumerate(_SHORT_WEEKDAYS) for short in shorts.split()
}
#: Numbers written as words, as counts of units ("two weeks ago").
NUMBER_WORDS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
}
_PARTS_OF_DAY = {"morning": (6, 12), "afternoon": (12, 18), "evening": (18, 24), "night": (18, 30)}
_SEASONS: dict[str, tuple[int, int]] = {  # first month, offset of its year from the name's year
    "spring": (3, 0),
    "summer": (6, 0),
    "autumn": (9, 0),
    "fall": (9, 0),
    "winter": (12, -1),
}
_DECADE_WORDS = {
    "twenties": 1920,
    "thirties": 1930,
    "forties": 1940,
    "fifties": 1950,
    "sixties": 1960,
    "seventies": 1970,
    "eighties": 1980,
    "nineties": 1990,
}


def _easter(year: int) -> date:
    """Western Easter Sunday (the anonymous Gregorian algorithm)."""
    a, b, c = year % 19, year // 100, year % 100
    d, e = divmod(b, 4)
    g = (8 * b + 13) // 25
    h = (19 * a + b - d - g + 15) % 30
    i, k = divmod(c, 4)
    l_ = (32 + 2 * e + 2 * i - h - k) % 7
    m = (a + 11 * h + 22 * l_) // 451
    month, day = divmod(h + l_ - 7 * m + 114, 31)
    return date(year, month, day + 1)


def _thanksgiving(year: int) -> date:
    first = date(year, 11, 1)
    return first + timedelta(days=(3 - first.weekday()) % 7 + 21)


def _one_day(month: int, day: int) -> Occurrence:
    return lambda year: (date(year, month, day), date(year, month, day))


_HOLIDAYS: dict[str, Occurrence] = {
    "christmas eve": _one_day(12, 24),
    "christmas day": _one_day(12, 25),
    "christmas": lambda y: (date(y, 12, 24), date(y, 12, 26)),
    "xmas": lambda y: (date(y, 12, 24), date(y, 12, 26)),
    "new years eve": _one_day(12, 31),
    "new years day": _one_day(1, 1),
    "new years": lambda y: (date(y - 1, 12, 31), date(y, 1, 1)),
    "new year": lambda y: (date(y - 1, 12, 31), date(y, 1, 1)),
    "holidays": lambda y: (date(y - 1, 12, 24), date(y, 1, 1)),  # the season, Christmas Eve on
    "thanksgiving": lambda y: (_thanksgiving(y), _thanksgiving(y)),
    "good friday": lambda y: (_easter(y) - 2 * _DAY, _easter(y) - 2 * _DAY),
    "easter sunday": lambda y: (_easter(y), _easter(y)),
    "easter monday": lambda y: (_easter(y) + _DAY, _easter(y) + _DAY),
    "easter": lambda y: (_easter(y) - 2 * _DAY, _easter(y) + _DAY),
    "halloween": _one_day(10, 31),
    "valentines day": _one_day(2, 14),
    "independence day": _one_day(7, 4),
}

# --------------------------------------------------------------------------------------------
# Regex fragments. Rules are compiled case-insensitive; month names switch that off locally.

_MONTH = (
    r"\b(?P<month>(?-i:January|February|March|April|May|June|July|August|September|October"
    r"|November|December)\b|(?-i:Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)\b\.?"
    # Chats write months in lower case: the names no other word spells ("in january", "by
    # sept"), and "march" and "may" beside a day's number ("march 9th", "the 9th of may";
    # not "we may 2 go": "2" is "to").
    r"|(?-i:january|february|april|june|july|september|october|november|december"
    r"|jan|feb|apr|jun|jul|aug|sept|sep|oct|nov)\b"
    r"|(?-i:march|may)(?=\s+(?:the\s+)?\d{1,2}(?:st|nd|rd|th)\b)"
    r"|(?:(?<=\d\s)|(?<=\d[snrt][tdh]\s)|(?<=\d[snrt][tdh]\sof\s))(?-i:march|may)\b)"
)
# The number of a day of the month, 1 to 31 ("3", "03", "31").
_DAY_DIGITS = r"(?:3[01]|[12]\d|0?[1-9])"
_DAY_OF_MONTH = rf"(?P<day>{_DAY_DIGITS})(?:st|nd|rd|th)?(?!\w)"
# A day of the month spelled out, as said aloud: "the third of May", "June twenty-first".
_UNIT_ORDINALS = (  # noqa: SIM905 (a list of words reads best as words)
    "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth "
    "thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth"
).split()
_DAY_WORDS = {
    **{word: n for n, word in enumerate(_UNIT_ORDINALS, start=1)},
    "twentieth": 20,
    "thirtieth": 30,
    **{f"twenty{word}": 20 + n for n, word in enumerate(_UNIT_ORDINALS[:9], start=1)},
    "thirtyfirst": 31,
}
_DAY_WORD = (
    r"(?P<day_word>(?:twenty[-\s]?|thirty[-\s]?(?=first))?(?:"
    + "|".join(sorted(_UNIT_ORDINALS, key=len, reverse=True))
    + r")|twentieth|thirtieth)(?![\w-])"
)
_ANY_DAY = rf"(?:{_DAY_OF_MONTH}|{_DAY_WORD})"
# The first day of a range of days ("12-15 May", "the 3rd to the 5th of June", "between 12
# and 15 May"); "and" joins two days only after "between" ("on 12 and 15 May" are two days).
_FIRST_DAY = rf"(?P<first>{_DAY_DIGITS})(?:st|nd|rd|th)?"
_JOINS_BUT_AND = "|".join(re.escape(word) for word in sorted(RANGE_JOINS - {"and"}))
_FIRST_DAY_TO = (
    rf"(?:(?P<between>\bbetween\s+)|(?<![\w/.-]))(?:the\s+)?{_FIRST_DAY}\s*"
    rf"(?(between)and|(?:{_JOINS_BUT_AND}))\s*(?:the\s+)?"
)
# The year of a date: any four digits ("31 December 9999" is no December 31 of this year; a
# year datetime cannot hold makes the date unreal, see _dates_unreal). Bare years are narrower.
_YEAR = r"(?:(?P<year>\d{4})|['’](?P<yy>\d{2}))(?!\w)"
_FULL_YEAR = r"(?P<year>\d{4})(?!\w)"
_NUMBER = (
    r"(?P<n>\d{1,4}|a\s+couple(?:\s+of)?|couple\s+of|a\s+few|few|an?|"
    + "|".join(NUMBER_WORDS)
    + r")"
)
# ... and as chats abbreviate them ("last wk", "2 wks ago", "a yr ago"), see _unit_of.
_CALENDAR_UNITS = "day|weekend|week|wk|fortnight|month|mth|year|yr|decade"
_UNIT = rf"(?P<unit>hour|{_CALENDAR_UNITS})s?"
_CALENDAR_UNIT = rf"(?P<unit>{_CALENDAR_UNITS})s?"
_REL = r"(?P<rel>last|previous|this|next|coming)"
# The second of two amounts: "a week or two ago", "in a day or two".
_MORE = r"(?P<more>two|three|2|3)"
# The first of two amounts, before the second's unit: "two or three days ago", "in 2-3 weeks".
_FEW = r"(?:(?P<few>\d{1,3}|" + "|".join(NUMBER_WORDS) + r")\s*(?:or|to|-|–)\s*)"
# A weekend with a day off beside it: "the long weekend", "a three-day weekend".
_LONG = r"(?P<long>long|three[-\s]day|3[-\s]day|holiday|bank\s+holiday)"
# A weekday's name, or its abbreviation as chat writes it, capitalised ("on Sat", "next Wed";
# "sat", "wed" are verbs), or in lower case right after "on", "this", "next", "last", "till"
# or "until" ("meeting w/ sarah on thurs"; not "sun", nor "sat nav").
_WEEKDAY = (
    r"(?P<weekday>monday|tuesday|wednesday|thursday|friday|saturday|sunday"
    r"|(?-i:Mon|Tues?|Weds?|Thu(?:rs?)?|Fri|Sat|Sun)(?![a-z])"
    r"|(?:(?<=\bon\s)|(?<=\bthis\s)|(?<=\bnext\s)|(?<=\blast\s)|(?<=\btill\s)|(?<=\buntil\s))"
    r"(?-i:mon|tues?|weds?|thu(?:rs?)?|fri|sat)(?![a-z])(?!\s+nav\b))"
)
# "Thanksgiving this year", "in May next year", "Q1 of next year": the occurrence in the year
# named so.
_NAMED_YEAR = r"(?:,?\s+(?:of\s+)?(?P<yrel>this|next|last)\s+year\b)"
_HOLIDAY = (
    r"(?P<holiday>christmas\s+eve|christmas\s+day|christmas|xmas"
    r"|new\s+year['’]?s\s+eve|new\s+year['’]?s\s+day|new\s+year['’]?s|new\s+year"
    r"|thanksgiving(?:\s+day)?|good\s+friday|easter\s+sunday|easter\s+monday|easter"
    r"|halloween|valentine['’]?s\s+day|independence\s+day)"
)
# The small words that may follow a date: prepositions, conjunctions, a subject or a verb.
_SMALL_WORDS_AFTER = (
    r"at|and|or|in|on|for|to|with|when|so|but|because|if|then|as|by|before|after|until|till"
    r"|through|thru|from|we|i|you|he|she|they|it|is|was|will"
)
# No noun after a day's number ("the 5th floor", "May 12 to 15 people"): only those words.
_NO_NOUN_AFTER = rf"(?!\s+(?!(?:{_SMALL_WORDS_AFTER})\b)[a-z])"
_ISO_GUARD_BEFORE = r"(?<![\w/.:-])"
_ISO_GUARD_AFTER = r"(?![\w/:-]|\.\d)"

# Context: what may stand right before a word that is a date only in context ("in June").
_WINDOW = 48


def _just_before(pattern: re.Pattern[str], text: str, at: int) -> re.Match[str] | None:
    """``pattern`` (anchored with ``$``) ending right at ``text[at]``, read in the
    :data:`_WINDOW` characters before it."""
    return pattern.search(text, max(0, at - _WINDOW), at)


_PREPOSITION_BEFORE = re.compile(
    r"(?:\b(?:in|during|on|of|since|throughout|around|until|till|by|before|after|through|thru"
    r"|from|between|over|at|early|mid|late|come)\s+(?:the\s+)?|\bmid-\s*)$",
    re.IGNORECASE,
)
# "on", "at", "over" and "around" are left out: "over 2000", "around 1500" are amounts.
_YEAR_PREPOSITION_BEFORE = re.compile(
    r"(?:\b(?:in|during|of|since|throughout|until|till|by|before|after|through|from|between"
    r"|early|mid|late|year)\s+|\bmid-\s*)$",
    re.IGNORECASE,
)
_CLAUSE_END_AFTER = re.compile(r"\s*(?:[.,;:!?)\]]|$)")


def _after_preposition(text: str, match: re.Match[str]) -> bool:
    start = match.start()
    return _just_before(_PREPOSITION_BEFORE, text, start) is not None


_BY_BEFORE = re.compile(r"\bby\s+$", re.IGNORECASE)
_NAME_AFTER = re.compile(r"\s+[A-Z][a-z]")


def _month_in_context(text: str, match: re.Match[str]) -> bool:
    """A month alone is a date after a preposition, except a first name after "by" with a
    family name after it: "a book by May Sarton", "a song by June Carter"; after "for" or
    "to" only what is moved, booked or planned to it ("the launch slipped to March", "the
    trip is planned for June", not "a gift for June", "talk to May")."""
    start = match.start()
    if not _after_preposition(text, match):
        return moved_to(text, start)
    return not (_just_before(_BY_BEFORE, text, start) and _NAME_AFTER.match(text, match.end()))


_FOR_BEFORE = re.compile(r"\bfor\s+(?:the\s+)?$", re.IGNORECASE)


def _weekend_in_context(text: str, match: re.Match[str]) -> bool:
    """ "the weekend" is a date after a preposition, "for" included ("can't wait for the
    weekend"); "for" is left out elsewhere ("a gift for May")."""
    start = match.start()
    return _after_preposition(text, match) or (_just_before(_FOR_BEFORE, text, start) is not None)


def _holiday_season_in_context(text: str, match: re.Match[str]) -> bool:
    """ "this/last holiday season" anywhere; "the holidays" like "the weekend" ("over the
    holidays", "home for the holidays"; not "the holidays were fun")."""
    return bool(match["rel"]) or _weekend_in_context(text, match)


def _bare_needs_preposition(text: str, match: re.Match[str]) -> bool:
    """A calendar name without last/this/next or a year is a date only after a preposition."""
    groups = match.groupdict()
    return bool(groups.get("rel") or groups.get("year")) or _after_preposition(text, match)


# A time of day: "3pm", "8", "7:30", "10 a.m.", "noon", "midnight".
_CLOCK = (
    r"(?:(?P<h>\d{1,2})(?:[:.](?P<m>\d{2}))?(?:\s*(?P<half>am|pm|a\.m\.|p\.m\.))?(?!\w)"
    r"|(?P<noon>noon)\b|(?P<midnight>midnight)\b)"
)
# A time of day after a day: "Tuesday at 3pm", "Friday at 8", "Sunday at noon".
_CLOCK_AFTER = re.compile(rf"\s+at\s+{_CLOCK}", re.IGNORECASE)


# What follows a day said as when something happened: "met Tuesday for drinks", "off Monday
# and Tuesday", "Easter with the family" (not a noun: "Sunday school", "Friday was fun").
_ADVERBIAL_AFTER = re.compile(
    r"\s+(?:for|with|at|in|and|or|until|till|through|after|before)\b", re.IGNORECASE
)


# A holiday's name between a determiner and a noun names a kind of thing ("knocked over the
# Christmas tree", "my Halloween costume"), unless the noun is a time or an occasion of that
# day ("the Christmas party", "over the Easter break"); without the determiner the noun may
# open the next clause ("Since Halloween the shop has been closed").
_DETERMINER_BEFORE = re.compile(
    r"\b(?:the|a|an|my|our|your|his|her|their|this|that)\s+$", re.IGNORECASE
)
_HOLIDAY_THING_AFTER = re.compile(
    r"\s+(?!(?:eve|day|morning|afternoon|evening|night|week|weekend|break|holidays?|vacation"
    r"|season|time|period|party|parties|dinner|lunch|brunch|breakfast|market|markets|concert"
    r"|parade|service|mass|sale|sales|trip|shopping|fireworks|celebrations?|festival|feast"
    rf"|{_SMALL_WORDS_AFTER})\b)[a-z]",
    re.IGNORECASE,
)


def _named_day_in_context(text: str, match: re.Match[str]) -> bool:
    """A weekday or holiday alone is a date after a preposition, at the end of a clause,
    before a time of day ("the call is Tuesday at 3pm"), before a preposition of its clause
    ("we met Tuesday for drinks") or as what is some time away ("Christmas is still a few
    weeks away": Christmas, not the weeks); a holiday alone before a noun of a thing is none
    ("over the xmas tree")."""
    groups = match.groupdict()
    if (
        groups.get("holiday")
        and not (groups.get("rel") or groups.get("year") or groups.get("yrel"))
        and _just_before(_DETERMINER_BEFORE, text, match.start())
        and _HOLIDAY_THING_AFTER.match(text, match.end())
    ):
        return False
    return (
        _bare_needs_preposition(text, match)
        or _CLAUSE_END_AFTER.match(text, match.end()) is not None
        or _CLOCK_AFTER.match(text, match.end()) is not None
        or _ADVERBIAL_AFTER.match(text, match.end()) is not None
        or _AWAY_AFTER.match(text, match.end()) is not None
    )


_AWAY_AFTER = re.compile(r"\s+(?:is|['’]s)\s+[^.!?;,]{0,30}?\baway\b", re.IGNORECASE)


_THE_BEFORE = re.compile(r"\bthe\s+$", re.IGNORECASE)


def _weekday_in_context(text: str, match: re.Match[str]) -> bool:
    """A weekday like a named day (``_named_day_in_context``); an abbreviation never after
    "the" ("read it in the Sun", "the Sat scores")."""
    abbreviated = match["weekday"].lower() not in _FULL_WEEKDAYS
    if abbreviated and _just_before(_THE_BEFORE, text, match.start("weekday")):
        return False
    return _named_day_in_context(text, match)


# "on the 28th", "by the 28th", "booked for the 21st"; "in the 4th" is rather a quarter of a
# game, a grade, a round (and "for the 4th time" no date: a noun follows, see the rule).
_DAY_PREPOSITION_BEFORE = re.compile(
    r"\b(?:on|by|for|until|till|before|after|since|from|through|thru|around)\s+$", re.IGNORECASE
)


# "Payday is the 28th.": what a day is, ending its clause (not "the 3rd in line").
_IS_BEFORE = re.compile(r"\b(?:is|was|['’]s)\s+$", re.IGNORECASE)


def _ordinal_day_in_context(text: str, match: re.Match[str]) -> bool:
    start = match.start()
    return _just_before(_DAY_PREPOSITION_BEFORE, text, start) is not None or (
        _just_before(_IS_BEFORE, text, start) is not None
        and _CLAUSE_END_AFTER.match(text, match.end()) is not None
    )


def _year_in_context(text: str, match: re.Match[str]) -> bool:
    start = match.start()
    return _just_before(_YEAR_PREPOSITION_BEFORE, text, start) is not None


# --------------------------------------------------------------------------------------------
# Resolvers: one per rule, (match, reference) -> interval. ValueError means "not a real date".


def _month_of(match: re.Match[str]) -> int:
    return _MONTH_NUMBERS[match.group("month")[:3].lower()]


def _year_of(match: re.Match[str]) -> int | None:
    groups = match.groupdict()
    if groups.get("year"):
        return int(groups["year"])
    if groups.get("yy"):
        short = int(groups["yy"])
        return 2000 + short if short < 70 else 1900 + short  # '24 is 2024, '99 is 1999
    return None


def _count_of(match: re.Match[str]) -> int:
    return _number(match.group("n"))


def _number(written: str) -> int:
    """How many ``written`` says: digits, a number word, "a couple (of)", "a few", "a"."""
    words = " ".join(written.lower().split())
    if words.isdigit():
        return int(words)
    if "couple" in words:
        return 2
    if "few" in words:
        return 3
    return 1 if words in ("a", "an") else NUMBER_WORDS[words]


_ABBREVIATED_UNITS = {"wk": "week", "mth": "month", "yr": "year"}


def _unit_of(match: re.Match[str]) -> str:
    unit = match.group("unit").lower()
    return _ABBREVIATED_UNITS.get(unit, unit)


def _amount(match: re.Match[str]) -> tuple[int, str]:
    """How many of which calendar unit ``match`` counts ("three weeks", "the past month"): a
    fortnight is two weeks."""
    count = _count_of(match) if match.groupdict().get("n") else 1
    unit = _unit_of(match)
    return (2 * count, "week") if unit == "fortnight" else (count, unit)


def _utc_offset(designator: str | None) -> timezone:
    if designator is None or designator.upper() == "Z":
        return UTC
    digits = designator[1:].replace(":", "")
    offset = timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
    return timezone(-offset if designator[0] == "-" else offset)


def _resolve_iso_datetime(match: re.Match[str], at: _Reading) -> _Interval:
    moment = datetime(
        int(match["y"]),
        int(match["mo"]),
        int(match["d"]),
        int(match["h"]),
        int(match["mi"]),
        int(match["s"] or 0),
        tzinfo=_utc_offset(match["tz"]),
    ).astimezone(UTC)
    start = moment.replace(minute=0, second=0, microsecond=0)
    return _Interval(start, start + _HOUR, "hour", False)


def _resolve_iso_date(match: re.Match[str], at: _Reading) -> _Interval:
    day = date(int(match["y"]), int(match["mo"]), int(match["d"]))
    return _days(day, day, "day", False)


def _resolve_iso_month(match: re.Match[str], at: _Reading) -> _Interval:
    return _months(int(match["y"]), int(match["mo"]), 1, "month", False)


def _month_and_day(match: re.Match[str], *, day_first: bool) -> tuple[int, int]:
    """The month and day of two numbers (groups ``a`` and ``b``) in the order given, unless
    one of them cannot be a month."""
    first, second = int(match["a"]), int(match["b"])
    if first > 12 or (second <= 12 and day_first):
        return second, first
    return first, second


def _resolve_numeric_date(match: re.Match[str], at: _Reading) -> _Interval:
    # Dots are the day-first convention wherever dates are written with them ("21.01.2024");
    # slashes and dashes follow the bank's order, unless one number cannot be a month.
    month, day = _month_and_day(match, day_first=at.date_order == "DMY" or match["sep"] == ".")
    chosen = date(int(match["y"]), month, day)
    return _days(chosen, chosen, "day", False)


def _resolve_numeric_day(match: re.Match[str], at: _Reading) -> _Interval | None:
    """A day and month in numbers without a year, read in the bank's order unless one number
    cannot be a month; the year as a month name's ("on March 3")."""
    month, day = _month_and_day(match, day_first=at.date_order == "DMY")
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return None
    return _yearly(_one_day(month, day), None, match, at, "day")


# The ordinal day's prepositions (_DAY_PREPOSITION_BEFORE) less "for", "from", "through" and
# "around", which fractions and amounts follow too ("for 1/2 an hour", "from 1/2 to 3/4 of a cup").
_TIME_PREPOSITION_BEFORE = re.compile(
    r"\b(?:on|by|since|until|till|before|after)\s+$", re.IGNORECASE
)


def _numeric_day_in_context(text: str, match: re.Match[str]) -> bool:
    start = match.start()
    return _just_before(_TIME_PREPOSITION_BEFORE, text, start) is not None


def _resolve_dotted_day(match: re.Match[str], at: _Reading) -> _Interval | None:
    """A day and month written with dots, always day first ("14.03."); the year as a month
    name's."""
    return _yearly(_one_day(int(match["b"]), int(match["a"])), None, match, at, "day")


def _monthly_day(day: int, today: date, which: Which) -> tuple[date, date] | None:
    """Day ``day`` of the month before, of, or after ``today``'s (skipping months too short)."""
    days = []
    for offset in range(-3, 4):
        year, month = _add_months(today.year, today.month, offset)
        if day <= calendar.monthrange(year, month)[1]:
            days.append(date(year, month, day))
    if which == "coming":
        chosen = [d for d in days if d >= today][:1]
    else:
        chosen = [d for d in days if d <= today][-1:]
    return (chosen[0], chosen[0]) if chosen else None


def _day_of(match: re.Match[str]) -> int:
    """The day of the month a match names, in digits or in words."""
    if match["day"]:
        return int(match["day"])
    return _DAY_WORDS["".join(match["day_word"].lower().replace("-", " ").split())]


# "the 14th of next month": the month said, counted from the one it is said in.
_MONTH_OFFSETS = {"this": 0, "next": 1, "following": 1, "last": -1, "previous": -1}


def _resolve_ordinal_day(match: re.Match[str], at: _Reading) -> _Interval | None:
    day = _day_of(match)
    if match["month_rel"]:
        offset = _MONTH_OFFSETS[match["month_rel"].split()[-1].lower()]
        year, month = _add_months(at.ref.year, at.ref.month, offset)
        if not MINYEAR <= year <= MAXYEAR or day > calendar.monthrange(year, month)[1]:
            return None
        return _days(date(year, month, day), date(year, month, day), "day", True)
    span = _monthly_day(day, at.ref.date(), _which_for(match, at, daily=True))
    return None if span is None else _days(*span, "day", True)


_DAY_WORD_OFFSETS = {
    "day before yesterday": -2,
    "yesterday": -1,
    "today": 0,
    "tomorrow": 1,
    "day after tomorrow": 2,
}
# How chats spell the days around today: "gonna see mom tmrw", "went to the gym yday",
# "out tonite", and the common misspellings ("tommorow"); "TMR" in capitals is an acronym.
# Each spelling is a group of its own: the gates read the words a match holds from the
# pattern, and alternatives left bare share their first letters ("tom" of "tomorrow" and
# "tomoz", a word in "custom" too).
_TOMORROW = (
    r"(?:(?i:tomorrow)|(?i:tommorow)|(?i:tomorow)|(?i:tommorrow)|(?i:tmrw)|(?i:tmrrw)"
    r"|(?-i:tmr)|(?-i:Tmr)|(?-i:tmw)|(?-i:Tmw)|(?i:2moro)|(?i:2morow)|(?i:2morrow)"
    r"|(?i:tomoz))"
)
_YESTERDAY = (
    r"(?:(?i:yesterday)|(?i:yday)|(?i:y'day)|(?i:y’day)|(?i:yest)|(?i:yesterdy)"
    r"|(?i:yesturday))"
)
_TONIGHT = r"(?:(?i:tonight)|(?i:tonite)|(?i:2nite)|(?i:2night))"
_CHAT_SPELLINGS = re.compile(rf"\b(?:(?P<tomorrow>{_TOMORROW})|(?P<yesterday>{_YESTERDAY}))\b")


def _resolve_day_word(match: re.Match[str], at: _Reading) -> _Interval:
    words = " ".join(match.group(0).lower().split()).removeprefix("the ")
    words = _CHAT_SPELLINGS.sub(lambda m: m.lastgroup or "", words)
    return _period("day", at.ref, _DAY_WORD_OFFSETS[words])


def _part_of_day(day: date, part: str, relative: bool) -> _Interval:
    first_hour, end_hour = _PARTS_OF_DAY[part]
    midnight = _midnight(day)
    return _Interval(
        midnight + first_hour * _HOUR, midnight + end_hour * _HOUR, "part_of_day", relative
    )


def _resolve_part_of_today(match: re.Match[str], at: _Reading) -> _Interval:
    if match["part"]:
        return _part_of_day(at.ref.date(), match["part"].lower(), True)
    tonight = not match["night"].lower().startswith("last")
    return _part_of_day(at.ref.date() - (0 if tonight else 1) * _DAY, "night", True)


def _resolve_units_ago(match: re.Match[str], at: _Reading) -> _Interval:
    """ "two weeks ago", "a month back", "three days from now"; "a week or so ago" is a week
    ago, "a week or two ago" from the start of two weeks ago to the end of one."""
    return _counted(match, at, 1 if match["dir"].lower() not in ("ago", "back") else -1)


def _resolve_units_away(match: re.Match[str], at: _Reading) -> _Interval:
    """ "three months away", "a week or so away": as far ahead as "in three months"."""
    return _counted(match, at, 1)


def _counted(match: re.Match[str], at: _Reading, sign: int) -> _Interval:
    """The calendar unit the amount away from the reference (``sign``: -1 back, 1 ahead); with
    a second amount ("a week or two ago", "in a day or two", "two or three days ago") from
    the nearer through the farther."""
    count, unit = _amount(match)
    period = _period(unit, at.ref, sign * count)
    more = match["more"] or match["few"]
    if not more:
        return period
    other = _period(unit, at.ref, sign * _number(more))
    first, last = (period, other) if period.start <= other.start else (other, period)
    return _Interval(first.start, last.end, "range", True)


_DEADLINE_UNITS = {"eow": "week", "eom": "month", "eoy": "year"}
# Before a deadline's words: not "at the end of the day", which is an idiom.
_DEADLINE_BEFORE = re.compile(r"\b(?:by|before|until|till)\s+(?:the\s+)?$", re.IGNORECASE)


def _work_deadline_in_context(text: str, match: re.Match[str]) -> bool:
    """An abbreviation in capitals ("EOD"; "cob" is corn's), or the words after "by",
    "before" or "until"."""
    if match["abbr"]:
        return match["abbr"].isupper()
    return _just_before(_DEADLINE_BEFORE, text, match.start()) is not None


def _resolve_work_deadline(match: re.Match[str], at: _Reading) -> _Interval:
    """The day (EOD, COB, end of day), week, month or year it ends, told from now."""
    unit = _DEADLINE_UNITS.get((match["abbr"] or "").lower(), "day")
    return _period(unit, at.ref, 0)


def _resolve_half_years_ago(match: re.Match[str], at: _Reading) -> _Interval | None:
    """ "half a year ago" is the month six months back; "a year and a half ago" eighteen; "in
    half a year" six ahead, unless its clause tells of the past ("we built it in half a
    year": how long it took)."""
    months = 6 + (12 * _number(match["whole"]) if match["whole"] else 0)
    if match["in"]:
        return None if _tense_of(match, at) == "past" else _period("month", at.ref, months)
    sign = 1 if match["dir"].lower() not in ("ago", "back") else -1
    return _period("month", at.ref, sign * months)


def _resolve_weekdays_ago(match: re.Match[str], at: _Reading) -> _Interval:
    """ "Two Fridays ago": the Friday a week before last Friday (one Friday ago is the last)."""
    day = _last_weekday(at.ref.date(), _WEEKDAYS[match["weekday"].lower()])
    day -= timedelta(weeks=_count_of(match) - 1)
    return _days(day, day, "day", True)


def _resolve_yearly_ago(match: re.Match[str], at: _Reading) -> _Interval | None:
    """ "Two summers ago", "three Christmases ago": the occurrence that many back among those
    over (one summer ago is the last one over, as "last summer")."""
    name = match["yearly"].lower()
    seasonal = name in _SEASONS
    occurrence = _season_occurrence(name) if seasonal else _HOLIDAYS[name]
    count, today = _count_of(match), at.ref.date()
    years = range(max(1, today.year - count - 1), today.year + 1)
    over = [span for span in _occurrences(occurrence, years) if span[1] < today]
    if not 0 < count <= len(over):
        return None
    return _days(*over[-count], "season" if seasonal else "holiday", True)


def _resolve_units_ahead(match: re.Match[str], at: _Reading) -> _Interval | None:
    # In a clause about the past, "in" + an amount says how long something took ("I finished
    # the marathon in 4 hours", "we built the shed in two weeks"), not when it happens.
    if _tense_of(match, at) == "past":
        return None
    return _counted(match, at, 1)


def _resolve_rolling(match: re.Match[str], at: _Reading) -> _Interval:
    return _up_to(at.ref, *_amount(match))


def _resolve_rolling_ahead(match: re.Match[str], at: _Reading) -> _Interval | None:
    """From the reference to the end of the day that many units ahead ("the next three
    days", "within two weeks"; a plural without a number is a few: "the coming weeks");
    business or working days skip weekends. None in a clause about the past, and for
    "within" unless its clause points ahead ("Within a month she quit": a month after
    something else)."""
    plural = match[0].lower().endswith("s")
    if not match["n"] and not (plural if match["ahead"] else match["next"]):
        return None  # "the next month" is a calendar month; "within weeks" says no amount
    direction = _tense_of(match, at)
    if direction == "past" or (not match["ahead"] and direction != "forward"):
        return None  # "within" tells when only of what is to come
    count, unit = _amount(match)
    if not match["n"] and plural:
        count = _number("few")
    if unit == "hour":
        return _Interval(at.ref, at.ref + count * _HOUR, "range", True)
    if match["work"]:
        day = at.ref.date()
        while count:
            day += _DAY
            count -= day.weekday() < _SATURDAY
        return _Interval(at.ref, _midnight(day) + _DAY, "range", True)
    return _Interval(at.ref, _midnight(_shifted(at.ref, count, unit).date()) + _DAY, "range", True)


_SATURDAY = 5


def _resolve_lasting(match: re.Match[str], at: _Reading) -> _Interval | None:
    # "for three months" says how long; it says when only in a present perfect, which holds
    # up to the time of speaking ("I've been running every day for three months").
    if not at.by_tense or not lasts_until_now(match.string, match.start()):
        return None
    return _up_to(at.ref, *_amount(match))


def _up_to(ref: datetime, count: int, unit: str) -> _Interval:
    """From ``count`` ``unit``s before ``ref`` (midnight, for days and longer) up to ``ref``."""
    if unit == "hour":
        start = ref.replace(minute=0, second=0, microsecond=0) - count * _HOUR
    else:
        start = _midnight(_shifted(ref, -count, unit).date())
    return _Interval(start, ref, "range", True)


_UNIT_MONTHS = {"month": 1, "quarter": 3, "year": 12, "decade": 120}


def _shifted(moment: datetime, count: int, unit: str) -> datetime:
    """``moment`` moved by ``count`` units (back when negative); a month keeps the day of
    the month where it has one (a month before March 31 is the last day of February)."""
    if unit == "hour":
        return moment + count * _HOUR
    if unit not in _UNIT_MONTHS:  # a day, or a week or weekend: seven days
        return moment + count * (1 if unit == "day" else 7) * _DAY
    year, month = _add_months(moment.year, moment.month, count * _UNIT_MONTHS[unit])
    return moment.replace(year=year, month=month, day=min(moment.day, _last_day(year, month).day))


_REL_OFFSETS = {
    "last": -1,
    "previous": -1,
    "past": -1,
    "this": 0,
    "current": 0,
    "next": 1,
    "coming": 1,
    "following": 1,
}


def _resolve_relative_unit(match: re.Match[str], at: _Reading) -> _Interval:
    unit, rel = _unit_of(match), match["rel"].lower()
    offset = _REL_OFFSETS[rel]
    if unit == "weekend" and rel == "coming":  # "this coming weekend": this week's till it starts
        offset = _weekend_to_come(at.ref)
    period = _period(unit, at.ref, offset)
    if offset == 0 and period.start > at.ref and _told_as_past(match, at):
        period = _period(unit, at.ref, -1)  # "we went camping this weekend", said on a Monday
    return _lengthened(period) if match["long"] else period


def _weekend_to_come(ref: datetime) -> int:
    """Weeks from ``ref``'s to the weekend to come: this week's until it starts on Saturday."""
    return 0 if ref.weekday() < 5 else 1


def _lengthened(weekend: _Interval) -> _Interval:
    """A long weekend ("over the long weekend", "last three-day weekend"): its Saturday and
    Sunday and the day either side, since the words do not say which one was off."""
    return replace(weekend, start=weekend.start - _DAY, end=weekend.end + _DAY)


def _resolve_whole_current_unit(match: re.Match[str], at: _Reading) -> _Interval:
    return _period(_unit_of(match), at.ref, 0)


def _resolve_part_of_current_unit(match: re.Match[str], at: _Reading) -> _Interval | None:
    return _portion(_period(_unit_of(match), at.ref, 0), match["mod"])


_BEFORE_AFTER_OFFSETS = {"before last": -2, "before": -1, "after": 1, "after next": 2}


def _resolve_unit_before_after(match: re.Match[str], at: _Reading) -> _Interval:
    direction = " ".join(match["dir"].lower().split())
    unit, offset = _unit_of(match), _BEFORE_AFTER_OFFSETS[direction]
    if unit == "night":  # "the night before last": the night of the day before yesterday
        return _part_of_day(at.ref.date() + offset * _DAY, "night", True)
    return _period(unit, at.ref, offset)


def _resolve_weekday_before_after(match: re.Match[str], at: _Reading) -> _Interval:
    """ "The Monday before last": a week before last Monday; "the Friday after next": the
    Friday of the week after next week."""
    weekday = _WEEKDAYS[match["weekday"].lower()]
    today = at.ref.date()
    if match["dir"].lower().startswith("before"):
        day = _last_weekday(today, weekday) - timedelta(weeks=1)
    else:
        day = _weekday_of_week(today, weekday, 2)
    return _days(day, day, "day", True)


def _resolve_weekday_day(match: re.Match[str], at: _Reading) -> _Interval | None:
    """ "Sunday the 15th": the nearest 15th that is a Sunday, ahead or behind as the clause
    points (as for "the 15th" alone)."""
    weekday, day = _WEEKDAYS[match["weekday"].lower()], _day_of(match)
    today = at.ref.date()
    step = 1 if _points_forward(match, at, daily=True) else -1
    for months in range(0, step * 40, step):  # a day of the month meets each weekday within 40
        year, month = _add_months(today.year, today.month, months)
        if day > _last_day(year, month).day:
            continue
        found = date(year, month, day)
        if found.weekday() == weekday and (found >= today if step > 0 else found <= today):
            return _days(found, found, "day", True)
    return None


def _resolve_weekday_of_month(match: re.Match[str], at: _Reading) -> _Interval | None:
    """ "The first Tuesday of November", "the last Friday in May"."""
    weekday, month = _WEEKDAYS[match["weekday"].lower()], _month_of(match)
    nth = match["ord"].lower()

    def occurrence(year: int) -> tuple[date, date]:
        if nth == "last":
            last = _last_day(year, month)
            day = last - timedelta(days=(last.weekday() - weekday) % 7)
        else:
            first = date(year, month, 1)
            day = first + timedelta(days=(weekday - first.weekday()) % 7, weeks=_ORDINALS[nth] - 1)
        return day, day

    return _yearly(occurrence, _year_of(match), match, at, "day")


def _resolve_weekday(match: re.Match[str], at: _Reading) -> _Interval:
    weekday = _WEEKDAYS[match["weekday"].lower()]
    today = at.ref.date()
    rel = _which(match["rel"])
    coming = (match["rel"] or "").lower() == "coming"  # "this coming Friday": the next one
    if coming or (rel == "latest" and _coming_day(match, at)):
        day = today + timedelta(days=(weekday - today.weekday()) % 7 or 7)
    elif rel in ("latest", "last"):
        day = _last_weekday(today, weekday)
    else:
        day = _weekday_of_week(today, weekday, 1 if rel == "next" else 0)
        if rel == "this" and day > today and _told_as_past(match, at):
            day -= timedelta(weeks=1)  # "I visited my aunt this Saturday", said on a Thursday
    return _days(day, day, "day", True)


def _last_weekday(today: date, weekday: int) -> date:
    """The last such weekday before ``today``."""
    return today - timedelta(days=(today.weekday() - weekday) % 7 or 7)


def _weekday_of_week(today: date, weekday: int, weeks: int) -> date:
    """That weekday of the week ``weeks`` after today's (0: this week)."""
    return _monday(today) + timedelta(days=weekday, weeks=weeks)


# What is arranged for a day, which it comes before: "made a reservation for Saturday",
# "got an appointment for Monday", "asked me out for Friday".
_ARRANGED_FOR = re.compile(
    r"\b(?:reservation|appointment|booking|table|tickets?|plans|slot"
    r"|asked\s+\w+\s+out|invited\s+\w+)\s+for\s+$",
    re.IGNORECASE,
)


def _coming_day(match: re.Match[str], at: _Reading) -> bool:
    """Whether a weekday without last/this/next means its coming occurrence: its clause
    points forward or is a timeless present (``_points_forward`` for a day), it is what was
    arranged for ("I made a reservation for Saturday", said on a Thursday: the coming one),
    or it has a time of day and a clause that does not place it in the past, an appointment
    ("Dinner Friday at 8?", "Lunch Tuesday at noon works"), or a question with no verb, a
    proposal ("Drinks Friday?"). The clause's tense is read once."""
    if at.by_tense and _just_before(_ARRANGED_FOR, match.string, match.start()) is not None:
        return True
    direction = _tense_of(match, at)
    if direction in ("forward", "present"):
        return True
    return (
        at.by_tense
        and direction is None
        and (
            _CLOCK_AFTER.match(match.string, match.end()) is not None
            or asks_without_a_verb(match.string, *match.span())
        )
    )


def _resolve_weekend(match: re.Match[str], at: _Reading) -> _Interval:
    # The weekend that has most recently started (this one from Saturday on, else last
    # week's), unless the clause points forward: then the coming one.
    if _points_forward(match, at, daily=True):
        weekend = _period("weekend", at.ref, _weekend_to_come(at.ref))
    else:
        weekend = _period("weekend", at.ref, 0 if at.ref.weekday() >= 5 else -1)
    return _lengthened(weekend) if match["long"] else weekend


def _season_occurrence(season: str) -> Occurrence:
    first_month, year_offset = _SEASONS[season]

    def occurrence(year: int) -> tuple[date, date]:
        start_year = year + year_offset
        end_year, end_month = _add_months(start_year, first_month, 2)
        return date(start_year, first_month, 1), _last_day(end_year, end_month)

    return occurrence


def _resolve_season(match: re.Match[str], at: _Reading) -> _Interval | None:
    occurrence = _season_occurrence(match["season"].lower())
    return _yearly(occurrence, _year_of(match), match, at, "season", match["rel"])


def _resolve_holiday(match: re.Match[str], at: _Reading) -> _Interval | None:
    name = re.sub(r"['’]", "", " ".join(match["holiday"].lower().split()))
    occurrence = _HOLIDAYS[name.removesuffix(" day") if name == "thanksgiving day" else name]
    interval = _yearly(occurrence, _year_of(match), match, at, "holiday", match["rel"])
    if interval is not None and interval.end - interval.start == _DAY:
        return replace(interval, granularity="day")
    return interval


# How near the holidays must be to the moment said for "the holidays" to name them.
_HOLIDAY_SEASON_REACH = timedelta(days=45)


def _resolve_holiday_season(match: re.Match[str], at: _Reading) -> _Interval | None:
    """ "Over the holidays", "home for the holidays": Christmas Eve to New Year's Day, when
    said within weeks of them ("this/last holiday season" whenever said); in July "the
    holidays" are as likely the summer's, so they date nothing."""
    interval = _yearly(_HOLIDAYS["holidays"], None, match, at, "holiday", match["rel"])
    if interval is None or match["rel"]:
        return interval
    near = interval.start - _HOLIDAY_SEASON_REACH <= at.ref < interval.end + _HOLIDAY_SEASON_REACH
    return interval if near else None


_THIRDS = {"early": 0, "mid": 1, "late": 2}


def _decade(first_year: int, modifier: str | None) -> _Interval:
    if modifier is None:
        return _months(first_year, 1, 120, "decade", False)
    first, last = ((0, 3), (4, 6), (7, 9))[_THIRDS[modifier.lower()]]
    return _months(first_year + first, 1, 12 * (last - first + 1), "range", False)


def _resolve_decade_digits(match: re.Match[str], at: _Reading) -> _Interval:
    return _decade(int(match["century"]) * 10, match["mod"])


def _resolve_decade_short(match: re.Match[str], at: _Reading) -> _Interval:
    if match["word"]:
        return _decade(_DECADE_WORDS[match["word"].lower()], match["mod"])
    digit = int(match["digit"])
    return _decade((2000 if digit < 2 else 1900) + 10 * digit, match["mod"])


def _quarter_occurrence(quarter: int) -> Occurrence:
    return lambda year: (date(year, 3 * quarter - 2, 1), _last_day(year, 3 * quarter))


def _resolve_quarter(match: re.Match[str], at: _Reading) -> _Interval | None:
    quarter = int(match["q"] or match["q2"])
    year = match["year"] or match["year2"]
    return _yearly(_quarter_occurrence(quarter), int(year) if year else None, match, at, "quarter")


_ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3}
_ORDINALS |= {"fourth": 4, "4th": 4}


def _resolve_ordinal_quarter(match: re.Match[str], at: _Reading) -> _Interval | None:
    occurrence = _quarter_occurrence(_ORDINALS[match["ord"].lower()])
    return _yearly(occurrence, _year_of(match), match, at, "quarter")


def _resolve_half_year(match: re.Match[str], at: _Reading) -> _Interval:
    return _months(int(match["year"]), 6 * int(match["h"]) - 5, 6, "half", False)


def _resolve_month_day(match: re.Match[str], at: _Reading) -> _Interval | None:
    occurrence = _one_day(_month_of(match), _day_of(match))
    return _yearly(occurrence, _year_of(match), match, at, "day")


def _resolve_day_range(match: re.Match[str], at: _Reading) -> _Interval | None:
    """Days of one month from the first named to the last: "12-15 May", "May 12 to 15"."""
    month, first, last = _month_of(match), int(match["first"]), _day_of(match)
    if not first < last:
        return None

    def occurrence(year: int) -> tuple[date, date]:
        return date(year, month, first), date(year, month, last)

    return _yearly(occurrence, _year_of(match), match, at, "range")


def _resolve_month_year(match: re.Match[str], at: _Reading) -> _Interval:
    year = _year_of(match)
    assert year is not None  # the pattern requires one
    return _months(year, _month_of(match), 1, "month", False)


def _whole_month(month: int) -> Occurrence:
    return lambda year: (date(year, month, 1), _last_day(year, month))


def _resolve_month(match: re.Match[str], at: _Reading) -> _Interval | None:
    occurrence = _whole_month(_month_of(match))
    return _yearly(occurrence, None, match, at, "month", match.groupdict().get("rel"))


def _resolve_year(match: re.Match[str], at: _Reading) -> _Interval:
    return _months(int(match["year"]), 1, 12, "year", False)


def _resolve_short_year(match: re.Match[str], at: _Reading) -> _Interval | None:
    year = _year_of(match)
    return None if year is None else _months(year, 1, 12, "year", False)


# --------------------------------------------------------------------------------------------
# The rule table. Order breaks ties between equally long matches of the same text.

Resolver = Callable[[re.Match[str], datetime], _Interval | None]
ContextCheck = Callable[[str, re.Match[str]], bool]


@dataclass(frozen=True, slots=True)
class _Rule:
    """A pattern and how to resolve it.

    ``in_context`` is None when the words are a time expression wherever they stand; otherwise
    it decides from the surrounding text ("June" after "in", a year after "since"). ``anchorable``
    marks calendar names a range may re-anchor to its other end (see ``_join``); ``by_tense``
    the names that may go without a year, whose occurrence the clause's tense then picks.
    """

    name: str
    pattern: re.Pattern[str]
    resolve: Resolver
    in_context: ContextCheck | None = None
    anchorable: bool = False
    by_tense: bool = False


def _rule(
    name: str,
    pattern: str,
    resolve: Resolver,
    in_context: ContextCheck | None = None,
    anchorable: bool = False,
    by_tense: bool = False,
) -> _Rule:
    return _Rule(
        name, re.compile(pattern, re.IGNORECASE), resolve, in_context, anchorable, by_tense
    )


_RULES: tuple[_Rule, ...] = (
    _rule(
        "iso_datetime",
        _ISO_GUARD_BEFORE + r"(?P<y>\d{4})-(?P<mo>\d{2})-(?P<d>\d{2})[T ](?P<h>\d{2}):(?P<mi>\d{2})"
        r"(?::(?P<s>\d{2})(?:[.,]\d+)?)?\s*(?P<tz>Z|[+-]\d{2}:?\d{2})?(?![\w:/-])",
        _resolve_iso_datetime,
    ),
    _rule(
        "iso_date",
        _ISO_GUARD_BEFORE
        + r"(?P<y>\d{4})(?P<sep>[-/])(?P<mo>\d{2})(?P=sep)(?P<d>\d{2})"
        + _ISO_GUARD_AFTER,
        _resolve_iso_date,
    ),
    _rule(
        "iso_month",
        _ISO_GUARD_BEFORE + r"(?P<y>\d{4})-(?P<mo>\d{2})" + _ISO_GUARD_AFTER,
        _resolve_iso_month,
    ),
    _rule(
        "numeric_date",
        # "3/4/2025", "03.04.2025", "3-4-2025"; not a version ("v1.2.2025", "release
        # 1.2.2025") nor part of a longer run of numbers ("10.3.2025.1", "555-03-04-2025").
        r"(?<!\bv)(?<!version\s)(?<!release\s)(?<!build\s)"
        + _ISO_GUARD_BEFORE
        + r"(?P<a>\d{1,2})(?P<sep>[/.-])(?P<b>\d{1,2})(?P=sep)(?P<y>\d{4})"
        + _ISO_GUARD_AFTER,
        _resolve_numeric_date,
    ),
    _rule(
        "numeric_day",
        # "on 5/6", "by 12/3": a day without its year, only right after a preposition of time
        # (not "5/6 of the votes", "rated 4/5", "24/7").
        r"(?<![\w/.-])(?P<a>\d{1,2})/(?P<b>\d{1,2})(?![\w/%-]|\.\d)(?!\s+of\b)",
        _resolve_numeric_day,
        _numeric_day_in_context,
        anchorable=True,
        by_tense=True,
    ),
    _rule(
        "dotted_day",
        # "See you on 14.03.", "until 5.10.": a day and month with dots, day first, without
        # the year, after a preposition of time, no noun after ("on 2.5 mg" is a dose). After
        # another preposition than "on", only with its closing dot: "until 5.10" and "after
        # 9.05" tell the time of day the British way.
        rf"(?:(?<=\b(?P<on>on)\s)|(?<![\w/.-]))(?P<a>{_DAY_DIGITS})\.(?P<b>0?[1-9]|1[0-2])"
        rf"(?(on)\.?|\.)(?![\w/%-]|\.\d|,\d){_NO_NOUN_AFTER}",
        _resolve_dotted_day,
        _numeric_day_in_context,
        anchorable=True,
        by_tense=True,
    ),
    _rule(
        "day_word",
        rf"\b(?:(?:the\s+)?day\s+before\s+{_YESTERDAY}|(?:the\s+)?day\s+after\s+{_TOMORROW}"
        rf"|{_YESTERDAY}|today|{_TOMORROW})\b",
        _resolve_day_word,
    ),
    _rule(
        "part_of_today",
        rf"\b(?:this\s+(?P<part>morning|afternoon|evening)|(?P<night>{_TONIGHT}|last\s+ni(?:ght|te)))\b",
        _resolve_part_of_today,
    ),
    _rule(
        "units_ago",
        rf"\b{_FEW}?{_NUMBER}\s+{_UNIT}\s+(?:or\s+(?:so|{_MORE})\s+)?"
        r"(?P<dir>ago|back|from\s+now|hence)\b",
        _resolve_units_ago,
    ),
    _rule(
        # A deadline as work writes it: "by EOD", "before close of business", "by EOW".
        "work_deadline",
        r"\b(?:(?P<abbr>EOD|COB|EOW|EOM|EOY)|close\s+of\s+business"
        r"|end\s+of\s+(?:the\s+)?(?:business\s+|work(?:ing)?\s+)?day)\b"
        # "EOD Friday" is Friday's.
        r"(?!,?\s+(?:on\s+)?(?:mon|tue|wed|thu|fri|sat|sun|tomorrow|the\s+\d))",
        _resolve_work_deadline,
        _work_deadline_in_context,
    ),
    _rule(
        # "half a year ago", "a year and a half ago", "in two and a half years".
        "half_years_ago",
        r"\b(?P<in>in\s+)?(?:half\s+a\s+year|(?P<whole>\d{1,4}|an?|"
        + "|".join(NUMBER_WORDS)
        + r")(?:\s+years?\s+and\s+a\s+half|\s+and\s+a\s+half\s+years?))"
        r"(?(in)(?:['’]?\s+time)?|\s+(?P<dir>ago|back|from\s+now|hence))\b",
        _resolve_half_years_ago,
    ),
    _rule(
        # "Christmas is two weeks away"; hours away are a distance ("Leeds is two hours away").
        "units_away",
        rf"\b{_FEW}?{_NUMBER}\s+{_CALENDAR_UNIT}\s+(?:or\s+(?:so|{_MORE})\s+)?away\b",
        _resolve_units_away,
    ),
    _rule("weekdays_ago", rf"\b{_NUMBER}\s+{_WEEKDAY}s\s+ago\b", _resolve_weekdays_ago),
    _rule(
        "yearly_ago",
        rf"\b{_NUMBER}\s+(?P<yearly>spring|summer|autumn|winter|christmas|xmas|easter"
        r"|thanksgiving|halloween)e?s\s+ago\b",
        _resolve_yearly_ago,
    ),
    _rule(
        "units_ahead",
        rf"\bin\s+{_FEW}?{_NUMBER}\s+{_UNIT}(?:['’]?\s+time|\s+or\s+{_MORE})?\b",
        _resolve_units_ahead,
    ),
    _rule("rolling", rf"\bthe\s+(?:past|last)\s+(?:{_NUMBER}\s+)?{_UNIT}\b", _resolve_rolling),
    # "in the next few days", "over the coming weeks", "within three business days".
    _rule(
        "rolling_ahead",
        rf"\b(?:(?:the\s+)?(?P<ahead>next|coming)|within(?P<next>\s+the\s+next)?)\s+"
        rf"(?:{_NUMBER}\s+)?(?:(?P<work>business|working)\s+(?=days))?{_UNIT}\b",
        _resolve_rolling_ahead,
    ),
    _rule(
        "lasting",
        rf"\bfor\s+(?:(?:about|around|almost|nearly|over|roughly|more\s+than)\s+)?{_NUMBER}\s+"
        rf"{_UNIT}\b",
        _resolve_lasting,
    ),
    _rule(
        "relative_unit",
        r"\b(?:the\s+)?(?P<rel>last|previous|past|this|current|next|coming|following)\s+"
        rf"(?:{_LONG}\s+(?=weekend))?(?P<unit>weekend|week|wk|month|mth|quarter|year|yr|decade)\b",
        _resolve_relative_unit,
    ),
    # "I've been sick all week": the one holding the moment said (not "all year round").
    _rule(
        "whole_current_unit",
        r"\ball\s+(?:this\s+|the\s+)?(?P<unit>week|month|year)\b(?!\s+round)",
        _resolve_whole_current_unit,
    ),
    _rule(
        "part_of_current_unit",
        r"\b(?:the\s+)?(?:very\s+)?(?P<mod>beginning|start|middle|end|first\s+half|second\s+half"
        r"|(?:first|second|third|fourth|last)\s+week|first\s+day|last\s+day)\s+of\s+the\s+"
        r"(?P<unit>week|month|quarter|year|decade)\b",
        _resolve_part_of_current_unit,
    ),
    _rule(
        "unit_before_after",
        r"\bthe\s+(?P<unit>day|night|weekend|week|month|quarter|year|decade)\s+"
        r"(?P<dir>before\s+last|after\s+next|before|after)\b",
        _resolve_unit_before_after,
    ),
    _rule(
        "weekday_before_after",
        rf"\b(?:the\s+)?{_WEEKDAY}\s+(?P<dir>before\s+last|after\s+next)\b",
        _resolve_weekday_before_after,
    ),
    _rule(
        "weekday_day",
        rf"\b{_WEEKDAY},?\s+the\s+{_ANY_DAY}",
        _resolve_weekday_day,
        by_tense=True,
    ),
    _rule(
        "weekday_of_month",
        r"\b(?:the\s+)?(?P<ord>first|second|third|fourth|last|1st|2nd|3rd|4th)\s+"
        rf"{_WEEKDAY}\s+(?:of|in)\s+{_MONTH}(?:,?\s+{_YEAR}|{_NAMED_YEAR})?",
        _resolve_weekday_of_month,
        anchorable=True,
        by_tense=True,
    ),
    _rule(
        "weekday",
        rf"\b(?:{_REL}\s+)?{_WEEKDAY}\b",
        _resolve_weekday,
        _weekday_in_context,
        anchorable=True,
        by_tense=True,
    ),
    _rule(
        "weekend",
        rf"\b(?:the\s+)?(?:{_LONG}\s+)?weekend\b",
        _resolve_weekend,
        _weekend_in_context,
        by_tense=True,
    ),
    _rule(
        "season",
        rf"\b(?:{_REL}\s+)?(?:the\s+)?(?P<season>spring|summer|autumn|fall|winter)\b"
        # "the fall of Rome", "the summer of love" are no seasons.
        rf"(?:\s+(?:of\s+)?{_FULL_YEAR}|{_NAMED_YEAR}|(?!\s+of\b))",
        _resolve_season,
        _bare_needs_preposition,
        anchorable=True,
        by_tense=True,
    ),
    _rule(
        "holiday",
        rf"\b(?:{_REL}\s+)?{_HOLIDAY}(?:,?\s+(?:of\s+)?{_FULL_YEAR}|{_NAMED_YEAR})?\b",
        _resolve_holiday,
        _named_day_in_context,
        anchorable=True,
        by_tense=True,
    ),
    _rule(
        "holiday_season",
        rf"\b(?:{_REL}|the)\s+(?:holidays|holiday\s+season|festive\s+season)\b",
        _resolve_holiday_season,
        _holiday_season_in_context,
        by_tense=True,
    ),
    _rule(
        "decade_digits",
        r"\b(?:the\s+)?(?:(?P<mod>early|mid|late)[\s-]+)?(?P<century>[12]\d{2})0['’]?s\b",
        _resolve_decade_digits,
    ),
    _rule(
        "decade_short",
        r"\bthe\s+(?:(?P<mod>early|mid|late)[\s-]+)?(?:['’]?(?P<digit>\d)0['’]?s|(?P<word>"
        + "|".join(_DECADE_WORDS)
        + r"))\b",
        _resolve_decade_short,
    ),
    _rule(
        "quarter",
        r"\b(?:Q(?P<q>[1-4])(?:[\s,/-]*(?:of\s+)?(?P<year>[12]\d{3})|" + _NAMED_YEAR + ")?"
        r"|(?P<year2>[12]\d{3})[\s/-]*Q(?P<q2>[1-4]))(?!\w)",
        _resolve_quarter,
        anchorable=True,
        by_tense=True,
    ),
    _rule(
        "ordinal_quarter",
        rf"\b(?:the\s+)?(?P<ord>first|second|third|fourth|1st|2nd|3rd|4th)\s+quarter"
        rf"(?:\s+(?:of|in)\s+{_FULL_YEAR}|{_NAMED_YEAR})?",
        _resolve_ordinal_quarter,
        _bare_needs_preposition,
        anchorable=True,
        by_tense=True,
    ),
    _rule("half_year", r"\bH(?P<h>[12])[\s/-]*(?P<year>[12]\d{3})(?!\w)", _resolve_half_year),
    _rule(
        "month_day",
        rf"{_MONTH}\s+(?:the\s+)?{_ANY_DAY}(?:,?\s+{_YEAR}|{_NAMED_YEAR})?",
        _resolve_month_day,
        anchorable=True,
        by_tense=True,
    ),
    _rule(
        "day_range",
        rf"{_FIRST_DAY_TO}{_DAY_OF_MONTH}\s+(?:of\s+)?{_MONTH}(?:,?\s+{_YEAR}|{_NAMED_YEAR})?",
        _resolve_day_range,
        anchorable=True,
        by_tense=True,
    ),
    _rule(
        "month_day_range",
        # "May 12-15"; not a count after a date ("on May 12 to 15 people").
        rf"{_MONTH}\s+{_FIRST_DAY_TO}{_DAY_OF_MONTH}(?:,?\s+{_YEAR}|{_NAMED_YEAR})?"
        + _NO_NOUN_AFTER,
        _resolve_day_range,
        anchorable=True,
        by_tense=True,
    ),
    _rule(
        "day_month",
        rf"\b(?:(?:the\s+)?{_DAY_OF_MONTH}\s+(?:of\s+)?|(?:the\s+)?{_DAY_WORD}\s+of\s+)"
        rf"{_MONTH}(?:,?\s+{_YEAR}|{_NAMED_YEAR})?",
        _resolve_month_day,
        anchorable=True,
        by_tense=True,
    ),
    _rule("month_year", rf"{_MONTH},?\s+(?:of\s+)?{_YEAR}", _resolve_month_year),
    _rule(
        "ordinal_day",
        # "on the 28th"; not "the 5th floor", "the 19th century" (a noun follows).
        rf"\bthe\s+(?:(?P<day>{_DAY_DIGITS})(?:st|nd|rd|th)\b|{_DAY_WORD})"
        r"(?:\s+of\s+(?:the\s+month\b|(?P<month_rel>this|next|last|the\s+next|the\s+following"
        r"|the\s+previous)\s+month\b))?" + _NO_NOUN_AFTER,
        _resolve_ordinal_day,
        _ordinal_day_in_context,
        anchorable=True,
        by_tense=True,
    ),
    _rule("relative_month", rf"\b{_REL}\s+{_MONTH}", _resolve_month),
    # "Last year in March we went to Rome": March of last year.
    _rule(
        "year_then_month",
        rf"\b(?P<yrel>this|next|last)\s+year,?\s+in\s+{_MONTH}",
        _resolve_month,
    ),
    _rule(
        "month",
        rf"{_MONTH}{_NAMED_YEAR}?",
        _resolve_month,
        _month_in_context,
        anchorable=True,
        by_tense=True,
    ),
    # "Moved here in '19", "class of '95": a year of two digits after an apostrophe.
    _rule(
        "short_year",
        r"(?<![\w'’])['’](?P<yy>\d{2})(?![\w'’%])",
        _resolve_short_year,
        _year_in_context,
    ),
    _rule(
        "year",
        r"(?:(?<=mid-)|(?<![\w$€£#.,/:-]))(?P<year>[12]\d{3})"
        # Not a year when glued to a code or number, or counting something ("2000 cases").
        r"(?![\w%/-]|[.,:]\d|\s+(?!(?:was|is|has|this|his|its|as|us)\b)[a-z]+s\b)",
        _resolve_year,
        _year_in_context,
    ),
)

_GATES = Gates({rule.name: rule.pattern for rule in _RULES})
_BY_TENSE = tuple(rule for rule in _RULES if rule.by_tense)
# The groups that name the occurrence themselves: "last summer", "March 3, 2024", "Q3 2023".
_WHICH_GROUPS = ("rel", "year", "yy", "year2", "yrel")


#: Rules whose resolver reads its clause's tense with no calendar name to pick: "in" + an
#: amount (how long in the past, else ahead) and "for" + an amount (a present perfect).
_AMOUNTS_BY_TENSE = tuple(
    rule for rule in _RULES if rule.name in ("units_ahead", "half_years_ago", "lasting")
)


# A period that holds the moment it is said: its clause's tense decides the side stored.
_THIS_PERIOD = re.compile(
    rf"\b(?:today|{_TONIGHT}|this\s+(?:morning|afternoon|evening|week|weekend|month|year|quarter"
    r"|spring|summer|autumn|fall|winter|season|semester|term))\b",
    re.IGNORECASE,
)


def may_read_tense(text: str) -> bool:
    """Whether the tense of a clause may decide a date in ``text``: it names a calendar day or
    period without a year or last/this/next ("March 3", "in June", "on Friday"), not as the
    day something is moved to, an amount whose date the tense decides ("in two weeks",
    "for three months"), or a period that holds the moment it is said ("today", "this
    week"), of which retain stores the side the tense speaks of. The patterns alone decide,
    nothing is resolved: retain asks it to tag all such texts of a call in one spaCy batch
    before it reads their times (a text it misses is tagged alone, with the same tags)."""
    text = text.translate(IGNORECASE_TWINS)
    rules = _rules_for(text)
    return (
        any(
            _names_no_occurrence(rule, match)
            and not recurs(text, *match.span())
            and not moved_to(text, match.start())
            for rule in _BY_TENSE
            if rule.name in rules
            for match in rule.pattern.finditer(text)
        )
        or any(rule.pattern.search(text) for rule in _AMOUNTS_BY_TENSE if rule.name in rules)
        or _THIS_PERIOD.search(text) is not None
    )


# --------------------------------------------------------------------------------------------
# Candidates, composition and selection


@dataclass(frozen=True, slots=True)
class _Candidate:
    start: int
    end: int
    interval: _Interval
    # False where the words are no date as they stand ("June said hi"): such candidates only
    # serve compositions ("between March and May") and text that is nothing but the expression.
    in_context: bool
    order: int  # tie-break among equally long candidates: earlier rules first
    rule: _Rule | None = None  # None for composed candidates
    match: re.Match[str] | None = None


def _resolve(
    rule: _Rule, match: re.Match[str], at: _Reading, unreal: list[tuple[int, int]] | None = None
) -> _Interval | None:
    """The interval ``match`` names, None if none; the span of a date that does not exist goes
    to ``unreal`` (see :func:`_dates_unreal`)."""
    try:
        interval = rule.resolve(match, at)
    except (ValueError, OverflowError):
        # Not a real date (February 30, minute 61) or beyond datetime's years 1-9999.
        if unreal is not None:
            unreal.append(match.span())
        return None
    if interval is None or not interval.start < interval.end:
        return None
    return interval


def _rules_for(text: str) -> frozenset[str]:
    """The names of the rules that may match ``text`` (``_pattern_gates.py``): most chat
    texts name no time, and searching them with every rule was most of the time dates took."""
    return _GATES.admitted(text)


def _candidates(text: str, at: _Reading) -> list[_Candidate]:
    # "ſummer" matches the season rule as "summer": read it as that, so the matched word is
    # a key of the rule's table of names (offsets unchanged).
    text = text.translate(IGNORECASE_TWINS)
    found: list[_Candidate] = []
    unreal: list[tuple[int, int]] = []  # spans of dates that do not exist (see _dates_unreal)
    rules = _rules_for(text)
    for order, rule in enumerate(_RULES):
        if rule.name not in rules:
            continue
        for match in rule.pattern.finditer(text):
            if _recurring(rule, match):
                continue
            interval = _resolve(rule, match, at, unreal)
            if interval is None:
                continue
            in_context = rule.in_context is None or rule.in_context(text, match)
            found.append(
                _Candidate(match.start(), match.end(), interval, in_context, order, rule, match)
            )
    found = _real(found, unreal)
    found += _with_part_of_day(text, found)
    found += _with_clock_time(text, found)
    found += _with_weekday(text, found)
    found += _with_modifier(text, found)
    found += _ranges(text, found, at)
    found += _between_it_and_now(text, found, at.ref)
    found += _composed(text, found, unreal, _ANCHORED_BEFORE, _resolve_anchored, _in_context)
    found += _composed(text, found, unreal, _COUNTED_BACK, _counted_back, _is_relative)
    found += _composed(text, found, unreal, _COUNTED_FROM, _counted_from, _in_context)
    return _real(found, unreal)


def _names_no_occurrence(rule: _Rule, match: re.Match[str]) -> bool:
    """Whether ``match`` is a calendar name with neither a year nor last/this/next ("March
    3", "in June", "on Friday"), whose occurrence its clause picks."""
    return rule.by_tense and not any(match.groupdict().get(g) for g in _WHICH_GROUPS)


def _recurring(rule: _Rule, match: re.Match[str]) -> bool:
    """Whether ``match`` names a recurrence ("every Saturday", "we usually go hiking in
    May"): it then dates nothing, as no single occurrence is meant."""
    return _names_no_occurrence(rule, match) and recurs(match.string, *match.span())


def _real(found: list[_Candidate], unreal: list[tuple[int, int]]) -> list[_Candidate]:
    """The candidates that name times agentmem holds (to_utc's years) and date no part of an
    unreal one; the spans of those past the times held join ``unreal``."""
    held = []
    for c in found:
        if c.interval.start >= EARLIEST and c.interval.end - _TICK <= LATEST:
            held.append(c)
        else:
            unreal.append((c.start, c.end))
    return [c for c in held if not _dates_unreal(c, unreal)]


def _dates_unreal(candidate: _Candidate, unreal: list[tuple[int, int]]) -> bool:
    """Whether ``candidate`` would date, from when it was said, part of a longer date that
    does not exist: "31 December" of "31 December 9999" (past the years held) is no
    December 31 of this year. A part that stands alone ("February 2025" of "30 February 2025")
    is kept."""
    return candidate.interval.relative and any(
        start <= candidate.start
        and candidate.end <= end
        and end - start > candidate.end - candidate.start
        for start, end in unreal
    )


_WEEKDAY_BEFORE = re.compile(rf"\b{_WEEKDAY},?\s+(?:the\s+)?$", re.IGNORECASE)
_DATES_OF_A_DAY = frozenset({"day_month", "month_day"})


def _with_weekday(text: str, found: list[_Candidate]) -> list[_Candidate]:
    """Compose a weekday and the date it names: "Friday 14 March", "Fri, March 14th" are that
    date, whose weekday picks its year when none is written (14 March falling on a Friday in
    2025, said in February 2025 it is that one whatever the tense); a weekday that fits none
    of the years next to the date's leaves the date as read."""
    composed = []
    for candidate in found:
        if candidate.rule is None or candidate.rule.name not in _DATES_OF_A_DAY:
            continue
        weekday = _just_before(_WEEKDAY_BEFORE, text, candidate.start)
        if weekday is None:
            continue
        interval = candidate.interval
        if interval.relative and candidate.match is not None and not candidate.match["yrel"]:
            interval = _on_its_weekday(interval, _WEEKDAYS[weekday["weekday"].lower()])
        composed.append(_Candidate(weekday.start(), candidate.end, interval, True, -1))
    return composed


def _on_its_weekday(day: _Interval, weekday: int) -> _Interval:
    """``day`` moved to the nearest year (within one) in which it falls on ``weekday``."""
    when = day.start.date()
    for years in (0, -1, 1):
        try:
            moved = when.replace(year=when.year + years)
            if moved.weekday() == weekday:
                return _days(moved, moved, day.granularity, True)
        except (ValueError, OverflowError):  # 29 February, or past the years held
            continue
    return day


_PART_OF_DAY_AFTER = re.compile(
    r"\s+(?:in\s+the\s+|at\s+)?(?P<part>morning|afternoon|evening|night|nite)\b", re.IGNORECASE
)


def _with_part_of_day(text: str, found: list[_Candidate]) -> list[_Candidate]:
    """Compose a day and a part of it: "yesterday morning", "Friday night"."""
    composed = []
    for candidate in found:
        if candidate.interval.granularity != "day":
            continue
        part = _PART_OF_DAY_AFTER.match(text, candidate.end)
        if part is None:
            continue
        interval = _part_of_day(
            candidate.interval.start.date(),
            part["part"].lower().replace("nite", "night"),
            candidate.interval.relative,
        )
        composed.append(_Candidate(candidate.start, part.end(), interval, True, -1))
    return composed


# A time of day beside a day: "tomorrow at 6am", "at 3pm on Friday", "tonight at 8".
_CLOCK_AFTER_DAY = re.compile(rf"\s*,?\s+at\s+{_CLOCK}", re.IGNORECASE)
_CLOCK_BEFORE_DAY = re.compile(rf"\bat\s+{_CLOCK}\s+(?:on\s+)?$", re.IGNORECASE)


def _with_clock_time(text: str, found: list[_Candidate]) -> list[_Candidate]:
    """Compose a day (or a part of it) and a time of day said beside it into that hour: "the
    call is at 3pm on Friday" is 15:00-16:00 that Friday, "at 7:30 last night" 19:30-20:30."""
    composed = []
    for candidate in found:
        if candidate.interval.granularity not in ("day", "part_of_day"):
            continue
        after = _CLOCK_AFTER_DAY.match(text, candidate.end)
        clock = after or _just_before(_CLOCK_BEFORE_DAY, text, candidate.start)
        start = None if clock is None else _clock_on(clock, candidate.interval)
        if start is None:
            continue
        interval = _Interval(start, start + _HOUR, "hour", candidate.interval.relative)
        span = (candidate.start, clock.end()) if after else (clock.start(), candidate.end)
        composed.append(_Candidate(*span, interval, True, -1))
    return composed


def _clock_on(clock: re.Match[str], day: _Interval) -> datetime | None:
    """When the time of day ``clock`` falls in ``day`` (a day or a part of one); None when
    it is not a time, or says neither morning nor evening on a whole day ("Friday at 8"), or
    is midnight (which day's is not said)."""
    if clock["midnight"]:
        return None
    if clock["noon"]:
        hours, minutes, half = 12, 0, None
    else:
        hours, minutes = int(clock["h"]), int(clock["m"] or 0)
        half = clock["half"] and clock["half"].lower().replace(".", "")
    if minutes > 59 or hours > (12 if half else 23) or (half and hours == 0):
        return None
    midnight = _midnight(day.start.date())
    if half:
        choices = [hours % 12 + (12 if half == "pm" else 0)]
    elif clock["noon"] or hours > 12 or hours == 0:
        choices = [hours]
    elif day.granularity == "part_of_day":
        choices = [hours, hours + 12]  # "tonight at 8": the one in the part of the day
    else:
        return None
    for hour in choices:
        for moment in (midnight + hour * _HOUR, midnight + (hour + 24) * _HOUR):
            moment += timedelta(minutes=minutes)
            if day.start <= moment < day.end:
                return moment
    return None


_AT_CLOCK = re.compile(rf"\bat\s+(?P<clock>{_CLOCK})", re.IGNORECASE)


def time_of_day_alone(text: str, ref: datetime) -> ParsedTime | None:
    """The hour a time of day names in ``text``, said at ``ref``, when nothing names its day:
    "I'm meeting Zoe for coffee at 3 pm", said at 10:00, is 15:00-16:00 that day; "I met Zoe
    at 3 pm" the last 3 pm before it. The clause's tense picks the next or the last such
    hour; a simple present is a timetable or a habit ("The shop opens at 9am") and gives
    None, as do a recurrence, midnight and a time that says neither morning
    nor evening ("at 3", "at 9:30"; "at 15:00" and "at noon" do). Callers ask only when
    :func:`find_time_expressions` found nothing."""
    ref = to_utc(ref, field="ref")
    clock = _AT_CLOCK.search(text)
    if clock is None or recurs(text, *clock.span()):
        return None
    # Read from the "at", as before a date: "I have a meeting at", "the party is at".
    direction = clause_direction(text, clock.start("clock"), clock.end())
    if in_simple_present(text, clock.start()):
        # A timetable or a habit, unless its subject is one occasion ("my flight leaves at").
        direction = "forward" if an_occasion_is_due(text, clock.start()) else None
    elif direction is None and an_occasion_is_due(text, clock.start(), tagged_present=False):
        direction = "forward"  # "Zoe's flight from Toronto lands at", "lands" read as a noun
    if direction not in ("past", "forward"):
        return None
    step = 1 if direction == "forward" else -1
    moments = []
    for days in (0, step):
        try:
            day = ref.date() + timedelta(days=days)
            moments.append(_clock_on(clock, _days(day, day, "day", True)))
        except OverflowError:  # past year 9999 or before year 1 (the day's end too)
            continue
    found = [
        m
        for m in moments
        if m is not None
        and m >= EARLIEST
        and m + _HOUR - _TICK <= LATEST
        and (m >= ref if step == 1 else m + _HOUR <= ref)
    ]
    if not found:
        return None
    return ParsedTime(found[0], found[0] + _HOUR, "hour", clock[0], clock.span(), True)


def names_a_time_of_day(text: str) -> bool:
    """Whether ``text`` says "at" a time of day, which :func:`time_of_day_alone` may read."""
    return _AT_CLOCK.search(text) is not None


_MODIFIER_BEFORE = re.compile(
    r"\b(?P<mod>early|mid|late|(?:the\s+)?(?:very\s+)?(?:beginning|start|middle|end"
    r"|first\s+half|second\s+half|(?:first|last)\s+(?:two\s+weeks|weekend|day)"
    r"|(?:first|second|third|fourth|last)\s+week)\s+of)"
    r"(?:\s+|-\s*)$",
    re.IGNORECASE,
)


def _with_modifier(text: str, found: list[_Candidate]) -> list[_Candidate]:
    """Compose a modifier and a period: "early 2023", "mid-June", "the end of last month"."""
    composed = []
    for candidate in found:
        modifier = _just_before(_MODIFIER_BEFORE, text, candidate.start)
        if modifier is None:
            continue
        interval = _portion(candidate.interval, modifier["mod"])
        if interval is not None:
            composed.append(_Candidate(modifier.start(), candidate.end, interval, True, -1))
    return composed


_NTH_WEEK = {"second week": 1, "third week": 2, "fourth week": 3}


def _portion(inner: _Interval, modifier: str) -> _Interval | None:
    """The part of ``inner`` a modifier names (rules in the module docstring)."""
    words = " ".join(modifier.lower().replace("the ", "").replace("very ", "").split())
    words = words.removesuffix(" of")
    start, end, granularity = inner.start, inner.end, inner.granularity
    month_aligned = (
        start.day == 1 and end.day == 1 and start.time() == end.time() == datetime.min.time()
    )
    months = (end.year - start.year) * 12 + end.month - start.month if month_aligned else 0
    relative = inner.relative

    def month_slice(first: int, count: int) -> _Interval:
        year, month = _add_months(start.year, start.month, first)
        return _months(year, month, count, "month" if count == 1 else "range", relative)

    def day_slice(first: int, last: int) -> _Interval:
        """Days ``first``..``last`` of ``inner``, counted from 0; negative counts from its end."""
        days = (end - start).days
        first_day = start.date() + timedelta(days=first % days)
        last_day = start.date() + timedelta(days=last % days)
        return _days(first_day, last_day, "day" if first_day == last_day else "range", relative)

    if words in ("first weekend", "last weekend"):
        if (end - start).days < 7 or granularity in ("week", "range"):
            return None
        if words == "first weekend":
            saturday = start.date() + timedelta(days=(5 - start.weekday()) % 7)
        else:
            last = (end - _DAY).date()
            saturday = last - timedelta(days=(last.weekday() - 5) % 7)
        return _days(saturday, saturday + _DAY, "weekend", relative)
    if words in ("first week", "last week", "first two weeks", "last two weeks"):
        days = 14 if words.endswith("two weeks") else 7
        if (end - start).days < days or granularity in ("week", "range"):
            return None
        return day_slice(0, days - 1) if words.startswith("first") else day_slice(-days, -1)
    if words in _NTH_WEEK:  # "the second week of April": its days 8 to 14
        if months != 1:
            return None
        return day_slice(7 * _NTH_WEEK[words], 7 * _NTH_WEEK[words] + 6)
    if words in ("first day", "last day"):
        if granularity in ("hour", "part_of_day", "day", "range"):
            return None
        return day_slice(0, 0) if words == "first day" else day_slice(-1, -1)
    if words in ("first half", "second half"):
        second = words == "second half"
        if granularity == "decade":
            return _months(start.year + 5 * second, 1, 60, "range", relative)
        if months == 1:
            return day_slice(15, -1) if second else day_slice(0, 14)
        if granularity in ("year", "half") and months % 2 == 0:
            return month_slice(months // 2 * second, months // 2)
        return None
    third = {"early": 0, "beginning": 0, "start": 0, "mid": 1, "middle": 1}.get(words, 2)
    narrow = words in ("beginning", "start", "end")
    if granularity == "decade":
        if narrow:
            return _months(start.year + 8 * (third == 2), 1, 24, "range", relative)
        return replace(_decade(start.year, ("early", "mid", "late")[third]), relative=relative)
    if granularity == "week":
        return day_slice(*((0, 1), (2, 3), (4, 6))[third])
    if months == 1:
        if narrow:
            return day_slice(0, 6) if third == 0 else day_slice(-7, -1)
        return day_slice(*((0, 9), (10, 19), (20, -1))[third])
    if granularity in ("year", "quarter", "half", "season") and months % 3 == 0:
        if narrow:
            return month_slice(0 if third == 0 else months - 1, 1)
        return month_slice(third * months // 3, months // 3)
    return None


_DASHES = frozenset(word for word in RANGE_JOINS if not word.isalpha())
_RANGE_OPEN_BEFORE = re.compile(r"\b(?:between|from)\s+$", re.IGNORECASE)
_RANGE_JOIN = re.compile(
    r"\s*(?:[-–—]|\b(?:" + "|".join(w for w in RANGE_JOINS if w.isalpha()) + r")\b)\s*",
    re.IGNORECASE,
)


# A trip out and back: "flying out on the 5th and back on the 12th", "we leave Friday, coming
# home Sunday" span both days. Not "went back" (a second visit: "We went to Spain in 2019
# and went back in 2022").
_THERE_AND_BACK = re.compile(
    r",?\s+(?:and\s+)?(?:then\s+)?(?:(?:fly|flying|flies|flew|come|coming|comes|came|get"
    r"|getting|gets|got|head|heading|heads|headed|drive|driving|drives|drove|be|being|was"
    r"|were)\s+)?"
    r"(?:back|home|returning|return|returns)\s+(?:on\s+|by\s+|in\s+)?",
    re.IGNORECASE,
)


def _ranges(text: str, found: list[_Candidate], at: _Reading) -> list[_Candidate]:
    """Compose two expressions: "between March and May", "from June to August 2024", "28 April
    - 2 May" (a dash needs no "from"), a trip out and back ("on the 5th and back on the
    12th"); after a move ("the meeting was moved from Monday to Thursday") the new day
    alone."""
    by_start: dict[int, list[_Candidate]] = {}
    for candidate in found:
        by_start.setdefault(candidate.start, []).append(candidate)
    composed = []
    for first in found:
        opener = _just_before(_RANGE_OPEN_BEFORE, text, first.start)
        join = _RANGE_JOIN.match(text, first.end)
        start = first.start if opener is None else opener.start()
        if join is not None and (opener is not None or join[0].strip() in _DASHES):
            moved = _just_before(MOVED_FROM, text, first.start) is not None
            for last in by_start.get(join.end(), []):
                interval = last.interval if moved else _join(first, last, at)
                if interval is not None:
                    composed.append(_Candidate(start, last.end, interval, True, -1))
        if (back := _THERE_AND_BACK.match(text, first.end)) is not None:
            for last in by_start.get(back.end(), []):
                if (interval := _back_after(first, last, at)) is not None:
                    composed.append(_Candidate(start, last.end, interval, True, -1))
    return composed


def _join(first: _Candidate, last: _Candidate, at: _Reading) -> _Interval | None:
    """From the start of ``first`` to the end of ``last``.

    A bare calendar name at the start ("March" in "from March to May 2024") is re-resolved as
    its latest occurrence before ``last`` ends, so it takes its year from ``last``.
    """
    head = first.interval
    if (
        first.rule is not None
        and first.match is not None
        and first.rule.anchorable
        and head.relative
        and not first.match.groupdict().get("rel")
    ):
        anchor = replace(at, ref=last.interval.end - _TICK, by_tense=False)
        anchored = _resolve(first.rule, first.match, anchor)
        if anchored is None:
            return None
        head = replace(anchored, relative=last.interval.relative)
    tail = last.interval
    if head.start >= tail.end:
        return None
    return _Interval(head.start, max(head.end, tail.end), "range", head.relative or tail.relative)


def _back_after(out: _Candidate, back: _Candidate, at: _Reading) -> _Interval | None:
    """From the start of ``out`` to the end of ``back``, the first occurrence of the return's
    date from the trip's start: "off to Crete on the 3rd, back on the 10th", said on 20
    February, is 3 to 10 March (the 10th read alone would be the last one, 10 February)."""
    if back.rule is None or back.match is None:
        return None
    head = out.interval
    tail = _resolve(back.rule, back.match, replace(at, ref=head.start, onward=True))
    if tail is None or tail.end <= head.start:
        return None
    return _Interval(head.start, tail.end, "range", head.relative or tail.relative)


_POSSESSIVE_AFTER = re.compile(r"['’]s?\b")
_BETWEEN_WORD = re.compile(
    r"\b(?P<word>(?:until|till)\s+after|since|after|before|by|until|till|through|thru)\s+$",
    re.IGNORECASE,
)
# A negation before "until" says when something starts, not how long it lasts: "I won't know
# until Friday", "no running until June".
_NEGATED = re.compile(r"\b(?:not|no|never|nothing|nobody)\b|n['’]t\b", re.IGNORECASE)
_CLAUSE_START = re.compile(r"[.!?;:\n][^.!?;:\n]*$")
_CLAUSE_REACH = 200
# "three weeks until Easter": a countdown names the day.
_COUNTDOWN = re.compile(rf"\b{_NUMBER}\s+{_UNIT}\s+$", re.IGNORECASE)


_LIST_AFTER = re.compile(r"\s+(?:and|or|&)\s", re.IGNORECASE)
# What holds until a coming date holds from now through it: "until Friday", "closed until
# after Easter", "runs through March 20" (a day or a month: "through Christmas" is rather
# during it).
_UNTIL_WORDS = frozenset({"until", "till", "until after", "till after", "through", "thru"})


# A participle right before "by" names an agent ("inspired by autumn", "taken by surprise"),
# unless a form of "be" or "get" makes it a passive with a deadline ("be delivered by Friday").
_AGENT_BY = re.compile(
    r"(?<!\bbe )(?<!\bbeen )(?<!\bis )(?<!\bare )(?<!\bget )(?<!\bgot )"
    r"\b\w+(?:ed|en)\s+$",
    re.IGNORECASE,
)


def _between_it_and_now(text: str, found: list[_Candidate], ref: datetime) -> list[_Candidate]:
    """Compose "since", "after", "before", "by", "until" or "through" and an expression into
    the interval between it and the reference, where there is one: "since March" from
    March's start up to the reference, "after Christmas" (past) from its end up to the
    reference, "before Friday" (to come) from the reference up to Friday, "by Friday" (a
    deadline), "until Friday" (to come: "I'm in Paris until Friday") and "through March 20"
    (a day or a month: "the sale runs through March 20") through it. What is after a time to
    come, or before, by or until one past, has no end the words give ("after Easter" said in
    March, "by Friday I was exhausted"): the expression stays. So does "until" after a
    negation ("I won't know until Friday": then), a move ("pushed back until June") or a
    countdown ("three weeks until Easter")."""
    composed = []
    ends = {other.end for other in found}
    for candidate in found:
        if not candidate.in_context:
            continue  # "a song by June Carter": no date
        word = _just_before(_BETWEEN_WORD, text, candidate.start)
        if word is None or _POSSESSIVE_AFTER.match(text, candidate.end):
            continue  # "after yesterday's meeting": after the meeting, not the day
        period = candidate.interval
        which = " ".join(word["word"].lower().split())
        if which == "by" and (
            period.start <= ref  # "by Friday", said on Friday: the day itself
            or _AGENT_BY.search(text, 0, word.start())  # "inspired by autumn": no deadline
        ):
            continue
        if which in ("through", "thru") and (
            period.granularity not in ("day", "month")  # "working through Christmas"
            or _LIST_AFTER.match(text, candidate.end)  # "through June and July": during them
            or _ends_a_range(text, word.start(), ends)
        ):
            continue  # the last of a range: "Monday through Friday", "March 3 through 9"
        if which in _UNTIL_WORDS and (
            period.start <= ref
            or _negated_before(text, word.start())
            or moved_to(text, word.end())
            or _just_before(_COUNTDOWN, text, word.start())
        ):
            continue
        between = {
            "since": (period.start, ref),
            "after": (period.end, ref),
            "before": (ref, period.start),
            "by": (ref, period.end),
            "until": (ref, period.end),
        }["until" if which in _UNTIL_WORDS else which]
        if between[0] >= between[1]:
            continue
        interval = _Interval(*between, "range", True)
        composed.append(_Candidate(word.start(), candidate.end, interval, True, -1))
    return composed


def _ends_a_range(text: str, word: int, ends: set[int]) -> bool:
    """Whether a date ends right before the word at ``text[word]`` ("Monday through"), one
    or two spaces between."""
    return any(word - gap in ends and text[word - gap : word].isspace() for gap in (1, 2))


def _negated_before(text: str, end: int) -> bool:
    """Whether the clause ending at ``end`` holds a negation (read back at most
    :data:`_CLAUSE_REACH` characters)."""
    start = max(0, end - _CLAUSE_REACH)
    clause = _CLAUSE_START.search(text, start, end)
    return _NEGATED.search(text, clause.start() if clause else start, end) is not None


_ANCHORED_BEFORE = re.compile(
    r"\b(?:the\s+|last\s+)?(?:"
    rf"{_NUMBER}\s+{_UNIT}"
    r"|(?P<period>day|night|weekend|week|month|quarter|year)"
    rf"|{_WEEKDAY}"
    r")\s+(?P<dir>before|after)\s+$",
    re.IGNORECASE,
)


def _composed(
    text: str,
    found: list[_Candidate],
    unreal: list[tuple[int, int]],
    words_before: re.Pattern[str],
    resolve: Callable[[re.Match[str], _Interval], _Interval],
    accepts: Callable[[_Candidate], bool],
) -> list[_Candidate]:
    """Compose the words right before each accepted candidate (``words_before``) with it
    into the interval ``resolve`` gives; one past the years datetime holds (``resolve``
    raises) puts its span in ``unreal``."""
    composed = []
    for candidate in found:
        if not accepts(candidate):
            continue
        words = _just_before(words_before, text, candidate.start)
        if words is None:
            continue
        try:
            interval = resolve(words, candidate.interval)
        except (ValueError, OverflowError):
            unreal.append((words.start(), candidate.end))
            continue
        composed.append(_Candidate(words.start(), candidate.end, interval, True, -1))
    return composed


def _in_context(candidate: _Candidate) -> bool:
    return candidate.in_context


def _is_relative(candidate: _Candidate) -> bool:
    return candidate.interval.relative


_COUNTED_BACK = re.compile(rf"\b{_NUMBER}\s+{_UNIT}\s+ago\s+$", re.IGNORECASE)


def _counted_back(words: re.Match[str], inner: _Interval) -> _Interval:
    """An amount back and a time told from now: "a year ago yesterday" is the day a year
    before yesterday, "two years ago last month" that month two years earlier."""
    count, unit = _amount(words)
    return _moved(inner, -count, unit)


def _moved(inner: _Interval, count: int, unit: str) -> _Interval:
    """``inner`` moved by ``count`` units. A day or less keeps its length: "a year ago last
    night", said on 29 February, is the night from 28 February a year before, not a night
    that ends before it starts (its morning's 29 February does not exist then)."""
    start = _shifted(inner.start, count, unit)
    if inner.end - inner.start <= _DAY:
        return replace(inner, start=start, end=start + (inner.end - inner.start))
    return replace(inner, start=start, end=_shifted(inner.end, count, unit))


_COUNTED_FROM = re.compile(
    rf"\b(?P<lasting>for\s+)?{_NUMBER}\s+{_UNIT}\s+"
    rf"(?P<way>from|(?:{'|'.join(sorted(STARTING))})(?:\s+(?:on|from|in))?)\s+$",
    re.IGNORECASE,
)


def _counted_from(words: re.Match[str], inner: _Interval) -> _Interval:
    """An amount and the time it counts from: "a week from Friday" is the Friday a week
    after, "three days from tomorrow" the day three days after tomorrow. How long it lasts,
    after "for" or before "starting": "for two weeks starting Friday" and "for a week from
    tomorrow" run from that day for that long."""
    count, unit = _amount(words)
    if words["lasting"] or words["way"].lower() != "from":
        return _Interval(inner.start, _shifted(inner.start, count, unit), "range", inner.relative)
    return _moved(inner, count, unit)


# The day a holiday of a few days is named for: what is "the day after" it counts from.
_NAMED_FOR = ("christmas day", "easter sunday", "new years day")
_LONGEST_NAMED_HOLIDAY = 4  # Easter, Good Friday to Easter Monday (not "the holidays")


def _principal_day(anchor: _Interval) -> date | None:
    """The day a holiday of several days is named for (Christmas Day, Easter Sunday, New
    Year's Day), which "the day after Christmas" counts from; None for anything else."""
    span = (anchor.end - anchor.start).days
    if anchor.granularity != "holiday" or not 1 < span <= _LONGEST_NAMED_HOLIDAY:
        return None
    for offset in range(span):
        day = anchor.start.date() + offset * _DAY
        if any(_HOLIDAYS[name](day.year) == (day, day) for name in _NAMED_FOR):
            return day
    return None


def _resolve_anchored(words: re.Match[str], anchor: _Interval) -> _Interval:
    """A period counted from a date: "the week before 16 November 2023", "two days after May
    5", "the Sunday before October 25, 2022", "the day after Christmas".

    The period is resolved as if said on the anchor: "before" counts back from the anchor's
    first day, "after" forward from its last, so "the week before <a Thursday>" is the ISO
    week before that Thursday's week, the same week "last week" said that Thursday names.
    """
    after = words["dir"].lower() == "after"
    if (day := _principal_day(anchor)) is not None:
        anchor = _days(day, day, "day", anchor.relative)
    moment = anchor.end - _TICK if after else anchor.start
    step = 1 if after else -1
    # The first weekend after a weekday is that week's own ("the weekend after Tuesday").
    weekend_step = 0 if after and moment.weekday() < _WEEKDAYS["saturday"] else step
    if words["weekday"]:
        weekday = _WEEKDAYS[words["weekday"].lower()]
        today = moment.date()
        gap = (weekday - today.weekday()) % 7 if after else (today.weekday() - weekday) % 7
        day = today + step * timedelta(days=gap or 7)
        interval = _days(day, day, "day", True)
    elif words["period"]:
        unit = words["period"].lower()
        shift = weekend_step if unit == "weekend" else step
        interval = _period("day" if unit == "night" else unit, moment, shift)
    else:
        count, unit = _amount(words)
        shift = weekend_step + step * (count - 1) if unit == "weekend" else step * count
        interval = _period(unit, moment, shift)
    return replace(interval, relative=anchor.relative)


# --------------------------------------------------------------------------------------------
# Whole-text parsing and the dateparser fallback

_LEADING_FILLER = re.compile(
    r"[\W_]*(?:(?:in|on|during|at|over|throughout|around|of)\s+[\W_]*)?", re.IGNORECASE
)
_TRAILING_FILLER = re.compile(r"[\W_]*")


def _covers_text(text: str, candidate: _Candidate) -> bool:
    return (
        _LEADING_FILLER.fullmatch(text, 0, candidate.start) is not None
        and _TRAILING_FILLER.fullmatch(text, candidate.end) is not None
    )


def _checked_text(text: object) -> str:
    if not isinstance(text, str):
        raise InvalidInputError(f"text: expected a string, got {type(text).__name__}")
    return text


def checked_date_order(date_order: object) -> DateOrder:
    """``date_order`` if it is "MDY" or "DMY", else InvalidInputError."""
    if date_order == "MDY" or date_order == "DMY":
        return date_order
    raise InvalidInputError(f"date_order must be one of {list(DATE_ORDERS)}, got {date_order!r}")


_NAMES_CALENDAR = re.compile(rf"\d|{_MONTH}|\b{_HOLIDAY}\b", re.IGNORECASE)
_HOLIDAY_NAME = re.compile(rf"\b{_HOLIDAY}\b", re.IGNORECASE)


def holiday_spans(text: str) -> list[tuple[int, int]]:
    """Where ``text`` names a holiday ("Valentine's Day", "New Year's Eve"): a time, so
    entity recognition names nothing there."""
    return [match.span() for match in _HOLIDAY_NAME.finditer(text)]


def _parsed(text: str, candidate: _Candidate) -> ParsedTime:
    interval = candidate.interval
    words = text[candidate.start : candidate.end]
    return ParsedTime(
        start=interval.start,
        end=interval.end,
        granularity=interval.granularity,
        text=words,
        span=(candidate.start, candidate.end),
        relative=interval.relative,
        named=_NAMES_CALENDAR.search(words) is not None,
    )


# dateparser reads a date into almost anything ("a" is January, "12" is December), so it only
# sees short text that carries a real date cue.
_DATEPARSER_MAX_CHARS = 64
_DATE_CUE = re.compile(
    r"(?-i:January|February|March|April|May|June|July|August|September|October|November"
    r"|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)\b"
    r"|\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b|\d{1,2}:\d{2}"
    r"|\b\d{1,2}\s*(?:am|pm|a\.m\.|p\.m\.)|\b(?:noon|midnight|ago)\b|o['’]clock"
    r"|\d{1,4}[./-]\d{1,2}[./-]\d{1,4}",
    re.IGNORECASE,
)
# A second parse against a shifted reference tells whether the result depends on it.
_PROBE_SHIFT = timedelta(days=400, hours=7)
_DATEPARSER_PERIODS = {
    "time": "hour",
    "hour": "hour",
    "day": "day",
    "week": "week",
    "month": "month",
    "year": "year",
}


# The words a time expression the rules miss may hold: dateparser also reads other words, as
# a time zone ("we met on May 3": "met", Middle European Time, a day early) or not at all.
_DATEPARSER_WORDS = frozenset(
    [name.lower() for name in (*calendar.month_name, *calendar.month_abbr) if name]
    + list(_WEEKDAYS)
    + (  # noqa: SIM905 (a list of words reads best as words)
        "sept am pm a m p noon midnight ago at on in of the a an next last this coming past "
        "tomorrow today yesterday tonight morning afternoon evening night o clock oclock st nd "
        "rd th day days week weeks month months year years hour hours minute minutes and"
    ).split()
)
_LETTERS = re.compile(r"[^\W\d_]+")


def _parse_with_dateparser(text: str, at: _Reading) -> ParsedTime | None:
    stripped = text.strip()
    if not stripped or len(stripped) > _DATEPARSER_MAX_CHARS or not _DATE_CUE.search(stripped):
        return None
    if any(word.lower() not in _DATEPARSER_WORDS for word in _LETTERS.findall(stripped)):
        return None  # more than a time expression ("Alice moved on May 3")
    ref = at.ref
    interval = _dateparser_interval(stripped, ref, at.date_order)
    if interval is None:
        return None
    try:
        probe = ref - _PROBE_SHIFT
    except OverflowError:  # a reference in year 1
        probe = ref + _PROBE_SHIFT
    other = _dateparser_interval(stripped, probe, at.date_order)
    relative = other is None or (other.start, other.end) != (interval.start, interval.end)
    start = text.index(stripped)
    return ParsedTime(
        start=interval.start,
        end=interval.end,
        granularity=interval.granularity,
        text=stripped,
        span=(start, start + len(stripped)),
        relative=relative,
        named=_NAMES_CALENDAR.search(stripped) is not None,
    )


def _dateparser_interval(text: str, ref: datetime, date_order: DateOrder) -> _Interval | None:
    from dateparser.date import DateDataParser  # slow to import; most texts never need it

    settings = {
        "RELATIVE_BASE": ref.replace(tzinfo=None),
        "PREFER_DATES_FROM": "past",
        "PREFER_DAY_OF_MONTH": "first",
        "DATE_ORDER": date_order,
        "RETURN_TIME_AS_PERIOD": True,
        "TIMEZONE": "UTC",
        "TO_TIMEZONE": "UTC",
        "RETURN_AS_TIMEZONE_AWARE": True,
        # Not "timestamp" or "no-spaces-time": they read plain numbers ("101") as dates.
        "PARSERS": ["relative-time", "absolute-time"],
    }
    try:
        data = DateDataParser(languages=["en"], settings=settings).get_date_data(text)
    except Exception:  # dateparser fails in many ways on odd text; none of them is a date
        return None
    if data.date_obj is None:
        return None
    try:
        moment = to_utc(data.date_obj, field="dateparser result")
        return _period(_DATEPARSER_PERIODS.get(data.period, "day"), moment, 0)
    except (InvalidInputError, ValueError, OverflowError):
        return None
