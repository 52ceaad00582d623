"""Vectors of committed facts, written to Chroma in batches rather than one call per retain.

A Chroma upsert has a large fixed cost (tens of milliseconds, whatever its size), so a bulk
retain of twenty messages per call spent as long in Chroma as in the embedding model. Retain
now *stages* its vectors here after its DuckDB transaction commits, and they go to Chroma
together once ``batch_size`` are staged.

Nothing acknowledged can be lost or missed by a search:

* a staged fact's vector journal entry (``store/reconcile.py``) is committed with the fact and
  cleared only after the batch is in Chroma, so a crash before the flush re-embeds it on open;
* a staged vector goes at once into its collection's exact in-process copy
  (``store/flat_index.py``) when one is held, so a search or read the copy answers finds it
  without a flush, with the arithmetic it will have once written: a bank's scores do not
  move when its stage is written (by its own flush or another bank's forget), and a recall
  beside a retaining thread does not wait for Chroma. Every other read of the vectors (a
  collection without a held copy, ids, counts) and every delete or drop flushes first, so a
  recall sees a fact as soon as its retain returns, and a forget never races a staged
  vector; retain's own neighbour search for semantic links (``query_many``) searches the
  staged vectors beside Chroma instead: a flush per retain would undo the batching;
* the store flushes before it records a clean close.

A flush takes the database's write lock before its own, the same order a retain takes them,
so a recall that flushes cannot deadlock with a retain.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from agentmem.errors import StorageError
from agentmem.models.embedder import unit_rows
from agentmem.store.database import Database
from agentmem.store.records import insert_rows, json_list, memories_by_id, sql_list
from agentmem.store.vectors import VectorStore

log = logging.getLogger("agentmem")

DEFAULT_BATCH_SIZE = 256
#: The vector journal op of a deleted bank's collection (its ``memory_id`` is the collection).
DROP = "drop"

T = TypeVar("T")
Where = Mapping[str, Any] | None


@dataclass(frozen=True, slots=True)
class _Staged:
    bank_id: str
    collection: str
    ids: list[str]
    vectors: np.ndarray
    metadatas: list[Mapping[str, str | int | float | bool]]


def _newest(
    staged: Sequence[_Staged], collection: str
) -> tuple[list[str], np.ndarray, list[Mapping[str, str | int | float | bool]]]:
    """The staged vectors of one collection, one per id: a fact staged twice before a flush
    (an observation rewritten right after its retain) keeps its later vector."""
    newest: dict[str, tuple[np.ndarray, Mapping[str, str | int | float | bool]]] = {}
    for s in staged:
        if s.collection == collection:
            for memory_id, vector, metadata in zip(s.ids, s.vectors, s.metadatas, strict=True):
                newest.pop(memory_id, None)  # re-inserted last: the order of the later stage
                newest[memory_id] = (vector, metadata)
    return list(newest), np.stack([v for v, _ in newest.values()]), [m for _, m in newest.values()]


class StagedVectorStore:
    """A :class:`VectorStore` whose retain writes are batched; reads flush them first.

    Args:
        store: Where the vectors end up.
        db: The database whose vector journal records the staged writes.
        batch_size: Staged vectors that trigger a flush.
    """

    #: Writes go to Chroma, outside any transaction of the database (the journal covers them).
    writes_in_transaction = False

    def __init__(
        self, store: VectorStore, db: Database, *, batch_size: int = DEFAULT_BATCH_SIZE
    ) -> None:
        self._store = store
        self._db = db
        self._batch_size = batch_size
        self._staged: list[_Staged] = []
        self._count = 0
        # Collections with staged vectors that their copy does not hold (none was held, or
        # it outgrew the copies' room): reads of these flush first.
        self._uncopied: set[str] = set()
        self._lock = threading.Lock()

    @property
    def embedded(self) -> bool:
        """Whether the vectors live in an embedded Chroma (not a server)."""
        return self._store.embedded

    @property
    def staged(self) -> int:
        """Vectors waiting for the next flush."""
        return self._count

    def create_collection(self, collection: str, dimension: int) -> None:
        """Nothing to do ahead: Chroma creates a collection on its first write."""

    # The transaction's part of a vector write: writers call these inside the transaction
    # that stores or deletes the rows, and the methods below (stage, delete, drop) once it
    # has committed. Here the transaction journals what Chroma is to do (store/reconcile.py
    # finishes it after a crash); a store whose vectors live in the database itself writes
    # them in the transaction instead.

    def write_in(
        self,
        cur: Any,  # noqa: ANN401
        bank_id: str,
        collection: str,
        ids: Sequence[str],
        vectors: np.ndarray,
        metadatas: Sequence[Mapping[str, str | int | float | bool]],
    ) -> None:
        """In the caller's transaction: journal the vectors :meth:`stage` will write."""
        insert_rows(cur, "vector_journal", [(i, bank_id, "add") for i in ids])

    def delete_in(self, cur: Any, bank_id: str, collection: str, ids: Sequence[str]) -> None:  # noqa: ANN401
        """In the caller's transaction: journal the deletion :meth:`delete` will do."""
        insert_rows(cur, "vector_journal", [(i, bank_id, "delete") for i in ids])

    def drop_in(self, cur: Any, bank_id: str, collection: str) -> None:  # noqa: ANN401
        """In the caller's transaction: journal the drop :meth:`drop` will do."""
        insert_rows(cur, "vector_journal", [(collection, bank_id, DROP)])

    def stage(
        self,
        bank_id: str,
        collection: str,
        ids: Sequence[str],
        vectors: np.ndarray,
        metadatas: Sequence[Mapping[str, str | int | float | bool]],
    ) -> None:
        """Queue the vectors of committed, journalled facts; flush when the batch is full."""
        if not ids:
            return
        with self._db.write_lock, self._lock:
            self._staged.append(_Staged(bank_id, collection, list(ids), vectors, list(metadatas)))
            self._count += len(ids)
            if not self._store.copy_staged(collection, ids, vectors, metadatas):
                self._uncopied.add(collection)
        if self._count >= self._batch_size:
            try:
                self.flush()
            except StorageError as exc:
                # The caller's facts are committed and journalled, and the next read flushes
                # them (it raises if Chroma still fails): the call that filled the batch
                # succeeded. A delete or a close retries too.
                log.warning("vector write failed; %d vectors stay staged: %s", self._count, exc)

    def flush(self) -> None:
        """Write every staged vector to Chroma, then clear their journal entries.

        The vectors stay staged until Chroma holds them: a read that finds the stage empty
        (its unlocked peek) knows they are in Chroma, not in flight in another thread's flush.
        """
        if not self._staged:  # unlocked peek: a stage() that has not returned may be missed
            return
        with self._db.write_lock, self._lock:
            staged = self._staged
            if not staged:  # another thread's flush wrote them while this one waited
                return
            live = self._held(staged)
            for collection in dict.fromkeys(s.collection for s in staged):
                ids, vectors, metadatas = _newest(staged, collection)
                keep = [k for k, memory_id in enumerate(ids) if memory_id in live]
                # Should this raise, everything stays staged: the next flush retries (upserts
                # are idempotent), and the journal still holds them should the process die.
                self._store.upsert(
                    collection, [ids[k] for k in keep], vectors[keep], [metadatas[k] for k in keep]
                )
                self._store.uncopy(collection, [i for i in ids if i not in live])
            self._db.execute(
                f"DELETE FROM vector_journal WHERE list_contains({sql_list('ids')}, memory_id)",
                {"ids": json_list(i for s in staged for i in s.ids)},
            )
            self._staged, self._count = [], 0
            self._uncopied.clear()

    def _read(self, collection: str, read: Callable[[], T], where: Where = None) -> T:
        """``read()`` of the store, without a flush when the collection's held copy answers
        it and holds every vector staged for it; else after a flush."""
        copy = self._store.held_copy(collection)
        if (
            copy is not None
            and collection not in self._uncopied
            and self._store.copy_answers(where)
        ):
            found = read()
            if self._store.held_copy(collection) is copy:  # not outgrown meanwhile
                return found
        self.flush()
        return read()

    def _held(self, staged: Sequence[_Staged]) -> set[str]:
        """The staged ids whose memory the store holds, in the collection they were staged
        for. Another ``AgentMemory`` of this process on the same file may have deleted a
        memory whose vector is staged here (its delete flushes only its own stage), or the
        whole bank, even imported it anew with the same ids into a new collection: such a
        vector must not reach Chroma (its old collection is gone)."""
        by_bank: dict[tuple[str, str], list[str]] = {}
        for s in staged:
            by_bank.setdefault((s.bank_id, s.collection), []).extend(s.ids)
        current: dict[str, str | None] = {}  # bank id -> its collection now (None: deleted)
        for bank_id, _ in by_bank:
            if bank_id not in current:
                rows = self._db.fetchall(
                    "SELECT collection FROM banks WHERE bank_id = ?", [bank_id]
                )
                current[bank_id] = rows[0][0] if rows else None
        return {
            row[0]
            for (bank_id, collection), ids in by_bank.items()
            if current[bank_id] == collection
            for row in memories_by_id(self._db, bank_id, ids, "m.id")
        }

    # Everything else is the VectorStore's, after a flush.

    def upsert(
        self,
        collection: str,
        ids: Sequence[str],
        vectors: np.ndarray,
        metadatas: Sequence[Mapping[str, str | int | float | bool]],
    ) -> None:
        """Write vectors now (see :meth:`VectorStore.upsert`)."""
        self.flush()
        self._store.upsert(collection, ids, vectors, metadatas)

    def query(
        self,
        collection: str,
        vector: np.ndarray,
        n: int,
        where: Mapping[str, Any] | None = None,
        *,
        nearest_only: bool = False,
    ) -> list[tuple[str, float]]:
        """See :meth:`VectorStore.query`."""
        return self._read(
            collection,
            lambda: self._store.query(collection, vector, n, where, nearest_only=nearest_only),
            where,
        )

    def query_many(
        self, collection: str, vectors: np.ndarray, n: int
    ) -> list[list[tuple[str, float]]]:
        """Nearest ``n`` (id, cosine) of each vector among Chroma's and the staged vectors.

        Does not flush (see the module docstring); staged vectors are compared exactly.
        """
        found = self._store.query_many(collection, vectors, n)
        with self._lock:
            staged = [s for s in self._staged if s.collection == collection]
        if not staged or len(vectors) == 0:
            return found
        ids = [i for s in staged for i in s.ids]
        # einsum, not a BLAS matmul: a product this small (20 × 256 rows) starts OpenBLAS's
        # threads, which on a busy 2-core machine took 1-10 ms a call instead of 0.1 ms.
        cosines = np.einsum(
            "ik,jk->ij",
            unit_rows(np.asarray(vectors, dtype=np.float32)),
            unit_rows(np.concatenate([s.vectors for s in staged])),
        )
        merged: list[list[tuple[str, float]]] = []
        for row, hits in zip(cosines, found, strict=True):
            best = dict(hits)
            for j in np.argsort(-row)[:n]:
                best[ids[j]] = max(best.get(ids[j], -1.0), float(row[j]))
            merged.append(sorted(best.items(), key=lambda pair: pair[1], reverse=True)[:n])
        return merged

    def holds_copy(self, collection: str) -> bool:
        """See :meth:`VectorStore.holds_copy` (staged vectors are in the copy, or reach it
        when flushed)."""
        return self._store.holds_copy(collection)

    def get_vectors(self, collection: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """See :meth:`VectorStore.get_vectors`."""
        return self._read(collection, lambda: self._store.get_vectors(collection, ids))

    def ids(self, collection: str) -> set[str]:
        """See :meth:`VectorStore.ids`."""
        self.flush()
        return self._store.ids(collection)

    def count(self, collection: str) -> int:
        """See :meth:`VectorStore.count`."""
        self.flush()
        return self._store.count(collection)

    def dimension(self, collection: str) -> int | None:
        """See :meth:`VectorStore.dimension`."""
        self.flush()
        return self._store.dimension(collection)

    def delete(self, collection: str, ids: Sequence[str]) -> None:
        """See :meth:`VectorStore.delete`."""
        self.flush()
        self._store.delete(collection, ids)

    def drop(self, collection: str) -> None:
        """See :meth:`VectorStore.drop`."""
        self.flush()
        self._store.drop(collection)

    def unindexed(self, collections: Sequence[str]) -> list[str]:
        """None: Chroma keeps an index per collection, built with it (PostgreSQL keeps a
        partial index per bank's collection that can go missing)."""
        return []

    def build_missing_indexes(self) -> list[str]:
        """Nothing to build (see :meth:`unindexed`)."""
        return []

    def collection(self, name: str) -> Any:
        """The Chroma collection itself, with nothing staged (benchmarks query it bare)."""
        self.flush()
        return self._store._collection(name)

    def close(self) -> None:
        """Flush, then release the client."""
        try:
            self.flush()
        finally:
            self._store.close()
