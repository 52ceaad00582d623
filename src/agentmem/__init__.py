"""agentmem: long-term memory for LLM agents, fully offline by default.

Quickstart::

    import agentmem

    with agentmem.AgentMemory("./memdata") as mem:
        bank = mem.bank("support-bot")
        bank.retain([{"role": "user", "name": "Alice", "content": "I moved to Berlin."}],
                    mentioned_at="2025-01-15T10:00:00Z")
        for hit in bank.recall("Where does Alice live?"):
            print(hit.score, hit.memory.text)
"""

from agentmem.bank import MemoryBank
from agentmem.config import (
    BankConfig,
    EngineConfig,
    FusionWeights,
    GraphConfig,
    Limits,
    RecallConfig,
    ScoringWeights,
)
from agentmem.errors import (
    AgentMemError,
    ExtractionError,
    InvalidInputError,
    LLMError,
    ModelError,
    NotAvailableError,
    NotFoundError,
    StorageError,
    StoreLockedError,
)
from agentmem.llm.client import LLMSettings
from agentmem.memory import AgentMemory
from agentmem.protocols import Embedder, Extractor, LanguageModel, Reranker
from agentmem.store.integrity import IntegrityReport
from agentmem.store.reconcile import VectorRepair
from agentmem.types import (
    Entity,
    Memory,
    RecallHit,
    RecallResult,
    Reflection,
    ReflectPrompt,
    RetainResult,
    TimeRange,
)

__version__ = "0.1.0"

__all__ = [
    "AgentMemError",
    "AgentMemory",
    "BankConfig",
    "Embedder",
    "EngineConfig",
    "Entity",
    "ExtractionError",
    "Extractor",
    "FusionWeights",
    "GraphConfig",
    "IntegrityReport",
    "InvalidInputError",
    "LanguageModel",
    "Limits",
    "LLMError",
    "LLMSettings",
    "Memory",
    "MemoryBank",
    "ModelError",
    "NotAvailableError",
    "NotFoundError",
    "RecallConfig",
    "RecallHit",
    "RecallResult",
    "Reflection",
    "ReflectPrompt",
    "Reranker",
    "RetainResult",
    "ScoringWeights",
    "StorageError",
    "StoreLockedError",
    "TimeRange",
    "VectorRepair",
]
