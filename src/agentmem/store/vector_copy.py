"""A bank's stored vectors held whole in process, for the cosines recall measures.

Recall measures the query's cosine with every candidate the semantic arm did not return (a
keyword or graph hit: about half of the 50 a full recall reranks). Read from the vector store,
those cost a call of their own each recall — at 100k memories in Chroma ~1.5 ms, a fixed cost
and then one per id — whatever the process kept before, since a new query brings new
candidates. So a bank's first such read starts reading all of its vectors, in batches and on a
thread of its own, into one float32 matrix (1.5 KiB a memory at 384 dimensions: 147 MiB at
100k), and recall reads the store only for what the copy lacks: vectors not read yet, written
since the copy's ids were listed, or dropped.

A memory a change names (rewritten, forgotten) is dropped from the copy when the bank's copies
catch up with the change (``store/recall_rows.py``), and a batch read before a drop does not
bring it back: the copy never answers with a vector the store no longer holds.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence

import numpy as np

#: Vectors read from the store per call while loading (a Chroma read holds off writes to its
#: collection while it runs: ~0.2 s for 5,000 at 100k).
LOAD_BATCH = 5_000

Reader = Callable[[list[str]], dict[str, np.ndarray]]


class VectorCopy:
    """The stored vectors of a bank's memories (ids listed when the copy was made), read on a
    thread of its own; :meth:`get` answers with those read so far."""

    def __init__(self, ids: Sequence[str], read: Reader, *, batch: int | None = None) -> None:
        self._ids = list(ids)
        self._read = read
        self._batch = batch or LOAD_BATCH
        self._lock = threading.Lock()
        self._row: dict[str, int] = {}
        self._matrix: np.ndarray | None = None
        self._filled = 0
        # Dropped while loading: a batch read before the drop must not bring them back.
        self._dropped: set[str] = set()
        self._stopped = threading.Event()
        self._loaded = threading.Event()
        self._thread = threading.Thread(target=self._load, name="agentmem-vector-copy", daemon=True)

    def start(self) -> None:
        """Start reading the vectors."""
        self._thread.start()

    def get(self, ids: Iterable[str]) -> dict[str, np.ndarray]:
        """The vectors of ``ids`` the copy holds (rows of its matrix: read them, never write)."""
        with self._lock:
            matrix, row = self._matrix, self._row
            return {i: matrix[row[i]] for i in ids if i in row} if matrix is not None else {}

    def drop(self, ids: Iterable[str]) -> None:
        """Forget these memories' vectors (their memories changed); they are read through."""
        with self._lock:
            for memory_id in ids:
                self._row.pop(memory_id, None)
                if not self._loaded.is_set():
                    self._dropped.add(memory_id)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until every vector has been read (or the load stopped); whether it has."""
        return self._loaded.wait(timeout)

    def stop(self, *, wait: bool = True) -> None:
        """Stop reading (the store is closing, or the bank's copy was replaced); with
        ``wait``, once the batch being read is in."""
        self._stopped.set()
        if wait and self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join()

    def _load(self) -> None:
        try:
            for start in range(0, len(self._ids), self._batch):
                if self._stopped.is_set():
                    return
                self._keep(self._read(self._ids[start : start + self._batch]))
        except Exception:  # noqa: BLE001 - a partial copy only means more reads through
            return
        finally:
            self._loaded.set()

    def _keep(self, vectors: dict[str, np.ndarray]) -> None:
        with self._lock:
            kept = [(i, v) for i, v in vectors.items() if i not in self._dropped]
            if not kept:
                return
            if self._matrix is None:
                self._matrix = np.empty((len(self._ids), len(kept[0][1])), dtype=np.float32)
            for memory_id, vector in kept:
                if self._filled == len(self._matrix) or len(vector) != self._matrix.shape[1]:
                    continue  # a vector of another length: read through, as the store has it
                self._matrix[self._filled] = vector
                self._row[memory_id] = self._filled
                self._filled += 1
