"""agentmem long-term memory as a block of LlamaIndex's ``Memory``."""

from llama_index.memory.agentmem.base import AgentMemMemoryBlock

__all__ = ["AgentMemMemoryBlock"]
