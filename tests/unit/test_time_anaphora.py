"""Times told from the sentence before ("The next day ..."), read against its occurrence."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentmem._time import EARLIEST, LATEST
from agentmem.temporal.anaphora import follow_on

MONDAY = (datetime(2025, 6, 9, tzinfo=UTC), datetime(2025, 6, 10, tzinfo=UTC))
MARCH = (datetime(2019, 3, 1, tzinfo=UTC), datetime(2019, 4, 1, tzinfo=UTC))
YEAR = (datetime(2019, 1, 1, tzinfo=UTC), datetime(2020, 1, 1, tzinfo=UTC))


def day(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "previous", "first", "end"),
    [
        ("The next day I visited the Louvre.", MONDAY, "2025-06-10", "2025-06-11"),
        ("The following morning it rained.", MONDAY, "2025-06-10", "2025-06-11"),
        ("Two days later I took the train.", MONDAY, "2025-06-11", "2025-06-12"),
        ("Three weeks earlier she had called.", MONDAY, "2025-05-19", "2025-05-20"),
        ("The day before, I packed.", MONDAY, "2025-06-08", "2025-06-09"),
        ("That weekend we hiked in the Alps.", MONDAY, "2025-06-14", "2025-06-16"),
        ("I met her the same day.", MONDAY, "2025-06-09", "2025-06-10"),
        ("A year later I was promoted.", MARCH, "2020-03-01", "2020-04-01"),
        ("The previous month had been quiet.", MARCH, "2019-02-01", "2019-03-01"),
        ("That year we married.", MARCH, "2019-01-01", "2020-01-01"),
        (
            "A month later I moved.",
            (day("2025-01-31"), day("2025-02-01")),
            "2025-02-28",
            "2025-03-01",
        ),
    ],
)
def test_a_time_told_from_the_sentence_before(text, previous, first, end):
    assert follow_on(text, *previous) == (day(first), day(end))


@pytest.mark.parametrize(
    ("text", "previous"),
    [
        ("The next day we left.", YEAR),  # where in 2019? nothing is said
        ("That week was busy.", MARCH),
        ("The day after Christmas we left.", MONDAY),  # a date of its own
        ("The week before May 3 was hectic.", MONDAY),
        ("Next week we leave.", MONDAY),  # from when it is said, not from the sentence before
        ("After that I moved to Berlin.", MONDAY),  # no amount of time
        ("I love that song.", MONDAY),
    ],
)
def test_no_time_where_the_words_say_none_from_the_sentence_before(text, previous):
    assert follow_on(text, *previous) is None


@given(
    count=st.integers(min_value=1, max_value=999),
    unit=st.sampled_from(["day", "week", "month", "year"]),
    way=st.sampled_from(["later", "earlier"]),
    start=st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)),
)
def test_any_shift_is_an_interval_or_nothing_never_an_error(count, unit, way, start):
    start = start.replace(tzinfo=UTC)
    found = follow_on(f"{count} {unit}s {way} we met.", start, start + timedelta(days=1))
    if found is not None:
        assert EARLIEST <= found[0] <= found[1] - timedelta(microseconds=1) <= LATEST
        assert (found[0] > start) == (way == "later")
