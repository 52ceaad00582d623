"""Damaged stores are repaired or refused, never silently wrong.

Each test damages a real store on disk (the chroma/ folder deleted, vectors lost or replaced,
bytes of the DuckDB file overwritten or cut off, a path that cannot hold a store), reopens it
and checks what the user sees and what the store holds.
"""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from chromadb.api.shared_system_client import SharedSystemClient

import agentmem
from agentmem.cli import main
from agentmem.memory import DB_FILE, VECTOR_DIR
from agentmem.testing import HashEmbedder
from tests.conftest import CONVERSATION, T0, T1

FACTS = [f"Fact {i}: Alice filed invoice INV-{1000 + i} with Quixotrix." for i in range(12)]


@pytest.fixture
def store(tmp_path) -> Path:
    """A closed store: bank "alice" (12 facts) and bank "bob" (the conversation)."""
    path = tmp_path / "store"
    with agentmem.AgentMemory(path, embedder=HashEmbedder()) as mem:
        alice = mem.bank("alice")
        for fact in FACTS:
            alice.retain(fact, mentioned_at=T0)
        mem.bank("bob").retain(CONVERSATION, mentioned_at=T1)
    return path


def _delete_chroma_folder(path: Path) -> None:
    """rm -r chroma/, and forget Chroma's in-process client of it, as a new process would."""
    shutil.rmtree(path / VECTOR_DIR)
    SharedSystemClient.clear_system_cache()


def _semantic_ids(bank: agentmem.MemoryBank) -> set[str]:
    hits = bank.recall("invoice filed with Quixotrix", strategies=["semantic"], reinforce=False)
    return {h.memory.id for h in hits}


def test_a_deleted_chroma_folder_is_rebuilt_on_open_with_a_warning(store, caplog):
    with agentmem.AgentMemory(store, embedder=HashEmbedder()) as mem:
        expected = _semantic_ids(mem.bank("alice"))
        counts = {b: len(mem.bank(b).memories()) for b in mem.banks()}
    _delete_chroma_folder(store)
    seen: list[tuple[int, int]] = []
    with (
        caplog.at_level(logging.WARNING, logger="agentmem"),
        agentmem.AgentMemory(
            store, embedder=HashEmbedder(), repair_progress=lambda *p: seen.append(p)
        ) as mem,
    ):
        assert seen[-1] == (sum(counts.values()), sum(counts.values()))
        assert "have no vector" in caplog.text and "'alice'" in caplog.text
        report = mem.check_integrity()
        assert report.ok, report.problems
        assert report.vectors == report.memories == sum(counts.values())
        alice = mem.bank("alice")
        assert _semantic_ids(alice) == expected and len(expected) == 10
        stored = mem._engine.vectors.get_vectors(
            alice._collection, [m.id for m in alice.memories()]
        )
        assert len(stored) == counts["alice"]
    seen.clear()
    with agentmem.AgentMemory(store, embedder=HashEmbedder(), repair_progress=seen.append) as mem:
        assert seen == []  # whole again: nothing to re-embed on the next open
        assert mem.check_integrity().ok


def test_vectors_lost_from_one_bank_are_rebuilt_and_stray_vectors_removed(store):
    with agentmem.AgentMemory(store, embedder=HashEmbedder()) as mem:
        alice = mem.bank("alice")
        ids = [m.id for m in alice.memories()]
        mem._engine.vectors.delete(alice._collection, ids[:5])  # as an older backup of chroma/
        bob = mem.bank("bob")
        stray = np.ones((1, 256), dtype=np.float32)
        mem._engine.vectors.upsert(bob._collection, ["gone"], stray, [{"fact_type": "world"}])
        mem._engine.vectors.flush()
        problems = " ".join(mem.check_integrity().problems)
        assert "5 × memory without a vector" in problems and "vector of no memory" in problems
    with agentmem.AgentMemory(store, embedder=HashEmbedder()) as mem:
        report = mem.check_integrity()
        assert report.ok, report.problems
        assert set(mem._engine.vectors.ids(mem.bank("alice")._collection)) == set(ids)


def test_repair_compares_ids_when_the_counts_agree(store):
    """One vector missing and one stray: the counts match, so only repair() sees it."""
    with agentmem.AgentMemory(store, embedder=HashEmbedder()) as mem:
        alice = mem.bank("alice")
        ids = [m.id for m in alice.memories()]
        mem._engine.vectors.delete(alice._collection, ids[:1])
        stray = np.ones((1, 256), dtype=np.float32)
        mem._engine.vectors.upsert(alice._collection, ["gone"], stray, [{"fact_type": "world"}])
    with agentmem.AgentMemory(store, embedder=HashEmbedder()) as mem:
        assert not mem.check_integrity().ok  # the open's count comparison cannot see this
        seen: list[tuple[int, int]] = []
        done = mem.repair(progress=lambda *p: seen.append(p))
        assert (done.reembedded, done.removed) == (1, 1) and seen == [(1, 1)]
        assert mem.check_integrity().ok


def test_cli_repair_rebuilds_and_reports(tmp_path, capsys):
    path = tmp_path / "store"
    with agentmem.AgentMemory(path) as mem:  # the CLI opens with the default embedder
        mem.bank("notes").retain(CONVERSATION, mentioned_at=T0)
        count = len(mem.bank("notes").memories())
    _delete_chroma_folder(path)
    assert main(["repair", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"re-embedded {count} vectors" in out and "the store is whole" in out
    hits = [
        "recall",
        "--path",
        str(path),
        "--bank",
        "notes",
        "--json",
        "--strategy",
        "semantic",
        "Berlin",
    ]
    assert main(hits) == 0 and "Berlin" in capsys.readouterr().out
    assert main(["repair", str(tmp_path / "nowhere")]) == 2
    assert "no agentmem store" in capsys.readouterr().err
    assert not (tmp_path / "nowhere").exists()


def _damage(path: Path, offset: int | None = None, *, truncate: int | None = None) -> None:
    db = path / DB_FILE
    if truncate is not None:
        os.truncate(db, truncate)
        return
    with db.open("r+b") as handle:
        handle.seek(offset if offset >= 0 else db.stat().st_size + offset)
        handle.write(b"\xa5" * 4096)


@pytest.mark.parametrize(
    "damage",
    [
        {"offset": 0},  # the file header
        {"offset": 4096},  # a database header: a checksum fails "in block at location ..."
        {"offset": 8192},
        {"offset": 3_158_016},  # a block of the links table: fails on the first graph read
        {"truncate": 0},
        {"truncate": 100},
        {"truncate": 8192},
    ],
    ids=repr,
)
def test_a_corrupt_duckdb_file_is_a_storage_error_naming_corruption(store, damage):
    _damage(store, **damage)
    with (
        pytest.raises(agentmem.StorageError) as raised,
        agentmem.AgentMemory(store, embedder=HashEmbedder()) as mem,
    ):
        for bank in mem.banks():  # a block damaged in table data fails on first read
            mem.bank(bank).memories()
            mem.bank(bank).recall("invoice", reinforce=False)
    assert not isinstance(raised.value, agentmem.StoreLockedError)
    assert "corrupt" in str(raised.value) and str(store / DB_FILE) in str(raised.value)


def test_a_path_below_a_file_is_a_storage_error_with_the_path(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    with pytest.raises(agentmem.StorageError, match="a-file/store"):
        agentmem.AgentMemory(blocker / "store", embedder=HashEmbedder())


def test_export_to_a_path_that_cannot_be_written_is_a_storage_error(store, tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    with agentmem.AgentMemory(store, embedder=HashEmbedder()) as mem:
        bank = mem.bank("alice")
        for target in (blocker / "out.jsonl", tmp_path, tmp_path / "missing" / "out.jsonl"):
            with pytest.raises(agentmem.StorageError, match=str(target)):
                bank.export(target)
        assert mem.check_integrity().ok


def test_check_integrity_reports_vectors_of_another_dimension(store):
    with agentmem.AgentMemory(store, embedder=HashEmbedder()) as mem:
        alice = mem.bank("alice")
        ids = [m.id for m in alice.memories()]
        vectors = mem._engine.vectors
        vectors.drop(alice._collection)
        wrong = np.ones((len(ids), 10), dtype=np.float32)
        vectors.upsert(alice._collection, ids, wrong, [{"fact_type": "world"}] * len(ids))
        problems = mem.check_integrity().problems
        assert any("'alice'" in p and "10 dimensions, not the 256" in p for p in problems)
        assert mem.bank("bob").check_integrity().ok


def test_vectors_are_repaired_only_by_the_embedder_their_bank_was_made_with(store, caplog):
    """A store holding banks of two embedders, its chroma/ folder deleted: each open repairs
    the banks of its own embedder and leaves the others' for an open with theirs."""
    with agentmem.AgentMemory(store, embedder=HashEmbedder(dimension=64)) as mem:
        small = mem.bank("small").retain("Bob keeps bees on his roof.", mentioned_at=T0).memories
    _delete_chroma_folder(store)
    with (
        caplog.at_level(logging.WARNING, logger="agentmem"),
        agentmem.AgentMemory(store, embedder=HashEmbedder(dimension=64)) as mem,
    ):
        assert "bank 'alice' was made with embedder 'hash-256', not 'hash-64'" in caplog.text
        assert mem.bank("small").check_integrity().ok
        hits = mem.bank("small").recall("bees", strategies=["semantic"], reinforce=False).hits
        assert [h.memory.id for h in hits] == [small[0].id]
        assert not mem.check_integrity().ok  # alice and bob not repaired with 64d vectors
    with agentmem.AgentMemory(store, embedder=HashEmbedder()) as mem:
        report = mem.check_integrity()
        assert report.ok, report.problems
        assert _semantic_ids(mem.bank("alice")) and report.vectors == report.memories
