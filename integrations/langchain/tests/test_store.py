"""AgentMemStore: LangGraph's BaseStore contract, on agentmem banks and tags."""

from __future__ import annotations

from typing import TypedDict

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore, InvalidNamespaceError

import agentmem
from agentmem.testing import HashEmbedder
from langchain_agentmem import AgentMemStore

USER = ("memories", "user-42")


@pytest.fixture
def store(memory):
    return AgentMemStore(memory)


def test_put_get_update_delete(store, memory):
    assert store.get(USER, "food") is None  # no bank yet, and none is created by reading
    assert memory.banks() == []
    store.put(USER, "food", {"content": "Loves spicy ramen", "rating": 5})
    item = store.get(USER, "food")
    assert (item.namespace, item.key) == (USER, "food")
    assert item.value == {"content": "Loves spicy ramen", "rating": 5}

    store.put(USER, "food", {"content": "Now prefers sushi"})
    updated = store.get(USER, "food")
    assert updated.value == {"content": "Now prefers sushi"}
    assert updated.created_at == item.created_at < updated.updated_at
    assert [m.text for m in memory.bank("memories").memories()] == ["Now prefers sushi"]

    store.delete(USER, "food")
    assert store.get(USER, "food") is None
    assert memory.bank("memories").stats()["memories"] == 0


def test_items_are_ordinary_memories_in_the_bank_with_namespace_tags(store, memory):
    store.put(USER, "food", {"content": "Loves spicy ramen"})
    store.put(USER + ("notes",), "shift", {"text": "Works night shifts"})
    store.put(("memories", "user-7"), "food", {"content": "Vegetarian, loves ramen too"})
    bank = memory.bank("memories")
    tagged = bank.recall("ramen", tags=["user-42"])
    assert {h.memory.text for h in tagged} == {"Loves spicy ramen", "Works night shifts"}
    assert bank.recall("shifts", tags=["user-42/notes"])[0].memory.text == "Works night shifts"


def test_search_by_query_stays_inside_the_namespace(store):
    store.put(USER, "food", {"content": "Loves spicy ramen"})
    store.put(USER, "pet", {"content": "Has a cat called Quixotrix"})
    store.put(("memories", "user-7"), "food", {"content": "Loves ramen as well"})
    hits = store.search(USER, query="what food does the user like? spicy ramen")
    assert [h.key for h in hits][0] == "food"
    assert all(h.namespace == USER for h in hits)
    assert hits[0].score is not None and hits[0].score >= hits[-1].score
    everyone = store.search(("memories",), query="ramen", limit=5)
    assert {h.namespace for h in everyone if h.key == "food"} == {USER, ("memories", "user-7")}


def test_search_without_query_filters_and_pages(store):
    for n in range(5):
        store.put(USER, f"k{n}", {"content": f"note number {n}", "n": n})
    newest_first = store.search(USER)
    assert [i.key for i in newest_first] == ["k4", "k3", "k2", "k1", "k0"]
    assert [i.key for i in store.search(USER, filter={"n": {"$gte": 3}})] == ["k4", "k3"]
    assert [i.key for i in store.search(USER, filter={"n": 2})] == ["k2"]
    assert [i.key for i in store.search(USER, limit=2, offset=1)] == ["k3", "k2"]
    assert all(i.score is None for i in newest_first)


def test_list_namespaces_with_conditions_and_depth(store):
    store.put(USER, "a", {"content": "a"})
    store.put(USER + ("notes",), "b", {"content": "b"})
    store.put(("docs", "v1"), "c", {"content": "c"})
    assert store.list_namespaces() == [("docs", "v1"), USER, USER + ("notes",)]
    assert store.list_namespaces(prefix=("memories",)) == [USER, USER + ("notes",)]
    assert store.list_namespaces(suffix=("v1",)) == [("docs", "v1")]
    assert store.list_namespaces(prefix=("memories", "*")) == [USER, USER + ("notes",)]
    assert store.list_namespaces(max_depth=1) == [("docs",), ("memories",)]


def test_items_persist_across_reopening(tmp_path):
    path = tmp_path / "persist"
    with agentmem.AgentMemory(path, embedder=HashEmbedder()) as mem:
        AgentMemStore(mem).put(USER, "food", {"content": "Loves spicy ramen"})
    with agentmem.AgentMemory(path, embedder=HashEmbedder()) as mem:
        assert AgentMemStore(mem).get(USER, "food").value == {"content": "Loves spicy ramen"}


def test_index_fields_choose_the_text(store, memory):
    store.put(USER, "trip", {"city": "Lisbon", "month": "June", "id": 7}, index=["city", "month"])
    assert memory.bank("memories").memories()[0].text == "Lisbon\nJune"
    store.put(USER, "raw", {"score": 3})
    assert '{"score": 3}' in [m.text for m in memory.bank("memories").memories()]


def test_invalid_namespaces_are_refused(store):
    with pytest.raises(InvalidNamespaceError):
        store.put((), "k", {"content": "x"})
    with pytest.raises(InvalidNamespaceError, match="bank"):
        store.put(("not a bank id",), "k", {"content": "x"})


async def test_async_twins(store):
    await store.aput(USER, "food", {"content": "Loves spicy ramen"})
    assert (await store.aget(USER, "food")).value["content"] == "Loves spicy ramen"
    assert [i.key for i in await store.asearch(USER, query="ramen")] == ["food"]
    assert await store.alist_namespaces() == [USER]
    await store.adelete(USER, "food")
    assert await store.aget(USER, "food") is None


def test_a_langgraph_graph_reads_and_writes_through_the_store(store):
    class State(TypedDict):
        user: str
        message: str
        recalled: list[str]

    def remember(state: State, *, store: BaseStore) -> dict:
        store.put(("memories", state["user"]), "last", {"content": state["message"]})
        hits = store.search(("memories", state["user"]), query=state["message"])
        return {"recalled": [h.value["content"] for h in hits]}

    graph = StateGraph(State)
    graph.add_node("remember", remember)
    graph.add_edge(START, "remember")
    graph.add_edge("remember", END)
    app = graph.compile(store=store)
    out = app.invoke({"user": "user-9", "message": "I moved to Berlin", "recalled": []})
    assert out["recalled"] == ["I moved to Berlin"]
    assert store.get(("memories", "user-9"), "last").value == {"content": "I moved to Berlin"}


def test_an_item_put_with_index_false_is_kept_but_not_found_by_a_query(store):
    store.put(USER, "secret", {"content": "The door code is 4471"}, index=False)
    store.put(USER, "visible", {"content": "The door is painted blue"})
    assert store.get(USER, "secret").value == {"content": "The door code is 4471"}
    assert {i.key for i in store.search(USER)} == {"secret", "visible"}
    assert [i.key for i in store.search(USER, query="door code")] == ["visible"]


def test_values_with_datetimes_and_uuids_are_stored_as_langgraph_stores_them(store):
    from datetime import UTC, datetime
    from uuid import UUID

    when = datetime(2025, 3, 1, 9, 30, tzinfo=UTC)
    ident = UUID("12345678-1234-5678-1234-567812345678")
    store.put(USER, "meeting", {"content": "Standup", "at": when, "id": ident, "tags": {"a"}})
    assert store.get(USER, "meeting").value == {
        "content": "Standup",
        "at": "2025-03-01T09:30:00+00:00",
        "id": "12345678-1234-5678-1234-567812345678",
        "tags": ["a"],
    }
    with pytest.raises(agentmem.InvalidInputError, match="JSON"):
        store.put(USER, "bad", {"content": "x", "handle": object()})
    assert store.get(USER, "bad") is None
