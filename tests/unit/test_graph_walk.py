"""Spreading activation on a real bank's graph mirror (offline, hash embeddings)."""

from __future__ import annotations

import pytest

import agentmem
from agentmem.recall.graph import entities_named_in, spreading_activation
from agentmem.store.graph import bank_graph
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
    assert reached[memories[6].id] > reached[memories[4].id] > 0  # via Mittens > via Alice
    assert reached[memories[6].id] == pytest.approx(0.8 * graph.entity_specificity(mittens))


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
        )

    with graph.lock:
        one = walk_from_first(1)
        assert set(one) == {memories[0].id, memories[1].id, memories[5].id}
        assert one[memories[5].id] == pytest.approx(0.9 * 0.5 * 0.8 * 2)
        assert one[memories[1].id] == pytest.approx(0.9 * 0.8)
        more = walk_from_first(3)
    assert len(more) > len(one) and all(0 < a <= 1 for a in more.values())


def test_people_are_cut_from_what_the_semantic_arm_embeds(tmp_path):
    from agentmem.recall.graph import without_people

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
