"""Chroma holds the vectors: one collection per bank (hard isolation), cosine HNSW.

We always pass our own embeddings; Chroma's default embedding function (which downloads a
model) is never used, and anonymized telemetry is off.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from agentmem.errors import StorageError
from agentmem.store.flat_index import FLAT_MAX, FlatIndex, FlatIndexes
from agentmem.store.metadata_filter import can_match as _can_match
from agentmem.store.metadata_filter import matches as _matches

# ef_search 128: recall asks for 60 neighbours, and at 64 the approximate search missed some
# of the exact top 60, differently each time a small bank is reopened (its index is rebuilt
# from the log by several threads).
HNSW_CONFIGURATION = {"hnsw": {"space": "cosine", "ef_construction": 128, "ef_search": 128}}
# A filtered query first looks for its matches among this many times as many nearest
# vectors, then among the wider number, before it asks Chroma to filter. At 100k vectors, for
# "When did I start chess?" (60 dated facts wanted): the 240 nearest take ~8.5 ms and hold a
# median 13 dated ones, the 960 nearest ~23 ms and 110, Chroma's filtered query ~125 ms.
OVERFETCH = (4, 16)


def vector_metadata(
    fact_type: str,
    occurred_start: datetime | None,
    occurred_end: datetime | None,
    mentioned_at: datetime,
) -> dict[str, str | float | bool]:
    """What Chroma keeps beside a vector, so searches can filter on type and time.

    ``t_start``/``t_end`` are the fact's event time (its occurrence, else its mention) and
    ``mentioned`` its mention time, as POSIX seconds; ``dated`` says it has an occurrence.
    """
    start = occurred_start or mentioned_at
    return {
        "fact_type": fact_type,
        "dated": occurred_start is not None,
        "t_start": _seconds(start),
        "t_end": _seconds(occurred_end or start),
        "mentioned": _seconds(mentioned_at),
    }


def _upgrade_search_width(col: Any) -> None:
    """Give a collection made with a narrower ``ef_search`` (stores made before it was raised
    from 64) the current one; the index itself is unchanged."""
    wanted = HNSW_CONFIGURATION["hnsw"]["ef_search"]
    current = (col.configuration_json or {}).get("hnsw", {}).get("ef_search", wanted)
    if current < wanted:
        col.modify(configuration={"hnsw": {"ef_search": wanted}})


def _seconds(moment: datetime) -> float:
    # Naive values come from DuckDB TIMESTAMP columns, which hold UTC.
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def collection_name(bank_id: str, namespace: str = "", incarnation: str = "") -> str:
    """A Chroma-safe collection name for a bank (any characters allowed in ids).

    ``namespace`` (a store's id) keeps the banks of different stores apart when they share
    one Chroma server; the embedded store, which only one store uses, needs none.
    ``incarnation`` (random, per creation of the bank) gives a bank re-created under a deleted
    bank's id a collection of its own, so no write of the deleted bank can reach it.
    """
    key = f"{namespace}\x00{bank_id}" if namespace else bank_id
    if incarnation:
        key = f"{key}\x00{incarnation}"
    return "bank-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:40]


class _ReadersOrWriter:
    """Many readers or one writer of a collection at a time, a waiting writer first.

    Chroma's embedded store fails a query that runs while another thread writes the same
    collection ("Error creating hnsw segment reader: Nothing found on disk", chromadb 1.5.9:
    two recalls of a new bank at once, one flushing the vectors retain staged).
    """

    def __init__(self) -> None:
        self._turn = threading.Condition()
        self._readers = 0
        self._writing = False
        self._waiting = 0  # writers waiting: new readers let them go first

    @contextmanager
    def reading(self) -> Iterator[None]:
        with self._turn:
            while self._writing or self._waiting:
                self._turn.wait()
            self._readers += 1
        try:
            yield
        finally:
            with self._turn:
                self._readers -= 1
                if not self._readers:
                    self._turn.notify_all()

    @contextmanager
    def writing(self) -> Iterator[None]:
        with self._turn:
            self._waiting += 1
            while self._writing or self._readers:
                self._turn.wait()
            self._waiting -= 1
            self._writing = True
        try:
            yield
        finally:
            with self._turn:
                self._writing = False
                self._turn.notify_all()


class VectorStore:
    """Vectors of every bank, in an embedded Chroma ``PersistentClient`` or a Chroma server.

    Args:
        path: Directory of the embedded store (ignored when ``url`` is given).
        url: ``http(s)://host:port`` of a Chroma server (``chroma run``), reached with
            ``chromadb.HttpClient``.
        flat_max: Largest collection of an embedded store searched exactly in process
            (``store/flat_index.py``); 0 searches every one through Chroma.

    Raises:
        StorageError: The store cannot be opened or the server does not answer.
    """

    def __init__(self, path: Path, *, url: str | None = None, flat_max: int = FLAT_MAX) -> None:
        self.embedded = url is None
        try:
            import chromadb
            from chromadb.config import Settings

            settings = Settings(anonymized_telemetry=False, allow_reset=False)
            if url is None:
                # Chroma shares one client per path string in a process: a relative path
                # would reach another store's client once the working directory changed.
                self._client = chromadb.PersistentClient(
                    path=str(path.resolve()), settings=settings
                )
            else:
                parts = urlsplit(url)
                if parts.scheme not in ("http", "https") or not parts.hostname:
                    raise ValueError(f"expected http(s)://host:port, got {url!r}")
                self._client = chromadb.HttpClient(
                    host=parts.hostname,
                    port=parts.port or (443 if parts.scheme == "https" else 8000),
                    ssl=parts.scheme == "https",
                    settings=settings,
                )
                self._client.heartbeat()
            # Chroma refuses larger calls (5,461 in the embedded store): every call that takes
            # ids or vectors is cut into batches of this size.
            self._batch = max(1, int(self._client.get_max_batch_size()))
        except Exception as exc:  # chromadb raises many types; all mean the store is unusable
            where = url or path
            raise StorageError(f"cannot open the vector store at {where}: {exc}") from exc
        self._collections: dict[str, Any] = {}
        self._access: dict[str, _ReadersOrWriter] = {}  # collection -> who may use it now
        self._lock = threading.Lock()
        # Embedded only, where this store makes every write: each collection's metadata by
        # id, as filtered queries first read it and kept by the writes below. Fetching the
        # metadata with query results costs 5-6 times the search itself.
        self._metadata: dict[str, dict[str, Mapping[str, Any] | None]] = {}
        self._writes: dict[str, int] = {}  # collection -> writes so far (see _metadata_of)
        self._metadata_lock = threading.Lock()
        # Embedded only: exact in-process copies of the collections searched (flat_index.py).
        self._flat = FlatIndexes(most=flat_max) if self.embedded else None

    def _batches(self, count: int) -> Iterator[slice]:
        """Slices of ``count`` items, each small enough for one Chroma call."""
        for start in range(0, count, self._batch):
            yield slice(start, start + self._batch)

    def _reading(self, name: str) -> Any:
        """Hold the collection for a read (see :class:`_ReadersOrWriter`)."""
        return self._turns(name).reading()

    def _writing(self, name: str) -> Any:
        """Hold the collection for a write, no read running."""
        return self._turns(name).writing()

    def _turns(self, name: str) -> _ReadersOrWriter:
        with self._lock:
            return self._access.setdefault(name, _ReadersOrWriter())

    def _collection(self, name: str) -> Any:
        """The collection, created on a write's first use (Chroma keeps none empty ahead)."""
        col = self._existing(name, create=True)
        assert col is not None  # noqa: S101 - created
        return col

    def _existing(self, name: str, *, create: bool = False) -> Any:
        """The collection, or None when it does not exist: a read never creates one, so a
        read that races the bank's deletion (a recall, the copy of a bank's vectors) leaves
        no empty collection behind."""
        with self._lock:
            col = self._collections.get(name)
            if col is None:
                try:
                    if create:
                        col = self._client.get_or_create_collection(
                            name, configuration=HNSW_CONFIGURATION, embedding_function=None
                        )
                    else:
                        col = self._client.get_collection(name, embedding_function=None)
                    _upgrade_search_width(col)
                except Exception as exc:
                    if not create and "does not exist" in str(exc).lower():
                        return None
                    raise StorageError(f"cannot open vector collection {name}: {exc}") from exc
                self._collections[name] = col
            return col

    def upsert(
        self,
        collection: str,
        ids: Sequence[str],
        vectors: np.ndarray,
        metadatas: Sequence[Mapping[str, str | int | float | bool]],
    ) -> None:
        """Add or replace vectors (idempotent, so a replay after a crash is safe)."""
        if not ids:
            return
        col = self._collection(collection)
        embeddings = np.asarray(vectors, dtype=np.float32)
        try:
            for part in self._batches(len(ids)):
                with self._writing(collection):
                    col.upsert(
                        ids=list(ids[part]),
                        embeddings=embeddings[part],
                        metadatas=list(metadatas[part]),
                    )
                self._wrote(collection, zip(ids[part], metadatas[part], strict=True))
                if self._flat is not None:
                    self._flat.upsert(
                        collection, list(ids[part]), embeddings[part], list(metadatas[part])
                    )
        except Exception as exc:
            raise StorageError(f"vector write failed: {exc}") from exc

    def query(
        self,
        collection: str,
        vector: np.ndarray,
        n: int,
        where: Mapping[str, Any] | None = None,
        *,
        nearest_only: bool = False,
    ) -> list[tuple[str, float]]:
        """Nearest ``n`` (id, cosine similarity) whose metadata matches ``where``, best first.

        Chroma answers a filtered query by first listing every id the filter admits, which
        takes 60-450 ms at 100k vectors whenever the filter is on a range or admits many
        (``dated``, a year). So a filter is first applied to the ``n × 4`` nearest vectors,
        then to the ``n × 16`` nearest (:data:`OVERFETCH`); only when fewer than ``n`` of
        those match does the filtered query run. The ``n`` kept are then the nearest matches
        of a wider (so more exact) search.

        ``nearest_only`` keeps to the matches among the ``n × 16`` nearest, fewer than ``n``
        if that is all there are: for a filter that states a preference (the temporal arm's
        facts anchored in time, closest in meaning first), where a match that far away in
        meaning is not worth Chroma's filtered query.
        """
        flat = self._flat_index(collection)
        if flat is not None and self.copy_answers(where):
            within = n * OVERFETCH[-1] if nearest_only and where else None
            try:
                return flat.nearest(vector, n, dict(where) if where else None, within=within)
            except Exception as exc:  # a vector of another length, as Chroma would refuse
                raise StorageError(f"vector query failed: {exc}") from exc
        if not where:
            return self._nearest(collection, vector, n, None)
        where = dict(where)
        if _can_match(where):
            for factor in OVERFETCH:
                nearest = self._nearest_with_metadata(collection, vector, n * factor)
                matching = [(i, cosine) for i, cosine, meta in nearest if _matches(meta, where)]
                if len(matching) >= n or len(nearest) < n * factor:
                    return matching[:n]  # a short answer means the collection held no more
            if nearest_only:
                return matching
        return self._nearest(collection, vector, n, where)

    def held_copy(self, collection: str) -> FlatIndex | None:
        """The collection's exact in-process copy if one is held now (none is read)."""
        return None if self._flat is None else self._flat.get(collection)

    def copy_staged(
        self,
        collection: str,
        ids: Sequence[str],
        vectors: np.ndarray,
        metadatas: Sequence[Mapping[str, str | int | float | bool]],
    ) -> bool:
        """Put vectors that Chroma will get later into the collection's copy, if one is held
        (none is read); whether the copy holds them. Searches of the copy then find them with
        the arithmetic they will have once written: one set of scores, flushed or not."""
        return self._flat is not None and self._flat.upsert(collection, ids, vectors, metadatas)

    def uncopy(self, collection: str, ids: Sequence[str]) -> None:
        """Remove staged vectors that will never reach Chroma from the collection's copy."""
        if self._flat is not None and ids:
            self._flat.delete(collection, ids)

    @staticmethod
    def copy_answers(where: Mapping[str, Any] | None) -> bool:
        """Whether a query with this filter is answered by a held copy (see :meth:`query`)."""
        return not where or _can_match(where)

    def holds_copy(self, collection: str) -> bool:
        """Whether searches and reads of the collection are answered from its exact copy in
        this process (read now if it may be held: embedded, at most ``flat_max`` vectors)."""
        return self._flat_index(collection) is not None

    def _flat_index(self, collection: str) -> FlatIndex | None:
        """The collection's exact in-process copy (embedded store, at most ``FLAT_MAX``
        vectors), read whole from Chroma at its first search; None when it has none."""
        flats = self._flat
        if flats is None:
            return None
        index = flats.get(collection)
        if index is not None or not flats.may_hold(collection):
            return index
        writes = flats.writes(collection)  # before the read: a write meanwhile voids it
        col = self._existing(collection)
        if col is None:
            return None
        ids: list[str] = []
        vectors: list[np.ndarray] = []
        metadatas: list[Mapping[str, Any] | None] = []
        try:
            with self._reading(collection):
                count = int(col.count())
                if count == 0:
                    return None
                if count > flats.most:
                    return flats.keep(collection, None, writes)
                for part in self._batches(count):
                    found = col.get(
                        include=["embeddings", "metadatas"],
                        limit=part.stop - part.start,
                        offset=part.start,
                    )
                    ids += found["ids"]
                    vectors.append(np.asarray(found["embeddings"], dtype=np.float32))
                    metadatas += found["metadatas"]
        except Exception as exc:
            raise StorageError(f"vector read failed: {exc}") from exc
        index = FlatIndex(ids, np.concatenate(vectors), metadatas)
        return flats.keep(collection, index, writes)

    def _nearest(
        self,
        collection: str,
        vector: np.ndarray,
        n: int,
        where: dict[str, Any] | None,
        *,
        metadata: bool = False,
    ) -> list[Any]:
        """One Chroma query: (id, cosine) pairs, or (id, cosine, metadata) with ``metadata``."""
        col = self._existing(collection)
        if col is None:
            return []
        try:
            # No count() first: it costs as much as the query itself, and Chroma returns
            # fewer than n results (none for an empty collection) without complaint.
            with self._reading(collection):
                result = col.query(
                    query_embeddings=[np.asarray(vector, dtype=np.float32)],
                    n_results=n,
                    where=where,
                    include=["distances", "metadatas"] if metadata else ["distances"],
                )
        except Exception as exc:
            raise StorageError(f"vector query failed: {exc}") from exc
        pairs = zip(result["ids"][0], result["distances"][0], strict=True)
        if metadata:
            metas = result["metadatas"][0]
            return [(i, 1.0 - float(d), m) for (i, d), m in zip(pairs, metas, strict=True)]
        return [(i, 1.0 - float(d)) for i, d in pairs]

    def _nearest_with_metadata(
        self, collection: str, vector: np.ndarray, n: int
    ) -> list[tuple[str, float, Mapping[str, Any] | None]]:
        """The nearest ``n`` as (id, cosine, metadata), the metadata from the collection's copy
        when there is one (see ``_metadata``)."""
        if not self.embedded:
            return self._nearest(collection, vector, n, None, metadata=True)
        nearest = self._nearest(collection, vector, n, None)
        metadata = self._metadata_of(collection, [i for i, _ in nearest])
        return [(i, cosine, metadata.get(i)) for i, cosine in nearest]

    def _metadata_of(
        self, collection: str, ids: Sequence[str]
    ) -> dict[str, Mapping[str, Any] | None]:
        """The stored metadata of ``ids`` (absent: ids no longer stored): from the copy, and
        for ids it lacks from Chroma, kept unless a write came in meanwhile."""
        with self._metadata_lock:
            copy = self._metadata.setdefault(collection, {})
            writes = self._writes.get(collection, 0)
            found = {i: copy[i] for i in ids if i in copy}
        missing = [i for i in ids if i not in found]
        col = self._existing(collection) if missing else None
        if col is not None:
            read: dict[str, Mapping[str, Any] | None] = {}
            try:
                for part in self._batches(len(missing)):
                    with self._reading(collection):
                        result = col.get(ids=missing[part], include=["metadatas"])
                    read.update(zip(result["ids"], result["metadatas"], strict=True))
            except Exception as exc:
                raise StorageError(f"vector read failed: {exc}") from exc
            with self._metadata_lock:
                current = self._metadata.get(collection) is copy
                if current and self._writes.get(collection, 0) == writes:
                    copy.update(read)
            found.update(read)
        return found

    def _wrote(
        self,
        collection: str,
        metadata: Iterable[tuple[str, Mapping[str, Any] | None]] = (),
        *,
        deleted: Sequence[str] = (),
    ) -> None:
        """Keep the collection's metadata copy (if any) at what was just written."""
        with self._metadata_lock:
            self._writes[collection] = self._writes.get(collection, 0) + 1
            copy = self._metadata.get(collection)
            if copy is not None:
                copy.update(metadata)
                for memory_id in deleted:
                    copy.pop(memory_id, None)

    def query_many(
        self, collection: str, vectors: np.ndarray, n: int
    ) -> list[list[tuple[str, float]]]:
        """Nearest ``n`` (id, cosine similarity) of each vector, in one call; best first."""
        col = self._existing(collection) if len(vectors) else None
        if col is None:
            return [[] for _ in range(len(vectors))]
        queries = np.asarray(vectors, dtype=np.float32)
        found: list[list[tuple[str, float]]] = []
        try:
            for part in self._batches(len(queries)):
                with self._reading(collection):
                    result = col.query(
                        query_embeddings=queries[part],
                        n_results=n,
                        include=["distances"],
                    )
                found += [
                    [(i, 1.0 - float(d)) for i, d in zip(ids, distances, strict=True)]
                    for ids, distances in zip(result["ids"], result["distances"], strict=True)
                ]
        except Exception as exc:
            raise StorageError(f"vector query failed: {exc}") from exc
        return found

    def get_vectors(self, collection: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vectors of ``ids`` (missing ids are absent from the result)."""
        if not ids:
            return {}
        flat = self._flat_index(collection)
        if flat is not None:
            return flat.vectors(ids)
        col = self._existing(collection)
        if col is None:
            return {}
        wanted = list(ids)
        found: dict[str, np.ndarray] = {}
        try:
            for part in self._batches(len(wanted)):
                with self._reading(collection):
                    result = col.get(ids=wanted[part], include=["embeddings"])
                found.update(
                    (i, np.asarray(v, dtype=np.float32))
                    for i, v in zip(result["ids"], result["embeddings"], strict=True)
                )
        except Exception as exc:
            raise StorageError(f"vector read failed: {exc}") from exc
        return found

    def ids(self, collection: str) -> set[str]:
        """Every id in a collection (used by integrity checks)."""
        col = self._existing(collection)
        if col is None:
            return set()
        try:
            with self._reading(collection):
                return set(col.get(include=[])["ids"])
        except Exception as exc:
            raise StorageError(f"vector read failed: {exc}") from exc

    def count(self, collection: str) -> int:
        """How many vectors a collection holds."""
        col = self._existing(collection)
        if col is None:
            return 0
        try:
            with self._reading(collection):
                return int(col.count())
        except Exception as exc:
            raise StorageError(f"vector read failed: {exc}") from exc

    def dimension(self, collection: str) -> int | None:
        """The length of a collection's vectors (Chroma holds one per collection); None when
        it is empty."""
        col = self._existing(collection)
        if col is None:
            return None
        try:
            with self._reading(collection):
                found = col.get(limit=1, include=["embeddings"])
        except Exception as exc:
            raise StorageError(f"vector read failed: {exc}") from exc
        embeddings = found["embeddings"]
        return None if embeddings is None or not len(embeddings) else len(embeddings[0])

    def delete(self, collection: str, ids: Sequence[str]) -> None:
        """Delete vectors (ids that are absent are ignored)."""
        col = self._existing(collection) if ids else None
        if col is None:  # nothing to delete from
            return
        doomed = list(ids)
        try:
            for part in self._batches(len(doomed)):
                with self._writing(collection):
                    col.delete(ids=doomed[part])
                self._wrote(collection, deleted=doomed[part])
                if self._flat is not None:
                    self._flat.delete(collection, doomed[part])
        except Exception as exc:
            raise StorageError(f"vector delete failed: {exc}") from exc

    def drop(self, collection: str) -> None:
        """Delete a bank's whole collection."""
        with self._writing(collection), self._lock:
            self._collections.pop(collection, None)
            with self._metadata_lock:
                self._metadata.pop(collection, None)
                self._writes[collection] = self._writes.get(collection, 0) + 1
            if self._flat is not None:
                self._flat.drop(collection)
            try:
                self._client.delete_collection(collection)
            except Exception as exc:  # already gone is fine: the goal is its absence
                if "does not exist" not in str(exc).lower():
                    raise StorageError(f"cannot drop collection {collection}: {exc}") from exc

    def close(self) -> None:
        """Release the client (Chroma persists on every write). Chroma keeps one system per
        path in a process until its last client closes: kept open, a store reopened here after
        another process wrote to it read Chroma's old state ("Error finding id")."""
        with self._lock:
            self._collections.clear()
        with self._metadata_lock:
            self._metadata.clear()
        if self._flat is not None:
            self._flat.clear()
        with suppress(Exception):  # closing what failed to work must not hide why
            self._client.close()
