"""Two writers of one bank at once keep its entity profiles sound: two ``AgentMemory`` on one
store (threads of one process on the embedded store, replicas on PostgreSQL) retaining and
forgetting at the same time leave one profile per person and aspect, citing only live facts,
holding nothing forgotten, and the profile all the bank's facts call for — also reopened; and
a memory one forgets keeps no vector the other had staged."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentmem import AgentMemory, MemoryBank
from agentmem.consolidate.profiles import planned_profiles, profile_text
from agentmem.testing import HashEmbedder

T0 = datetime(2024, 3, 1, tzinfo=UTC)


def _statement(n: int) -> tuple[str, str]:
    """Turn ``n``: a speaker's statement of an activity or a place, marked ``k{n}z``."""
    speaker = "Bob" if n % 3 else "Dana"
    if n % 2:
        return speaker, f"I joined the chess club k{n}z downtown last weekend."
    return speaker, f"I visited the old harbour of k{n}z with my cousin."


@contextmanager
def _writers(store_path: Path | str) -> Iterator[tuple[AgentMemory, AgentMemory]]:
    first = AgentMemory(store_path, embedder=HashEmbedder())
    second = AgentMemory(store_path, embedder=HashEmbedder())
    try:
        yield first, second
    finally:
        second.close()
        first.close()


def _at_once(*calls: Callable[[], object]) -> None:
    """Run the calls in threads started together; re-raise the first failure."""
    start = threading.Barrier(len(calls))
    errors: list[BaseException] = []

    def run(call: Callable[[], object]) -> None:
        try:
            start.wait(60)
            call()
        except BaseException as exc:  # re-raised below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(call,)) for call in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]


def _retain(bank: MemoryBank, turns: list[int]) -> Callable[[], None]:
    def run() -> None:
        for n in turns:  # one call per turn: as many refreshes as can race
            speaker, text = _statement(n)
            bank.retain(
                [{"role": "user", "name": speaker, "content": text}],
                mentioned_at=T0 + timedelta(hours=n),
            )

    return run


def _assert_sound(bank: MemoryBank, forgotten: set[int] = frozenset()) -> int:
    """One profile per (subject, aspect), citing live facts only, with nothing forgotten, and
    each the profile all the bank's facts call for. Returns how many profiles there are."""
    facts = [m for m in bank.memories() if m.fact_type != "observation"]
    profiles = [o for o in bank.observations() if "profile" in o.metadata]
    keys = [(o.metadata["profile"]["subject"], o.metadata["profile"]["aspect"]) for o in profiles]
    assert len(keys) == len(set(keys)), sorted(keys)
    live = {m.id for m in facts}
    for profile in profiles:
        sources = profile.metadata["source_memory_ids"]
        assert set(sources) <= live, profile.text
        assert profile.metadata["proof_count"] == len(sources)
        assert not any(f"k{n}z" in profile.text for n in forgotten), profile.text
    expected = {
        key: profile_text(*key, [item.text for item in items])
        for key, items in planned_profiles(facts).items()
    }
    assert dict(zip(keys, (p.text for p in profiles), strict=True)) == expected
    return len(profiles)


@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    turns=st.lists(st.integers(1, 60), min_size=6, max_size=14, unique=True),
    split=st.integers(1, 5),
    forget_share=st.floats(0.1, 0.7),
)
def _race_once(
    writers: tuple[AgentMemory, AgentMemory],
    banks: list[int],
    turns: list[int],
    split: int,
    forget_share: float,
) -> None:
    first, second = writers
    bank_id = f"b{len(banks)}"
    mine, theirs = first.bank(bank_id), second.bank(bank_id)
    mine.configure(profiles=True)
    early, late = turns[: len(turns) // 2 + 1], turns[len(turns) // 2 + 1 :]
    # Both writers retain statements of the same people (the same profiles) at once, some
    # of them both (a retain of stored content hands back the stored facts).
    _at_once(_retain(mine, early), _retain(theirs, early[split:] + early[:split]))
    banks.append(_assert_sound(mine))
    _assert_sound(theirs)
    # One forgets while the other retains more.
    facts = sorted(
        (m for m in mine.memories() if m.fact_type != "observation"), key=lambda m: m.text
    )
    doomed = facts[: max(1, round(len(facts) * forget_share))]
    gone = {n for n in early if any(f"k{n}z" in m.text for m in doomed)}
    _at_once(lambda: mine.forget([m.id for m in doomed]), _retain(theirs, late))
    _assert_sound(mine, gone)
    _assert_sound(theirs, gone)
    for mem in writers:
        report = mem.check_integrity()
        assert report.ok, report.problems


def test_two_writers_keep_one_sound_profile_per_person_and_aspect(store_path: Path) -> None:
    profiles: list[int] = []  # how many each example's bank had before its forget
    with _writers(store_path) as writers:
        _race_once(writers, profiles)
    assert sum(profiles) > 0  # the examples built profiles at all
    with AgentMemory(store_path, embedder=HashEmbedder()) as reopened:
        for n in range(len(profiles)):
            _assert_sound(reopened.bank(f"b{n}"))
        report = reopened.check_integrity()
        assert report.ok, report.problems


@pytest.mark.duckdb_only("vectors staged in the process before they reach Chroma")
def test_a_memory_one_writer_forgets_keeps_no_vector_the_other_staged(store_path: Path) -> None:
    with _writers(store_path) as (first, second):
        stored = first.bank("v").retain("Alice ordered tea at the cafe.", mentioned_at=T0)
        assert second.bank("v").forget([m.id for m in stored.memories]) == len(stored.memories)
        for mem in (first, second):  # each flushes what it staged first
            report = mem.check_integrity()
            assert report.ok, report.problems
    with AgentMemory(store_path, embedder=HashEmbedder()) as reopened:
        assert reopened.bank("v").memories() == []
        assert reopened.check_integrity().ok
