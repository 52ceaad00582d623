"""Time expressions: exact intervals for a fixed reference, negatives, and properties."""

from __future__ import annotations

import re
import subprocess
import sys
from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentmem._time import EARLIEST, LATEST
from agentmem.errors import InvalidInputError
from agentmem.recall.query_time import parse_query_time
from agentmem.temporal import ParsedTime, find_time_expressions, parse_time_expression

# A Wednesday; its ISO week runs Monday 2025-01-13 to Sunday 2025-01-19.
REF = datetime(2025, 1, 15, 12, 0, tzinfo=UTC)
# A Thursday in summer; its week runs Monday 2025-07-07 to Sunday 2025-07-13.
SUMMER_REF = datetime(2025, 7, 10, 9, 0, tzinfo=UTC)
SPRING_REF = datetime(2025, 4, 10, 9, 0, tzinfo=UTC)
JUNE_REF = datetime(2025, 6, 15, 9, 0, tzinfo=UTC)


def utc(value: str) -> datetime:
    """'2024-06-05', '2024-06-05T14' (hour) or '2024-06-05T14:30' as an aware UTC datetime."""
    if "T" in value:
        day, clock = value.split("T")
        hour, _, minute = clock.partition(":")
        return datetime.fromisoformat(day).replace(
            hour=int(hour), minute=int(minute or 0), tzinfo=UTC
        )
    return datetime.fromisoformat(value).replace(tzinfo=UTC)


# (expression, start, end) for REF; end is exclusive.
CASES_AT_REF = [
    # The seed's table and examples.
    ("last spring", "2024-03-01", "2024-06-01"),
    ("in June", "2024-06-01", "2024-07-01"),
    ("last June", "2024-06-01", "2024-07-01"),
    ("last year", "2024-01-01", "2025-01-01"),
    ("between March and May", "2024-03-01", "2024-06-01"),
    # Days and parts of days.
    ("yesterday", "2025-01-14", "2025-01-15"),
    ("today", "2025-01-15", "2025-01-16"),
    ("tomorrow", "2025-01-16", "2025-01-17"),
    ("tonight", "2025-01-15T18", "2025-01-16T06"),
    # ... as chats spell them.
    ("tmrw", "2025-01-16", "2025-01-17"),
    ("Tmr", "2025-01-16", "2025-01-17"),
    ("tommorow", "2025-01-16", "2025-01-17"),
    ("2moro", "2025-01-16", "2025-01-17"),
    ("yday", "2025-01-14", "2025-01-15"),
    ("y'day", "2025-01-14", "2025-01-15"),
    ("the day after tmrw", "2025-01-17", "2025-01-18"),
    ("tonite", "2025-01-15T18", "2025-01-16T06"),
    ("2nite", "2025-01-15T18", "2025-01-16T06"),
    ("last nite", "2025-01-14T18", "2025-01-15T06"),
    # Units, weekdays and months as chats write them.
    ("last wk", "2025-01-06", "2025-01-13"),
    ("2 wks ago", "2024-12-30", "2025-01-06"),
    ("a yr ago", "2024-01-01", "2025-01-01"),
    ("next yr", "2026-01-01", "2027-01-01"),
    ("last mth", "2024-12-01", "2025-01-01"),
    ("on thurs", "2025-01-09", "2025-01-10"),
    ("next weds", "2025-01-22", "2025-01-23"),
    ("this sat", "2025-01-18", "2025-01-19"),
    ("in january", "2025-01-01", "2025-02-01"),
    ("march 9th", "2024-03-09", "2024-03-10"),
    ("the 9th of may", "2024-05-09", "2024-05-10"),
    ("5th may", "2024-05-05", "2024-05-06"),
    ("this morning", "2025-01-15T06", "2025-01-15T12"),
    ("this afternoon", "2025-01-15T12", "2025-01-15T18"),
    ("this evening", "2025-01-15T18", "2025-01-16"),
    ("last night", "2025-01-14T18", "2025-01-15T06"),
    ("the day before yesterday", "2025-01-13", "2025-01-14"),
    ("the day after tomorrow", "2025-01-17", "2025-01-18"),
    ("yesterday morning", "2025-01-14T06", "2025-01-14T12"),
    ("Friday night", "2025-01-10T18", "2025-01-11T06"),
    ("last Tuesday evening", "2025-01-14T18", "2025-01-15"),
    # Weeks, weekends, months.
    ("last week", "2025-01-06", "2025-01-13"),
    ("this week", "2025-01-13", "2025-01-20"),
    ("next week", "2025-01-20", "2025-01-27"),
    ("the week before", "2025-01-06", "2025-01-13"),
    ("the week after", "2025-01-20", "2025-01-27"),
    # Counted from a date instead of the reference (2023-11-16 is a Thursday).
    ("the week before 16 November 2023", "2023-11-06", "2023-11-13"),
    ("the week after 16 November 2023", "2023-11-20", "2023-11-27"),
    # A holiday of several days counts from the day it is named for (Christmas Day, Easter
    # Sunday): the days after Boxing Day and Easter Monday before.
    ("the day after Christmas 2024", "2024-12-26", "2024-12-27"),
    ("the day before Christmas 2024", "2024-12-24", "2024-12-25"),
    ("the Monday after Easter 2024", "2024-04-01", "2024-04-02"),
    ("two days after Easter 2024", "2024-04-02", "2024-04-03"),
    # The weekend after a weekday is the first one after it, that week's (a week later
    # before); after a Saturday, the next.
    ("the weekend after Christmas 2024", "2024-12-28", "2024-12-30"),
    ("the weekend after Thanksgiving 2024", "2024-11-30", "2024-12-02"),
    ("the weekend after May 7, 2024", "2024-05-11", "2024-05-13"),
    ("two weekends after May 7, 2024", "2024-05-18", "2024-05-20"),
    ("the weekend after May 11, 2024", "2024-05-18", "2024-05-20"),
    ("the weekend before Easter 2024", "2024-03-23", "2024-03-25"),
    ("two days before May 5, 2023", "2023-05-03", "2023-05-04"),
    ("two weeks before August 11, 2023", "2023-07-24", "2023-07-31"),
    ("the Sunday before October 25, 2022", "2022-10-23", "2022-10-24"),
    ("the Saturday after October 28, 2023", "2023-11-04", "2023-11-05"),
    ("the Monday before July 24, 2023", "2023-07-17", "2023-07-18"),
    ("last weekend before April 10, 2023", "2023-04-08", "2023-04-10"),
    ("the month before June 2024", "2024-05-01", "2024-06-01"),
    ("last weekend", "2025-01-11", "2025-01-13"),
    ("this weekend", "2025-01-18", "2025-01-20"),
    ("next weekend", "2025-01-25", "2025-01-27"),
    ("over the weekend", "2025-01-11", "2025-01-13"),
    ("last month", "2024-12-01", "2025-01-01"),
    ("this month", "2025-01-01", "2025-02-01"),
    ("next month", "2025-02-01", "2025-03-01"),
    ("the year before last", "2023-01-01", "2024-01-01"),
    ("last decade", "2010-01-01", "2020-01-01"),
    # N units ago / ahead: the calendar unit holding the shifted reference.
    ("3 days ago", "2025-01-12", "2025-01-13"),
    ("three days ago", "2025-01-12", "2025-01-13"),
    ("a day ago", "2025-01-14", "2025-01-15"),
    ("a couple of days ago", "2025-01-13", "2025-01-14"),
    ("a few days ago", "2025-01-12", "2025-01-13"),
    ("2 weeks ago", "2024-12-30", "2025-01-06"),
    ("a month ago", "2024-12-01", "2025-01-01"),
    ("six months ago", "2024-07-01", "2024-08-01"),
    ("two years ago", "2023-01-01", "2024-01-01"),
    ("4 hours ago", "2025-01-15T08", "2025-01-15T09"),
    ("in 3 days", "2025-01-18", "2025-01-19"),
    ("5 days from now", "2025-01-20", "2025-01-21"),
    ("in two weeks", "2025-01-27", "2025-02-03"),
    ("in a month", "2025-02-01", "2025-03-01"),
    # Weekdays.
    ("last Friday", "2025-01-10", "2025-01-11"),
    ("on Friday", "2025-01-10", "2025-01-11"),
    ("Friday", "2025-01-10", "2025-01-11"),
    ("this Friday", "2025-01-17", "2025-01-18"),
    ("next Friday", "2025-01-24", "2025-01-25"),
    ("last Wednesday", "2025-01-08", "2025-01-09"),
    ("on Monday", "2025-01-13", "2025-01-14"),
    # Months and dates.
    ("June 2024", "2024-06-01", "2024-07-01"),
    ("in June 2024", "2024-06-01", "2024-07-01"),
    ("June of 2024", "2024-06-01", "2024-07-01"),
    ("Sept. 2024", "2024-09-01", "2024-10-01"),
    ("June '24", "2024-06-01", "2024-07-01"),
    ("next June", "2025-06-01", "2025-07-01"),
    ("this June", "2025-06-01", "2025-07-01"),
    ("June 5th", "2024-06-05", "2024-06-06"),
    ("June 5, 2024", "2024-06-05", "2024-06-06"),
    ("5 June 2024", "2024-06-05", "2024-06-06"),
    ("the 5th of June 2024", "2024-06-05", "2024-06-06"),
    ("Jan. 5th, 2023", "2023-01-05", "2023-01-06"),
    ("January 10", "2025-01-10", "2025-01-11"),
    ("January 20", "2024-01-20", "2024-01-21"),
    ("Feb 29", "2024-02-29", "2024-03-01"),
    # Quarters, halves, parts of periods.
    ("Q3 2023", "2023-07-01", "2023-10-01"),
    ("2023 Q4", "2023-10-01", "2024-01-01"),
    ("Q3", "2024-07-01", "2024-10-01"),
    ("the third quarter of 2023", "2023-07-01", "2023-10-01"),
    ("last quarter", "2024-10-01", "2025-01-01"),
    ("H1 2024", "2024-01-01", "2024-07-01"),
    ("the first half of 2024", "2024-01-01", "2024-07-01"),
    ("early 2023", "2023-01-01", "2023-05-01"),
    ("mid 2023", "2023-05-01", "2023-09-01"),
    ("mid-2023", "2023-05-01", "2023-09-01"),
    ("late 2023", "2023-09-01", "2024-01-01"),
    ("early June", "2024-06-01", "2024-06-11"),
    ("mid-June", "2024-06-11", "2024-06-21"),
    ("late June 2023", "2023-06-21", "2023-07-01"),
    ("end of last month", "2024-12-25", "2025-01-01"),
    ("beginning of this year", "2025-01-01", "2025-02-01"),
    ("the end of the year", "2025-12-01", "2026-01-01"),
    ("the last week of June 2024", "2024-06-24", "2024-07-01"),
    ("the last two weeks of August 2024", "2024-08-18", "2024-09-01"),
    ("the first two weeks of May 2024", "2024-05-01", "2024-05-15"),
    # 1 October 2023 is a Sunday: the first weekend is the first Saturday's.
    ("the first weekend of October 2023", "2023-10-07", "2023-10-09"),
    ("the last weekend of September 2023", "2023-09-30", "2023-10-02"),
    # Years and decades.
    ("in 2021", "2021-01-01", "2022-01-01"),
    ("during 2019", "2019-01-01", "2020-01-01"),
    ("2021", "2021-01-01", "2022-01-01"),
    ("the 1990s", "1990-01-01", "2000-01-01"),
    ("the 90s", "1990-01-01", "2000-01-01"),
    ("the '80s", "1980-01-01", "1990-01-01"),
    ("the early 2000s", "2000-01-01", "2004-01-01"),
    # Seasons.
    ("the summer of 2023", "2023-06-01", "2023-09-01"),
    ("winter 2024", "2023-12-01", "2024-03-01"),
    ("last winter", "2023-12-01", "2024-03-01"),
    ("this winter", "2024-12-01", "2025-03-01"),
    ("in the fall", "2024-09-01", "2024-12-01"),
    ("next summer", "2025-06-01", "2025-09-01"),
    # Holidays.
    ("over Christmas", "2024-12-24", "2024-12-27"),
    ("on Christmas Eve", "2024-12-24", "2024-12-25"),
    ("Christmas Day 2023", "2023-12-25", "2023-12-26"),
    ("New Year's Eve", "2024-12-31", "2025-01-01"),
    ("New Year's Day", "2025-01-01", "2025-01-02"),
    ("Thanksgiving", "2024-11-28", "2024-11-29"),
    ("Thanksgiving 2023", "2023-11-23", "2023-11-24"),
    ("Easter 2024", "2024-03-29", "2024-04-02"),
    ("Easter Sunday 2025", "2025-04-20", "2025-04-21"),
    # ISO and numeric dates.
    ("2024-06-05", "2024-06-05", "2024-06-06"),
    ("2024-06", "2024-06-01", "2024-07-01"),
    ("2024-06-05T14:30:00Z", "2024-06-05T14", "2024-06-05T15"),
    ("2024-06-05T14:30:00+02:00", "2024-06-05T12", "2024-06-05T13"),
    ("05/06/2024", "2024-05-06", "2024-05-07"),
    ("25/06/2024", "2024-06-25", "2024-06-26"),
    ("12/25/2024", "2024-12-25", "2024-12-26"),
    # Ranges.
    ("from June to August 2024", "2024-06-01", "2024-09-01"),
    ("between 2019 and 2021", "2019-01-01", "2022-01-01"),
    ("from November to February 2024", "2023-11-01", "2024-03-01"),
    ("between early March and late May", "2024-03-01", "2024-06-01"),
    # Left to dateparser: a date with a clock time.
    ("June 5th at 3pm", "2024-06-05T15", "2024-06-05T16"),
    ("next Tuesday at 5pm", "2025-01-21T17", "2025-01-21T18"),
]

COMPOSED_AT_REF = [
    # An amount back from a time told from now.
    ("a year ago yesterday", "2024-01-14", "2024-01-15"),
    ("two years ago last month", "2022-12-01", "2023-01-01"),
    ("a week ago today", "2025-01-08", "2025-01-09"),
    ("two weekends ago", "2025-01-04", "2025-01-06"),
    # An amount after the time it counts from; after "for" or before "starting", how long.
    ("a week from Friday", "2025-01-17", "2025-01-18"),
    ("three days from tomorrow", "2025-01-19", "2025-01-20"),
    ("a month from today", "2025-02-15", "2025-02-16"),
    ("for two weeks starting next Friday", "2025-01-24", "2025-02-07"),
    ("for a week from tomorrow", "2025-01-16", "2025-01-23"),
    # A yearly name in the year named so.
    ("Thanksgiving this year", "2025-11-27", "2025-11-28"),
    ("Christmas last year", "2024-12-24", "2024-12-27"),
    ("in May next year", "2026-05-01", "2026-06-01"),
    ("March 3rd next year", "2026-03-03", "2026-03-04"),
    # A weekday counted within its month, or past the nearest one.
    ("the first Tuesday of November", "2024-11-05", "2024-11-06"),
    ("the last Friday in May", "2024-05-31", "2024-06-01"),
    ("the fourth Thursday of November 2027", "2027-11-25", "2027-11-26"),
    ("the Monday before last", "2025-01-06", "2025-01-07"),
    ("the Friday after next", "2025-01-31", "2025-02-01"),
    ("the night before last", "2025-01-13T18", "2025-01-14T06"),
    # A weekday and a day of the month: the nearest such day that is that weekday.
    ("Sunday the 19th", "2024-05-19", "2024-05-20"),
]


@pytest.mark.parametrize(("text", "start", "end"), COMPOSED_AT_REF)
def test_composed_expression_at_reference(text: str, start: str, end: str) -> None:
    """REF is Wednesday 15 January 2025."""
    parsed = parse_time_expression(text, REF)
    assert parsed is not None and parsed.text == text.removeprefix("in ")
    assert (parsed.start, parsed.end) == (utc(start), utc(end))


def test_an_amount_back_and_a_time_across_a_comma_are_two_expressions() -> None:
    found = find_time_expressions("I quit two years ago, last month I started again.", REF)
    assert [f.text for f in found] == ["two years ago", "last month"]


# (expression, reference, start, end): the same words said at other times.
CASES_AT_OTHER_REFS = [
    ("last spring", SUMMER_REF, "2025-03-01", "2025-06-01"),
    ("last spring", SPRING_REF, "2024-03-01", "2024-06-01"),
    ("in June", SUMMER_REF, "2025-06-01", "2025-07-01"),
    ("in June", JUNE_REF, "2025-06-01", "2025-07-01"),
    ("last June", SUMMER_REF, "2025-06-01", "2025-07-01"),
    ("last June", JUNE_REF, "2024-06-01", "2024-07-01"),
    ("last year", SUMMER_REF, "2024-01-01", "2025-01-01"),
    ("between March and May", SUMMER_REF, "2025-03-01", "2025-06-01"),
    ("June 2024", SUMMER_REF, "2024-06-01", "2024-07-01"),
    ("last weekend", SUMMER_REF, "2025-07-05", "2025-07-07"),
    ("last Friday", SUMMER_REF, "2025-07-04", "2025-07-05"),
    ("this summer", SUMMER_REF, "2025-06-01", "2025-09-01"),
    ("last summer", SUMMER_REF, "2024-06-01", "2024-09-01"),
    ("this winter", SUMMER_REF, "2025-12-01", "2026-03-01"),
    ("in July", SUMMER_REF, "2025-07-01", "2025-08-01"),
    ("Q3", SUMMER_REF, "2025-07-01", "2025-10-01"),
    ("last quarter", SUMMER_REF, "2025-04-01", "2025-07-01"),
    ("over Christmas", SUMMER_REF, "2024-12-24", "2024-12-27"),
    # A naive reference means UTC; an aware one is converted to UTC first.
    ("yesterday", datetime(2025, 1, 15, 12), "2025-01-14", "2025-01-15"),
    (
        "yesterday",
        datetime(2025, 1, 15, 21, tzinfo=timezone(timedelta(hours=-5))),
        "2025-01-15",
        "2025-01-16",
    ),
]

NOT_TIME_EXPRESSIONS = [
    "I may go to the store",
    "Alice prefers coffee",
    "room 101",
    "call 555-2024",
    "INV-2021 is still unpaid",
    "They march every morning of the year",
    "The Marching band played",
    "May I ask a question?",
    "June said hello to Bob",
    "I read a book by May Sarton",
    "a song by June Carter",
    "Sunday school starts soon",
    "Friday was fun",
    "a spring in her step",
    "after the fall of Rome",
    "In 2000 cases the test passed",
    "over 2000 people came",
    "she lives in room 2021",
    "order #2021 shipped",
    "it costs $2021",
    "3/4 of the team agreed",
    "I don't want to fall",
    "a Christmas tree",
    "the cat knocked over the Christmas tree",  # a holiday before a noun of a thing
    "LOL my cat knocked over the xmas tree",
    "I found my Halloween costume under the bed",
    "I teach Sunday school in the village",
    "Happy Friday to you!",
    "The TMR scan is booked",  # an acronym, not "tmr"
    # Words that chats' spellings of calendar words must not take.
    "I may 2 go",
    "may 12 people come",
    "we march on",
    "I relied on sat nav",
    "we lay on sun loungers",
    "I sat on the sofa",
    "",
    "   ",
]


def test_at_least_eighty_table_cases() -> None:
    assert len(CASES_AT_REF) + len(CASES_AT_OTHER_REFS) >= 80


@pytest.mark.parametrize(("text", "start", "end"), CASES_AT_REF)
def test_expression_at_reference(text: str, start: str, end: str) -> None:
    parsed = parse_time_expression(text, REF)
    assert parsed is not None, text
    assert (parsed.start, parsed.end) == (utc(start), utc(end))


@pytest.mark.parametrize(("text", "reference", "start", "end"), CASES_AT_OTHER_REFS)
def test_expression_at_other_reference(
    text: str, reference: datetime, start: str, end: str
) -> None:
    parsed = parse_time_expression(text, reference)
    assert parsed is not None, text
    assert (parsed.start, parsed.end) == (utc(start), utc(end))


def test_seed_example_alice_married_last_june() -> None:
    said = datetime(2025, 1, 15, tzinfo=UTC)
    [found] = find_time_expressions("Alice got married last June", said)
    assert (found.start, found.end) == (utc("2024-06-01"), utc("2024-07-01"))
    assert found.text == "last June"
    assert found.relative


def test_seed_example_query_in_june_2024() -> None:
    question = "What happened to Alice in June 2024?"
    [found] = find_time_expressions(question, REF)
    assert found == ParsedTime(
        start=utc("2024-06-01"),
        end=utc("2024-07-01"),
        granularity="month",
        text="June 2024",
        span=(26, 35),
        relative=False,
        named=True,
    )
    assert question[found.span[0] : found.span[1]] == "June 2024"


def test_find_in_a_question_about_last_spring() -> None:
    [found] = find_time_expressions("What did Alice do last spring?", REF)
    assert (found.text, found.granularity) == ("last spring", "season")
    assert (found.start, found.end) == (utc("2024-03-01"), utc("2024-06-01"))


def test_find_several_left_to_right() -> None:
    found = find_time_expressions("We met Friday night and again on Sunday.", REF)
    assert [(f.text, f.start, f.end) for f in found] == [
        ("Friday night", utc("2025-01-10T18"), utc("2025-01-11T06")),
        ("Sunday", utc("2025-01-12"), utc("2025-01-13")),
    ]
    quarters = find_time_expressions("Revenue in Q3 2023 versus Q4 2023", REF)
    assert [q.text for q in quarters] == ["Q3 2023", "Q4 2023"]


def test_find_prefers_the_longest_expression() -> None:
    [found] = find_time_expressions("What did we do between March and May?", REF)
    assert found.text == "between March and May"
    [found] = find_time_expressions("It happened the day before yesterday.", REF)
    assert found.text == "the day before yesterday"


def test_find_counts_a_period_from_the_date_that_follows_it() -> None:
    # Not "the week before" now plus the date: one expression, as if said on 16 November.
    [found] = find_time_expressions("Where was Tim in the week before 16 November 2023?", REF)
    assert (found.text, found.start, found.end) == (
        "the week before 16 November 2023",
        utc("2023-11-06"),
        utc("2023-11-13"),
    )
    assert not found.relative
    [relative] = find_time_expressions("It rained the day after Christmas.", REF)
    assert (relative.start, relative.relative) == (utc("2024-12-26"), True)


def test_find_needs_context_for_ambiguous_words() -> None:
    assert [f.text for f in find_time_expressions("June said she would come in May", REF)] == [
        "May"
    ]
    assert [f.text for f in find_time_expressions("Room 2021 was booked in 2021.", REF)] == ["2021"]
    assert find_time_expressions("Room 2021 was booked in 2021.", REF)[0].span == (24, 28)
    assert [f.text for f in find_time_expressions("What did Alice do Friday?", REF)] == ["Friday"]
    # Before a preposition of its clause, and after "come" (neither was a date).
    assert [f.text for f in find_time_expressions("We met Tuesday for drinks.", REF)] == ["Tuesday"]
    assert [f.text for f in find_time_expressions("Come March, I'll be a dad.", REF)] == ["March"]
    # A holiday before a time or an occasion of it is still that day.
    for text, holiday in (
        ("We met at the Halloween party.", "Halloween"),
        ("Over the Easter break we rested.", "Easter"),
    ):
        assert [f.text for f in find_time_expressions(text, REF)] == [holiday], text


def test_a_bare_weekday_or_weekend_in_a_future_clause_is_the_coming_one() -> None:
    # REF is Wednesday 15 January 2025.
    def first(text: str) -> tuple[datetime, datetime]:
        [found] = find_time_expressions(text, REF)
        return found.start, found.end

    assert first("We'll meet on Friday.") == (utc("2025-01-17"), utc("2025-01-18"))
    assert first("I can't wait for the weekend!") == (utc("2025-01-18"), utc("2025-01-20"))
    assert first("What are your plans for the weekend?") == (utc("2025-01-18"), utc("2025-01-20"))
    # Past or unmarked clauses keep the most recent one, also in the next sentence.
    assert first("On Friday, I got great news.") == (utc("2025-01-10"), utc("2025-01-11"))
    assert first("We went hiking over the weekend.") == (utc("2025-01-11"), utc("2025-01-13"))
    assert first("I will call. We met on Monday.") == (utc("2025-01-13"), utc("2025-01-14"))
    assert find_time_expressions("I bought a gift for May.", REF) == []
    # What is booked or planned for a month is dated in it.
    assert first("The trip is planned for June.") == (utc("2025-06-01"), utc("2025-07-01"))
    assert first("We booked a cabin for May.") == (utc("2025-05-01"), utc("2025-06-01"))


# (sentence, start, end) at FEB_20 (a Thursday): a name without a year is read by its clause.
FEB_20 = datetime(2025, 2, 20, 10, 0, tzinfo=UTC)
BY_TENSE = [
    ("We will launch in April.", "2025-04-01", "2025-05-01"),
    ("We launched in April.", "2024-04-01", "2024-05-01"),
    ("We'll ship in February.", "2025-02-01", "2025-03-01"),  # the one not yet over
    ("The invoice is due on March 3.", "2025-03-03", "2025-03-04"),
    ("The invoice was due on March 3.", "2024-03-03", "2024-03-04"),
    ("Invoice due March 3", "2025-03-03", "2025-03-04"),  # no verb: the plan word decides
    ("My birthday is on May 12.", "2025-05-12", "2025-05-13"),
    ("The parks are lovely in the spring.", "2024-03-01", "2024-06-01"),  # generic
    # Where someone is, or whether they are free, at a date is their plan (last year's
    # before); how they feel then is generic.
    ("I am busy in March.", "2025-03-01", "2025-04-01"),
    ("We're really free in April.", "2025-04-01", "2025-05-01"),
    ("I'm in Paris in March.", "2025-03-01", "2025-04-01"),
    ("She is 30 in July.", "2025-07-01", "2025-08-01"),
    ("I am happy in the summer.", "2024-06-01", "2024-09-01"),
    ("I love the painting I did in May.", "2024-05-01", "2024-06-01"),
    ("On March 3, we will launch.", "2025-03-03", "2025-03-04"),
    ("I've been to Kyoto in April.", "2024-04-01", "2024-05-01"),
    ("I've been planning a trip to Kyoto in April.", "2025-04-01", "2025-05-01"),
    ("Which movie do they enjoy watching during Thanksgiving?", "2024-11-28", "2024-11-29"),
    ("Where is Nora going on the 12th of March?", "2025-03-12", "2025-03-13"),
    ("What did Nora do on the 12th?", "2025-02-12", "2025-02-13"),
    ("I'm seeing the dentist on the 28th.", "2025-02-28", "2025-03-01"),
    ("Bring the signed forms on 10 March.", "2025-03-10", "2025-03-11"),
    ("I'm flying to Kyoto on Friday.", "2025-02-21", "2025-02-22"),
    ("The release is scheduled for Q2.", "2025-04-01", "2025-07-01"),
    # A simple present that dates its event speaks of the coming one.
    ("The wedding is in August.", "2025-08-01", "2025-09-01"),
    ("She turns 30 on May 5.", "2025-05-05", "2025-05-06"),
    ("The course starts in September.", "2025-09-01", "2025-10-01"),
    ("The store opens at 9 on Monday.", "2025-02-24", "2025-02-25"),
    # ... also with its object and a place between the verb and the date.
    ("Aiko starts kindergarten in September.", "2025-09-01", "2025-10-01"),
    ("We meet the contractor on Thursday.", "2025-02-27", "2025-02-28"),
    ("I fly to Rome in July.", "2025-07-01", "2025-08-01"),
    ("I'm off to Rome in July.", "2025-07-01", "2025-08-01"),
    # An event one has ("have", "have got") takes place at its date; other things had are
    # generic, and "got" with them is obtaining.
    ("I've got an exam in July.", "2025-07-01", "2025-08-01"),
    ("She's got a recital on the 28th.", "2025-02-28", "2025-03-01"),
    ("We have our wedding in August.", "2025-08-01", "2025-09-01"),
    ("We have snow in January.", "2025-01-01", "2025-02-01"),
    ("She's got her degree in May.", "2024-05-01", "2024-06-01"),
    ("Off to Rome in July!", "2025-07-01", "2025-08-01"),
    ("We were off to Rome in July.", "2024-07-01", "2024-08-01"),
    ("The kids go back to school in September.", "2025-09-01", "2025-10-01"),
    ("My brother gets married on June 28.", "2025-06-28", "2025-06-29"),
    # ... but not a date that describes a noun, nor a verb of a state.
    ("I love the photos from June.", "2024-06-01", "2024-07-01"),
    ("I miss the beaches in August.", "2024-08-01", "2024-09-01"),
    ("My knee hurts since the long run on Sunday.", "2025-02-16", "2025-02-17"),
    # "Until" / "by" a date: what holds now ends ahead of it (through it: from when it was
    # said), unless the clause is past.
    ("Physio says no running until June.", "2025-06-01", "2025-07-01"),
    ("The offer is valid until March.", "2025-02-20T10", "2025-04-01"),
    ("I stayed there until June.", "2024-06-01", "2024-07-01"),
    ("I remember the storm in January.", "2025-01-01", "2025-02-01"),
]


@pytest.mark.parametrize(("text", "start", "end"), BY_TENSE)
def test_a_name_without_a_year_follows_its_clause(text: str, start: str, end: str) -> None:
    [found] = find_time_expressions(text, FEB_20)
    assert (found.start, found.end) == (utc(start), utc(end))


# A time of day beside a day narrows it to that hour (said Thursday 2025-02-20 10:00).
CLOCK_TIMES = [
    ("My flight leaves at 6am tomorrow.", "2025-02-21T06", "2025-02-21T07"),
    ("My flight leaves tomorrow at 6am.", "2025-02-21T06", "2025-02-21T07"),
    ("The call is at 3pm on Friday.", "2025-02-21T15", "2025-02-21T16"),
    ("On Monday at noon I have a demo.", "2025-02-24T12", "2025-02-24T13"),
    ("The meeting is tomorrow, at 10 a.m.", "2025-02-21T10", "2025-02-21T11"),
    ("The train is at 18:45 tomorrow.", "2025-02-21T18:45", "2025-02-21T19:45"),
    # A part of the day says morning or evening for a bare hour, and may run past midnight.
    ("We met at 7:30 last night.", "2025-02-19T19:30", "2025-02-19T20:30"),
    ("The party starts at 8 tonight.", "2025-02-20T20", "2025-02-20T21"),
    ("We arrived at 9 this morning.", "2025-02-20T09", "2025-02-20T10"),
    ("I got home at 1am last night.", "2025-02-20T01", "2025-02-20T02"),
    # A bare hour on a whole day says neither: the day stays; nor is a count a time.
    ("Dinner Friday at 8?", "2025-02-21", "2025-02-22"),
    ("The store opens at 9 on Monday.", "2025-02-24", "2025-02-25"),
    ("I was at 2 meetings on Friday.", "2025-02-14", "2025-02-15"),
    ("We came in at 25 on Friday.", "2025-02-14", "2025-02-15"),
    ("The party starts at 8pm this morning.", "2025-02-20T06", "2025-02-20T12"),
]


@pytest.mark.parametrize(("text", "start", "end"), CLOCK_TIMES)
def test_a_time_of_day_beside_a_day_dates_its_hour(text: str, start: str, end: str) -> None:
    [found] = find_time_expressions(text, FEB_20)
    assert (found.start, found.end) == (utc(start), utc(end))


# A habit names no single occurrence, so its calendar names date nothing.
RECURRENCES = [
    "We usually go hiking in May.",
    "Fatima volunteers at the Red Cross every Saturday.",
    "My mom calls me every Sunday.",
    "Every year in May we go to the lake.",
    "Each summer we rent a cabin in Maine.",
    "She always visits her parents at Thanksgiving.",
    "We typically close the books on the 5th.",
    "He sees his kids every other weekend.",
    # Days in the plural, or a count a unit: what recurs inside the period named.
    "I go hiking on weekends in summer.",
    "On Sundays in summer we swim in the lake.",
    "We go skiing at weekends in January.",
    "I swim twice a week in summer.",
    "She trains three times a week until March.",
]


@pytest.mark.parametrize("text", RECURRENCES)
def test_a_recurrence_dates_nothing(text: str) -> None:
    assert find_time_expressions(text, FEB_20) == []


def test_a_recurrence_leaves_the_dates_of_its_other_parts_and_real_periods() -> None:
    def days(text: str) -> list[tuple[datetime, datetime]]:
        return [(f.start, f.end) for f in find_time_expressions(text, FEB_20)]

    # Another part of the sentence, a named year or "last": one period as before.
    assert days("I usually swim, but on Friday I ran.") == [(utc("2025-02-14"), utc("2025-02-15"))]
    assert days("In 2019 we usually went hiking in May.")[0] == (
        utc("2019-01-01"),
        utc("2020-01-01"),
    )
    assert days("Every Saturday last month I volunteered.") == [
        (utc("2025-01-01"), utc("2025-02-01"))
    ]
    # "every" that counts no unit of the calendar is no habit.
    assert days("I loved every minute of our trip in May.") == [
        (utc("2024-05-01"), utc("2024-06-01"))
    ]
    # Nor are weekends counted, or a day of the week after "to".
    assert days("I spent three weekends in May painting the fence.") == [
        (utc("2024-05-01"), utc("2024-06-01"))
    ]
    assert days("We moved the calls from Mondays to Friday.")[-1][0] == utc("2025-02-21")


NUMERIC = [
    ("on 03/04/2025", "MDY", "2025-03-04"),
    ("on 03.04.2025", "MDY", "2025-04-03"),  # dots are day-first whatever the order
    ("on 03.04.2025", "DMY", "2025-04-03"),
    ("on 12.01.2025", "MDY", "2025-01-12"),
    ("on 3/4/2025", "DMY", "2025-04-03"),
    ("on 3-4-2025", "MDY", "2025-03-04"),
    ("on 21.01.2024", "MDY", "2024-01-21"),  # 21 cannot be a month
    ("on 1/21/2024", "DMY", "2024-01-21"),
    ("on 2024-01-02", "DMY", "2024-01-02"),  # ISO is year-month-day whatever the order
]


@pytest.mark.parametrize(("text", "order", "day"), NUMERIC)
def test_numeric_dates_follow_their_separator_and_the_date_order(
    text: str, order: str, day: str
) -> None:
    [found] = find_time_expressions(text, FEB_20, date_order=order)
    assert (found.start, found.end, found.named) == (utc(day), utc(day) + timedelta(days=1), True)
    assert parse_time_expression(text, FEB_20, date_order=order) == found


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        # "till", "thru" and "through" join a range's days as "to" and "until" do.
        ("I'll be OOO from the 3rd till the 10th.", "2025-03-03", "2025-03-11"),
        ("We stayed from the 3rd thru the 5th.", "2025-02-03", "2025-02-06"),
        # The first of two days in numbers takes the second's year.
        ("The shop is closed from 9.3. till 12.3.", "2025-03-09", "2025-03-13"),
        ("The shop is closed from 3/9 till 3/12.", "2025-03-09", "2025-03-13"),
    ],
)
def test_ranges_of_days_joined_by_till_or_thru(text: str, start: str, end: str) -> None:
    [found] = find_time_expressions(text, FEB_20)
    assert (found.start, found.end) == (utc(start), utc(end))


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("See you on 14.03.", "2025-03-14"),
        ("We met on 3.4. at the fair.", "2024-04-03"),
        ("The flat is free on 1.6", "2025-06-01"),
        ("I was there on 10.1.", "2025-01-10"),
    ],
)
def test_a_day_and_month_with_dots_is_day_first_and_dated_by_its_clause(
    text: str, day: str
) -> None:
    [found] = find_time_expressions(text, FEB_20, date_order="MDY")
    assert (found.start, found.end) == (utc(day), utc(day) + timedelta(days=1))


@pytest.mark.parametrize(
    "text",
    [
        "Use 3/4 of a cup.",
        "Install version 1.2.2025 first.",
        "The v3.4.2025 build broke.",
        "Host 10.3.2025.1 is down.",
        "Call 555-03-04-2025.",
        "We live on the 5th floor.",
        "We were down 10 in the 4th and won.",
        # Dots without a year: a dose, an amount, a rating, the time of day the British way.
        "I'm on 2.5 mg now.",
        "It sold on 1.5 million copies.",
        "I worked until 5.10 and went home.",
        "We left after 9.05 at night.",
    ],
)
def test_numbers_that_are_no_dates(text: str) -> None:
    assert find_time_expressions(text, FEB_20) == []


def test_a_bad_date_order_is_refused() -> None:
    for bad in ("YMD", "mdy", None):
        with pytest.raises(InvalidInputError, match="date_order"):
            find_time_expressions("on 03.04.2025", FEB_20, date_order=bad)  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(
    first=st.integers(1, 31),
    second=st.integers(1, 31),
    year=st.integers(1900, 2099),
    separator=st.sampled_from("/.-"),
)
def test_the_date_order_only_matters_when_both_numbers_could_be_months_and_no_dots(
    first: int, second: int, year: int, separator: str
) -> None:
    text = f"on {first}{separator}{second}{separator}{year}"
    us, eu = (find_time_expressions(text, FEB_20, date_order=o) for o in ("MDY", "DMY"))
    valid = [d for d in ((first, second), (second, first)) if _is_date(year, *d)]
    if first <= 12 and second <= 12 and separator == ".":
        # Dots are day-first in either order.
        assert [f.start.date() for f in us] == [f.start.date() for f in eu]
        assert [f.start.date() for f in eu] == [date(year, second, first)]
    elif first <= 12 and second <= 12:
        # Each order reads it its own way (the same day when both numbers are equal).
        assert [f.start.date() for f in us] == [date(year, first, second)]
        assert [f.start.date() for f in eu] == [date(year, second, first)]
    elif valid:
        assert [f.start for f in us] == [f.start for f in eu]
        assert [(f.start.month, f.start.day) for f in us] == valid
    else:
        assert us == eu == []


def _is_date(year: int, month: int, day: int) -> bool:
    try:
        date(year, month, day)
    except ValueError:
        return False
    return True


@pytest.mark.parametrize("text", NOT_TIME_EXPRESSIONS)
def test_not_a_time_expression(text: str) -> None:
    assert find_time_expressions(text, REF) == []
    assert parse_time_expression(text, REF) is None


@pytest.mark.parametrize(
    "text",
    [
        "Alice married in June 2024",
        # dateparser read "met" as a time zone (Middle European Time): a day early.
        "we met on May 3",
        "On 12 May 2024 we met",
        "May 3 we met at 5pm",
        "Alice arrives at 5 pm",
    ],
)
def test_parse_rejects_a_sentence_around_an_expression(text: str) -> None:
    assert parse_time_expression(text, REF) is None


def test_parse_tolerates_punctuation_and_case() -> None:
    parsed = parse_time_expression("  (LAST WEEK).", REF)
    assert parsed is not None
    assert (parsed.start, parsed.end, parsed.text) == (
        utc("2025-01-06"),
        utc("2025-01-13"),
        "LAST WEEK",
    )
    assert parsed.span == (3, 12)


@pytest.mark.parametrize(
    ("text", "granularity"),
    [
        ("2024-06-05T14:30:00Z", "hour"),
        ("this morning", "part_of_day"),
        ("yesterday", "day"),
        ("last week", "week"),
        ("last weekend", "weekend"),
        ("June 2024", "month"),
        ("Q3 2023", "quarter"),
        ("H1 2024", "half"),
        ("last spring", "season"),
        ("last year", "year"),
        ("the 1990s", "decade"),
        ("over Christmas", "holiday"),
        ("between March and May", "range"),
        ("since 2021", "range"),
    ],
)
def test_granularity(text: str, granularity: str) -> None:
    parsed = parse_time_expression(text, REF)
    assert parsed is not None
    assert parsed.granularity == granularity


def test_since_runs_up_to_the_reference() -> None:
    parsed = parse_time_expression("since June", REF)
    assert parsed is not None
    assert (parsed.start, parsed.end, parsed.relative) == (utc("2024-06-01"), REF, True)


@pytest.mark.parametrize(
    ("text", "relative"),
    [
        ("June 2024", False),
        ("2024-06-05", False),
        ("Q3 2023", False),
        ("early 2023", False),
        ("the 1990s", False),
        ("between 2019 and 2021", False),
        ("from June to August 2024", False),
        ("Christmas Day 2023", False),
        ("the 3rd of March 2023 at noon", False),
        ("last spring", True),
        ("in June", True),
        ("June 5th", True),
        ("Q3", True),
        ("since 2021", True),
        ("next Friday", True),
        ("June 5th at 3pm", True),
    ],
)
def test_relative_flag(text: str, relative: bool) -> None:
    parsed = parse_time_expression(text, REF)
    assert parsed is not None
    assert parsed.relative is relative


def test_bad_arguments_raise_invalid_input() -> None:
    with pytest.raises(InvalidInputError):
        parse_time_expression(b"June 2024", REF)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        find_time_expressions("June 2024", "not a datetime")  # type: ignore[arg-type]


def _run_python(code: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    return result.stdout.strip()


def test_rules_never_import_dateparser() -> None:
    # Importing is slow; the common path (rules) and the import itself must not need it.
    code = (
        "import sys\n"
        "from datetime import datetime\n"
        "from agentmem.temporal import find_time_expressions, parse_time_expression\n"
        "ref = datetime(2025, 1, 15)\n"
        "parse_time_expression('last spring', ref)\n"
        "parse_time_expression('Alice prefers coffee', ref)\n"
        "find_time_expressions('What happened to Alice in June 2024?', ref)\n"
        "print('dateparser' in sys.modules)\n"
    )
    assert _run_python(code) == "False"


# ------------------------------------------------------------------------------------------
# Properties

MONTHS = [date(2000, m, 1).strftime("%B") for m in range(1, 13)]
references = st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2100, 12, 31)).flatmap(
    lambda naive: st.sampled_from(
        [naive, naive.replace(tzinfo=UTC), naive.replace(tzinfo=timezone(timedelta(hours=5)))]
    )
)
years = st.integers(min_value=1900, max_value=2099)
counts = st.sampled_from(["1", "2", "10", "a", "one", "three", "twelve", "a couple of", "a few"])
units = st.sampled_from(["hours", "days", "weeks", "weekends", "fortnights", "months", "years"])
relatives = st.sampled_from(["last", "this", "next"])
seasons = st.sampled_from(["spring", "summer", "autumn", "fall", "winter"])
weekdays = st.sampled_from(["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"])
modifiers = st.sampled_from(["early", "mid", "late", "the beginning of", "the end of"])
days = st.integers(min_value=1, max_value=28)

absolute_expressions = st.one_of(
    st.builds("{} {}".format, st.sampled_from(MONTHS), years),
    st.builds("{2} {0} {1}".format, st.sampled_from(MONTHS), years, days),
    st.builds("{0} {2}, {1}".format, st.sampled_from(MONTHS), years, days),
    st.dates(min_value=date(1900, 1, 1), max_value=date(2099, 12, 31)).map(date.isoformat),
    st.builds("Q{} {}".format, st.integers(1, 4), years),
    st.builds("{} {}".format, modifiers, years),
    st.builds("the {} of {}".format, seasons, years),
    st.builds("the {}0s".format, st.integers(190, 209)),
    st.builds("between {} and {}".format, years, years).filter(
        lambda text: text.split()[1] <= text.split()[3]
    ),
    st.builds("Christmas {}".format, years),
    st.builds("in {}".format, years),
    st.builds(
        "the {} {} {} {}".format,
        st.sampled_from(["day", "week", "weekend", "month", "Sunday"]),
        st.sampled_from(["before", "after"]),
        st.sampled_from(MONTHS),
        years,
    ),
)

relative_expressions = st.one_of(
    st.sampled_from(
        [
            "yesterday",
            "today",
            "tomorrow",
            "tonight",
            "last night",
            "this morning",
            "the day before yesterday",
            "the week before",
            "over the weekend",
            "in June",
            "in the spring",
            "Q2",
            "Thanksgiving",
            "the end of the year",
        ]
    ),
    st.builds("{} {} ago".format, counts, units),
    st.builds("in {} {}".format, counts, units),
    st.builds("{} {}".format, relatives, st.sampled_from(["week", "weekend", "month", "year"])),
    st.builds("{} {}".format, relatives, seasons),
    st.builds("{} {}".format, relatives, st.sampled_from(MONTHS)),
    st.builds("{} {}".format, relatives, weekdays),
    st.builds("on {}".format, weekdays),
    st.builds("{} {}".format, st.sampled_from(MONTHS), days),
    st.builds("between {} and {}".format, st.sampled_from(MONTHS), st.sampled_from(MONTHS)),
    st.builds("{} last month".format, modifiers),
    # Compositions: an amount back from a time told from now; a name in a named year.
    st.builds(
        "{} {} ago {}".format,
        counts,
        units,
        st.sampled_from(["yesterday", "today", "last month", "last week", "this year"]),
    ),
    st.builds(
        "{} {} year".format,
        st.sampled_from(["Thanksgiving", "Christmas", "Halloween", "May 5", "in the summer"]),
        relatives,
    ),
    st.builds("in {} {} year".format, st.sampled_from(MONTHS), relatives),
    st.builds(
        "the {} {} of {}".format,
        st.sampled_from(["first", "second", "third", "fourth", "last"]),
        weekdays,
        st.sampled_from(MONTHS),
    ),
    st.builds("the {} {}".format, weekdays, st.sampled_from(["before last", "after next"])),
    st.builds("on {} the {}th".format, weekdays, days),
    st.builds(
        "on the {}th of {} month".format,
        st.integers(4, 28),  # a day every month has
        st.sampled_from(["this", "next", "last", "the following", "the previous"]),
    ),
    st.sampled_from(["the night before last", "the night after next"]),
    st.builds("{} and a half years ago".format, st.sampled_from(["1", "2", "10", "a", "three"])),
    st.sampled_from(["half a year ago", "a year and a half ago", "half a year from now"]),
)


@pytest.mark.parametrize(
    "reference",
    [datetime(2024, 2, 29, 12, tzinfo=UTC), datetime(2024, 3, 31, 12, tzinfo=UTC)],
)
def test_an_amount_back_or_from_a_day_is_well_formed_at_the_end_of_a_month(
    reference: datetime,
) -> None:
    # "a year ago last night" said on 29 February: that night's morning has no 29 February a
    # year before, and the night ended before it began.
    for amount in ("a year", "two months", "a month", "4 years"):
        for day in ("yesterday", "last night", "tonight", "this morning", "today", "tomorrow"):
            for text in (f"{amount} ago {day}", f"{amount} from {day}"):
                parsed = parse_time_expression(text, reference)
                if parsed is not None:
                    _assert_well_formed(parsed, text)
    parsed = parse_time_expression("a year ago last night", datetime(2024, 2, 29, 12, tzinfo=UTC))
    assert parsed is not None
    assert (parsed.start, parsed.end) == (utc("2023-02-28T18"), utc("2023-03-01T06"))


def _assert_well_formed(parsed: ParsedTime, text: str) -> None:
    assert parsed.start < parsed.end
    assert parsed.start.utcoffset() == timedelta(0) and parsed.end.utcoffset() == timedelta(0)
    assert text[parsed.span[0] : parsed.span[1]] == parsed.text


@settings(max_examples=300, deadline=None)
@given(text=st.one_of(absolute_expressions, relative_expressions), reference=references)
def test_grammar_gives_well_formed_intervals(text: str, reference: datetime) -> None:
    parsed = parse_time_expression(text, reference)
    assert parsed is not None, text
    _assert_well_formed(parsed, text)
    # "in 3 days" in a question about the past is how long something took (no time).
    ahead = re.fullmatch(r"in .+ (?:hours|days|weeks|weekends|fortnights|months|years)", text)
    # "this <name>" still to come, asked of in the past, is the one begun (tested apart).
    verb = "will" if ahead or text.startswith("this ") else "did"
    sentence = f"What {verb} Alice do {text}?"
    [found] = find_time_expressions(sentence, reference)
    _assert_well_formed(found, sentence)
    assert (found.start, found.end) == (parsed.start, parsed.end)


@settings(max_examples=300, deadline=None)
@given(text=absolute_expressions, first=references, second=references)
def test_absolute_expressions_ignore_the_reference(
    text: str, first: datetime, second: datetime
) -> None:
    one, other = parse_time_expression(text, first), parse_time_expression(text, second)
    assert one is not None and other is not None, text
    assert (one.start, one.end, one.relative) == (other.start, other.end, False)


_SPELLED = (  # noqa: SIM905
    "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth "
    "thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth"
).split()


def _spelled(day: int, hyphen: str) -> str:
    """A day of the month as said aloud ("twenty-first", "thirty first")."""
    if day <= 20:
        return _SPELLED[day - 1]
    if day == 30:
        return "thirtieth"
    tens, unit = ("twenty", day - 20) if day < 30 else ("thirty", day - 30)
    return f"{tens}{hyphen}{_SPELLED[unit - 1]}"


@settings(max_examples=200, deadline=None)
@given(
    when=st.dates(min_value=date(1900, 1, 1), max_value=date(2099, 12, 31)),
    hyphen=st.sampled_from(["-", " "]),
    form=st.sampled_from(["the {day} of {month} {year}", "{month} {day}, {year}"]),
    reference=references,
)
def test_a_day_spelled_out_is_that_day(
    when: date, hyphen: str, form: str, reference: datetime
) -> None:
    text = form.format(day=_spelled(when.day, hyphen), month=MONTHS[when.month - 1], year=when.year)
    [found] = find_time_expressions(f"It was on {text}.", reference)
    assert (found.start.date(), (found.end - timedelta(microseconds=1)).date()) == (when, when)


@settings(max_examples=300, deadline=None)
@given(
    first=st.dates(min_value=date(1900, 1, 1), max_value=date(2099, 12, 31)),
    length=st.integers(min_value=-3, max_value=30),
    form=st.sampled_from(
        [
            "{a}-{b} {month} {year}",
            "{a}–{b} {month} {year}",
            "from {a} to {b} {month} {year}",
            "between {a} and {b} {month} {year}",
            "the {a}th to the {b}th of {month} {year}",
            "{month} {a}-{b}, {year}",
            "{month} {a} through {b} {year}",
        ]
    ),
    reference=references,
)
def test_a_range_of_days_in_one_month_runs_from_the_first_to_the_last(
    first: date, length: int, form: str, reference: datetime
) -> None:
    last_day = first.day + length
    text = form.format(a=first.day, b=last_day, month=MONTHS[first.month - 1], year=first.year)
    found = find_time_expressions(f"We were away {text}.", reference)
    try:
        last = first.replace(day=last_day)
    except ValueError:  # no such day: no range of days is read
        assert all(f.granularity != "range" for f in found), text
        return
    if length <= 0:  # "15-12 May" runs backwards: no range
        assert all(f.granularity != "range" for f in found), text
        return
    [parsed] = found
    assert parsed.text.endswith(str(first.year)), text
    assert (parsed.start.date(), (parsed.end - timedelta(microseconds=1)).date()) == (first, last)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text(max_size=120), reference=references)
def test_arbitrary_text_never_raises(text: str, reference: datetime) -> None:
    found = find_time_expressions(text, reference)
    for earlier, later in zip(found, found[1:], strict=False):
        assert earlier.span[1] <= later.span[0]
    for parsed in found:
        _assert_well_formed(parsed, text)
    parsed = parse_time_expression(text, reference)
    if parsed is not None:
        _assert_well_formed(parsed, text)


SALAD_WORDS = [
    *("in", "on", "last", "next", "the", "of", "between", "and", "from", "to", "since"),
    *("early", "May", "June", "2024", "Q3", "spring", "weekend", "Friday", "ago", "days"),
    *("a", "few", "3", "2024-06-05", "12/25/2024", "night", "end", "-", ",", "?"),
]


@settings(max_examples=200, deadline=None)
@given(
    words=st.lists(
        st.sampled_from(SALAD_WORDS),
        max_size=8,
    ),
    reference=references,
)
def test_word_salad_gives_well_formed_intervals(words: list[str], reference: datetime) -> None:
    text = " ".join(words)
    for parsed in find_time_expressions(text, reference):
        _assert_well_formed(parsed, text)
    parsed = parse_time_expression(text, reference)
    if parsed is not None:
        _assert_well_formed(parsed, text)


@settings(max_examples=300, deadline=None)
@given(
    day=st.dates(min_value=date(1, 1, 1), max_value=date(9999, 12, 31)),
    form=st.sampled_from(
        ["on {d} {m} {y}", "on {m} {d}, {y}", "in {m} {y}", "on the {d} of {m} {y}"]
    ),
    reference=references,
)
def test_a_date_with_a_year_is_that_date_or_none(day: date, form: str, reference: datetime):
    """Whatever its year, a written date is read as itself or not at all (a year past what
    agentmem holds), never as its day and month in a year counted from the reference."""
    text = form.format(d=day.day, m=MONTHS[day.month - 1], y=f"{day.year:04d}")
    whole_month = "{d}" not in form
    start = day.replace(day=1) if whole_month else day
    found = find_time_expressions(f"Alice arrived {text}.", reference)
    assert all(not parsed.relative for parsed in found), (text, found)
    if found:
        [parsed] = found
        assert parsed.start.date() == start, (text, parsed)
    held = (
        date(1, 1, 2) <= start and (day.year, day.month) < (9999, 12)
        if whole_month
        else (date(1, 1, 2) <= day <= date(9999, 12, 29))
    )
    assert bool(found) == held, (text, found)


@pytest.mark.parametrize(
    ("text", "start"),
    [
        ("Tigran flew to Yerevan on 31 December 9999.", None),  # past the times held
        ("The treaty runs out in December 9999.", None),
        ("The vault opens on 29 December 9999.", "9999-12-29"),
        ("The capsule opens in June 3021.", "3021-06-01"),
        ("We met on 5 May 0000.", None),  # no year 0
        ("The abbey was finished on 2 January 0001.", "0001-01-02"),
    ],
)
def test_dates_at_the_edges_of_time(text: str, start: str | None) -> None:
    found = find_time_expressions(text, REF)
    assert [p.start.date().isoformat() for p in found] == ([start] if start else [])


@pytest.mark.parametrize(
    ("text", "reference", "day"),
    [
        ("on the 14th of next month", REF, "2025-02-14"),
        ("on the 31st of last month", REF, "2024-12-31"),
        ("on the 3rd of the following month", datetime(2024, 12, 20, tzinfo=UTC), "2025-01-03"),
        ("on the 2nd of this month", REF, "2025-01-02"),
        # A day the month has not, or a month past the times held: not that day.
        ("on the 30th of next month", datetime(2025, 1, 31, tzinfo=UTC), None),
        ("on the 3rd of next month", datetime(9999, 12, 20, tzinfo=UTC), None),
        ("on the 3rd of last month", datetime(1, 1, 10, tzinfo=UTC), None),
    ],
)
def test_a_day_of_a_month_counted_from_this_one(
    text: str, reference: datetime, day: str | None
) -> None:
    days = [
        p.start.date().isoformat()
        for p in find_time_expressions(f"We pay {text}.", reference)
        if p.end - p.start == timedelta(days=1)
    ]
    assert days == ([day] if day else [])


@pytest.mark.parametrize(
    ("text", "month"),
    [
        ("half a year ago", "2024-07"),
        ("a year and a half ago", "2023-07"),
        ("two and a half years ago", "2022-07"),
        ("3 years and a half ago", "2021-07"),
        ("half a year from now", "2025-07"),
        ("in half a year", "2025-07"),
        ("in a year and a half", "2026-07"),
    ],
)
def test_half_a_year_counts_six_months(text: str, month: str) -> None:
    """Not "a year ago" with "half" ignored: the month that many months away."""
    verb = "move" if text.startswith("in ") else "left"  # "we left in half a year": how long
    [found] = find_time_expressions(f"We {verb} {text}.", REF)
    assert found.start.strftime("%Y-%m") == month
    assert found.granularity == "month"


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("Send it by EOD.", "2025-01-15", "2025-01-16"),
        ("I'll finish it by the end of the day.", "2025-01-15", "2025-01-16"),
        ("I'll have it by EOW.", "2025-01-13", "2025-01-20"),
        ("Send the numbers by EOM.", "2025-01-01", "2025-02-01"),
        ("Send it EOD Friday.", "2025-01-17", "2025-01-18"),  # Friday's
    ],
)
def test_a_work_deadline_is_today_this_week_or_this_month(text, start, end) -> None:
    found = find_time_expressions(text, REF)
    assert [(p.start, p.end) for p in found][-1:] == [(utc(start), utc(end))]


@pytest.mark.parametrize(
    "text", ["At the end of the day, family matters.", "I ate corn on the cob.", "Eod said hi."]
)
def test_the_end_of_the_day_as_an_idiom_is_no_time(text) -> None:
    assert find_time_expressions(text, REF) == []


edges_of_time = st.one_of(
    st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(1, 3, 1)),
    st.datetimes(min_value=datetime(9999, 11, 1), max_value=datetime(9999, 12, 30)),
).map(lambda naive: naive.replace(tzinfo=UTC))


@settings(max_examples=300, deadline=None)
@given(
    text=st.one_of(
        absolute_expressions,
        relative_expressions,
        st.sampled_from(["recently", "lately", "our last conversation", "the day before it"]),
        st.builds(
            "the week {} {} {}".format,
            st.sampled_from(["before", "after"]),
            days,
            st.sampled_from(["January 0001", "December 9999"]),
        ),
    ),
    now=st.one_of(edges_of_time, references.map(lambda r: r.replace(tzinfo=UTC))),
)
def test_a_query_period_is_always_one_agentmem_holds(text: str, now: datetime) -> None:
    """At the first and last days agentmem holds, every period a query names lies inside them,
    so it can be handed back as a recall's ``time_range`` (to_utc's range)."""
    found = parse_query_time(f"What did Alice do {text}?", now, now).range
    if found is not None:
        assert EARLIEST <= found.start <= found.end <= LATEST, (text, found)


_NAMES = st.sampled_from(
    ["Monday", "Friday", "May", "September", "the 5th", "Christmas", "the summer", "March 3"]
)
_PREPOSITIONS = {"Monday": "on", "Friday": "on", "the 5th": "on", "March 3": "on"}


@settings(max_examples=120, deadline=None)
@given(
    name=_NAMES,
    habit=st.sampled_from(
        ["usually", "always", "often", "typically", "every year", "each week", "every other week"]
    ),
    verb=st.sampled_from(["go hiking", "visit my aunt", "close the books", "see the band"]),
    said=st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2060, 1, 1)),
)
def test_a_habit_dates_no_calendar_name_and_the_same_clause_without_it_does(
    name: str, habit: str, verb: str, said: datetime
) -> None:
    preposition = _PREPOSITIONS.get(name, "at" if name == "Christmas" else "in")
    adverb = habit in ("usually", "always", "often", "typically")
    habitual = (
        f"We {habit} {verb} {preposition} {name}."
        if adverb
        else (f"We {verb} {preposition} {name} {habit}.")
    )
    assert find_time_expressions(habitual, said.replace(tzinfo=UTC)) == []
    assert find_time_expressions(f"We {verb} {preposition} {name}.", said.replace(tzinfo=UTC))


@pytest.mark.parametrize(
    ("text", "dated"),
    [
        ("I finished the marathon in 4 hours.", False),
        ("We haven't talked in a few days.", False),
        ("What did Alice do in 3 days?", False),
        ("I'm flying to Rome in 3 days.", True),
        ("The package arrives in two days.", True),
        ("In two weeks I start at Google.", True),
    ],
)
def test_in_an_amount_is_how_long_in_the_past_and_when_ahead(text: str, dated: bool) -> None:
    assert bool(find_time_expressions(text, REF)) is dated


@pytest.mark.parametrize("verb", ["haven't seen", "have been", "'ve missed", "will miss"])
@pytest.mark.parametrize("name", ["Christmas", "Halloween", "March", "Monday", "the 3rd"])
def test_since_a_name_reaches_back_to_its_latest_occurrence(verb: str, name: str) -> None:
    [found] = find_time_expressions(f"I {verb} her since {name}.", REF)
    assert found.start < REF and found.end == REF
    assert REF - found.start < timedelta(days=366)


@settings(max_examples=150, deadline=None)
@given(
    day=st.dates(min_value=date(1950, 1, 1), max_value=date(2099, 12, 31)),
    word=st.sampled_from(["after", "before", "right after", "just before"]),
)
def test_after_or_before_a_date_is_the_time_between_it_and_the_reference_when_there_is_one(
    day: date, word: str
) -> None:
    written = f"{day:%B} {day.day}, {day.year}"
    [alone] = find_time_expressions(f"It happened on {written}.", REF)
    [found] = find_time_expressions(f"It happened {word} {written}.", REF)
    if word.endswith("after") and alone.end < REF:
        assert (found.start, found.end) == (alone.end, REF)
    elif word.endswith("before") and alone.start > REF:
        assert (found.start, found.end) == (REF, alone.start)
    else:  # after a coming date or before a past one: no other end, the date stays
        assert (found.start, found.end) == (alone.start, alone.end)


_LASTING = [
    ("for three months", datetime(2024, 10, 15, tzinfo=UTC)),
    ("for a fortnight", datetime(2025, 1, 1, tzinfo=UTC)),
    ("for about 6 weeks", datetime(2024, 12, 4, tzinfo=UTC)),
    ("for a couple of years", datetime(2023, 1, 15, tzinfo=UTC)),
    ("for 36 hours", datetime(2025, 1, 14, tzinfo=UTC)),
]


@pytest.mark.parametrize(
    "clause",
    ["I've been running", "We have lived here", "She has worked there", "I haven't smoked"],
)
@pytest.mark.parametrize(("amount", "start"), _LASTING)
def test_for_an_amount_in_a_present_perfect_runs_up_to_the_reference(
    clause: str, amount: str, start: datetime
) -> None:
    [found] = find_time_expressions(f"{clause} {amount}.", REF)
    assert (found.start, found.end) == (start, REF)


@pytest.mark.parametrize(
    "clause",
    [
        "I lived there",
        "I had lived there",
        "I'll stay there",
        "I've got the car",
        "I was ill",
        # A move to a place: the stay's length, not a span up to now.
        "I've been to Paris",
        "She has gone to Spain",
        "He's left",
        "We have moved to Berlin",
    ],
)
@pytest.mark.parametrize(("amount", "start"), _LASTING)
def test_for_an_amount_elsewhere_says_how_long_not_when(
    clause: str, amount: str, start: datetime
) -> None:
    assert find_time_expressions(f"{clause} {amount}.", REF) == []


def test_a_long_text_without_punctuation_reads_each_date_from_its_own_clause() -> None:
    # 2,000 dates in one run-on "sentence": each is read from the words around it (its
    # clause's verb), as it is alone, and the overlap check keeps every one.
    said = "I went there on Monday and I will fly out on Friday"
    alone = [(e.start, e.end) for e in find_time_expressions(said + ".", REF)]
    text = " and ".join([said] * 1000) + "."
    found = [(e.start, e.end) for e in find_time_expressions(text, REF)]
    assert len(found) == 2000
    assert set(found) == set(alone) and found[:2] == alone
    assert alone[0][0] < REF < alone[1][0]  # the last Monday, the coming Friday


def test_all_week_month_or_year_is_the_one_holding_the_reference() -> None:
    """REF is Wednesday 15 January 2025; "all year round" says always, not this year."""
    [week] = find_time_expressions("I've been sick all week.", REF)
    assert (week.start, week.end) == (utc("2025-01-13"), utc("2025-01-20"))
    [month] = find_time_expressions("It snowed all month.", REF)
    assert (month.start, month.end) == (utc("2025-01-01"), utc("2025-02-01"))
    assert find_time_expressions("The park is open all year round.", REF) == []


def test_a_day_in_numbers_without_its_year_is_a_date_after_a_preposition_of_time() -> None:
    """FEB_20 is Thursday 20 February 2025: "on 5/6" is a date, read in the bank's order, its
    year as a month name's by the clause; a fraction, a rating or "24/7" is none."""

    def first(text: str, order: str = "MDY") -> tuple[datetime, datetime]:
        [found] = find_time_expressions(text, FEB_20, date_order=order)
        return found.start, found.end

    assert first("We got married on 5/6.") == (utc("2024-05-06"), utc("2024-05-07"))
    assert first("We got married on 5/6.", "DMY") == (utc("2024-06-05"), utc("2024-06-06"))
    assert first("The rent is due on 4/1.") == (utc("2025-04-01"), utc("2025-04-02"))
    assert first("On 13/2 we flew home.") == (utc("2025-02-13"), utc("2025-02-14"))
    for text in (
        "He got 5/6 of the votes.",
        "I'd rate it 4/5.",
        "We're open 24/7.",
        "The meeting is on 2/30.",
        "Scored 3/4 on the quiz.",
    ):
        assert find_time_expressions(text, FEB_20) == [], text


@pytest.mark.parametrize(
    ("said", "text", "dated"),
    [
        (datetime(2025, 1, 15, tzinfo=UTC), "We had a great time over the holidays.", True),
        (datetime(2024, 12, 1, tzinfo=UTC), "I'm going home for the holidays.", True),
        # Far from the year's end, "the holidays" may be the summer's: no date.
        (datetime(2025, 7, 15, tzinfo=UTC), "We had a great time over the holidays.", False),
        (datetime(2024, 11, 29, tzinfo=UTC), "We had a great time over the holidays.", False),
        # Named so, whenever said; not without a preposition; not a greeting.
        (datetime(2025, 7, 15, tzinfo=UTC), "I miss last holiday season.", True),
        (datetime(2024, 12, 20, tzinfo=UTC), "The holidays were fun.", False),
        (datetime(2024, 12, 20, tzinfo=UTC), "Happy holidays!", False),
    ],
)
def test_the_holidays_are_the_year_end_season_only_when_said_near_it(
    said: datetime, text: str, dated: bool
) -> None:
    found = find_time_expressions(text, said)
    assert bool(found) is dated
    for parsed in found:
        assert (parsed.start.month, parsed.start.day) == (12, 24)
        last = parsed.end - timedelta(microseconds=1)
        assert (last.month, last.day) == (1, 1)


@pytest.mark.parametrize(
    ("text", "dated"),
    [
        # Through a coming day or month: from when it is said through it.
        ("The sale runs through March 3.", "through March 3"),
        ("Tickets are valid through the 28th.", "through the 28th"),
        ("The museum is open thru June.", "thru June"),
        # The last of a range or of a list, or a holiday, is not.
        ("The store is open Monday through Friday.", "Friday"),
        ("We are in Rome March 3 through March 9.", "March 9"),
        ("I will be traveling through June and July.", "June"),
        ("I'll be working through Christmas.", "Christmas"),
    ],
)
def test_through_a_coming_day_or_month_runs_from_the_reference(text: str, dated: str) -> None:
    """REF is Wednesday 15 January 2025."""
    last = find_time_expressions(text, REF)[-1]
    assert last.text == dated
    assert (last.start == REF) is dated.lower().startswith(("through", "thru"))


@pytest.mark.parametrize(
    "text",
    [
        "I read it in the Sun.",  # a newspaper
        "Sat on the couch all day.",  # a verb
        "We sat down at noon.",
        "They wed in secret.",
        "I scored 95% on the test.",
    ],
)
def test_weekday_abbreviations_and_short_years_need_their_context(text: str) -> None:
    assert find_time_expressions(text, REF) == []


@pytest.mark.parametrize(
    ("text", "dated"),
    [
        # Two amounts of one unit: from the nearer through the farther.
        ("I saw him two or three days ago.", "two or three days ago"),
        ("We'll hear back in 2-3 weeks.", "in 2-3 weeks"),
        ("They left 3 or 4 months back.", "3 or 4 months back"),
        # Numbers that are a score, an age or a count, with no "ago" or "in": none.
        ("We won 2-3 in the final.", None),
        ("Kids aged 2-3 years love it.", None),
        ("I get two or three days off.", None),
    ],
)
def test_two_amounts_of_a_unit_are_read_as_one_range(text: str, dated: str | None) -> None:
    found = find_time_expressions(text, FEB_20)
    assert [f.text for f in found] == ([dated] if dated else [])
    for parsed in found:
        assert parsed.start < parsed.end
