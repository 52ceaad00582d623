"""agentmem recall as a LlamaIndex retriever."""

from llama_index.retrievers.agentmem.base import AgentMemRetriever

__all__ = ["AgentMemRetriever"]
