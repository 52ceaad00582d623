"""An exact, in-process copy of an embedded Chroma collection's vectors, searched with numpy.

A top-60 HNSW query through Chroma's Python API costs ~2 ms at 10k vectors, most of it
bindings and bookkeeping; a top 60 by one matrix-vector product over the same 10k vectors costs
~0.6 ms and is exact (after updates, Chroma's approximate search can miss a stored vector). So
the embedded vector store (``store/vectors.py``), which makes every write of its collections
(one process owns an embedded store), keeps a copy of each collection of at most
:data:`FLAT_MAX` vectors it searches, reading it whole on the first search and keeping it at
every later upsert, delete and drop. Collections past that size, or that would take the copies
past :data:`FLAT_TOTAL`, are searched by Chroma as before.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from agentmem.store.metadata_filter import matches, numeric_column, passing

#: Largest collection held in process (a vector of 384 dimensions and its metadata: ~2 KiB).
FLAT_MAX = 25_000
#: Most vectors held over all collections (~200 MiB at 384 dimensions).
FLAT_TOTAL = 100_000

Metadata = Mapping[str, Any] | None


class FlatIndex:
    """One collection's vectors (rows of a matrix, as stored), their norms, ids and metadata;
    exact search.

    A deleted row takes the last row's place, so the first ``len(self)`` rows are the
    collection. All methods hold the index's lock: a search never sees half a write.
    """

    def __init__(self, ids: Sequence[str], vectors: np.ndarray, metadatas: Sequence[Metadata]):
        self._lock = threading.Lock()
        self._ids: list[str] = []
        self._row: dict[str, int] = {}
        self._metadatas: list[Metadata] = []
        self._raw = np.empty((max(16, len(ids)), vectors.shape[1]), dtype=np.float32)
        self._norms = np.empty(len(self._raw), dtype=np.float32)
        # key -> its values over the rows (metadata_filter.numeric_column), until a write
        self._columns: dict[str, np.ndarray | None] = {}
        self.upsert(ids, vectors, metadatas)

    def __len__(self) -> int:
        return len(self._ids)

    def upsert(
        self, ids: Sequence[str], vectors: np.ndarray, metadatas: Sequence[Metadata]
    ) -> None:
        """Add or replace these rows."""
        vectors = np.asarray(vectors, dtype=np.float32)
        norms = np.maximum(np.linalg.norm(vectors, axis=1), 1e-12)
        with self._lock:
            self._columns.clear()
            for memory_id, vector, norm, metadata in zip(
                ids, vectors, norms, metadatas, strict=True
            ):
                row = self._row.get(memory_id)
                if row is None:
                    row = len(self._ids)
                    if row == len(self._raw):
                        self._grow()
                    self._row[memory_id] = row
                    self._ids.append(memory_id)
                    self._metadatas.append(metadata)
                else:
                    self._metadatas[row] = metadata
                self._raw[row] = vector
                self._norms[row] = norm

    def delete(self, ids: Sequence[str]) -> None:
        """Remove these rows (absent ids are ignored)."""
        with self._lock:
            self._columns.clear()
            for memory_id in ids:
                row = self._row.pop(memory_id, None)
                if row is None:
                    continue
                last = len(self._ids) - 1
                if row != last:
                    moved = self._ids[last]
                    self._ids[row] = moved
                    self._metadatas[row] = self._metadatas[last]
                    self._raw[row] = self._raw[last]
                    self._norms[row] = self._norms[last]
                    self._row[moved] = row
                self._ids.pop()
                self._metadatas.pop()

    def vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vectors of ``ids`` as copies; an id the index lacks is not stored (it
        holds every vector of the collection) and is left out."""
        with self._lock:
            return {i: self._raw[row].copy() for i in ids if (row := self._row.get(i)) is not None}

    def nearest(
        self,
        query: np.ndarray,
        n: int,
        where: Mapping[str, Any] | None = None,
        *,
        within: int | None = None,
    ) -> list[tuple[str, float]]:
        """The ``n`` rows closest to ``query`` by cosine, as (id, cosine), best first; with
        ``where`` (a Chroma filter ``metadata_filter.can_match`` accepts), the closest whose
        metadata passes it, looked for among the ``within`` nearest (all rows when None)."""
        query = np.asarray(query, dtype=np.float32).reshape(-1)
        query = query / max(float(np.linalg.norm(query)), 1e-12)
        with self._lock:
            size = len(self._ids)
            if size == 0 or n <= 0:
                return []
            cosines = self._raw[:size] @ query
            np.divide(cosines, self._norms[:size], out=cosines)
            rows: np.ndarray | None = None  # every row
            if where:
                rows = np.arange(size)
                if within is not None and within < size:
                    rows = _best(cosines, rows, within)
                passed = passing(where, self._column, size)
                if passed is None:  # a value that is not a number: row by row
                    keep = [r for r in rows if matches(self._metadatas[r], where)]
                    rows = np.array(keep, dtype=np.int64)
                else:
                    rows = rows[passed[rows]]
            best = _best(cosines, rows, n)
            ids = self._ids
            return [(ids[r], c) for r, c in zip(best.tolist(), cosines[best].tolist(), strict=True)]

    def _column(self, key: str) -> np.ndarray | None:
        """One metadata key's values over the rows (held until the next write)."""
        if key not in self._columns:
            self._columns[key] = numeric_column(self._metadatas, key)
        return self._columns[key]

    def _grow(self) -> None:  # under the lock
        size = len(self._raw)
        raw = np.empty((size * 2, self._raw.shape[1]), dtype=np.float32)
        raw[:size] = self._raw
        norms = np.empty(size * 2, dtype=np.float32)
        norms[:size] = self._norms
        self._raw, self._norms = raw, norms


class FlatIndexes:
    """The flat indexes of a store's collections, within :data:`FLAT_MAX` each and
    :data:`FLAT_TOTAL` in all.

    A collection that does not fit is searched by Chroma and not read again while the store is
    open (until a held one is dropped): dropping the least recently searched instead would make
    recalls that alternate between large banks read a whole collection each time.
    """

    def __init__(self, *, most: int = FLAT_MAX, total: int = FLAT_TOTAL) -> None:
        self.most = most
        self._total = total
        self._held: dict[str, FlatIndex] = {}
        self._too_big: set[str] = set()  # too large, or no room: searched by Chroma
        self._writes: dict[str, int] = {}
        self._lock = threading.Lock()

    def get(self, collection: str) -> FlatIndex | None:
        """The collection's index if one is held."""
        with self._lock:
            return self._held.get(collection)

    def may_hold(self, collection: str) -> bool:
        """Whether an index of the collection may be built (it was not refused)."""
        with self._lock:
            return collection not in self._too_big

    def writes(self, collection: str) -> int:
        """Writes to the collection so far: an index read before a write is not kept."""
        with self._lock:
            return self._writes.get(collection, 0)

    def keep(self, collection: str, index: FlatIndex | None, writes: int) -> FlatIndex | None:
        """Hold ``index`` (None: the collection is too large) if no write came in since it
        was read and it fits; returns what is held."""
        with self._lock:
            if self._writes.get(collection, 0) != writes:
                return None
            if index is None or not self._fits(len(index)):
                self._too_big.add(collection)
                return None
            self._held[collection] = index
            return index

    def upsert(
        self,
        collection: str,
        ids: Sequence[str],
        vectors: np.ndarray,
        metadatas: Sequence[Metadata],
    ) -> bool:
        """Keep the collection's index (if held) at an upsert Chroma has made, or is to make
        (vectors staged for it); whether the index is held with them."""
        with self._lock:
            self._writes[collection] = self._writes.get(collection, 0) + 1
            index = self._held.get(collection)
            if index is None:
                return False
            index.upsert(ids, vectors, metadatas)
            del self._held[collection]
            if self._fits(len(index)):
                self._held[collection] = index
                return True
            self._too_big.add(collection)
            return False

    def delete(self, collection: str, ids: Sequence[str]) -> None:
        """Keep the collection's index (if held) at a delete Chroma has made."""
        with self._lock:
            self._writes[collection] = self._writes.get(collection, 0) + 1
            index = self._held.get(collection)
            if index is not None:
                index.delete(ids)

    def drop(self, collection: str) -> None:
        """Forget the collection (it was deleted)."""
        with self._lock:
            self._writes[collection] = self._writes.get(collection, 0) + 1
            if self._held.pop(collection, None) is not None:
                self._too_big.clear()  # room for those refused for want of it
            self._too_big.discard(collection)

    def clear(self) -> None:
        with self._lock:
            self._held.clear()
            self._too_big.clear()

    def _fits(self, size: int) -> bool:
        """Whether an index of ``size`` rows fits beside the others held (not counted)."""
        others = sum(len(i) for i in self._held.values())
        return size <= self.most and others + size <= self._total


def _best(cosines: np.ndarray, rows: np.ndarray | None, n: int) -> np.ndarray:
    """The ``n`` of ``rows`` (None: every row, without copying their numbers and cosines
    first) with the highest cosines, highest first."""
    if rows is None:
        size = len(cosines)
        rows = np.argpartition(cosines, size - n)[size - n :] if size > n else np.arange(size)
    elif len(rows) > n:
        rows = rows[np.argpartition(-cosines[rows], n - 1)[:n]]
    return rows[np.argsort(-cosines[rows], kind="stable")]
