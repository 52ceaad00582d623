"""Repair what a crash between the DuckDB commit and the Chroma write left behind.

Every vector write is journalled in DuckDB inside the transaction that stores (or deletes) the
facts, and cleared once Chroma has it. On open, leftover journal entries are replayed:
facts still present are re-embedded from their stored text and upserted; deleted facts'
vectors are deleted. Both operations are idempotent, so replaying twice is harmless.
"""

from __future__ import annotations

import logging

import numpy as np

from agentmem.protocols import Embedder
from agentmem.store.database import Database
from agentmem.store.vectors import VectorStore, vector_metadata

log = logging.getLogger("agentmem")


def replay_vector_journal(db: Database, vectors: VectorStore, embedder: Embedder) -> int:
    """Apply pending vector operations; returns how many entries were replayed."""
    entries = db.fetchall(
        "SELECT j.memory_id, j.bank_id, j.op, b.collection FROM vector_journal AS j "
        "LEFT JOIN banks AS b ON b.bank_id = j.bank_id"
    )
    if not entries:
        return 0
    for collection in {e[3] for e in entries if e[3] is not None}:
        deletes = [e[0] for e in entries if e[3] == collection and e[2] == "delete"]
        vectors.delete(collection, deletes)
        adds = [e[0] for e in entries if e[3] == collection and e[2] == "add"]
        rows = db.fetchall(
            "SELECT id, text, fact_type, occurred_start, occurred_end, mentioned_at "
            "FROM memories WHERE list_contains($ids, id)",
            {"ids": adds},
        )
        if rows:
            embedded = np.asarray(embedder.embed([r[1] for r in rows]), dtype=np.float32)
            vectors.upsert(
                collection, [r[0] for r in rows], embedded, [vector_metadata(*r[2:]) for r in rows]
            )
    with db.transaction() as cur:
        cur.execute(
            "DELETE FROM vector_journal WHERE list_contains($ids, memory_id)",
            {"ids": [e[0] for e in entries]},
        )
    log.info("replayed %d vector journal entries left by an interrupted write", len(entries))
    return len(entries)
