"""The Chroma side of a store: search width of collections made by older versions."""

from __future__ import annotations

import threading

import chromadb
import numpy as np
from chromadb.config import Settings

import agentmem
from agentmem.store.vectors import HNSW_CONFIGURATION, VectorStore
from agentmem.testing import HashEmbedder


def _chroma(store_path) -> chromadb.ClientAPI:
    # The settings agentmem opens it with: Chroma refuses a second client with others.
    settings = Settings(anonymized_telemetry=False, allow_reset=False)
    return chromadb.PersistentClient(path=str(store_path / "chroma"), settings=settings)


def _search_width(store_path, collection: str) -> int:
    return _chroma(store_path).get_collection(collection).configuration_json["hnsw"]["ef_search"]


def test_a_collection_made_with_a_narrower_search_is_widened_on_open(store_path):
    with agentmem.AgentMemory(store_path, embedder=HashEmbedder()) as mem:
        bank = mem.bank("b")
        bank.retain("Quixotrix invoices are paid on Fridays.", mentioned_at="2025-03-04")
        collection = bank._collection
    wanted = HNSW_CONFIGURATION["hnsw"]["ef_search"]
    assert _search_width(store_path, collection) == wanted
    _chroma(store_path).get_collection(collection).modify(configuration={"hnsw": {"ef_search": 64}})
    assert _search_width(store_path, collection) == 64

    with agentmem.AgentMemory(store_path, embedder=HashEmbedder()) as mem:
        hits = mem.bank("b").recall("When are Quixotrix invoices paid?", strategies=["semantic"])
        assert [h.text for h in hits] == ["Quixotrix invoices are paid on Fridays."]
    assert _search_width(store_path, collection) == wanted


def test_calls_larger_than_chromas_batch_limit_are_cut_into_batches(tmp_path):
    """Chroma refuses more than ``get_max_batch_size()`` ids or vectors in one call (5,461
    embedded): a retain of more facts, a forget of more memories or a journal replay after a
    crash must still go through, not fail on every later flush."""
    import numpy as np

    from agentmem.store.vectors import VectorStore

    store = VectorStore(tmp_path)
    n = store._client.get_max_batch_size() + 500
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(n, 8)).astype(np.float32)
    ids = [f"m{i}" for i in range(n)]
    store.upsert("bank-big", ids, vectors, [{"fact_type": "world"}] * n)
    assert store.ids("bank-big") == set(ids)
    stored = store.get_vectors("bank-big", ids)
    assert len(stored) == n
    assert np.allclose(stored[ids[-1]], vectors[-1], atol=1e-6)
    nearest = store.query_many("bank-big", vectors, 1)
    assert len(nearest) == n and nearest[-1][0][0] == ids[-1]
    store.delete("bank-big", ids[:-1])
    assert store.ids("bank-big") == {ids[-1]}


def test_no_read_of_a_collection_runs_while_it_is_written(tmp_path):
    """Chroma fails a query run while another thread writes the collection ("Nothing found
    on disk": two recalls of a new bank, one flushing what retain staged). A write held
    midway keeps every read of that collection waiting, not another bank's; the reads then
    see the write."""
    store = VectorStore(tmp_path / "chroma")
    unit = np.eye(4, dtype=np.float32)
    store.upsert("bank-a", ["a0"], unit[:1], [{"n": 0}])
    store.upsert("bank-other", ["o0"], unit[:1], [{"n": 0}])
    col = store._collection("bank-a")
    writing, gate = threading.Event(), threading.Event()
    real_upsert = col.upsert

    def held_upsert(**kwargs):  # noqa: ANN003, ANN202
        writing.set()
        assert gate.wait(30)
        return real_upsert(**kwargs)

    col.upsert = held_upsert
    writer = threading.Thread(target=store.upsert, args=("bank-a", ["a1"], unit[1:2], [{"n": 1}]))
    writer.start()
    assert writing.wait(30)
    found: dict[str, object] = {}
    readers = [
        threading.Thread(target=lambda: found.update(query=store.query("bank-a", unit[1], 2))),
        threading.Thread(target=lambda: found.update(vectors=store.get_vectors("bank-a", ["a1"]))),
        threading.Thread(target=lambda: found.update(count=store.count("bank-a"))),
    ]
    for reader in readers:
        reader.start()
    assert store.query("bank-other", unit[0], 1)[0][0] == "o0"  # another collection is not held
    for reader in readers:
        reader.join(0.3)
        assert reader.is_alive(), "a read ran while the collection was being written"
    gate.set()
    writer.join(30)
    for reader in readers:
        reader.join(30)
    assert found["query"][0][0] == "a1" and set(found["vectors"]) == {"a1"}
    assert found["count"] == 2
    store.close()
