"""A PostgreSQL store under hostile conditions: bad URLs, a server that goes away, a bank
deleted by another AgentMemory while this one writes into it, reopening."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

import agentmem
from agentmem.errors import InvalidInputError, NotFoundError, StorageError
from agentmem.testing import HashEmbedder
from agentmem.testing_postgres import TemporaryPostgres

T0 = "2025-03-04T09:00:00Z"


def _memory(url: str) -> agentmem.AgentMemory:
    return agentmem.AgentMemory(url, embedder=HashEmbedder())


def test_bad_urls_are_clear_errors_without_the_password(tmp_path: Path) -> None:
    url = f"postgresql://me:hunter2@/agentmem?host={tmp_path}"
    with pytest.raises(StorageError, match="cannot connect to PostgreSQL") as info:
        agentmem.AgentMemory(url)
    assert "hunter2" not in str(info.value) and "me:***@" in str(info.value)
    with pytest.raises(InvalidInputError, match="not a PostgreSQL URL"):
        agentmem.AgentMemory("postgres://a@b/c?no_such_option=1")


def test_chroma_url_is_refused_with_postgresql(pg_url: str) -> None:
    with pytest.raises(InvalidInputError, match="chroma_url is for the embedded store"):
        agentmem.AgentMemory(pg_url, chroma_url="http://127.0.0.1:9")


def test_the_cli_takes_a_url_where_a_path_goes(pg_url: str) -> None:
    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "agentmem.cli", *args]
        return subprocess.run(command, capture_output=True, text=True, check=False)

    done = cli("retain", "--path", pg_url, "--bank", "notes", "Alice moved to Berlin.")
    assert done.returncode == 0, done.stderr
    found = cli("recall", "--path", pg_url, "--bank", "notes", "--json", "Where is Alice?")
    assert found.returncode == 0, found.stderr
    assert "Berlin" in found.stdout
    missing = cli("recall", "--path", pg_url, "--bank", "other", "anything")
    assert missing.returncode == 2 and "no bank 'other'" in missing.stderr


def test_reopening_keeps_everything(pg_url: str) -> None:
    with _memory(pg_url) as mem:
        mem.bank("a").retain("Alice moved to Berlin last June.", mentioned_at=T0)
        before = [(m.id, m.text, m.mentioned_at) for m in mem.bank("a").memories()]
    with _memory(pg_url) as mem:
        assert [(m.id, m.text, m.mentioned_at) for m in mem.bank("a").memories()] == before
        assert mem.bank("a").recall("Where does Alice live?").hits[0].text == before[0][1]
        assert mem.check_integrity().ok


def test_a_server_that_goes_away_is_a_storage_error_and_its_return_is_survived() -> None:
    server = TemporaryPostgres().start()
    try:
        url = server.create_database()
        with _memory(url) as mem:
            bank = mem.bank("a")
            bank.retain("Alice moved to Berlin last June.", mentioned_at=T0)
            # A clean stop: the test server runs without fsync, so a crash would lose commits.
            server._run("pg_ctl", "-D", str(server.data), "-m", "fast", "-w", "stop")
            with pytest.raises(StorageError):
                bank.retain("Bob moved to Paris.", mentioned_at=T0)
            with pytest.raises(StorageError):
                bank.memories()
            server.restart()
            bank.retain("Carol moved to Rome.", mentioned_at=T0)
            assert sorted(m.text for m in bank.memories()) == [
                "Alice moved to Berlin last June.",
                "Carol moved to Rome.",
            ]
            assert mem.check_integrity().ok
    finally:
        server.stop()


def test_a_bank_deleted_by_another_memory_during_writes_leaves_nothing_behind(
    pg_url: str,
) -> None:
    writer, deleter = _memory(pg_url), _memory(pg_url)
    try:
        bank = writer.bank("doomed")
        bank.retain("Alice moved to Berlin last June.", mentioned_at=T0)
        outcomes: list[str] = []

        def write() -> None:
            for i in range(30):
                try:
                    bank.retain(f"Fact number {i} about Bob and Carol.", mentioned_at=T0)
                    outcomes.append("stored")
                except NotFoundError:
                    outcomes.append("refused")

        thread = threading.Thread(target=write)
        thread.start()
        while not outcomes:  # delete once the writer is under way
            thread.join(0.01)
        deleter.delete_bank("doomed")
        thread.join()
        assert "refused" in outcomes
        assert outcomes == sorted(outcomes, key=lambda o: o == "refused")  # none after
        assert "doomed" not in deleter.banks() and "doomed" not in writer.banks()
        for mem in (writer, deleter):
            report = mem.check_integrity()
            assert report.ok, report.problems
            assert report.memories == 0
    finally:
        writer.close()
        deleter.close()


def test_integrity_finds_what_can_go_wrong_in_the_database_and_repair_mends_vectors(
    pg_url: str,
) -> None:
    with _memory(pg_url) as mem:
        bank = mem.bank("a")
        stored = bank.retain(
            "Alice moved to Berlin last June. Bob works at Acme Corp.", mentioned_at=T0
        ).memories
        assert mem.check_integrity().ok
        db = mem._engine.db
        # What a hand edit (or a buggy client) of the shared database can do.
        db.execute("DELETE FROM vectors WHERE id = ?", [stored[0].id])
        db.execute(
            "DELETE FROM keyword_docs WHERE seq = (SELECT seq FROM memories WHERE id = ?)",
            [stored[-1].id],
        )
        db.execute(
            "INSERT INTO links VALUES ('a', ?, 'gone', 'semantic', 0.5, now())", [stored[0].id]
        )
        problems = "\n".join(mem.check_integrity().problems)
        assert "memory without a vector" in problems
        assert "memory missing from the keyword index" in problems
        assert "link to a missing memory" in problems
        repaired = mem.repair()
        assert repaired.reembedded == 1
        mem.rebuild_keyword_index()
        assert mem.check_integrity().problems == (
            "bank 'a': 1 × link to a missing memory: " + stored[0].id + " -> gone",
        )
        db.execute("DELETE FROM links WHERE dst_id = 'gone'")
        assert mem.check_integrity().ok
        assert bank.recall("Where does Alice live?", strategies=["semantic"]).hits
        assert bank.recall("Acme", strategies=["keyword"]).hits


class _GatedEmbedder(HashEmbedder):
    """A hash embedder that, once armed, holds its next call at a gate (the test deletes the
    bank meanwhile)."""

    def __init__(self) -> None:
        super().__init__()
        self.armed = False
        self.waiting, self.gate = threading.Event(), threading.Event()

    def embed(self, texts):  # noqa: ANN001, ANN201
        if self.armed:
            self.armed = False
            self.waiting.set()
            assert self.gate.wait(60)
        return super().embed(texts)


_TWO_THINGS = "I moved to Berlin last June with my sister. I love swimming in the lakes there."


@pytest.mark.parametrize("stage", ["vectors", "pieces"])
def test_a_bank_deleted_by_another_memory_during_repair_gets_nothing_back(
    pg_url: str, stage: str
) -> None:
    """repair() reads what a bank lacks, embeds it, then writes: a bank deleted (and created
    anew) by another memory while it embeds must not get the old bank's vectors, pieces or
    changes, nor the new one anything."""
    embedder = _GatedEmbedder()
    repairer = agentmem.AgentMemory(pg_url, embedder=embedder)
    deleter = _memory(pg_url)
    try:
        stored = (
            repairer.bank("doomed")
            .retain(  # one fact of two pieces
                [{"role": "user", "name": "Alice", "content": _TWO_THINGS}], mentioned_at=T0
            )
            .memories
        )
        db = repairer._engine.db
        if stage == "vectors":  # what repair re-embeds: a vector gone
            db.execute("DELETE FROM vectors WHERE id = ?", [stored[0].id])
        else:  # a store from before pieces
            db.execute("UPDATE memories SET piece_vectors = NULL WHERE bank_id = 'doomed'")
        embedder.armed = True
        outcome: list[object] = []
        thread = threading.Thread(target=lambda: outcome.append(repairer.repair()))
        thread.start()
        assert embedder.waiting.wait(60)
        deleter.delete_bank("doomed")
        reborn = deleter.bank("doomed")
        version = db.fetchall("SELECT version FROM bank_versions WHERE bank_id = 'doomed'")
        embedder.gate.set()
        thread.join(60)
        assert len(outcome) == 1  # the repair finished (the deleted bank's share skipped)
        assert db.fetchall("SELECT count(*) FROM vectors")[0][0] == 0
        assert db.fetchall("SELECT count(*) FROM memories")[0][0] == 0
        assert (
            db.fetchall("SELECT version FROM bank_versions WHERE bank_id = 'doomed'") == version
        )  # no change recorded against the new bank
        assert reborn.memories() == [] and reborn.recall("Alice Berlin").hits == []
        for mem in (repairer, deleter):
            report = mem.check_integrity()
            assert report.ok, report.problems
    finally:
        embedder.gate.set()
        repairer.close()
        deleter.close()
