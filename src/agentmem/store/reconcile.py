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

Vectors can also be lost outside any session: the ``chroma/`` folder deleted, or restored from
an older backup than the DuckDB file. Every open compares each bank's vector count with its
memory count; a bank that differs has its missing vectors re-embedded from the stored text
(and vectors of no memory removed), with a warning. :func:`repair_vectors` with
``thorough=True`` (``AgentMemory.repair``, ``agentmem repair``) compares the ids themselves.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from agentmem.config import BankConfig
from agentmem.errors import NotFoundError
from agentmem.protocols import Embedder
from agentmem.retain.pieces import PIECE_FACT_TYPES, piece_texts, readable, stored_pieces
from agentmem.retain.slots import ANY_FAMILY_WORDS, is_kept_current, kept_slots
from agentmem.retain.supersession import keep_slots
from agentmem.store.changes import record_change
from agentmem.store.database import Database
from agentmem.store.dialect import regex_search, share_lock
from agentmem.store.records import json_list, require_bank, sql_list, write_pieces
from agentmem.store.staged_vectors import DROP, StagedVectorStore
from agentmem.store.vectors import VectorStore, vector_metadata

if TYPE_CHECKING:
    from agentmem.engine import Engine

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
        _reembed(db, vectors, embedder, collection, adds)
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
    db: Database,
    vectors: VectorStore | StagedVectorStore,
    embedder: Embedder,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Replay the journal, repair Chroma after a crashed session or a lost vector folder
    (``progress`` follows the re-embedding), and mark the store in use.

    Returns:
        How many memories were re-upserted because the previous session did not close.
    """
    replay_vector_journal(db, vectors, embedder)
    repaired = 0
    if vectors.embedded and db.get_meta(SESSION_KEY) == "1":
        mark = int(db.get_meta(DURABLE_KEY) or 0)
        rows = db.fetchall(
            "SELECT b.collection, array_agg(m.id ORDER BY m.seq) FROM memories AS m "
            "JOIN banks AS b ON b.bank_id = m.bank_id WHERE m.seq > ? GROUP BY b.collection",
            [mark],
        )
        for collection, ids in rows:
            _reembed(db, vectors, embedder, collection, ids)
        repaired = sum(len(ids) for _, ids in rows)
        if repaired:
            log.warning(
                "the last session did not close cleanly: re-upserted %d vectors written "
                "since its last clean close",
                repaired,
            )
    repair_vectors(db, vectors, embedder, progress=progress)
    with db.transaction() as cur:
        _set_meta(cur, SESSION_KEY, "1")
    return repaired


@dataclass(frozen=True, slots=True)
class VectorRepair:
    """What :func:`repair_vectors` did: vectors re-embedded from DuckDB, vectors of no memory
    removed from Chroma; :func:`repair_pieces`: memories given their piece vectors; and
    :func:`repair_slots`: statements whose slots were read and kept again."""

    reembedded: int = 0
    removed: int = 0
    pieces: int = 0
    slots: int = 0


def repair_vectors(
    db: Database,
    vectors: VectorStore | StagedVectorStore,
    embedder: Embedder,
    *,
    thorough: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> VectorRepair:
    """Give every memory its vector again, and drop vectors of no memory.

    A bank is looked at when its vector count differs from its memory count, or always when
    ``thorough``. ``progress(done, total)`` follows the re-embedding.
    """
    banks = db.fetchall(
        "SELECT b.bank_id, b.collection, count(m.id) FROM banks AS b "
        "LEFT JOIN memories AS m ON m.bank_id = b.bank_id "
        "GROUP BY b.bank_id, b.collection ORDER BY 1"
    )
    plan: list[tuple[str, list[str]]] = []
    removed = 0
    for bank_id, collection, count in banks:
        if not thorough and vectors.count(collection) == count:
            continue
        stored = vectors.ids(collection)
        memory_ids = {
            r[0] for r in db.fetchall("SELECT id FROM memories WHERE bank_id = ?", [bank_id])
        }
        orphans = sorted(stored - memory_ids)
        vectors.delete(collection, orphans)
        removed += len(orphans)
        missing = sorted(memory_ids - stored)
        if missing:
            log.warning(
                "bank %r: %d of its %d memories have no vector (was the chroma folder deleted "
                "or restored from an older backup?); re-embedding them from the stored text",
                bank_id,
                len(missing),
                len(memory_ids),
            )
            plan.append((collection, missing))
    total = sum(len(ids) for _, ids in plan)
    done = 0
    for collection, ids in plan:
        for start in range(0, len(ids), _CHUNK):
            done += _reembed(db, vectors, embedder, collection, ids[start : start + _CHUNK])
            if progress:
                progress(done, total)
    return VectorRepair(reembedded=done, removed=removed)


def _reembed(
    db: Database,
    vectors: VectorStore | StagedVectorStore,
    embedder: Embedder,
    collection: str,
    ids: list[str],
) -> int:
    """Embed the stored text of these memories (those that still exist) and upsert it, in
    chunks; returns how many were upserted."""
    made_with = db.fetchall(
        "SELECT bank_id, embedder, dimension FROM banks WHERE collection = ?", [collection]
    )
    if not made_with:
        return 0  # the bank was deleted: its collection goes with it
    bank_id = made_with[0][0]
    if tuple(made_with[0][1:]) != (embedder.name, embedder.dimension):
        # Vectors of another model would not be comparable with the bank's: they are
        # re-embedded when the store is opened with the bank's own embedder.
        log.warning(
            "bank %r was made with embedder %r, not %r: its vectors are repaired when the "
            "store is opened with that one",
            *made_with[0][:2],
            embedder.name,
        )
        return 0
    done = 0
    for start in range(0, len(ids), _CHUNK):
        rows = db.fetchall(
            "SELECT id, text, fact_type, occurred_start, occurred_end, mentioned_at "
            f"FROM memories WHERE bank_id = $bank AND list_contains({sql_list('ids')}, id)",
            {"bank": bank_id, "ids": json_list(ids[start : start + _CHUNK])},
        )
        if not rows:
            continue
        embedded = np.asarray(embedder.embed([r[1] for r in rows]), dtype=np.float32)
        with db.transaction() as cur:
            held = _still_held(cur, bank_id, collection, [r[0] for r in rows])
            keep = [k for k, row in enumerate(rows) if row[0] in held]
            vectors.upsert(
                collection,
                [rows[k][0] for k in keep],
                embedded[keep],
                [vector_metadata(*rows[k][2:]) for k in keep],
            )
        done += len(keep)
    return done


def _still_held(cur: Any, bank_id: str, collection: str, ids: list[str]) -> set[str]:  # noqa: ANN401
    """In a repair's write transaction: those of ``ids`` the bank (this incarnation of it)
    still holds, none once it is deleted, each kept from being deleted until the transaction
    ends. Another process may have forgotten them, or deleted the bank, while they were being
    embedded (in one process the write lock keeps both out)."""
    try:
        require_bank(cur, bank_id, collection)
    except NotFoundError:
        return set()
    found = cur.execute(
        f"SELECT id FROM memories WHERE bank_id = $bank AND list_contains({sql_list('ids')}, id)"
        + share_lock(cur),
        {"bank": bank_id, "ids": json_list(ids)},
    ).fetchall()
    return {row[0] for row in found}


def repair_pieces(engine: Engine) -> int:
    """Give every fact whose text has pieces (``retain/pieces.py``) its piece vectors: facts
    stored before pieces were (an upgraded store), and those whose stored value does not
    decode. Banks made with another embedder, or set to keep no pieces, are left alone.
    Returns how many were written."""
    db, embedder = engine.db, engine.embedder
    banks = [
        (bank_id, collection)
        for bank_id, collection, config in db.fetchall(
            "SELECT bank_id, collection, config FROM banks WHERE embedder = ? AND dimension = ? "
            "ORDER BY bank_id",
            [embedder.name, embedder.dimension],
        )
        if BankConfig.from_mapping(json.loads(config) if config else {}).pieces
    ]
    kinds = ", ".join(f"'{kind}'" for kind in sorted(PIECE_FACT_TYPES))
    written = 0
    for bank_id, collection in banks:
        rows = db.fetchall(
            f"SELECT id, text, piece_vectors FROM memories WHERE bank_id = ? "
            f"AND fact_type IN ({kinds}) ORDER BY seq",
            [bank_id],
        )
        wanted = [
            (memory_id, text)
            for memory_id, text, stored in rows
            if (piece_texts(text) if stored is None else not readable(stored, embedder.dimension))
        ]
        for start in range(0, len(wanted), _CHUNK):
            chunk = wanted[start : start + _CHUNK]
            pieces = stored_pieces(embedder, [text for _, text in chunk])
            with db.transaction() as cur:
                held = _still_held(cur, bank_id, collection, [i for i, _ in chunk])
                if not held:
                    continue
                engine.begin_write(cur, bank_id)
                kept = [(i, p) for (i, _), p in zip(chunk, pieces, strict=True) if i in held]
                write_pieces(cur, dict(kept))
                version = record_change(db, cur, bank_id, "repair", [i for i, _ in kept])
            engine.bank_changed(bank_id, version)
            written += len(kept)
    return written


def repair_slots(engine: Engine) -> int:
    """Keep with every stored statement the slots the current rules read in it
    (``retain/slots.py``): statements stored before slots were kept, imported, or kept under
    other rules (an upgrade of agentmem) are otherwise parsed again by the first retains that
    need them (on a 100k bank, ~10k parses over the first 150 sessions). Returns how many
    were written."""
    db = engine.db
    written = 0
    for (bank_id,) in db.fetchall("SELECT bank_id FROM banks ORDER BY bank_id"):
        with db.snapshot() as cur:  # a read: no writer need wait for it
            rows = cur.execute(
                "SELECT id, seq, text, statement_slots FROM memories WHERE bank_id = $bank "
                "AND fact_type IN ('world', 'experience') "
                f"AND {regex_search(cur, 'text', 'words')} ORDER BY seq",
                {"bank": bank_id, "words": ANY_FAMILY_WORDS},
            ).fetchall()
        stale = [row for row in rows if not is_kept_current(row[3])]
        for first in range(0, len(stale), _CHUNK):
            chunk = stale[first : first + _CHUNK]
            kept = kept_slots([text for _, _, text, _ in chunk])
            # A text with a family's word may fill no slot ("I love working here"): it keeps
            # nothing, and nothing is written for it.
            changed = [
                (memory_id, seq, value)
                for (memory_id, seq, _, old), value in zip(chunk, kept, strict=True)
                if value != old
            ]
            if changed:
                with db.transaction() as cur:
                    # A row changed since (its seq moved) is left to the retain that reads it.
                    keep_slots(cur, bank_id, changed)
            written += len(changed)
    return written


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
