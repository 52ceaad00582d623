"""agentmem for LangChain and LangGraph: a retriever, memory tools and a LangGraph store.

Example::

    from agentmem import AgentMemory
    from langchain_agentmem import AgentMemRetriever, AgentMemStore, create_memory_tools

    mem = AgentMemory("./memdata")
    retriever = AgentMemRetriever(bank=mem.bank("assistant"), k=5)
    tools = create_memory_tools(mem.bank("assistant"))
    store = AgentMemStore(mem)
"""

from langchain_agentmem.retrievers import AgentMemRetriever
from langchain_agentmem.store import AgentMemStore
from langchain_agentmem.tools import create_memory_tools

__all__ = ["AgentMemRetriever", "AgentMemStore", "create_memory_tools"]
