"""Two AgentMemory instances over one store: a write through one is visible through the other
at its next call — recall, memories, entities, graph, timeline, settings, corrections — and
every mirror the reader caught up from the change log equals one loaded fresh.

Runs on DuckDB (two instances of one process on one file) and on PostgreSQL (``pg_url``).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import networkx as nx
import pytest

import agentmem
from agentmem.retain.link import bank_entity_index
from agentmem.store.dated_facts import DatedFacts
from agentmem.testing import HashEmbedder
from tests.conftest import CONVERSATION, T0, T1


@pytest.fixture(params=["duckdb", "postgresql"])
def location(request: pytest.FixtureRequest, tmp_path) -> str:  # noqa: ANN001
    if request.param == "duckdb":
        return str(tmp_path / "store")
    return request.getfixturevalue("pg_url")


@pytest.fixture
def pair(location: str) -> Iterator[tuple[agentmem.AgentMemory, agentmem.AgentMemory]]:
    first = agentmem.AgentMemory(location, embedder=HashEmbedder())
    second = agentmem.AgentMemory(location, embedder=HashEmbedder())
    yield first, second
    second.close()
    first.close()


def picture(graph: nx.MultiDiGraph) -> tuple[set, set]:
    """Nodes with their attributes and edges with kind and weight, comparable as sets."""
    nodes = {(n, d["type"], d.get("text", d.get("kind"))) for n, d in graph.nodes(data=True)}
    edges = {(u, v, k, round(w, 12)) for u, v, k, w in graph.edges(keys=True, data="weight")}
    return nodes, edges


def fresh_view(location: str, bank_id: str) -> agentmem.MemoryBank:
    return agentmem.AgentMemory(location, embedder=HashEmbedder()).bank(bank_id)


def assert_mirrors_fresh(mem: agentmem.AgentMemory, location: str, bank_id: str) -> None:
    """Every mirror ``mem`` holds of the bank equals one loaded from the store now."""
    bank = mem.bank(bank_id)
    other = agentmem.AgentMemory(location, embedder=HashEmbedder())
    try:
        assert picture(bank.graph()) == picture(other.bank(bank_id).graph())
        engine = mem._engine
        with engine.db.write_lock:
            cur = engine.db.cursor()
            index = bank_entity_index(engine, cur, bank_id)
            loaded = {(e.id, e.name, e.kind, e.aliases, e.neighbors) for e in index}
            stored = {
                (e.id, e.name, e.kind, e.aliases, e.neighbors)
                for e in bank_entity_index(other._engine, other._engine.db.cursor(), bank_id)
            }
            assert loaded == stored
            dated = engine.mirror("dated_facts", bank_id)
            if dated is not None:
                fresh = DatedFacts.load(cur, bank_id)
                span = (-1e12, 1e12)
                assert dated.within(*span)[0] == fresh.within(*span)[0]
    finally:
        other.close()


def ids(memories: list[agentmem.Memory]) -> set[str]:
    return {m.id for m in memories}


def test_a_write_through_one_instance_is_visible_through_the_other(pair, location):
    writer, reader = pair
    w, r = writer.bank("alice"), reader.bank("alice")
    assert r.memories() == []
    first = w.retain(CONVERSATION, mentioned_at=T0, document_id="session-1").memories
    # Every read of the other instance sees it at once: rows, entities, recall, the graph.
    assert ids(r.memories()) == ids(first)
    assert {e.name for e in r.entities()} == {e.name for e in w.entities()}
    hit = r.recall("Where does Alice work?", top_k=3).memories[0]
    assert hit.id in ids(first)
    graph_before = picture(r.graph())
    assert_mirrors_fresh(reader, location, "alice")

    # Writes through the first while the second holds its mirrors: all caught up.
    more = w.retain("Alice moved to Lisbon in May 2025.", mentioned_at=T1).memories
    # The profile the new fact completes (entity profiles) is the bank's as well.
    assert ids(r.memories()) == ids(first) | ids(more) | ids(w.observations())
    assert picture(r.graph()) != graph_before
    assert more[0].id in r.graph()
    timeline = r.recall("Alice", strategies="timeline", entity="Alice", top_k=50).memories
    assert more[0].id in ids(timeline)
    assert_mirrors_fresh(reader, location, "alice")

    w.link(more[0].id, first[0].id, "caused_by")
    assert (more[0].id, first[0].id, "caused_by") in set(r.graph().edges(keys=True))
    assert_mirrors_fresh(reader, location, "alice")

    w.forget(ids=[first[0].id])
    assert first[0].id not in ids(r.memories())
    assert first[0].id not in r.graph()
    assert first[0].id not in ids(r.recall("Alice", top_k=20).memories)
    assert_mirrors_fresh(reader, location, "alice")

    w.configure(temporal_sigma_days=3.0)
    assert r.config.temporal_sigma_days == 3.0

    # The second writes too: its entity index knows the first's entities (no duplicate).
    (alice,) = [e for e in w.entities() if e.name == "Alice"]
    hiking = r.retain("Alice loves hiking in Lisbon.", mentioned_at=T1).memories[0]
    (again,) = [e for e in w.entities() if e.name == "Alice"]
    assert set(again.memory_ids) == set(alice.memory_ids) | {hiking.id}
    assert_mirrors_fresh(writer, location, "alice")
    assert_mirrors_fresh(reader, location, "alice")

    # A correction through one is used by the other's next retain.
    w.add_alias("Alice", "Ally")
    assert r.entity("Ally").name == "Alice"
    r.retain("Ally adopted a cat.", mentioned_at=T1)
    assert "Alice" in {e.name for e in w.entities()}
    assert "Ally" not in {e.name for e in w.entities()}
    assert_mirrors_fresh(writer, location, "alice")
    assert_mirrors_fresh(reader, location, "alice")

    for bank in (w, r):
        assert bank.check_integrity().ok


def test_concurrent_retains_through_both_create_each_entity_once(pair, location):
    banks = [mem.bank("carol") for mem in pair]
    errors: list[BaseException] = []

    def retain(bank: agentmem.MemoryBank, n: int) -> None:
        try:
            for i in range(4):
                bank.retain(f"Zorblax Quint visited Oslo on trip {n}-{i}.", mentioned_at=T0)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=retain, args=(b, n)) for n, b in enumerate(banks * 2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    for bank in banks:
        (zorblax,) = [e for e in bank.entities() if e.name == "Zorblax Quint"]
        facts = [m for m in bank.memories() if m.fact_type != "observation"]
        profiles = [o.metadata["profile"] for o in bank.observations()]
        assert profiles == [{"subject": "Zorblax Quint", "aspect": "places"}]  # built once
        assert len(zorblax.memory_ids) == len(facts) + len(profiles) == 17
        assert bank.check_integrity().ok
    assert_mirrors_fresh(pair[0], location, "carol")
    assert_mirrors_fresh(pair[1], location, "carol")


def test_the_same_content_retained_through_both_at_once_is_stored_once(pair):
    banks = [mem.bank("dora") for mem in pair]
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def retain(bank: agentmem.MemoryBank) -> None:
        try:
            start.wait(60)
            for _ in range(3):
                bank.retain(CONVERSATION, mentioned_at=T0)
                bank.retain("Dora keeps bees in Ghent.", document_id="bees", mentioned_at=T0)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=retain, args=(b,)) for b in banks * 2]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    with agentmem.AgentMemory(embedder=HashEmbedder()) as alone:  # the same calls, once
        once = alone.bank("dora")
        once.retain(CONVERSATION, mentioned_at=T0)
        once.retain("Dora keeps bees in Ghent.", document_id="bees", mentioned_at=T0)
        expected = sorted(m.text for m in once.memories())
    for bank in banks:
        assert sorted(m.text for m in bank.memories()) == expected
        assert bank.check_integrity().ok


def test_delete_and_import_through_one_instance_reach_the_other(pair, location, tmp_path):
    writer, reader = pair
    w, r = writer.bank("bob"), reader.bank("bob")
    w.retain("Bob plays the cello in Porto.", mentioned_at=T0)
    assert len(r.memories()) == 1
    r.graph()  # the reader holds a mirror of the bank
    path = tmp_path / "bob.jsonl"
    w.export(path)
    writer.delete_bank("bob")
    assert "bob" not in reader.banks()
    with pytest.raises(agentmem.NotFoundError):
        r.retain("Bob sold his cello.", mentioned_at=T1)
    writer.import_(path)
    r = reader.bank("bob")  # the bank is new: its handle is opened again
    assert [m.text for m in r.memories()] == ["Bob plays the cello in Porto."]
    sold = r.retain("Bob sold his cello.", mentioned_at=T1).memories[0]
    assert sold.id in {m.id for m in writer.bank("bob").memories()}
    assert_mirrors_fresh(reader, location, "bob")
    assert r.check_integrity().ok
