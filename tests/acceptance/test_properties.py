"""Property-based checks: bad input never escapes as a foreign error or damages a bank, and
banks and tags isolate exactly, whatever the workload."""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentmem
from agentmem.testing import HashEmbedder

PROPERTY_SETTINGS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# Text that tends to break search engines and SQL: FTS operators, quotes, SQL fragments,
# regex metacharacters, control characters, lone surrogates, combining marks, RTL, emoji.
NASTY = st.sampled_from(
    [
        'AND OR NOT NEAR "unclosed',
        "'; DROP TABLE memories; --",
        "%_\\*?[]{}()^$|+.",
        "match_bm25(seq, 'x') OR 1=1",
        "\x00\x01\x1b[31m\x7f\x9f",
        "\ud800 lone surrogate \udfff",
        "e\u0301\u0301\u0301 zalgo",
        "עברית مرحبا 记忆",
        "🧠🦆" * 50,
        "-- /* */ ; \\' \\\"",
        "$1 $query ?",
        "NaN inf -inf 1e309",
    ]
)
TEXT = st.one_of(st.text(max_size=300), NASTY, st.builds(lambda a, b: a + " " + b, NASTY, NASTY))
NUMBER = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.booleans(),
    st.none(),
)
OFFSETS = st.integers(min_value=-23 * 60, max_value=23 * 60).map(
    lambda minutes: timezone(timedelta(minutes=minutes))
)
DATETIMES = st.one_of(
    st.datetimes(),  # naive, years 1..9999
    st.datetimes(timezones=OFFSETS),
    st.dates(),
    st.text(max_size=40),
    NUMBER,
)


@pytest.fixture(scope="module")
def fuzz_memory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[agentmem.AgentMemory]:
    path: Path = tmp_path_factory.mktemp("fuzz") / "store"
    with agentmem.AgentMemory(path, embedder=HashEmbedder()) as mem:
        mem.bank("fuzz").retain(
            "The anchor fact: the boat is called Marlow.", mentioned_at="2025-01-01"
        )
        yield mem


def _still_whole(mem: agentmem.AgentMemory) -> None:
    report = mem.check_integrity()
    assert report.ok, report.problems
    hits = mem.bank("fuzz").recall("boat called Marlow", reinforce=False)
    assert hits and hits[0].text == "The anchor fact: the boat is called Marlow."


def _retain_or_refuse(bank: agentmem.MemoryBank, content: object, **kwargs: object) -> None:
    before = bank.stats()["memories"]
    try:
        result = bank.retain(content, **kwargs)  # type: ignore[arg-type]
    except agentmem.InvalidInputError:
        assert bank.stats()["memories"] == before  # refused means nothing written
        return
    assert bank.stats()["memories"] == before + len(result.created)  # repeats are not stored
    for memory in result:
        assert memory.text.strip() and memory.bank_id == bank.id
        assert "\x00" not in memory.text
        assert bank.get(memory.id) == memory


@PROPERTY_SETTINGS
@given(content=TEXT, tags=st.lists(TEXT, max_size=3), importance=NUMBER)
def test_arbitrary_text_tags_and_importance(fuzz_memory, content, tags, importance):
    bank = fuzz_memory.bank("fuzz")
    _retain_or_refuse(bank, content, tags=tags, importance=importance, mentioned_at="2025-02-01")
    _still_whole(fuzz_memory)


@PROPERTY_SETTINGS
@given(mentioned_at=DATETIMES, occurred_at=st.one_of(DATETIMES, st.tuples(DATETIMES, DATETIMES)))
def test_arbitrary_times(fuzz_memory, mentioned_at, occurred_at):
    bank = fuzz_memory.bank("fuzz")
    _retain_or_refuse(
        bank, "Timed fact about the harbour.", mentioned_at=mentioned_at, occurred_at=occurred_at
    )
    for kwargs in ({"now": mentioned_at}, {"time_range": (mentioned_at, occurred_at)}):
        try:
            result = bank.recall("harbour", reinforce=False, **kwargs)
        except agentmem.InvalidInputError:
            continue
        assert all(hit.memory.bank_id == "fuzz" for hit in result)
    _still_whole(fuzz_memory)


MESSAGE_VALUE = st.one_of(TEXT, NUMBER, st.lists(st.integers(), max_size=2), DATETIMES)
MESSAGE = st.one_of(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "assistant", "system", "tool", ""]), "content": TEXT},
        optional={
            "name": MESSAGE_VALUE,
            "timestamp": DATETIMES,
            "metadata": st.one_of(
                st.dictionaries(st.text(max_size=10), NUMBER, max_size=3), MESSAGE_VALUE
            ),
        },
    ),
    st.dictionaries(st.text(max_size=10), MESSAGE_VALUE, max_size=4),
    MESSAGE_VALUE,
)


@PROPERTY_SETTINGS
@given(messages=st.lists(MESSAGE, max_size=5))
def test_malformed_chat_messages(fuzz_memory, messages):
    _retain_or_refuse(fuzz_memory.bank("fuzz"), messages, mentioned_at="2025-03-01")
    _still_whole(fuzz_memory)


@PROPERTY_SETTINGS
@given(
    query=TEXT,
    strategies=st.one_of(
        st.none(),
        st.lists(st.sampled_from(["semantic", "keyword", "temporal", "psychic", ""]), max_size=3),
    ),
    top_k=st.one_of(st.integers(min_value=-2, max_value=50), NUMBER),
    tags=st.one_of(st.none(), st.lists(TEXT, max_size=2)),
    tags_match=st.sampled_from(["any", "all", "exact", "most"]),
)
def test_arbitrary_recall(fuzz_memory, query, strategies, top_k, tags, tags_match):
    bank = fuzz_memory.bank("fuzz")
    try:
        result = bank.recall(
            query,
            strategies=strategies,
            top_k=top_k,
            tags=tags,
            tags_match=tags_match,
            reinforce=False,
        )
    except agentmem.InvalidInputError:
        return
    assert all(hit.memory.bank_id == "fuzz" and 0.0 <= hit.score <= 1.0 for hit in result)
    assert isinstance(top_k, int) and len(result) <= top_k


@PROPERTY_SETTINGS
@given(bank_id=st.one_of(TEXT, st.sampled_from(["..", "../x", "a/b", "a\\b", ".", "a/../b", "C:"])))
def test_bank_ids_with_separators_or_dots_never_escape(fuzz_memory, bank_id):
    before = set(fuzz_memory.banks())
    root = fuzz_memory.path.parent
    try:
        fuzz_memory.bank(bank_id)
    except agentmem.InvalidInputError:
        assert set(fuzz_memory.banks()) == before
    else:
        assert "/" not in bank_id and "\\" not in bank_id and ".." not in bank_id
        assert bank_id in fuzz_memory.banks()
    # Bank ids never become paths: nothing appears beside the store.
    assert [p.name for p in root.iterdir()] == [fuzz_memory.path.name]


def test_huge_and_binary_looking_texts_are_handled(fuzz_memory):
    bank = fuzz_memory.bank("fuzz")
    _retain_or_refuse(bank, "word " * 20_000, mentioned_at="2025-04-01")
    _retain_or_refuse(bank, "".join(map(chr, range(1, 0x3000, 7))), mentioned_at="2025-04-01")
    _retain_or_refuse(bank, "x" * 1_000_001, mentioned_at="2025-04-01")
    assert math.isfinite(bank.recall("word " * 2000, reinforce=False).hits[0].score)
    long_token = bank.recall("x" * 5000, strategies=["keyword"], reinforce=False)
    assert all(hit.memory.bank_id == "fuzz" for hit in long_token)
    _still_whole(fuzz_memory)


# -- isolation --------------------------------------------------------------------------------

WORDS = ("apple", "harbor", "violin", "quartz", "meadow", "lantern", "pepper", "glacier")
TAGS = ("red", "green", "blue", "gold")


def _tags_match(memory_tags: set[str], wanted: set[str], mode: str) -> bool:
    if mode == "exact":
        return memory_tags == wanted
    if not wanted:
        return True
    return memory_tags >= wanted if mode == "all" else bool(memory_tags & wanted)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_banks_and_tags_never_leak(tmp_path, seed):
    rng = random.Random(seed)
    with agentmem.AgentMemory(tmp_path / "iso", embedder=HashEmbedder()) as mem:
        banks = [mem.bank(name) for name in ("north", "south", "east")]
        truth: dict[str, dict[str, tuple[set[str], set[str]]]] = {b.id: {} for b in banks}
        for i in range(90):
            bank = rng.choice(banks)
            words = set(rng.sample(WORDS, 2))
            tags = set(rng.sample(TAGS, rng.randint(0, 3)))
            when = datetime(2025, 1, 1, tzinfo=UTC) + timedelta(hours=i)
            text = f"Note {i} of {bank.id}: " + " and ".join(sorted(words)) + "."
            (memory,) = bank.retain(text, mentioned_at=when, tags=sorted(tags)).memories
            truth[bank.id][memory.id] = (words, tags)
        for _ in range(60):
            bank = rng.choice(banks)
            word = rng.choice(WORDS)
            wanted = set(rng.sample(TAGS, rng.randint(0, 2)))
            mode = rng.choice(["any", "all", "exact"])
            strategies = rng.choice([None, ["semantic"], ["keyword"]])
            result = bank.recall(
                word,
                strategies=strategies,
                tags=sorted(wanted),
                tags_match=mode,
                top_k=50,
                max_tokens=100_000,
                reinforce=False,
            )
            own = truth[bank.id]
            for hit in result:
                assert hit.memory.id in own, "a memory of another bank came back"
                assert _tags_match(set(hit.memory.tags), wanted, mode), (mode, wanted)
            if strategies == ["keyword"]:
                # Keyword search is exhaustive here: every memory with the word that passes
                # the tag filter comes back, and nothing else.
                expected = {
                    memory_id
                    for memory_id, (words, tags) in own.items()
                    if word in words and _tags_match(tags, wanted, mode)
                }
                assert {hit.memory.id for hit in result} == expected
        assert mem.check_integrity().ok


# -- banks score alone ------------------------------------------------------------------------

SHARED = ("parcel", "harbor", "violin", "Berlin", "invoice", "Alice", "Bob", "meeting", "INV-2047")
# Folds are due every few rows, so another bank's writes keep moving this bank's postings.
FOLDING = agentmem.EngineConfig(keyword_rebuild_min=4, keyword_rebuild_fraction=0.0)
NOW = datetime(2025, 6, 1, tzinfo=UTC)
SENTENCE = st.lists(st.sampled_from(SHARED), min_size=1, max_size=5).map(
    lambda words: "We talked about " + " and ".join(words) + "."
)
MESSAGES = st.lists(
    st.builds(
        lambda name, text: {"role": "user", "name": name, "content": text},
        st.sampled_from(["Alice", "Bob"]),
        SENTENCE,
    ),
    min_size=1,
    max_size=6,
)


def _retain_sessions(bank: agentmem.MemoryBank, sessions: list[list[dict[str, str]]]) -> None:
    for day, messages in enumerate(sessions):
        bank.retain(
            messages, mentioned_at=datetime(2025, 1, 1 + day, tzinfo=UTC), document_id=f"s{day}"
        )


def _seen(bank: agentmem.MemoryBank, queries: list[str]) -> list[list[tuple[str, float, object]]]:
    """Everything a recall shows of a bank: order, scores and strategy details."""
    return [
        [
            (hit.memory.id, hit.score, hit.strategy_details)
            for hit in bank.recall(query, now=NOW, top_k=20, max_tokens=100_000, reinforce=False)
        ]
        for query in queries
    ]


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    own=st.lists(MESSAGES, min_size=1, max_size=3),
    other=st.lists(MESSAGES, min_size=1, max_size=4),
    forgotten=st.integers(min_value=0, max_value=30),
    queries=st.lists(SENTENCE, min_size=1, max_size=3),
)
def test_a_banks_recall_is_the_same_whatever_another_bank_holds(
    tmp_path_factory, own, other, forgotten, queries
):
    """Order, scores and strategy_details of one bank's recall, with the other bank absent,
    filled, partly forgotten, after a reopen and once deleted: identical every time."""
    path = tmp_path_factory.mktemp("alone") / "store"
    with agentmem.AgentMemory(path, embedder=HashEmbedder(), config=FOLDING) as mem:
        alone = mem.bank("alone")
        _retain_sessions(alone, own)
        expected = _seen(alone, queries)
        neighbour = mem.bank("neighbour")
        _retain_sessions(neighbour, other)
        assert _seen(alone, queries) == expected
        _retain_sessions(neighbour, other)  # the same words, twice over
        doomed = [m.id for m in neighbour.memories(limit=100)][:forgotten]
        neighbour.forget(doomed)
        assert _seen(alone, queries) == expected
        assert mem.check_integrity().ok
    with agentmem.AgentMemory(path, embedder=HashEmbedder(), config=FOLDING) as mem:
        alone = mem.bank("alone")
        assert _seen(alone, queries) == expected
        mem.rebuild_keyword_index()
        assert _seen(alone, queries) == expected
        mem.delete_bank("neighbour")
        assert _seen(alone, queries) == expected
        report = mem.check_integrity()
        assert report.ok, report.problems


def test_another_bank_cannot_measure_a_terms_frequency_in_this_one(tmp_path):
    """The raw BM25 score a bank reads for a rare code says nothing about other banks."""
    with agentmem.AgentMemory(tmp_path / "store", embedder=HashEmbedder()) as mem:
        victim, prober = mem.bank("victim"), mem.bank("prober")
        prober.retain("Invoice INV-2047 is overdue.", mentioned_at="2025-01-01")

        def probe() -> tuple[float, float]:
            (hit,) = prober.recall("INV-2047", strategies=["keyword"], reinforce=False)
            return hit.strategy_details["keyword"]["score"], hit.score

        before = probe()
        victim.retain(
            [{"role": "user", "content": f"Parcel {i} for invoice INV-2047."} for i in range(300)],
            mentioned_at="2025-01-02",
        )
        assert victim.recall("INV-2047", strategies=["keyword"], reinforce=False).hits
        assert probe() == before
        victim.forget([m.id for m in victim.memories(limit=150)])
        assert probe() == before
        report = mem.check_integrity()
        assert report.ok, report.problems
