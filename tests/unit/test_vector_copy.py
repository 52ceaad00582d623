"""A bank's vectors copied whole on a thread (store/vector_copy.py): what the copy answers is
what the store held, whatever happens while it is read."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import agentmem
from agentmem.store import vector_copy
from agentmem.store.vector_copy import VectorCopy
from agentmem.testing import HashEmbedder

IDS = [f"m{n}" for n in range(7)]


def _vector(memory_id: str) -> np.ndarray:
    return np.full(4, float(IDS.index(memory_id)), dtype=np.float32)


def test_the_copy_holds_every_vector_the_store_returns():
    copy = VectorCopy(IDS, lambda ids: {i: _vector(i) for i in ids if i != "m3"}, batch=3)
    copy.start()
    assert copy.wait(10)
    held = copy.get([*IDS, "unknown"])
    assert held.keys() == set(IDS) - {"m3"}
    assert all((held[i] == _vector(i)).all() for i in held)


def test_a_vector_dropped_while_its_batch_is_read_is_not_kept():
    reading, release = threading.Event(), threading.Event()

    def read(ids: list[str]) -> dict[str, np.ndarray]:
        found = {i: _vector(i) for i in ids}  # read before the drop
        reading.set()
        release.wait(10)
        return found

    copy = VectorCopy(IDS, read, batch=len(IDS))
    copy.start()
    assert reading.wait(10)
    copy.drop(["m1", "m5"])  # rewritten or forgotten meanwhile
    release.set()
    assert copy.wait(10)
    assert copy.get(IDS).keys() == set(IDS) - {"m1", "m5"}
    copy.drop(["m2"])  # after the load
    assert "m2" not in copy.get(IDS)


def test_a_failed_read_ends_the_load_with_what_was_read():
    def read(ids: list[str]) -> dict[str, np.ndarray]:
        if "m4" in ids:
            raise OSError("the vector store went away")
        return {i: _vector(i) for i in ids}

    copy = VectorCopy(IDS, read, batch=2)
    copy.start()
    assert copy.wait(10)
    assert copy.get(IDS).keys() == {"m0", "m1", "m2", "m3"}  # the rest is read through


def test_a_vector_of_another_length_is_not_held():
    def read(ids: list[str]) -> dict[str, np.ndarray]:
        return {i: np.zeros(3 if i == "m2" else 4, dtype=np.float32) for i in ids}

    copy = VectorCopy(IDS, read, batch=3)
    copy.start()
    assert copy.wait(10)
    assert copy.get(IDS).keys() == set(IDS) - {"m2"}


def test_a_stopped_copy_reads_no_further_batch():
    asked: list[list[str]] = []
    reading, release = threading.Event(), threading.Event()

    def read(ids: list[str]) -> dict[str, np.ndarray]:
        asked.append(ids)
        reading.set()
        release.wait(10)
        return {i: _vector(i) for i in ids}

    copy = VectorCopy(IDS, read, batch=2)
    copy.start()
    assert reading.wait(10)
    threading.Timer(0.05, release.set).start()
    copy.stop()  # waits for the batch being read
    assert asked == [IDS[:2]]
    assert copy.get(IDS).keys() == set(IDS[:2])


@pytest.fixture
def whole_copy_store(tmp_path, monkeypatch):
    """A store whose bank is read into a whole copy one vector at a time (as a bank past the
    vector store's own exact copy is, at 25k memories and more)."""
    monkeypatch.setattr(vector_copy, "LOAD_BATCH", 1)
    mem = agentmem.AgentMemory(tmp_path, embedder=HashEmbedder())
    mem._engine.vectors._store._flat = None
    yield mem
    mem.close()


def test_a_store_closed_while_a_copy_is_read_stops_it(whole_copy_store, monkeypatch):
    mem = whole_copy_store
    bank = mem.bank("b")
    bank.retain([{"role": "user", "content": f"Note {n} about the garden."} for n in range(30)])
    ids = [m.id for m in bank.memories()]
    store = mem._engine.vectors._store
    read, reading, release = store.get_vectors, threading.Event(), threading.Event()
    copy_reads: list[list[str]] = []

    def held(name: str, wanted: list[str]) -> dict[str, np.ndarray]:
        if threading.current_thread().name == "agentmem-vector-copy":
            copy_reads.append(list(wanted))
            reading.set()
            release.wait(10)  # the store closes while this batch is being read
        return read(name, wanted)

    monkeypatch.setattr(store, "get_vectors", held)
    assert mem._engine.recall_rows.vectors("b", bank._collection, ids[:1])
    copy = mem._engine.recall_rows._banks["b"].vector_copy
    assert reading.wait(10)
    threading.Timer(0.05, release.set).start()
    mem.close()  # waits for the batch being read, then no further batch is read
    assert not copy._thread.is_alive()
    assert len(copy_reads) == 1


def test_vectors_forgotten_while_the_copy_is_read_are_not_answered(whole_copy_store):
    mem = whole_copy_store
    bank = mem.bank("b")
    bank.retain([{"role": "user", "content": f"Note {n} about the garden."} for n in range(30)])
    ids = [m.id for m in bank.memories()]
    rows = mem._engine.recall_rows
    rows.vectors("b", bank._collection, ids[:1])  # starts the copy
    bank.forget(ids[:10])
    assert rows.wait_for_vectors("b", 30)
    assert rows.vectors("b", bank._collection, ids).keys() == set(ids[10:])
    report = mem.check_integrity()
    assert report.ok, report.problems


def _collections(mem: agentmem.AgentMemory) -> set[str]:
    return {c.name for c in mem._engine.vectors._store._client.list_collections()}


def test_a_bank_deleted_while_its_copy_is_read_leaves_no_collection_behind(
    whole_copy_store, monkeypatch
):
    mem = whole_copy_store
    bank = mem.bank("b")
    bank.retain([{"role": "user", "content": f"Note {n} about the garden."} for n in range(30)])
    collection = bank._collection
    ids = [m.id for m in bank.memories()]
    store = mem._engine.vectors._store
    read, reading, release = store.get_vectors, threading.Event(), threading.Event()

    def held(name: str, wanted: list[str]) -> dict[str, np.ndarray]:
        if threading.current_thread().name == "agentmem-vector-copy":
            reading.set()
            release.wait(10)  # the copy reads on once the bank is gone
        return read(name, wanted)

    monkeypatch.setattr(store, "get_vectors", held)
    mem._engine.recall_rows.vectors("b", collection, ids[:1])  # starts the copy
    assert reading.wait(10)
    mem.delete_bank("b")
    release.set()
    copy = mem._engine.recall_rows._banks["b"].vector_copy
    assert copy.wait(30)
    assert copy.get(ids) == {}  # nothing read from the deleted bank
    assert collection not in _collections(mem)
    again = mem.bank("b")  # the same id, a new bank
    again.retain([{"role": "user", "content": "Tomatoes need full sun."}])
    new_ids = [m.id for m in again.memories()]
    kept = mem._engine.recall_rows.vectors("b", again._collection, new_ids)
    assert kept.keys() == set(new_ids)
    assert collection not in _collections(mem)
    report = mem.check_integrity()
    assert report.ok, report.problems


def test_copies_make_room_by_dropping_the_least_lately_used_banks(tmp_path, monkeypatch):
    from agentmem.store import recall_rows

    monkeypatch.setattr(recall_rows, "VECTORS_COPIED", 50)
    with agentmem.AgentMemory(tmp_path, embedder=HashEmbedder()) as mem:
        mem._engine.vectors._store._flat = None
        rows = mem._engine.recall_rows
        ids = {}
        for name, count in (("a", 20), ("b", 20), ("c", 20), ("huge", 60)):
            bank = mem.bank(name)
            bank.retain([{"role": "user", "content": f"{name} note {n}."} for n in range(count)])
            ids[name] = [m.id for m in bank.memories()]

        def read(name: str) -> dict[str, np.ndarray]:
            found = rows.vectors(name, mem.bank(name)._collection, ids[name])
            assert rows.wait_for_vectors(name, 30)
            return found

        def copied() -> set[str]:
            return {name for name, bank in rows._banks.items() if bank.vector_copy is not None}

        for name in ("a", "b"):
            read(name)
        assert copied() == {"a", "b"}
        read("a")  # b is now the least lately used
        read("c")  # 60 > 50: b's copy makes room
        assert copied() == {"a", "c"}
        read("huge")  # larger than all copies together: read as recall asks
        assert copied() == {"a", "c"}
        for name, wanted in ids.items():  # every answer is still the store's
            stored = mem._engine.vectors.get_vectors(mem.bank(name)._collection, wanted)
            kept = read(name)
            assert kept.keys() == stored.keys() == set(wanted)
            assert all((kept[i] == stored[i]).all() for i in wanted)
