"""The collaborators and stores one ``AgentMemory`` shares between its banks."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from agentmem.config import BankConfig, EngineConfig
from agentmem.models.cosine import CosineScale
from agentmem.protocols import Embedder, Extractor, LanguageModel, Reranker
from agentmem.retain.entity_cache import catch_up_index, catch_up_resolver
from agentmem.retain.resolve import EntityResolver
from agentmem.retain.supersession import StoredStatements
from agentmem.store import changes
from agentmem.store.database import Database
from agentmem.store.dated_facts import DatedFacts
from agentmem.store.graph import MemoryGraph
from agentmem.store.keyword import KeywordIndex
from agentmem.store.keyword_mirror import KeywordMirrors
from agentmem.store.recall_rows import RecallRows
from agentmem.store.staged_vectors import StagedVectorStore

if TYPE_CHECKING:
    from agentmem.consolidate.worker import ConsolidationWorker

# The bank (version, access count moves) of the call running in this context
# (Engine.one_version_read).
_CALL_VERSIONS: ContextVar[dict[str, tuple[int, int]] | None] = ContextVar(
    "call_versions", default=None
)


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
    # The per-bank mirrors of the store, each loaded on first use and kept at the bank's
    # current version (store/changes.py): a write updates them in place (or drops them), a
    # write through another process is caught up from the change log at the next use.
    # Entity indexes (retain/link.py): used and updated under the write lock.
    entity_indexes: dict[str, object] = field(default_factory=dict)
    entity_lock: threading.Lock = field(default_factory=threading.Lock)
    # Compact mirrors of the memory graph (store/graph.py), read by recall.
    graphs: dict[str, MemoryGraph] = field(default_factory=dict)
    # Dated facts in time order (store/dated_facts.py), used by retain under the write lock.
    dated_facts: dict[str, DatedFacts] = field(default_factory=dict)
    # The stored statements supersession has read (retain/supersession.py), used under the
    # write lock; they may hold deleted rows, which supersession looks up again.
    stored_statements: dict[str, StoredStatements] = field(default_factory=dict)
    # Resolvers carrying the bank's entity corrections (retain/corrections.py).
    resolvers: dict[str, EntityResolver] = field(default_factory=dict)
    # The banks' settings (MemoryBank.config).
    configs: dict[str, BankConfig] = field(default_factory=dict)
    # The MemoryBank handles AgentMemory.bank() hands out (each holds the bank's collection).
    handles: dict[str, Any] = field(default_factory=dict)
    # The embedder's cosines on MiniLM's scale, which recall and retain thresholds read
    # (models/cosine.py); set from ``embedder`` when the engine is built.
    cosine_scale: CosineScale = field(init=False)
    # The offline reranker ``recall(rerank=False)`` falls back to; None: ``reranker`` is it.
    offline_reranker: Reranker | None = None
    # The LLM path: set when AgentMemory(llm=...) is given.
    llm: LanguageModel | None = None
    consolidator: ConsolidationWorker | None = None
    # Per-bank newest mention time, read by every recall: a max() over the bank's rows costs
    # ~17 ms at 100k memories. Kept with the bank version it was read at.
    _last_mentions: dict[str, tuple[int, datetime | None]] = field(default_factory=dict)
    # (mirror, bank) -> the bank version the mirror reflects; mirrors are the attributes
    # named in _MIRRORS.
    _mirror_versions: dict[tuple[str, str], int] = field(default_factory=dict)
    _cache_lock: threading.Lock = field(default_factory=threading.Lock)
    # Per-bank keyword postings (store/keyword_mirror.py) and candidate rows and vectors
    # (store/recall_rows.py) in process, kept at bank_version; None when recall reads them
    # from the store (config, or a store it does not mirror).
    keyword_mirrors: KeywordMirrors | None = field(init=False, default=None)
    recall_rows: RecallRows | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.cosine_scale = CosineScale(self.embedder)
        if self.config.in_process_recall:
            self.keyword_mirrors = KeywordMirrors(
                self.db, self.config.context_weight, self.bank_version
            )
            self.recall_rows = RecallRows(
                self.db, self.vectors, self.bank_version, self.bank_accesses
            )

    def bank_version(self, bank_id: str, cur: Any = None) -> int:
        """The bank's current version (store/changes.py): a dict read on a store only this
        process writes, one indexed read on a shared one (through ``cur`` if given); inside
        :meth:`one_version_read` without ``cur``, the version read at the call's start."""
        if cur is None:
            pinned = _CALL_VERSIONS.get()
            if pinned is not None and bank_id in pinned:
                return pinned[bank_id][0]
        return changes.bank_version(self.db, bank_id, cur)

    def bank_accesses(self, bank_id: str) -> int:
        """How often the bank's access counts moved (``changes.count_accesses``), as read
        with the call's version inside :meth:`one_version_read`."""
        pinned = _CALL_VERSIONS.get()
        if pinned is not None and bank_id in pinned:
            return pinned[bank_id][1]
        return changes.bank_state(self.db, bank_id)[1]

    @contextmanager
    def one_version_read(self, bank_id: str) -> Iterator[None]:
        """Run a read-only call (a recall) against one read of the bank's version (and of its
        access count moves): every mirror it uses is checked against that version (one
        indexed read per call on a shared store, not one per mirror). A write committed
        meanwhile is seen by the next call, as it would be had it committed a moment later.
        Worker threads of the call see the version when run in a copy of the caller's context
        (``contextvars.copy_context``).
        """
        pinned = _CALL_VERSIONS.get()
        if pinned is not None and bank_id in pinned:
            yield
            return
        state = changes.bank_state(self.db, bank_id)
        token = _CALL_VERSIONS.set({**(pinned or {}), bank_id: state})
        try:
            yield
        finally:
            _CALL_VERSIONS.reset(token)

    def last_mention(self, bank_id: str) -> datetime | None:
        """When the bank's newest memory was mentioned (naive UTC), None for an empty bank."""
        version = self.bank_version(bank_id)  # before the read: a later write is seen next time
        cached = self._last_mentions.get(bank_id)
        if cached is not None and cached[0] == version:
            return cached[1]
        value = self.db.fetchall(
            "SELECT max(mentioned_at) FROM memories WHERE bank_id = ?", [bank_id]
        )[0][0]
        with self._cache_lock:
            self._last_mentions[bank_id] = (version, value)
        return value

    def mirror(self, name: str, bank_id: str, source: Any = None) -> Any:
        """The bank's mirror ``name`` ("graphs", "dated_facts", ...) at the bank's current
        version, or None when it is not loaded (or cannot catch up: it is dropped then).

        A mirror behind the bank replays the change log through its catch-up (``_MIRRORS``),
        reading the store through ``source``: a write's cursor inside its transaction, else
        the database.
        """
        value = getattr(self, name).get(bank_id)
        if value is None:
            return None
        have = self._mirror_versions.get((name, bank_id))
        if have is not None and have == self.bank_version(bank_id, source):
            return value
        reader = self.db.cursor() if source is None else source
        log = None if have is None else changes.changes_since(self.db, bank_id, have, source)
        if (
            log is None
            or any(c.kind in changes.RELOAD_KINDS for c in log)
            or not _MIRRORS[name](reader, bank_id, value, log)
        ):
            self.drop_mirror(name, bank_id)
            return None
        if log:
            self._mirror_versions[(name, bank_id)] = log[-1].version
        return value

    def keep_mirror(self, name: str, bank_id: str, value: Any, version: int) -> None:
        """Cache a mirror loaded from the store at ``version`` (read before loading it)."""
        getattr(self, name)[bank_id] = value
        self._mirror_versions[(name, bank_id)] = version

    def drop_mirror(self, name: str, bank_id: str) -> None:
        """Forget a mirror (the next use loads it again)."""
        getattr(self, name).pop(bank_id, None)
        self._mirror_versions.pop((name, bank_id), None)

    def drop_mirrors(self, bank_id: str) -> None:
        """Forget every mirror of a bank (its rows were all rewritten)."""
        for name in _MIRRORS:
            self.drop_mirror(name, bank_id)

    def begin_write(self, cur: Any, bank_id: str) -> int:
        """First step of a write transaction to a bank: lock the bank against other writers
        (store/changes.py ``lock_bank``) and bring its loaded mirrors up to the version it
        has, so the write can update them in place. Returns that version."""
        version = changes.lock_bank(self.db, cur, bank_id)
        for name in _MIRRORS:
            if self._mirror_versions.get((name, bank_id), version) != version:
                self.mirror(name, bank_id, cur)
        return version

    @contextmanager
    def bank_held(self, bank_id: str) -> Iterator[None]:
        """Hold the bank against every other writer for a block that reads the bank, decides
        and writes (rebuilding a profile from the facts): a second writer waits, then reads
        what the first one wrote.

        The block's writes run as usual (each its own transaction, or a savepoint of this
        one). In one process the write lock already excludes every writer of the store file;
        on a shared store the block is one transaction that first locks the bank
        (:meth:`begin_write`), so its reads and writes commit together or not at all.
        """
        with self.db.write_lock:
            if changes.is_local(self.db):
                yield
                return
            try:
                with self.db.transaction() as cur:
                    self.begin_write(cur, bank_id)
                    yield
            except BaseException:
                # The block's writes told the mirrors versions that rolled back with it.
                self.drop_mirrors(bank_id)
                raise

    def bank_changed(self, bank_id: str, version: int | None) -> None:
        """After a write to a bank: ``version`` is what its committed change got
        (``record_change``), None if it rolled back or wrote nothing.

        The write updated in place, or dropped, every mirror it changed, from the version
        ``begin_write`` brought them to: those are now at ``version``.
        """
        if version is None:
            return
        changes.published(self.db, bank_id, version)
        with self._cache_lock:
            for name in _MIRRORS:
                key = (name, bank_id)
                if self._mirror_versions.get(key) == version - 1:
                    self._mirror_versions[key] = version

    def close(self) -> None:
        """Stop the worker threads and close both stores."""
        if self.consolidator is not None:
            self.consolidator.stop()
        self.executor.shutdown(wait=True)
        self.embed_executor.shutdown(wait=True)
        self.keyword.close()
        if self.recall_rows is not None:
            self.recall_rows.close()  # its vector reads, before the vector store closes
        self.vectors.close()
        self.db.close()


#: Each mirror's catch-up: ``(reader, bank_id, mirror, changes) -> bool`` (False: reload it).
_MIRRORS: dict[str, Callable[[Any, str, Any, list[changes.Change]], bool]] = {
    "graphs": lambda cur, bank_id, graph, log: graph.catch_up(cur, bank_id, log),
    "dated_facts": lambda cur, bank_id, dated, log: dated.catch_up(cur, bank_id, log),
    "entity_indexes": catch_up_index,
    "resolvers": catch_up_resolver,
    "configs": lambda cur, bank_id, config, log: not any(c.kind == "configure" for c in log),
    "handles": lambda cur, bank_id, handle, log: True,  # dropped by import and delete_bank
    "stored_statements": lambda cur, bank_id, statements, log: statements.catch_up(log),
}
