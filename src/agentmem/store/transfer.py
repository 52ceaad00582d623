"""Export a bank to JSON Lines and import it back, exactly.

The file is one JSON object per line, each with a ``"type"``:

1. ``"agentmem-export"``: the header (format version, bank id, embedder, counts);
2. ``"episode"``: raw content kept verbatim, with its times and metadata;
3. ``"entity"``: canonical name, kind, aliases, kind votes;
4. ``"memory"``: every column of the fact (texts indexed for keyword search included), its
   entity ids and, unless exported without, its vector as base64 float32;
5. ``"link"``: typed, weighted edges between memories;
6. ``"entity_correction"``: the user's alias and split corrections of entity resolution.

Times are ISO 8601 in UTC. Import first checks the whole file (``store/import_check.py``):
a file that breaks the contract of retain, link or configure anywhere is refused before
anything is written. It then re-creates every row with the same ids (fresh ids, mapped
consistently, only if the target store already uses one of them), in one transaction;
vectors then go to Chroma in chunks through the vector journal, as retain does, so a crash
part-way is finished on the next open. A store whose vectors live in its database
(PostgreSQL) writes them in that transaction instead: the import is all or nothing, for every
reader and against a crash. Vectors are re-embedded when the file has none or was made with
another embedder.
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from agentmem.config import as_path
from agentmem.errors import InvalidInputError, StorageError
from agentmem.retain.pieces import PIECE_FACT_TYPES, stored_pieces
from agentmem.store.changes import record_change
from agentmem.store.import_check import (
    FORMAT,
    HEADER_TYPE,
    CheckedExport,
    ImportedMemory,
    decode_vector,
    read_lines,
)
from agentmem.store.records import (
    from_db_time,
    insert_bank,
    insert_rows,
    json_list,
    require_bank,
    sql_list,
)
from agentmem.store.vectors import vector_metadata

if TYPE_CHECKING:
    from agentmem.engine import Engine

_CHUNK = 1000
#: Metadata fields that name other memories of the bank: an observation's evidence and the
#: observations that contradict a fact (``consolidate/observations.py``).
MEMORY_REFERENCES = ("source_memory_ids", "contradicted_by")

ProgressCallback = Callable[[int, int], None]
"""Called as ``progress(memories_done, memories_total)``."""


def _iso(value: datetime | None) -> str | None:
    aware = from_db_time(value)
    return None if aware is None else aware.isoformat()


def _vector_text(vector: np.ndarray | None) -> str | None:
    if vector is None:
        return None
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")


def export_bank(
    engine: Engine,
    bank_id: str,
    collection: str,
    path: str | Path,
    *,
    vectors: bool = True,
    progress: ProgressCallback | None = None,
) -> int:
    """Write a bank to ``path`` as JSON Lines; returns the number of memories written."""
    path = as_path(path)
    db = engine.db
    with db.write_lock:  # a consistent snapshot: no write lands while the rows are read
        header_row = db.fetchall(
            "SELECT embedder, dimension, config, created_at FROM banks WHERE bank_id = ?",
            [bank_id],
        )[0]
        counts = {
            table: db.fetchall(f"SELECT count(*) FROM {table} WHERE bank_id = ?", [bank_id])[0][0]
            for table in ("episodes", "entities", "memories", "links")
        }
        episodes = db.fetchall(
            "SELECT id, content, document_id, context, mentioned_at, metadata, created_at, "
            "content_hash FROM episodes WHERE bank_id = ? ORDER BY created_at, id",
            [bank_id],
        )
        entities = db.fetchall(
            "SELECT id, name, kind, aliases, created_at, kind_votes FROM entities "
            "WHERE bank_id = ? "
            "ORDER BY created_at, id",
            [bank_id],
        )
        memories = db.fetchall(
            "SELECT m.id, m.episode_id, m.text, m.search_text, m.context_text, m.fact_type, "
            "m.occurred_start, m.occurred_end, m.mentioned_at, m.tags, m.importance, "
            "m.access_count, m.document_id, m.context, m.metadata, m.created_at, "
            "(SELECT array_agg(me.entity_id ORDER BY me.entity_id) FROM memory_entities AS me "
            " WHERE me.memory_id = m.id), m.content_hash, m.piece_vectors "
            "FROM memories AS m WHERE m.bank_id = ? ORDER BY m.seq",
            [bank_id],
        )
        links = db.fetchall(
            "SELECT src_id, dst_id, kind, weight, created_at FROM links WHERE bank_id = ? "
            "ORDER BY created_at, src_id, dst_id, kind",
            [bank_id],
        )
        corrections = db.fetchall(
            "SELECT op, name, target, created_at FROM entity_corrections WHERE bank_id = ? "
            "ORDER BY created_at",
            [bank_id],
        )
        try:
            out = path.open("w", encoding="utf-8")  # noqa: SIM115 (closed below)
        except OSError as exc:
            raise StorageError(f"cannot write the export to {path}: {exc.strerror}") from exc
        with out:

            def write(obj: Mapping[str, Any]) -> None:
                out.write(json.dumps(obj, ensure_ascii=False) + "\n")

            write(
                {
                    "type": HEADER_TYPE,
                    "format": FORMAT,
                    "bank_id": bank_id,
                    "embedder": header_row[0],
                    "dimension": header_row[1],
                    "config": json.loads(header_row[2]) if header_row[2] else {},
                    "created_at": _iso(header_row[3]),
                    "counts": counts,
                    "vectors": vectors,
                }
            )
            for e in episodes:
                write(
                    {
                        "type": "episode",
                        "id": e[0],
                        "content": json.loads(e[1]),
                        "document_id": e[2],
                        "context": e[3],
                        "mentioned_at": _iso(e[4]),
                        "metadata": json.loads(e[5]) if e[5] else {},
                        "created_at": _iso(e[6]),
                        "content_hash": e[7],
                    }
                )
            for e in entities:
                write(
                    {
                        "type": "entity",
                        "id": e[0],
                        "name": e[1],
                        "kind": e[2],
                        "aliases": list(e[3] or ()),
                        "created_at": _iso(e[4]),
                        "kind_votes": json.loads(e[5]) if e[5] else {},
                    }
                )
            for start in range(0, len(memories), _CHUNK):
                chunk = memories[start : start + _CHUNK]
                stored = (
                    engine.vectors.get_vectors(collection, [m[0] for m in chunk]) if vectors else {}
                )
                for m in chunk:
                    write(_memory_line(m, stored.get(m[0]), with_pieces=vectors))
                if progress:
                    progress(start + len(chunk), len(memories))
            for link in links:
                write(
                    {
                        "type": "link",
                        "src_id": link[0],
                        "dst_id": link[1],
                        "kind": link[2],
                        "weight": link[3],
                        "created_at": _iso(link[4]),
                    }
                )
            for op, name, target, created in corrections:
                write(
                    {
                        "type": "entity_correction",
                        "op": op,
                        "name": name,
                        "target": target,
                        "created_at": _iso(created),
                    }
                )
    return len(memories)


def _memory_line(
    m: tuple[Any, ...], vector: np.ndarray | None, *, with_pieces: bool
) -> dict[str, Any]:
    return {
        "type": "memory",
        "id": m[0],
        "episode_id": m[1],
        "text": m[2],
        "search_text": m[3],
        "context_text": m[4],
        "fact_type": m[5],
        "occurred_start": _iso(m[6]),
        "occurred_end": _iso(m[7]),
        "mentioned_at": _iso(m[8]),
        "tags": list(m[9] or ()),
        "importance": m[10],
        "access_count": m[11],
        "document_id": m[12],
        "context": m[13],
        "metadata": json.loads(m[14]) if m[14] else {},
        "created_at": _iso(m[15]),
        "entity_ids": list(m[16] or ()),
        "content_hash": m[17],
        "vector": _vector_text(vector),
        "pieces": m[18] if with_pieces else None,
    }


def _id_map(engine: Engine, ids: list[str]) -> Callable[[str], str]:
    """Identity, unless the store already holds one of the file's ids: then fresh ids."""
    taken = 0
    for start in range(0, len(ids), 10_000):
        batch = json_list(ids[start : start + 10_000])
        taken += sum(
            engine.db.fetchall(
                f"SELECT count(*) FROM {table} WHERE list_contains({sql_list('ids')}, id)",
                {"ids": batch},
            )[0][0]
            for table in ("episodes", "entities", "memories")
        )
    if not taken:
        return lambda old: old
    fresh: dict[str, str] = {}
    return lambda old: fresh.setdefault(old, uuid.uuid4().hex)


def import_bank(
    engine: Engine,
    checked: CheckedExport,
    bank_id: str,
    collection: str,
    *,
    create: bool = False,
    progress: ProgressCallback | None = None,
) -> int:
    """Write a checked export into the empty bank ``bank_id``; returns the number of memories.

    With ``create`` the bank is new: its row (owning ``collection``, which exists in the
    vector store) is created in the import's transaction.

    Raises:
        InvalidInputError: The bank already holds memories or episodes, or a new bank was
            created meanwhile by another writer.
        StorageError: The store failed (the rows then rolled back).
    """
    journalled = not engine.vectors.writes_in_transaction
    with engine.db.write_lock:
        version = None
        try:
            with engine.db.transaction() as cur:
                if create and not insert_bank(
                    cur, bank_id, collection, engine.embedder.name, engine.embedder.dimension, "{}"
                ):
                    raise InvalidInputError(
                        f"bank {bank_id!r} was created by another writer during the import; "
                        "import again"
                    )
                require_bank(cur, bank_id, collection)
                engine.begin_write(cur, bank_id)
                # Under the bank's lock: of two imports into one empty bank (two replicas),
                # the second finds the first's rows.
                for table in ("memories", "episodes"):
                    sql = f"SELECT count(*) FROM {table} WHERE bank_id = ?"
                    if cur.execute(sql, [bank_id]).fetchall()[0][0]:
                        raise InvalidInputError(
                            f"bank {bank_id!r} already holds {table}; import needs it empty"
                        )
                new_id = _id_map(engine, checked.ids())
                cur.execute(
                    "UPDATE banks SET config = ? WHERE bank_id = ?",
                    [json.dumps(checked.config.to_mapping()), bank_id],
                )
                _insert_rows(engine, cur, checked, bank_id, new_id, journalled=journalled)
                if not journalled:
                    _write_vectors(engine, checked, bank_id, collection, new_id, progress)
                version = record_change(engine.db, cur, bank_id, "import")
        finally:
            engine.drop_mirrors(bank_id)
            engine.bank_changed(bank_id, version)
        if journalled:
            _write_vectors(engine, checked, bank_id, collection, new_id, progress)
    engine.keyword.maybe_fold()
    return len(checked.memories)


def _insert_rows(
    engine: Engine,
    cur: Any,
    checked: CheckedExport,
    bank_id: str,
    new_id: Callable[[str], str],
    *,
    journalled: bool,
) -> None:
    """Every row of the file, with the bank's id and the ids of ``new_id`` (and, when the
    vectors are ``journalled``, the journal entries of the vectors to write after commit)."""

    def chunks(rows: list[tuple[Any, ...]]) -> Iterator[list[tuple[Any, ...]]]:
        for start in range(0, len(rows), _CHUNK):
            yield rows[start : start + _CHUNK]

    # Episodes and entities first: memories refer to them.
    for rows in chunks(checked.episodes):
        insert_rows(cur, "episodes", [(new_id(e[0]), bank_id, *e[1:]) for e in rows])
    for rows in chunks(checked.entities):
        insert_rows(cur, "entities", [(new_id(e[0]), bank_id, *e[1:]) for e in rows])
    lines = _memory_lines(checked)
    file_ids = {m.id for m in checked.memories}
    for chunk in chunks(checked.memories):  # type: ignore[arg-type]
        chunk = [m._replace(metadata=_renamed(m.metadata, new_id, file_ids)) for m in chunk]
        seqs = sorted(
            s
            for (s,) in cur.execute(
                "SELECT nextval('memory_seq') FROM generate_series(1, ?)", [len(chunk)]
            ).fetchall()
        )
        insert_rows(
            cur,
            "memories",
            [
                (
                    new_id(m.id),
                    seq,
                    bank_id,
                    None if m.episode_id is None else new_id(m.episode_id),
                    *m[2:-1],
                    pieces,
                    None,  # the statements' slots: read again when supersession asks
                )
                for m, seq, pieces in zip(
                    chunk, seqs, _pieces(engine, checked, chunk, lines), strict=True
                )
            ],
        )
        # t: the memory's time, as retain sets it (occurrence start, else mention).
        insert_rows(
            cur,
            "memory_entities",
            [
                (new_id(m.id), new_id(e), bank_id, m.occurred_start or m.mentioned_at)
                for m in chunk
                for e in m.entity_ids
            ],
        )
        engine.keyword.add_pending(cur, seqs[0], seqs[-1])
        if journalled:
            insert_rows(cur, "vector_journal", [(new_id(m.id), bank_id, "add") for m in chunk])
    for rows in chunks(checked.links):
        insert_rows(
            cur, "links", [(bank_id, new_id(src), new_id(dst), *rest) for src, dst, *rest in rows]
        )
    for rows in chunks(checked.corrections):
        insert_rows(cur, "entity_corrections", [(bank_id, *c) for c in rows])


def _renamed(metadata: str, new_id: Callable[[str], str], file_ids: set[str]) -> str:
    """The metadata with the memories it names (:data:`MEMORY_REFERENCES`) under their ids in
    this store: an observation imported under fresh ids cites its own bank's facts, not the
    original bank's. Ids of memories the file does not hold are left as they are."""
    if not any(key in metadata for key in MEMORY_REFERENCES):
        return metadata
    parsed = json.loads(metadata)
    changed = False
    for key in MEMORY_REFERENCES:
        ids = parsed.get(key) if isinstance(parsed, dict) else None
        if isinstance(ids, list):
            renamed = [new_id(i) if isinstance(i, str) and i in file_ids else i for i in ids]
            changed |= renamed != ids
            parsed[key] = renamed
    return json.dumps(parsed, ensure_ascii=False) if changed else metadata


def _memory_lines(checked: CheckedExport) -> Iterator[dict[str, Any]]:
    """The file's memory lines again, in order (their vectors are not kept in memory)."""
    return (obj for _, obj in read_lines(checked.path) if obj["type"] == "memory")


def _pieces(
    engine: Engine,
    checked: CheckedExport,
    memories: list[ImportedMemory],
    lines: Iterator[dict[str, Any]],
) -> list[str | None]:
    """The memories' piece vectors (``retain/pieces.py``): the file's, when its vectors are
    reused, else embedded again from the texts (none for a bank set to keep none)."""
    stored = [obj.get("pieces") for obj in islice(lines, len(memories))]
    if checked.reuse_vectors or not checked.config.pieces:
        return stored if checked.reuse_vectors else [None] * len(memories)
    wanted = [m.text if m.fact_type in PIECE_FACT_TYPES else "" for m in memories]
    return stored_pieces(engine.embedder, wanted)


def _write_vectors(
    engine: Engine,
    checked: CheckedExport,
    bank_id: str,
    collection: str,
    new_id: Callable[[str], str],
    progress: ProgressCallback | None,
) -> None:
    """Second pass over the file: vectors to the vector store in chunks, clearing the journal
    (inside the rows' transaction when the store writes vectors there: nothing to clear)."""
    dimension = checked.header["dimension"]
    total = len(checked.memories)
    lines = _memory_lines(checked)
    done = 0
    for start in range(0, total, _CHUNK):
        chunk = checked.memories[start : start + _CHUNK]
        stored = [obj.get("vector") for obj in islice(lines, len(chunk))]
        ids = [new_id(m.id) for m in chunk]
        if checked.reuse_vectors and all(stored) and len(stored) == len(chunk):
            vectors = np.stack([decode_vector(v, dimension) for v in stored])
        else:
            vectors = np.asarray(engine.embedder.embed([m.text for m in chunk]), np.float32)
        metadata = [
            vector_metadata(m.fact_type, m.occurred_start, m.occurred_end, m.mentioned_at)
            for m in chunk
        ]
        engine.vectors.upsert(collection, ids, vectors, metadata)
        if not engine.vectors.writes_in_transaction:
            engine.db.execute(
                f"DELETE FROM vector_journal WHERE bank_id = $bank "
                f"AND list_contains({sql_list('ids')}, memory_id)",
                {"bank": bank_id, "ids": json_list(ids)},
            )
        done += len(chunk)
        if progress:
            progress(done, total)
