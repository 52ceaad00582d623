"""Spreading activation on a real bank's graph mirror (offline, hash embeddings)."""

from __future__ import annotations

from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agentmem
from agentmem.recall import graph as graph_walk
from agentmem.recall.graph import spreading_activation
from agentmem.recall.people import entities_named_in
from agentmem.store.graph import MemoryGraph, bank_graph
from agentmem.testing import HashEmbedder
from tests.conftest import T0


@pytest.fixture
def walk(tmp_path):
    with agentmem.AgentMemory(tmp_path / "s", embedder=HashEmbedder()) as mem:
        bank = mem.bank("b")
        turns = [
            {"role": "user", "name": "Alice", "content": f"Note number {i}."} for i in range(8)
        ]
        turns[2]["content"] = "My cat Mittens sleeps all day."
        turns[6]["content"] = "Yesterday Mittens knocked over a vase."
        memories = bank.retain(turns, mentioned_at=T0).memories
        yield mem, bank, memories, bank_graph(mem._engine, "b")


def test_hubs_conduct_less_than_rare_entities(walk):
    _, _, memories, graph = walk
    with graph.lock:
        (alice,) = graph.entity_ids_named("alice")
        (mittens,) = entities_named_in("Where is Mittens?", graph)
        assert graph.entity_specificity(mittens) > 2 * graph.entity_specificity(alice)
        reached = spreading_activation(
            graph,
            {memories[2].id: 1.0},
            budget=100,
            decay=0.8,
            causal_boost=2.0,
            edge_types=["entity"],
        )
    level = reached.level
    assert level[memories[6].id] > level[memories[4].id] > 0  # via Mittens > via Alice
    assert level[memories[6].id] == pytest.approx(0.8 * graph.entity_specificity(mittens))
    assert reached.path(memories[6].id) == [memories[2].id, mittens, memories[6].id]
    assert reached.path(memories[2].id) == [memories[2].id]  # a seed is its own path


def test_budget_bounds_expansion_and_causal_edges_are_boosted(walk):
    _, bank, memories, graph = walk
    bank.link(memories[0].id, memories[5].id, "caused_by", 0.5)

    def walk_from_first(budget: int) -> dict[str, float]:
        return spreading_activation(
            graph,
            {memories[0].id: 0.9},
            budget=budget,
            decay=0.8,
            causal_boost=2.0,
            edge_types=["caused_by", "followed_by"],
        ).level

    with graph.lock:
        one = walk_from_first(1)
        assert set(one) == {memories[0].id, memories[1].id, memories[5].id}
        assert one[memories[5].id] == pytest.approx(0.9 * 0.5 * 0.8 * 2)
        assert one[memories[1].id] == pytest.approx(0.9 * 0.8)
        more = walk_from_first(3)
    assert len(more) > len(one) and all(0 < a <= 1 for a in more.values())


def test_people_are_cut_from_what_the_semantic_arm_embeds(tmp_path):
    from agentmem.recall.people import without_people

    with agentmem.AgentMemory(tmp_path / "p", embedder=HashEmbedder()) as mem:
        bank = mem.bank("b")
        bank.retain(
            [{"role": "user", "name": "Alice Chen", "content": "I moved to Paris last year."}],
            mentioned_at=T0,
        )
        graph = bank_graph(mem._engine, "b")
        assert without_people("When did Alice Chen move to Paris?", graph) == (
            "When did move to Paris?"  # a place says what the question is about: it stays
        )
        assert without_people("Where does alice chen's sister live?", graph) == (
            "Where does sister live?"
        )
        assert without_people("Who is Alice Chen?", graph) == "Who is Alice Chen?"
        assert without_people("What does Bob like?", graph) == "What does Bob like?"  # unknown


@settings(max_examples=200, deadline=None)
@given(
    links=st.lists(
        st.tuples(
            st.integers(0, 7),
            st.integers(0, 7),
            st.sampled_from(["caused_by", "followed_by", "semantic"]),
            st.floats(0.05, 1.0),
        ),
        max_size=30,
    ),
    seeds=st.sets(st.integers(0, 7), min_size=1, max_size=3),
)
def test_every_path_starts_at_a_seed_and_follows_edges(links, seeds):
    # "caused_by" hops can multiply activation by more than 1, so a walk can come back to a
    # node more strongly than it left: its path must still end there, without a cycle.
    graph = MemoryGraph()
    ids = [f"m{i}" for i in range(8)]
    graph._add_memories((memory_id, None, seq) for seq, memory_id in enumerate(ids))
    for a, b, kind, weight in links:
        if a != b:
            graph.add_link(ids[a], ids[b], kind, weight)
    starts = {ids[i] for i in seeds}
    with graph.lock:
        reached = spreading_activation(
            graph, dict.fromkeys(starts, 0.6), budget=50, decay=0.8, causal_boost=2.0
        )
        for node, level in reached.level.items():
            path = reached.path(node)
            assert path[0] in starts and path[-1] == node and len(set(path)) == len(path)
            assert 0 < level <= 1
            for here, there in zip(path, path[1:], strict=False):
                assert there in {other for other, *_ in graph.edges_of(here)}


def test_memories_tied_in_activation_and_time_come_back_newest_retained_first():
    """A session's turns reached alike from one hit tie in activation and in mention time:
    they come back in the reverse order of retain (seq), whatever their ids, so two stores
    that retained the same conversation (under other random ids) rank it alike."""
    graph = MemoryGraph()
    turns = ["m-c", "m-a", "m-e", "m-b", "m-d"]  # retained in this order: ids out of order
    graph._add_memories([("hit", None, 1), *((m, None, seq) for seq, m in enumerate(turns, 2))])
    for turn in turns:
        graph.add_link("hit", turn, "followed_by", 0.5)
    with graph.lock:
        reached = spreading_activation(graph, {"hit": 0.9}, budget=50, decay=0.8, causal_boost=2.0)
        strongest = reached.strongest_memories(4)
    assert [m for m, _ in strongest] == ["hit", "m-d", "m-b", "m-e"]
    assert len({level for m, level in strongest if m != "hit"}) == 1


def test_recall_is_the_same_whether_edges_are_weighed_at_once_or_one_by_one(tmp_path):
    """The graph arm through ``recall``: a hub entity (Alice, on every turn), turns linked to
    one another and a specific entity; weighing every node's edges with numpy, or none, gives
    the same hits, scores and details (paths, carried activation) as the default threshold."""
    turns = [
        {"role": "user", "name": "Alice", "content": f"Day {i}: I walked Rex to the park."}
        for i in range(40)
    ]
    turns[7]["content"] = "My dog Rex has a vet appointment on Friday."
    turns[23]["content"] = "Rex hates the vet but loves the park."
    with agentmem.AgentMemory(tmp_path / "s", embedder=HashEmbedder()) as mem:
        bank = mem.bank("b")
        memories = bank.retain(turns, mentioned_at=T0).memories
        bank.link(memories[7].id, memories[23].id, "caused_by", 0.7)
        results = []
        for vector_edges in (graph_walk.VECTOR_EDGES, 0, 10**9):
            with patch.object(graph_walk, "VECTOR_EDGES", vector_edges):
                result = bank.recall("When does Alice take Rex to the vet?", reinforce=False)
            results.append([(h.memory.id, h.score, h.strategy_details) for h in result])
    assert results[0] and any("graph" in details for _, _, details in results[0])
    assert results[0] == results[1] == results[2]
