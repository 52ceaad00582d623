"""The collaborators and stores one ``AgentMemory`` shares between its banks."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from agentmem.config import EngineConfig
from agentmem.protocols import Embedder, Extractor, Reranker
from agentmem.retain.resolve import EntityResolver
from agentmem.store.database import Database
from agentmem.store.graph import MemoryGraph
from agentmem.store.keyword import KeywordIndex
from agentmem.store.vectors import VectorStore


@dataclass
class Engine:
    """Everything the retain and recall pipelines need, built once by ``AgentMemory``."""

    db: Database
    vectors: VectorStore
    keyword: KeywordIndex
    embedder: Embedder
    extractor: Extractor
    reranker: Reranker
    resolver: EntityResolver
    config: EngineConfig
    executor: ThreadPoolExecutor
    # Per-bank entity indexes, loaded on first use and kept current under the write lock.
    entity_indexes: dict[str, object] = field(default_factory=dict)
    entity_lock: threading.Lock = field(default_factory=threading.Lock)
    # Per-bank networkx mirrors of the memory graph (store/graph.py), loaded on first use.
    graphs: dict[str, MemoryGraph] = field(default_factory=dict)
    # Per-bank resolvers carrying the bank's entity corrections (retain/corrections.py).
    resolvers: dict[str, EntityResolver] = field(default_factory=dict)

    def close(self) -> None:
        """Stop the worker threads and close both stores."""
        self.executor.shutdown(wait=True)
        self.vectors.close()
        self.db.close()
