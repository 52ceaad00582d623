"""Two AgentMemory instances over one PostgreSQL database (two pools: as two replicas) racing
each other: two imports into one new bank, forget against recall."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

import agentmem
from agentmem.errors import InvalidInputError
from tests.conftest import CONVERSATION, T0
from tests.postgres.test_replicas import pair  # noqa: F401 (a fixture)


@pytest.fixture
def location(pg_url: str) -> str:
    """Where ``pair`` opens its two instances: PostgreSQL only."""
    return pg_url


def test_two_imports_into_one_new_bank_store_the_file_once(pair, tmp_path: Path):  # noqa: F811
    first, second = pair
    source = first.bank("a")
    source.retain(CONVERSATION, mentioned_at=T0, document_id="session-1")
    export = tmp_path / "a.jsonl"
    source.export(export)  # its ids are taken: each import gives the copy fresh ones
    start = threading.Barrier(2)
    outcomes: list[object] = []

    def load(mem: agentmem.AgentMemory) -> None:
        start.wait(60)
        try:
            outcomes.append(mem.import_(export, bank_id="copy"))
        except InvalidInputError as exc:
            outcomes.append(exc)

    threads = [threading.Thread(target=load, args=(mem,)) for mem in pair]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    refused = [o for o in outcomes if isinstance(o, InvalidInputError)]
    assert len(outcomes) == 2 and len(refused) == 1, outcomes
    assert "copy" in str(refused[0])
    for mem in pair:
        copy = mem.bank("copy")
        assert sorted(m.text for m in copy.memories()) == sorted(m.text for m in source.memories())
        report = mem.check_integrity()
        assert report.ok, report.problems


def test_a_memory_forgotten_through_one_is_never_recalled_through_the_other_after(pair):  # noqa: F811
    writer, reader = pair
    fruits = ["apples", "pears", "plums", "figs", "grapes", "cherries", "dates", "limes"]
    facts = [
        writer.bank("a")
        .retain(f"Guest {i} from Lyon brought {fruit} to the picnic.", mentioned_at=T0)
        .memories[0]
        for i, fruit in enumerate(fruits)
    ]
    bank = reader.bank("a")
    bank.recall("Who brought fruit to the picnic?")  # the reader's mirrors are loaded
    forgotten: set[str] = set()
    done = threading.Event()
    seen_after: list[set[str]] = []
    errors: list[BaseException] = []

    def recall() -> None:
        try:
            while not done.is_set():
                gone = set(forgotten)  # forgotten before this recall began
                hits = bank.recall("Who brought fruit to the picnic?", top_k=20)
                seen_after.append({h.memory.id for h in hits.hits} & gone)
        except BaseException as exc:  # reported below
            errors.append(exc)

    thread = threading.Thread(target=recall)
    thread.start()
    try:
        for fact in facts:
            assert writer.bank("a").forget([fact.id]) == 1
            forgotten.add(fact.id)
    finally:
        done.set()
        thread.join()
    assert errors == []
    assert seen_after and not any(seen_after)
    assert bank.memories() == []
    assert bank.recall("Who brought fruit to the picnic?").hits == []
    report = reader.check_integrity()
    assert report.ok, report.problems
