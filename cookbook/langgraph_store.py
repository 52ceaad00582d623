"""LangGraph long-term memory on agentmem: ``AgentMemStore`` as the graph's store, offline.

Two conversations (threads) of the same user share what the store keeps; the store's items
are agentmem memories, so the search is agentmem's hybrid recall.

    python cookbook/langgraph_store.py [--path ./memdata]
"""

from __future__ import annotations

import argparse
from typing import TypedDict

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore

from agentmem import AgentMemory
from langchain_agentmem import AgentMemStore


class State(TypedDict):
    user_id: str
    message: str
    reply: str


def respond(state: State, *, store: BaseStore) -> dict[str, str]:
    """Remember statements; answer questions from what the store recalls."""
    namespace = ("users", state["user_id"])
    text = state["message"]
    if text.endswith("?"):
        found = store.search(namespace, query=text, limit=1)
        return {"reply": f"You told me: {found[0].value['content']}" if found else "No idea."}
    key = f"fact-{len(store.search(namespace, limit=1000))}"
    store.put(namespace, key, {"content": text})
    return {"reply": "Got it."}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--path", default=None, help="store directory (default: temporary)")
    args = parser.parse_args()
    with AgentMemory(args.path) as memory:
        graph = StateGraph(State)
        graph.add_node("respond", respond)
        graph.add_edge(START, "respond")
        graph.add_edge("respond", END)
        app = graph.compile(checkpointer=InMemorySaver(), store=AgentMemStore(memory))

        conversations = [
            ("thread-1", "I am allergic to peanuts."),
            ("thread-1", "My daughter's name is Maya."),
            ("thread-2", "What am I allergic to?"),  # a new thread, the same user
            ("thread-2", "What is my daughter called?"),
        ]
        for thread, message in conversations:
            config = {"configurable": {"thread_id": thread}}
            out = app.invoke({"user_id": "u-1", "message": message, "reply": ""}, config)
            print(f"[{thread}] user: {message}\n[{thread}] bot:  {out['reply']}")

        bank = memory.bank("users")  # the store's items are memories of bank "users"
        print(f"bank 'users' holds {bank.stats()['memories']} memories tagged u-1")


if __name__ == "__main__":
    main()
