"""The PostgreSQL store as the engine uses it: database, pgvector vectors, BM25 keyword index.

Vectors live in the same database as the rows, so a writer's transaction writes or deletes
them itself (``write_in``/``delete_in``/``drop_in``, see ``store/staged_vectors.py``): a fact
and its vector commit together, with no journal and nothing to replay after a crash. What the
embedded store does once the transaction has committed (``stage``) is then already done.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from agentmem.store.postgres.database import PostgresDatabase
from agentmem.store.postgres.keyword import (
    MISSING_ROWS,
    ORPHAN_ROWS,
    STATS_MISMATCH,
    PostgresKeywordIndex,
)
from agentmem.store.postgres.vectors import PostgresVectorStore


class TransactionVectors(PostgresVectorStore):
    """pgvector vectors written in the transaction of the rows they belong to."""

    def write_in(
        self,
        cur: Any,  # noqa: ANN401
        bank_id: str,
        collection: str,
        ids: Sequence[str],
        vectors: np.ndarray,
        metadatas: Sequence[Mapping[str, str | int | float | bool]],
    ) -> None:
        """Write the vectors in the caller's transaction (this thread's connection)."""
        self.upsert(collection, ids, vectors, metadatas)

    def delete_in(self, cur: Any, bank_id: str, collection: str, ids: Sequence[str]) -> None:  # noqa: ANN401
        """Delete the vectors in the caller's transaction."""
        self.delete(collection, ids)

    def drop_in(self, cur: Any, bank_id: str, collection: str) -> None:  # noqa: ANN401
        """Delete the collection's vectors in the caller's transaction; :meth:`drop`, after
        the commit, removes its index (DDL that would lock every bank's vectors meanwhile)."""
        cur.execute("DELETE FROM vectors WHERE collection = ?", [collection])

    def stage(
        self,
        bank_id: str,
        collection: str,
        ids: Sequence[str],
        vectors: np.ndarray,
        metadatas: Sequence[Mapping[str, str | int | float | bool]],
    ) -> None:
        """Nothing left to do: :meth:`write_in` wrote them with their rows."""


class CheckedKeywordIndex(PostgresKeywordIndex):
    """The PostgreSQL keyword index with what the integrity check asks of an index."""

    bank_checks: tuple[tuple[str, str], ...] = (
        ("memory missing from the keyword index", MISSING_ROWS),
        ("keyword statistics not those of the bank's rows", STATS_MISMATCH),
    )
    store_checks: tuple[tuple[str, str], ...] = (
        (
            "keyword_bank_stats row of an unknown bank",
            "SELECT DISTINCT t.bank_id FROM keyword_bank_stats AS t "
            "WHERE t.bank_id NOT IN (SELECT bank_id FROM banks)",
        ),
        ("keyword postings of a deleted memory", ORPHAN_ROWS),
    )

    def pending_memories(self, bank_ids: list[str]) -> int:
        """None: rows are indexed in their own transaction, nothing waits for a fold."""
        return 0


def open_postgres(
    url: str, *, context_weight: float, rebuild_min: int, rebuild_fraction: float
) -> tuple[PostgresDatabase, TransactionVectors, CheckedKeywordIndex]:
    """The PostgreSQL database at ``url`` with its vectors and keyword index."""
    db = PostgresDatabase(url)
    try:
        vectors = TransactionVectors(db)
        keyword = CheckedKeywordIndex(
            db,
            context_weight=context_weight,
            rebuild_min=rebuild_min,
            rebuild_fraction=rebuild_fraction,
        )
    except BaseException:
        db.close()
        raise
    return db, vectors, keyword
