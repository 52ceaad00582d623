"""The graph mirror kept current in place reads exactly like one loaded fresh from the store."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import agentmem
from agentmem.links import EDGE_KINDS as WALKABLE_KINDS
from agentmem.retain import corrections
from agentmem.store.database import Database
from agentmem.store.graph import EDGE_KINDS, MemoryGraph, bank_graph
from agentmem.testing import HashEmbedder
from tests.conftest import T0, T1


def say(text: str) -> dict[str, str]:
    return {"role": "user", "name": "Maria", "content": text}


def readings(graph: MemoryGraph, nodes: set[str]) -> dict[str, Any]:
    """Everything recall reads from the mirror about ``nodes``, in an order-free form."""
    with graph.lock:
        present = {n for n in nodes if n in graph}
        return {
            "present": present,
            "memory_count": graph.memory_count,
            "names": sorted(graph.name_keys()),
            "edges": {n: sorted(graph.edges_of(n)) for n in nodes},
            "specificity": {n: graph.entity_specificity(n) for n in present if graph.is_entity(n)},
            "mentioned_at": {n: graph.mentioned_at(n) for n in present if not graph.is_entity(n)},
        }


def exported(store: Path) -> tuple[list[Any], list[Any]]:
    with agentmem.AgentMemory(store, embedder=HashEmbedder()) as mem:
        graph = mem.bank("b").graph()
    return sorted(graph.nodes(data=True), key=repr), sorted(graph.edges(keys=True, data=True))


def test_every_edge_kind_has_a_code():
    assert set(EDGE_KINDS) == WALKABLE_KINDS


def test_live_mirror_matches_a_reload_after_links_forget_and_corrections(tmp_path):
    store = tmp_path / "s"
    with agentmem.AgentMemory(store, embedder=HashEmbedder()) as mem:
        bank = mem.bank("b")
        budget, lunch, flights, atlas = bank.retain(
            [
                say("Robert Chen reviewed the budget."),
                say("Robert Chen and Kenji had lunch in Oslo."),
                say("Kenji booked the flights to Oslo."),
                say("The Atlas launch slipped a week."),
            ],
            mentioned_at=T0,
        ).memories
        graph = bank_graph(mem._engine, "b")  # loaded now: every write below updates it
        bank.link(budget.id, flights.id, "related", 0.4)
        bank.link(budget.id, flights.id, "related", 0.9)  # reweighted, not added
        bank.link(atlas.id, lunch.id, "caused_by", 0.7)
        bank.forget(atlas.id)  # "Atlas" goes with its only memory
        later = bank.retain(  # takes the freed slots
            [say("Kenji moved to Lisbon."), say("Priya joined the team.")], mentioned_at=T1
        ).memories
        bank.add_alias("Robert Chen", "Kenji")
        bank.split_alias("Robert Chen", "Kenji")
        with graph.lock:
            entities = {e for name in graph.name_keys() for e in graph.entity_ids_named(name)}
        nodes = {m.id for m in (budget, lunch, flights, atlas, *later)} | entities
        live = readings(graph, nodes)
        with graph.lock:  # outgoing edges first, as networkx gave them (walks break ties so)
            outgoing = {n: [e[3] for e in graph.edges_of(n)] for n in nodes}
        fresh = readings(MemoryGraph.load(mem._engine.db.cursor(), "b"), nodes)
        public = bank.graph()
    assert "Kenji" in public and "Robert Chen" in public  # split apart again
    assert live == fresh
    assert all(flags == sorted(flags, reverse=True) for flags in outgoing.values())
    assert atlas.id not in live["present"] and "atlas" not in live["names"]
    assert not any(other == atlas.id for edges in live["edges"].values() for other, *_ in edges)
    assert [e for e in live["edges"][budget.id] if e[1] == "related"] == [
        (flights.id, "related", 0.9, True)
    ]
    assert exported(store) == (  # after reopen
        sorted(public.nodes(data=True), key=repr),
        sorted(public.edges(keys=True, data=True)),
    )


def fail_commits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every transaction fail where it would commit (the block's writes roll back)."""
    transaction = Database.transaction

    @contextmanager
    def commit_fails(self: Database) -> Iterator[Any]:
        with transaction(self) as cur:
            yield cur
            raise agentmem.StorageError("commit failed")

    monkeypatch.setattr(Database, "transaction", commit_fails)


def test_failed_link_leaves_no_edge_in_the_mirror(tmp_path, monkeypatch):
    with agentmem.AgentMemory(tmp_path / "s", embedder=HashEmbedder()) as mem:
        bank = mem.bank("b")
        budget, flights = bank.retain(
            [say("Robert Chen reviewed the budget."), say("Kenji booked the flights to Oslo.")],
            mentioned_at=T0,
        ).memories
        nodes = {budget.id, flights.id}
        before = readings(bank_graph(mem._engine, "b"), nodes)
        fail_commits(monkeypatch)
        with pytest.raises(agentmem.StorageError):
            bank.link(budget.id, flights.id, "caused_by", 0.8)
        monkeypatch.undo()
        after = readings(bank_graph(mem._engine, "b"), nodes)
        fresh = readings(MemoryGraph.load(mem._engine.db.cursor(), "b"), nodes)
    assert after == fresh == before


@pytest.mark.parametrize("fails", ["after the refresh", "at commit"])
@pytest.mark.parametrize("correction", ["add_alias", "split_alias"])
def test_failed_correction_leaves_no_refreshed_mirror_behind(
    tmp_path, monkeypatch, correction, fails
):
    with agentmem.AgentMemory(tmp_path / "s", embedder=HashEmbedder()) as mem:
        bank = mem.bank("b")
        memories = bank.retain(
            [say("Robert Chen reviewed the budget."), say("Kenji booked the flights to Oslo.")],
            mentioned_at=T0,
        ).memories
        if correction == "split_alias":
            bank.add_alias("Robert Chen", "Kenji")
        graph = bank_graph(mem._engine, "b")
        with graph.lock:
            entities = {e for name in graph.name_keys() for e in graph.entity_ids_named(name)}
        nodes = {m.id for m in memories} | entities
        before = readings(graph, nodes)
        if fails == "after the refresh":
            refresh = corrections._refresh

            def refresh_then_fail(*args: Any) -> None:
                refresh(*args)
                raise RuntimeError("boom")

            monkeypatch.setattr(corrections, "_refresh", refresh_then_fail)
        else:
            fail_commits(monkeypatch)
        with pytest.raises((RuntimeError, agentmem.StorageError)):
            getattr(bank, correction)("Robert Chen", "Kenji")
        monkeypatch.undo()
        after = readings(bank_graph(mem._engine, "b"), nodes)
        fresh = readings(MemoryGraph.load(mem._engine.db.cursor(), "b"), nodes)
        names = {e.name: e.aliases for e in bank.entities()}
    assert after == fresh == before  # the correction rolled back, in the store and the mirror
    assert names["Robert Chen"] == (("Kenji",) if correction == "split_alias" else ())
