"""The collaborators and stores one ``AgentMemory`` shares between its banks."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from agentmem.config import EngineConfig
from agentmem.protocols import Embedder, Extractor, LanguageModel, Reranker
from agentmem.retain.resolve import EntityResolver
from agentmem.store.database import Database
from agentmem.store.dated_facts import DatedFacts
from agentmem.store.graph import MemoryGraph
from agentmem.store.keyword import KeywordIndex
from agentmem.store.keyword_mirror import KeywordMirrors
from agentmem.store.staged_vectors import StagedVectorStore

if TYPE_CHECKING:
    from agentmem.consolidate.worker import ConsolidationWorker


@dataclass
class Engine:
    """Everything the retain and recall pipelines need, built once by ``AgentMemory``."""

    db: Database
    vectors: StagedVectorStore
    keyword: KeywordIndex
    embedder: Embedder
    extractor: Extractor
    reranker: Reranker
    resolver: EntityResolver
    config: EngineConfig
    executor: ThreadPoolExecutor
    # Retain's embedding runs here, not on ``executor``: a retain waits for it while holding
    # the write lock, and recall strategies on ``executor`` may wait for that lock (a vector
    # read flushes staged vectors under it), so sharing one pool could fill it with waiters.
    embed_executor: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="agentmem-embed"
        )
    )
    # Per-bank entity indexes, loaded on first use and kept current under the write lock.
    entity_indexes: dict[str, object] = field(default_factory=dict)
    entity_lock: threading.Lock = field(default_factory=threading.Lock)
    # Per-bank networkx mirrors of the memory graph (store/graph.py), loaded on first use.
    graphs: dict[str, MemoryGraph] = field(default_factory=dict)
    # Per-bank dated facts in time order (store/dated_facts.py): dropped by every write,
    # handed back by retain with its new facts once it has committed.
    dated_facts: dict[str, DatedFacts] = field(default_factory=dict)
    # Per-bank resolvers carrying the bank's entity corrections (retain/corrections.py).
    resolvers: dict[str, EntityResolver] = field(default_factory=dict)
    # The offline reranker ``recall(rerank=False)`` falls back to; None: ``reranker`` is it.
    offline_reranker: Reranker | None = None
    # The LLM path: set when AgentMemory(llm=...) is given.
    llm: LanguageModel | None = None
    consolidator: ConsolidationWorker | None = None
    # Per-bank newest mention time, read by every recall: a max() over the bank's rows costs
    # ~17 ms at 100k memories. A write bumps the bank's version and drops the value; a reader
    # keeps what it computed only if no write happened meanwhile.
    _last_mentions: dict[str, tuple[int, datetime | None]] = field(default_factory=dict)
    _versions: dict[str, int] = field(default_factory=dict)
    _cache_lock: threading.Lock = field(default_factory=threading.Lock)
    # Per-bank keyword postings in process (store/keyword_mirror.py), kept at bank_version.
    keyword_mirrors: KeywordMirrors = field(init=False)

    def __post_init__(self) -> None:
        self.keyword_mirrors = KeywordMirrors(
            self.db, self.config.context_weight, self.bank_version
        )

    def bank_version(self, bank_id: str) -> int:
        """The bank's version: it moves after every committed write to the bank, so an
        in-process mirror read at one version is current while it has not moved."""
        with self._cache_lock:
            return self._versions.get(bank_id, 0)

    def last_mention(self, bank_id: str) -> datetime | None:
        """When the bank's newest memory was mentioned (naive UTC), None for an empty bank."""
        with self._cache_lock:
            version = self._versions.get(bank_id, 0)
            cached = self._last_mentions.get(bank_id)
        if cached is not None and cached[0] == version:
            return cached[1]
        value = self.db.fetchall(
            "SELECT max(mentioned_at) FROM memories WHERE bank_id = ?", [bank_id]
        )[0][0]
        with self._cache_lock:
            if self._versions.get(bank_id, 0) == version:
                self._last_mentions[bank_id] = (version, value)
        return value

    def bank_changed(self, bank_id: str) -> None:
        """Forget what is cached about a bank's rows (call after every write to it)."""
        with self._cache_lock:
            self._versions[bank_id] = self._versions.get(bank_id, 0) + 1
            self._last_mentions.pop(bank_id, None)
            self.dated_facts.pop(bank_id, None)

    def close(self) -> None:
        """Stop the worker threads and close both stores."""
        if self.consolidator is not None:
            self.consolidator.stop()
        self.executor.shutdown(wait=True)
        self.embed_executor.shutdown(wait=True)
        self.keyword.close()
        self.vectors.close()
        self.db.close()
