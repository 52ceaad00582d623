"""agentmem's memory tools as a LlamaIndex tool spec."""

from llama_index.tools.agentmem.base import AgentMemToolSpec

__all__ = ["AgentMemToolSpec"]
