"""Limits hold before any work is done, and bad ids and times are refused as InvalidInputError."""

from __future__ import annotations

import contextlib
import re
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentmem
from agentmem._time import to_utc
from agentmem.retain.extract import SEGMENT_CHARS, OfflineExtractor, split_segments
from agentmem.temporal import find_time_expressions
from agentmem.testing import HashEmbedder
from tests.conftest import CONVERSATION, T0

SMALL = agentmem.Limits(retain_chars=1000, retain_messages=5, query_chars=50, json_depth=4)


class ExtractorThatMustNotRun(OfflineExtractor):
    def extract(self, content):  # noqa: ANN001, ANN201
        raise AssertionError("a refused call reached the extractor")


@pytest.fixture
def small(tmp_path):
    with agentmem.AgentMemory(
        tmp_path / "small",
        embedder=HashEmbedder(),
        extractor=ExtractorThatMustNotRun(),
        config=agentmem.EngineConfig(limits=SMALL),
    ) as mem:
        yield mem


def nested(depth: int) -> dict:
    value: dict = {}
    for _ in range(depth - 1):
        value = {"x": value}
    return value


@pytest.mark.parametrize(
    "content",
    [
        "x" * 1001,
        [{"role": "user", "content": "x" * 400}] * 3,  # each message is within the limit
        [{"role": "user", "content": "hi"}] * 6,
        [{"role": "user", "content": "hi", "metadata": nested(5)}],
        [{"role": "user", "content": "hi", "extra": [[[[[["deep"]]]]]]}],
    ],
)
def test_a_call_over_the_limits_is_refused_before_any_work(small, content):
    bank = small.bank("b")
    with pytest.raises(agentmem.InvalidInputError):
        bank.retain(content, mentioned_at=T0)
    with pytest.raises(agentmem.InvalidInputError):
        bank.retain("hi", mentioned_at=T0, metadata=nested(5))
    assert bank.memories() == [] and bank.stats()["episodes"] == 0
    assert small.check_integrity().ok


def test_the_default_limit_is_on_the_whole_call_and_metadata_depth_is_bounded(mem):
    bank = mem.bank("b")
    split = [{"role": "user", "content": "word " * 100_000}] * 3  # 1.5M characters in all
    deep = nested(500)
    for content, kwargs in [
        (split, {}),
        ([{"role": "user", "content": "hi"}] * 10_001, {}),
        ("hi", {"metadata": deep}),
        ([{"role": "user", "content": "hi", "metadata": deep}], {}),
        ([{"role": "user", "content": "hi", "metadata": {"a": [deep]}}], {}),
    ]:
        with pytest.raises(agentmem.InvalidInputError):
            bank.retain(content, mentioned_at=T0, **kwargs)
    assert bank.memories() == [] and mem.check_integrity().ok
    kept = bank.retain("Alice likes tea.", mentioned_at=T0, metadata=nested(32)).memories[0]
    assert bank.get(kept.id).metadata == nested(32)


def test_queries_over_the_limit_are_refused(small):
    bank = small.bank("b")
    for call in (
        lambda: bank.recall("tea " * 13),
        lambda: bank.reflect_prepare("tea " * 13),
        lambda: bank.reflect("tea " * 13),
        lambda: bank.reflect_commit("tea " * 13, observations=["Alice likes tea."]),
    ):
        with pytest.raises(agentmem.InvalidInputError, match="limit"):
            call()
    assert bank.recall("tea " * 12).hits == []  # 48 characters: within the limit


def test_limits_are_validated():
    for bad in (0, -1, 1.5, True, "10"):
        with pytest.raises(agentmem.InvalidInputError):
            agentmem.Limits(query_chars=bad)


@given(text=st.text(min_size=1, max_size=3 * SEGMENT_CHARS, alphabet=" \n.?!ab"))
@settings(max_examples=200, deadline=None)
def test_segments_cover_the_text_in_bounded_pieces(text):
    segments = split_segments(text, SEGMENT_CHARS // 10)
    assert "".join(segments) == text
    assert all(0 < len(s) <= SEGMENT_CHARS // 10 for s in segments)


def test_a_long_message_is_extracted_in_segments_with_nothing_lost(tmp_path):
    sentence = "Alice visited Lisbon with Bob in June and loved the trams there. "
    text = sentence * (3 * SEGMENT_CHARS // len(sentence))
    with agentmem.AgentMemory(tmp_path / "s", embedder=HashEmbedder()) as mem:
        bank = mem.bank("b")
        stored = bank.retain([{"role": "user", "name": "Ann", "content": text}], mentioned_at=T0)
        words = sum(len(m.text.removeprefix("Ann: ").split()) for m in stored.memories)
        assert words == len(text.split())
        assert all(len(m.text) < 1000 for m in stored.memories)
        assert {"Alice", "Lisbon", "Bob"} <= {e.name for e in bank.entities()}
        assert mem.check_integrity().ok


# -- bank ids -----------------------------------------------------------------------------

_VALID_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}")


@pytest.mark.parametrize("bank_id", ["notes\n", "notes\r\n", "a" * 128 + "\n", "a" * 129, "\nx"])
def test_bank_ids_must_match_as_a_whole(mem, bank_id):
    with pytest.raises(agentmem.InvalidInputError):
        mem.bank(bank_id)
    with pytest.raises(agentmem.InvalidInputError):
        mem.delete_bank(bank_id)
    assert mem.banks() == []


@given(bank_id=st.text(max_size=140) | st.from_regex(_VALID_ID, fullmatch=True))
@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_a_bank_id_is_accepted_exactly_when_it_is_valid(mem, bank_id):
    valid = bool(_VALID_ID.fullmatch(bank_id)) and ".." not in bank_id
    if valid:
        assert mem.bank(bank_id).id == bank_id and bank_id in mem.banks()
    else:
        with pytest.raises(agentmem.InvalidInputError):
            mem.bank(bank_id)
        assert bank_id not in mem.banks()


# -- times --------------------------------------------------------------------------------

EDGE_TIMES = [
    "9999-12-31T23:00-05:00",
    "9999-12-31T23:59:59+00:00",
    "0001-01-01T01:00+05:00",
    "0001-01-01T00:00:00",
    datetime(9999, 12, 31, 23, tzinfo=timezone(timedelta(hours=-5))),
    datetime(1, 1, 1, 1, tzinfo=timezone(timedelta(hours=5))),
    datetime.max,
    datetime.min.replace(tzinfo=UTC),
]


@pytest.mark.parametrize("moment", EDGE_TIMES)
def test_times_at_the_ends_of_the_calendar_are_invalid_input_everywhere(bank, moment):
    before = len(bank.memories())
    calls = [
        lambda: bank.retain("Alice likes tea.", mentioned_at=moment),
        lambda: bank.retain("Alice likes tea.", mentioned_at=T0, occurred_at=moment),
        lambda: bank.retain("Alice likes tea.", mentioned_at=T0, occurred_at=(T0, moment)),
        lambda: bank.retain([{"role": "user", "content": "Tea.", "timestamp": moment}]),
        lambda: bank.recall("tea", now=moment),
        lambda: bank.recall("tea", time_range=(moment, None)),
        lambda: bank.recall("tea", time_range=(None, moment)),
        lambda: bank.recall("tea", strategies=["timeline"], entity="Alice", start=moment),
        lambda: bank.recall("tea", strategies=["timeline"], entity="Alice", end=moment),
    ]
    for call in calls:
        with pytest.raises(agentmem.InvalidInputError):
            call()
    assert len(bank.memories()) == before


# ISO 8601 offsets are whole minutes (Python's parser drops the seconds of any other).
_OFFSETS = st.integers(-(24 * 60 - 1), 24 * 60 - 1).map(
    lambda minutes: timezone(timedelta(minutes=minutes))
)


@given(
    moment=st.datetimes(timezones=st.none() | _OFFSETS),
    as_text=st.booleans(),
)
@settings(max_examples=500, deadline=None)
def test_one_parser_maps_every_datetime_to_utc_or_refuses_it(moment, as_text):
    value = moment.isoformat() if as_text else moment
    try:
        result = to_utc(value, field="t")
    except agentmem.InvalidInputError:
        return
    assert result.tzinfo is UTC
    expected = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment
    assert result == expected


@given(text=st.text(max_size=40))
@settings(max_examples=300, deadline=None)
def test_any_string_is_a_time_or_invalid_input(text):
    try:
        result = to_utc(text, field="t")
    except agentmem.InvalidInputError:
        return
    assert result.tzinfo is UTC


@given(moment=st.datetimes(timezones=_OFFSETS))
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_any_time_through_retain_and_recall_is_stored_or_invalid_input(tmp_path_factory, moment):
    with agentmem.AgentMemory(tmp_path_factory.mktemp("t"), embedder=HashEmbedder()) as mem:
        bank = mem.bank("t")
        try:
            bank.retain(CONVERSATION[:2], mentioned_at=moment, occurred_at=moment)
        except agentmem.InvalidInputError:
            assert bank.memories() == []
        else:
            stored = bank.memories()[0]
            assert stored.mentioned_at == moment and stored.occurred_start == moment
        with contextlib.suppress(agentmem.InvalidInputError):
            bank.recall("What happened last year?", now=moment, time_range=(moment, None))
        assert mem.check_integrity().ok


def deep_list(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    "call",
    [
        lambda b: b.retain("x", mentioned_at=T0, links=deep_list(5000)),
        lambda b: b.retain("x", mentioned_at=T0, links=[("related", deep_list(5000))]),
        lambda b: b.retain("x", mentioned_at=T0, tags=deep_list(5000)),
        lambda b: b.retain("x", mentioned_at=T0, importance=deep_list(5000)),
        lambda b: b.retain("x", mentioned_at=T0, metadata={"a": deep_list(5000)}),
        lambda b: b.retain([{"role": "user", "content": "x", "y": deep_list(5000)}]),
        lambda b: b.recall("tea", top_k=deep_list(5000)),
        lambda b: b.recall("tea", rerank=deep_list(5000)),
        lambda b: b.recall("tea", strategies=["graph"], edge_types=deep_list(5000)),
        lambda b: b.configure(entity_labels=deep_list(5000)),
        lambda b: b.reflect_commit("q", observations=[{"text": deep_list(5000)}]),
    ],
)
def test_values_nested_thousands_deep_are_invalid_input_never_recursion(bank, call):
    before = len(bank.memories())
    with pytest.raises(agentmem.InvalidInputError):
        call(bank)
    assert len(bank.memories()) == before


def test_a_bank_id_nested_thousands_deep_is_invalid_input(mem):
    with pytest.raises(agentmem.InvalidInputError):
        mem.bank(deep_list(5000))


# Said at the first and last moments a store holds, and a day inside them, what the text
# tells relative to then may fall off the calendar: it is dated within it or not at all.
_RELATIVE_TEXTS = [
    "I'm meeting Zoe for coffee at 6:45 pm.",
    "I met Zoe at 8 am.",
    "My flight leaves at 8 am.",
    "See you tomorrow.",
    "It happened yesterday.",
    "Two summers ago we were in Rome.",
    "The shop is closed until after Easter.",
    "I made a reservation for Saturday.",
    "The doctor I saw yesterday wants me back in two weeks.",
    "We'll be done in a day or two.",
    "I just landed in Denver.",
]
_CALENDAR_ENDS = [
    datetime(1, 1, 2, tzinfo=UTC),
    datetime(1, 1, 3, 12, tzinfo=UTC),
    datetime(9999, 12, 29, 12, tzinfo=UTC),
    datetime(9999, 12, 30, tzinfo=UTC),
]


@pytest.mark.parametrize("moment", _CALENDAR_ENDS, ids=lambda m: m.isoformat()[:13])
def test_times_told_from_the_ends_of_the_calendar_stay_within_it(tmp_path, moment):
    # A time of day said at 9999-12-30 00:00 raised OverflowError from retain.
    with agentmem.AgentMemory(tmp_path / "s", embedder=HashEmbedder()) as mem:
        bank = mem.bank("ends")
        for text in _RELATIVE_TEXTS:
            stored = bank.retain(text, mentioned_at=moment)
            for memory in stored:
                if memory.occurred_start is not None:
                    assert memory.occurred_start <= memory.occurred_end
                    assert memory.occurred_start.year >= 1 and memory.occurred_end.year <= 9999
        assert len(bank.memories()) == len(_RELATIVE_TEXTS)
        assert mem.check_integrity().ok


def test_chat_turns_that_end_in_a_name_and_an_adverb_are_stored(tmp_path):
    # "dating Jake now" raised a raw IndexError inside the extractor (retain then failed with
    # ExtractionError): the verb after a subject's name was looked for past the text's end.
    turns = [
        {"role": "user", "name": "Ana", "content": "broke up w/ tom, dating Jake now"},
        {"role": "user", "name": "Ben", "content": "omg Acme again"},
    ]
    with agentmem.AgentMemory(tmp_path / "s", embedder=HashEmbedder()) as mem:
        bank = mem.bank("chat")
        stored = bank.retain(turns, mentioned_at=T0).memories
        assert [m.text for m in stored] == [f"{t['name']}: {t['content']}" for t in turns]
        assert "Jake" in {e.name for e in bank.entities()}
        assert mem.check_integrity().ok


# The four letters beyond ASCII that IGNORECASE matches with ASCII ones: a time word written
# with them matched its rule, then missed the rule's table of names (a raw KeyError from
# retain: "We met last ſummer.", "Frıday").
_TWINS = {"s": "ſ", "k": "\u212a", "i": "ı", "I": "İ"}  # \u212a: the Kelvin sign


@pytest.mark.parametrize(
    "text",
    [
        "We met last summer.",
        "I'll see you on Friday.",
        "The kids start school in September.",
        "We went skiing two winters ago.",
        "I'm flying out on the 5th and back on the 12th, Inshallah.",
        "Happy Thanksgiving!",
    ],
)
def test_time_words_written_with_ignorecase_twins_are_read_as_the_words(tmp_path, text):
    twin = "".join(_TWINS.get(c, c) for c in text)
    with agentmem.AgentMemory(tmp_path / "s", embedder=HashEmbedder()) as mem:
        [plain] = mem.bank("plain").retain(text, mentioned_at=T0)
        [twinned] = mem.bank("twins").retain(twin, mentioned_at=T0)
        assert twinned.text == twin
        assert (twinned.occurred_start, twinned.occurred_end) == (
            plain.occurred_start,
            plain.occurred_end,
        )
        assert mem.check_integrity().ok


_TIME_WORDS = (  # noqa: SIM905 - a line of words reads better than a list of strings
    "last next this summer winter spring Friday Thursday Christmas Easter six weeks ago "
    "in on the 1st 21st since until back at pm noon Tuesday Sunday August"
).split()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_TIME_WORDS), min_size=1, max_size=8), st.randoms())
def test_any_time_words_with_twin_letters_are_read_or_left(words, rng):
    text = " ".join(words)
    twin = "".join(_TWINS.get(c, c) if rng.random() < 0.5 else c for c in text)
    found = find_time_expressions(twin, T0)
    assert [(e.start, e.end) for e in found] == [
        (e.start, e.end) for e in find_time_expressions(text, T0)
    ]
    assert all(twin[e.span[0] : e.span[1]] == e.text for e in found)
