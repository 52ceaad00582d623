"""Repair what a crash between the DuckDB commit and the Chroma write left behind.

Every vector write is journalled in DuckDB inside the transaction that stores (or deletes) the
facts, and cleared once Chroma has it. On open, leftover journal entries are replayed:
facts still present are re-embedded from their stored text and upserted; deleted facts'
vectors are deleted; a deleted bank's collection is dropped. These operations are idempotent,
so replaying twice is harmless.

Chroma's embedded store has a crash window of its own: after a SIGKILL, vectors it had
acknowledged can be missing from its HNSW index (``get`` fails with "Error finding id" and
queries never return them) although its record of the ids survived; we saw every write of a
killed session that followed a clean reopen lost this way (chromadb 1.5.9). Re-upserting
repairs it. So each session is bracketed: on open the store is marked as in use, on a clean
close the marker is cleared and the highest memory ``seq`` written so far is recorded as
durable. An open that finds the marker still set (the last session died) re-embeds and
re-upserts every memory written after that mark. A Chroma server is not affected: our process
dying does not take the server's index with it.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from agentmem.protocols import Embedder
from agentmem.store.database import Database
from agentmem.store.forget import DROP
from agentmem.store.records import json_list, sql_list
from agentmem.store.staged_vectors import StagedVectorStore
from agentmem.store.vectors import VectorStore, vector_metadata

log = logging.getLogger("agentmem")


def replay_vector_journal(
    db: Database, vectors: VectorStore | StagedVectorStore, embedder: Embedder
) -> int:
    """Apply pending vector operations; returns how many entries were replayed."""
    entries = db.fetchall(
        "SELECT j.memory_id, j.bank_id, j.op, b.collection FROM vector_journal AS j "
        "LEFT JOIN banks AS b ON b.bank_id = j.bank_id"
    )
    if not entries:
        return 0
    for collection in {e[0] for e in entries if e[2] == DROP}:  # of a deleted bank
        vectors.drop(collection)
    for collection in {e[3] for e in entries if e[3] is not None and e[2] != DROP}:
        deletes = [e[0] for e in entries if e[3] == collection and e[2] == "delete"]
        vectors.delete(collection, deletes)
        adds = [e[0] for e in entries if e[3] == collection and e[2] == "add"]
        rows = db.fetchall(
            "SELECT id, text, fact_type, occurred_start, occurred_end, mentioned_at "
            f"FROM memories WHERE list_contains({sql_list('ids')}, id)",
            {"ids": json_list(adds)},
        )
        if rows:
            embedded = np.asarray(embedder.embed([r[1] for r in rows]), dtype=np.float32)
            vectors.upsert(
                collection, [r[0] for r in rows], embedded, [vector_metadata(*r[2:]) for r in rows]
            )
    with db.transaction() as cur:
        cur.execute(
            f"DELETE FROM vector_journal WHERE list_contains({sql_list('ids')}, memory_id)",
            {"ids": json_list(e[0] for e in entries)},
        )
    log.info("replayed %d vector journal entries left by an interrupted write", len(entries))
    return len(entries)


SESSION_KEY = "session_open"
DURABLE_KEY = "vectors_durable_seq"
_CHUNK = 1000


def begin_session(
    db: Database, vectors: VectorStore | StagedVectorStore, embedder: Embedder
) -> int:
    """Replay the journal, repair Chroma after a crashed session, and mark the store in use.

    Returns:
        How many memories were re-upserted because the previous session did not close.
    """
    replay_vector_journal(db, vectors, embedder)
    repaired = 0
    if vectors.embedded and db.get_meta(SESSION_KEY) == "1":
        mark = int(db.get_meta(DURABLE_KEY) or 0)
        rows = db.fetchall(
            "SELECT m.id, m.text, m.fact_type, m.occurred_start, m.occurred_end, "
            "m.mentioned_at, b.collection FROM memories AS m "
            "JOIN banks AS b ON b.bank_id = m.bank_id WHERE m.seq > ? ORDER BY m.seq",
            [mark],
        )
        for start in range(0, len(rows), _CHUNK):
            chunk = rows[start : start + _CHUNK]
            embedded = np.asarray(embedder.embed([r[1] for r in chunk]), dtype=np.float32)
            for collection in {r[6] for r in chunk}:
                picked = [i for i, r in enumerate(chunk) if r[6] == collection]
                vectors.upsert(
                    collection,
                    [chunk[i][0] for i in picked],
                    embedded[picked],
                    [vector_metadata(*chunk[i][2:6]) for i in picked],
                )
        repaired = len(rows)
        if repaired:
            log.warning(
                "the last session did not close cleanly: re-upserted %d vectors written "
                "since its last clean close",
                repaired,
            )
    with db.transaction() as cur:
        _set_meta(cur, SESSION_KEY, "1")
    return repaired


def end_session(db: Database) -> None:
    """Record a clean close: every vector written so far is durable in Chroma."""
    with db.transaction() as cur:
        (high,) = cur.execute("SELECT coalesce(max(seq), 0) FROM memories").fetchone()
        _set_meta(cur, DURABLE_KEY, str(high))
        _set_meta(cur, SESSION_KEY, "0")


def _set_meta(cur: Any, key: str, value: str) -> None:
    cur.execute(
        "INSERT INTO meta VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = ?",
        [key, value, value],
    )
