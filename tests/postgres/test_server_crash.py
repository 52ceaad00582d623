"""The PostgreSQL server killed (SIGKILL, every process of it) while agentmem writes, then
started again: nothing acknowledged is lost, nothing half-written is left, the call that saw
the crash is a StorageError, and the same AgentMemory works again once the server is back.

The tests run their own server (killing the session's would break other tests), with
``durable`` commits: the test server's usual ``synchronous_commit=off`` lets a crash lose
commits it acknowledged, which a production server does not.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

import agentmem
from agentmem.errors import StorageError
from agentmem.testing import HashEmbedder
from agentmem.testing_postgres import TemporaryPostgres
from tests.conftest import CONVERSATION, T0, T1

#: Polls (x 20 ms) for the write under test to reach its stall: a bound, not a timing.
STALL_POLLS = 3000


@pytest.fixture(scope="module")
def server() -> Iterator[TemporaryPostgres]:
    with TemporaryPostgres(durable=True) as cluster:
        yield cluster


@pytest.fixture
def url(server: TemporaryPostgres) -> str:
    return server.create_database()


def _memory(url: str) -> agentmem.AgentMemory:
    return agentmem.AgentMemory(url, embedder=HashEmbedder())


def snapshot(mem: agentmem.AgentMemory) -> dict[str, Any]:
    """What the store holds, bank by bank: memories, entities, links and counts."""
    seen: dict[str, Any] = {}
    for bank_id in mem.banks():
        bank = mem.bank(bank_id)
        seen[bank_id] = (
            sorted((m.id, m.text, m.mentioned_at) for m in bank.memories(limit=10_000)),
            sorted((e.name, e.kind, e.aliases, e.memory_ids) for e in bank.entities()),
            sorted((u, v, k) for u, v, k in bank.graph().edges(keys=True)),
            bank.stats(),
        )
    return seen


def _blocked_writers(url: str) -> int:
    with psycopg.connect(url, autocommit=True) as con:
        return con.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock' AND query LIKE '%bank_changes%'"
        ).fetchone()[0]


def _crash_mid_write(server: TemporaryPostgres, url: str, write: Callable[[], object]) -> None:
    """Run ``write`` until it has written its rows and waits to log its change (the last
    statement of every write: another session holds the change log), kill the server then,
    and start it again. The write must fail with a StorageError."""
    blocker = psycopg.connect(url)
    blocker.execute("LOCK TABLE bank_changes IN EXCLUSIVE MODE")  # reads still pass
    failures: list[BaseException] = []

    def run() -> None:
        try:
            write()
        except BaseException as exc:  # judged below
            failures.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    try:
        for _ in range(STALL_POLLS):
            if _blocked_writers(url) or not thread.is_alive():
                break
            threading.Event().wait(0.02)
        assert thread.is_alive(), f"the write ended before its stall: {failures}"
        assert _blocked_writers(url), "the write never reached its last statement"
    finally:
        server.crash()
        thread.join()
        blocker.close()
        server.restart()
    assert len(failures) == 1 and isinstance(failures[0], StorageError), failures


def _after_the_outage(call: Callable[[], object]) -> object:
    """The first call after the server returned may still meet a connection of before the
    crash (a StorageError); the next one must work."""
    try:
        return call()
    except StorageError:
        return call()


@pytest.fixture
def store(url: str, tmp_path: Path) -> Iterator[tuple[agentmem.AgentMemory, Path]]:
    mem = _memory(url)
    bank = mem.bank("a")
    bank.retain(CONVERSATION, mentioned_at=T0, document_id="session-1")
    bank.retain("Bob keeps bees in Ghent.", mentioned_at=T1)
    export = tmp_path / "a.jsonl"
    bank.export(export)
    bank.recall("Where does Alice live?")  # mirrors (graph, entities, dated facts) loaded
    yield mem, export
    mem.close()


WRITES: dict[str, Callable[[agentmem.AgentMemory, Path], object]] = {
    "retain": lambda mem, _: mem.bank("a").retain("Carol moved to Rome in May.", mentioned_at=T1),
    "forget": lambda mem, _: mem.bank("a").forget(document_id="session-1"),
    "delete_bank": lambda mem, _: mem.delete_bank("a"),
    "import": lambda mem, export: mem.import_(export, bank_id="copy"),
}


@pytest.mark.parametrize("name", sorted(WRITES))
def test_a_write_cut_by_a_server_crash_leaves_nothing_and_works_once_it_is_back(
    server, url, store, name
):
    mem, export = store
    write = WRITES[name]
    before = snapshot(mem)
    _crash_mid_write(server, url, lambda: write(mem, export))
    # Nothing of the write, everything before it: through this AgentMemory and a new one.
    assert _after_the_outage(lambda: snapshot(mem)) == before
    with _memory(url) as fresh:
        assert snapshot(fresh) == before
        assert fresh.check_integrity().ok, fresh.check_integrity().problems
    # The same AgentMemory (its pool, its mirrors) works again: the write now succeeds.
    write(mem, export)
    report = mem.check_integrity()
    assert report.ok, report.problems
    with _memory(url) as fresh:
        assert snapshot(fresh) == snapshot(mem) != before
    if name != "delete_bank":
        hits = mem.bank("a").recall("Where does Alice live?", strategies=["graph", "semantic"])
        assert {h.memory.id for h in hits.hits} <= {m.id for m in mem.bank("a").memories()}


def test_every_acknowledged_retain_survives_a_crash_under_load(server, url):
    mem = _memory(url)
    bank = mem.bank("load")
    acknowledged: list[str] = []
    failed: list[str] = []
    crashed = threading.Event()

    def write() -> None:
        for i in range(400):
            text = f"Visitor number {i} signed the guest book in Lyon."
            try:
                bank.retain(text, mentioned_at=T0)
            except StorageError:
                failed.append(text)
                if crashed.is_set():
                    return
            else:
                acknowledged.append(text)

    thread = threading.Thread(target=write)
    thread.start()
    try:
        while len(acknowledged) < 5 and thread.is_alive():
            thread.join(0.02)
        crashed.set()
        server.crash()
        thread.join()
    finally:
        if not crashed.is_set():
            server.crash()
        server.restart()
    try:
        assert failed, "the crash came after every retain"
        stored = {m.text for m in _after_the_outage(lambda: bank.memories(limit=10_000))}
        assert set(acknowledged) <= stored
        # The one cut by the crash may have committed before its answer was lost; no other.
        assert stored - set(acknowledged) <= set(failed[:1])
        assert mem.check_integrity().ok
        bank.retain("Dora signed the guest book too.", mentioned_at=T1)
        assert "Dora signed the guest book too." in {m.text for m in bank.memories(limit=10_000)}
    finally:
        mem.close()
