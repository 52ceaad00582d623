"""The collaborators and stores one ``AgentMemory`` shares between its banks."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agentmem.config import EngineConfig
from agentmem.protocols import Embedder, Extractor, LanguageModel, Reranker
from agentmem.retain.resolve import EntityResolver
from agentmem.store.database import Database
from agentmem.store.keyword import KeywordIndex
from agentmem.store.vectors import VectorStore

if TYPE_CHECKING:
    from agentmem.consolidate.worker import ConsolidationWorker


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
    # The offline reranker ``recall(rerank=False)`` falls back to; None: ``reranker`` is it.
    offline_reranker: Reranker | None = None
    # The LLM path: set when AgentMemory(llm=...) is given.
    llm: LanguageModel | None = None
    consolidator: ConsolidationWorker | None = None

    def close(self) -> None:
        """Stop the worker threads and close both stores."""
        if self.consolidator is not None:
            self.consolidator.stop()
        self.executor.shutdown(wait=True)
        self.vectors.close()
        self.db.close()
