"""Chroma holds the vectors: one collection per bank (hard isolation), cosine HNSW.

We always pass our own embeddings; Chroma's default embedding function (which downloads a
model) is never used, and anonymized telemetry is off.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agentmem.errors import StorageError

HNSW_CONFIGURATION = {"hnsw": {"space": "cosine", "ef_construction": 128, "ef_search": 64}}


def collection_name(bank_id: str) -> str:
    """A Chroma-safe, stable collection name for a bank id (any characters allowed in ids)."""
    return "bank-" + hashlib.sha256(bank_id.encode("utf-8")).hexdigest()[:40]


class VectorStore:
    """Vectors of every bank, in an embedded Chroma ``PersistentClient``."""

    def __init__(self, path: Path) -> None:
        try:
            import chromadb
            from chromadb.config import Settings

            self._client = chromadb.PersistentClient(
                path=str(path), settings=Settings(anonymized_telemetry=False, allow_reset=False)
            )
        except Exception as exc:  # chromadb raises many types; all mean the store is unusable
            raise StorageError(f"cannot open the vector store at {path}: {exc}") from exc
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
            count = col.count()
            if count == 0:
                return []
            result = col.query(
                query_embeddings=[np.asarray(vector, dtype=np.float32)],
                n_results=min(n, count),
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
            count = col.count()
            if count == 0:
                return [[] for _ in range(len(vectors))]
            result = col.query(
                query_embeddings=np.asarray(vectors, dtype=np.float32),
                n_results=min(n, count),
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
