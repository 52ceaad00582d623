"""A LlamaIndex chat engine with agentmem as long-term memory, and a query engine, offline.

``AgentMemMemoryBlock`` retains every turn and injects the memories recalled for the latest
user message; ``AgentMemRetriever`` feeds a query engine. LlamaIndex's ``MockLLM`` answers with
the prompt it received, so you can see the recalled memories reach the LLM; use any real LLM
in its place.

    python cookbook/llamaindex_chat.py [--path ./memdata]
"""

from __future__ import annotations

import argparse

from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.llms import MockLLM
from llama_index.core.memory import Memory
from llama_index.core.query_engine import RetrieverQueryEngine

from agentmem import AgentMemory
from llama_index.memory.agentmem import AgentMemMemoryBlock
from llama_index.retrievers.agentmem import AgentMemRetriever


def chat_engine(bank, session_id: str) -> SimpleChatEngine:
    # MockLLM's replies are echoes of its prompt, not facts: retain only the user's turns here.
    # With a real LLM keep the default roles ("user", "assistant").
    block = AgentMemMemoryBlock(bank=bank, top_k=3, roles=("user",))
    memory = Memory.from_defaults(session_id=session_id, memory_blocks=[block])
    return SimpleChatEngine.from_defaults(llm=MockLLM(), memory=memory)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--path", default=None, help="store directory (default: temporary)")
    args = parser.parse_args()
    with AgentMemory(args.path) as memory:
        bank = memory.bank("llamaindex-chat")

        monday = chat_engine(bank, "monday")
        monday.chat("I'm planning a trip to Kyoto in April.")
        monday.chat("My budget for the hotel is 150 euros a night.")

        tuesday = chat_engine(bank, "tuesday")  # a new session: short-term memory is empty
        prompt_seen_by_llm = str(tuesday.chat("What was my hotel budget for the trip?"))
        print("The LLM's prompt in Tuesday's session (MockLLM echoes it):")
        print(prompt_seen_by_llm)

        engine = RetrieverQueryEngine.from_args(
            AgentMemRetriever(bank=bank, similarity_top_k=2), llm=MockLLM()
        )
        response = engine.query("Where is the trip going?")
        print("Query engine sources:")
        for node in response.source_nodes:
            print(f"  {node.score:.2f}  {node.node.get_content()}")


if __name__ == "__main__":
    main()
