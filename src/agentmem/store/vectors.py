"""Chroma holds the vectors: one collection per bank (hard isolation), cosine HNSW.

We always pass our own embeddings; Chroma's default embedding function (which downloads a
model) is never used, and anonymized telemetry is off.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from agentmem.errors import StorageError

# ef_search 128 (was 64): recall asks for 60 neighbours, and at 64 the approximate search
# missed some of the exact top 60 (0.4% on a LoCoMo bank), differently each time a small
# bank is reopened (its index is rebuilt from the log by several threads); at 128 none.
HNSW_CONFIGURATION = {"hnsw": {"space": "cosine", "ef_construction": 128, "ef_search": 128}}


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


def collection_name(bank_id: str, namespace: str = "") -> str:
    """A Chroma-safe, stable collection name for a bank id (any characters allowed in ids).

    ``namespace`` (a store's id) keeps the banks of different stores apart when they share
    one Chroma server; the embedded store, which only one store uses, needs none.
    """
    key = f"{namespace}\x00{bank_id}" if namespace else bank_id
    return "bank-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:40]


class VectorStore:
    """Vectors of every bank, in an embedded Chroma ``PersistentClient`` or a Chroma server.

    Args:
        path: Directory of the embedded store (ignored when ``url`` is given).
        url: ``http(s)://host:port`` of a Chroma server (``chroma run``), reached with
            ``chromadb.HttpClient``.

    Raises:
        StorageError: The store cannot be opened or the server does not answer.
    """

    def __init__(self, path: Path, *, url: str | None = None) -> None:
        self.embedded = url is None
        try:
            import chromadb
            from chromadb.config import Settings

            settings = Settings(anonymized_telemetry=False, allow_reset=False)
            if url is None:
                self._client = chromadb.PersistentClient(path=str(path), settings=settings)
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
        except Exception as exc:  # chromadb raises many types; all mean the store is unusable
            where = url or path
            raise StorageError(f"cannot open the vector store at {where}: {exc}") from exc
        self._collections: dict[str, Any] = {}
        self._lock = threading.Lock()

    def _collection(self, name: str) -> Any:
        with self._lock:
            col = self._collections.get(name)
            if col is None:
                try:
                    col = self._client.get_or_create_collection(
                        name, configuration=HNSW_CONFIGURATION, embedding_function=None
                    )
                    _upgrade_search_width(col)
                except Exception as exc:
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
        try:
            self._collection(collection).upsert(
                ids=list(ids),
                embeddings=np.asarray(vectors, dtype=np.float32),
                metadatas=list(metadatas),
            )
        except Exception as exc:
            raise StorageError(f"vector write failed: {exc}") from exc

    def query(
        self,
        collection: str,
        vector: np.ndarray,
        n: int,
        where: Mapping[str, Any] | None = None,
    ) -> list[tuple[str, float]]:
        """Nearest ``n`` (id, cosine similarity), best first."""
        col = self._collection(collection)
        try:
            # No count() first: it costs as much as the query itself, and Chroma returns
            # fewer than n results (none for an empty collection) without complaint.
            result = col.query(
                query_embeddings=[np.asarray(vector, dtype=np.float32)],
                n_results=n,
                where=dict(where) if where else None,
                include=["distances"],
            )
        except Exception as exc:
            raise StorageError(f"vector query failed: {exc}") from exc
        ids = result["ids"][0]
        distances = result["distances"][0]
        return [(i, 1.0 - float(d)) for i, d in zip(ids, distances, strict=True)]

    def query_many(
        self, collection: str, vectors: np.ndarray, n: int
    ) -> list[list[tuple[str, float]]]:
        """Nearest ``n`` (id, cosine similarity) of each vector, in one call; best first."""
        if len(vectors) == 0:
            return []
        col = self._collection(collection)
        try:
            result = col.query(
                query_embeddings=np.asarray(vectors, dtype=np.float32),
                n_results=n,
                include=["distances"],
            )
        except Exception as exc:
            raise StorageError(f"vector query failed: {exc}") from exc
        return [
            [(i, 1.0 - float(d)) for i, d in zip(ids, distances, strict=True)]
            for ids, distances in zip(result["ids"], result["distances"], strict=True)
        ]

    def get_vectors(self, collection: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vectors of ``ids`` (missing ids are absent from the result)."""
        if not ids:
            return {}
        try:
            result = self._collection(collection).get(ids=list(ids), include=["embeddings"])
        except Exception as exc:
            raise StorageError(f"vector read failed: {exc}") from exc
        return {
            i: np.asarray(v, dtype=np.float32)
            for i, v in zip(result["ids"], result["embeddings"], strict=True)
        }

    def ids(self, collection: str) -> set[str]:
        """Every id in a collection (used by integrity checks)."""
        try:
            return set(self._collection(collection).get(include=[])["ids"])
        except Exception as exc:
            raise StorageError(f"vector read failed: {exc}") from exc

    def delete(self, collection: str, ids: Sequence[str]) -> None:
        """Delete vectors (ids that are absent are ignored)."""
        if not ids:
            return
        try:
            self._collection(collection).delete(ids=list(ids))
        except Exception as exc:
            raise StorageError(f"vector delete failed: {exc}") from exc

    def drop(self, collection: str) -> None:
        """Delete a bank's whole collection."""
        with self._lock:
            self._collections.pop(collection, None)
            try:
                self._client.delete_collection(collection)
            except Exception as exc:  # already gone is fine: the goal is its absence
                if "does not exist" not in str(exc).lower():
                    raise StorageError(f"cannot drop collection {collection}: {exc}") from exc

    def close(self) -> None:
        """Release the client (Chroma persists on every write)."""
        with self._lock:
            self._collections.clear()
