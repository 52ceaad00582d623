"""The Chroma side of a store: search width of collections made by older versions."""

from __future__ import annotations

import chromadb
from chromadb.config import Settings

import agentmem
from agentmem.store.vectors import HNSW_CONFIGURATION
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
