"""Recall drops parts (clauses split off a chat turn) from every arm but the causal one: a part
never takes a place of its own, its whole holds its text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agentmem
from agentmem.recall.candidates import StrategyHit
from agentmem.recall.pipeline import _without_parts
from agentmem.store.graph import bank_graph
from agentmem.testing import HashEmbedder
from tests.conftest import T0


@pytest.fixture(scope="module")
def turns(tmp_path_factory):
    path = tmp_path_factory.mktemp("parts") / "s"
    with agentmem.AgentMemory(path, embedder=HashEmbedder()) as mem:
        bank = mem.bank("b")
        stored = bank.retain(
            [
                {
                    "role": "user",
                    "name": "Ines",
                    "content": "I sold my bike, so the garage has room.",
                },
                {"role": "user", "name": "Ines", "content": "The kayak fits there now."},
                {
                    "role": "user",
                    "name": "Ines",
                    "content": "We left early because the storm got worse.",
                },
            ],
            mentioned_at=T0,
        ).memories
        yield mem, stored


def test_the_retained_turns_have_two_parts(turns):
    mem, (sold, sold_clause, kayak, left, left_clause) = turns
    graph = bank_graph(mem._engine, "b")
    with graph.lock:
        assert [graph.whole_of(m.id) for m in (sold_clause, left_clause)] == [sold.id, left.id]
        assert [graph.whole_of(m.id) for m in (sold, kayak, left)] == [None, None, None]


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_no_part_is_left_but_in_the_causal_arm_and_the_rest_keep_their_order(turns, data):
    mem, stored = turns
    graph = bank_graph(mem._engine, "b")
    parts = {stored[1].id, stored[4].id}
    arms = data.draw(
        st.dictionaries(
            st.sampled_from(["semantic", "keyword", "graph", "temporal", "causal"]),
            st.lists(st.sampled_from([m.id for m in stored]), unique=True),
        )
    )
    ranked = {
        arm: [StrategyHit(m, rank, 1.0 / rank, 1.0) for rank, m in enumerate(found, start=1)]
        for arm, found in arms.items()
    }
    kept = _without_parts(graph, ranked)
    assert kept.keys() == ranked.keys()
    for arm in arms:
        if arm == "causal":
            assert kept[arm] == ranked[arm]  # the causal arm reports a turn's clause as its cause
            continue
        others = [hit for hit in ranked[arm] if hit.memory_id not in parts]
        assert [hit.memory_id for hit in kept[arm]] == [hit.memory_id for hit in others]
        assert [hit.score for hit in kept[arm]] == [hit.score for hit in others]
        assert [hit.rank for hit in kept[arm]] == list(range(1, len(others) + 1))
