"""The PostgreSQL store as the engine uses it: database, pgvector vectors, BM25 keyword index.

Vectors live in the same database as the rows, so a writer's transaction writes or deletes
them itself (``write_in``/``delete_in``/``drop_in``, see ``store/staged_vectors.py``): a fact
and its vector commit together, with no journal and nothing to replay after a crash.
"""

from __future__ import annotations

from agentmem.store.postgres.database import PostgresDatabase
from agentmem.store.postgres.keyword import PostgresKeywordIndex
from agentmem.store.postgres.vectors import PostgresVectorStore


def open_postgres(
    url: str, *, context_weight: float, rebuild_min: int, rebuild_fraction: float
) -> tuple[PostgresDatabase, PostgresVectorStore, PostgresKeywordIndex]:
    """The PostgreSQL database at ``url`` with its vectors and keyword index."""
    db = PostgresDatabase(url)
    try:
        vectors = PostgresVectorStore(db)
        keyword = PostgresKeywordIndex(
            db,
            context_weight=context_weight,
            rebuild_min=rebuild_min,
            rebuild_fraction=rebuild_fraction,
        )
    except BaseException:
        db.close()
        raise
    return db, vectors, keyword
