"""Export a bank to JSON Lines and import it back, exactly.

The file is one JSON object per line, each with a ``"type"``:

1. ``"agentmem-export"``: the header (format version, bank id, embedder, counts);
2. ``"episode"``: raw content kept verbatim, with its times and metadata;
3. ``"entity"``: canonical name, kind, aliases;
4. ``"memory"``: every column of the fact (texts indexed for keyword search included), its
   entity ids and, unless exported without, its vector as base64 float32;
5. ``"link"``: typed, weighted edges between memories.

Times are ISO 8601 in UTC. Import re-creates every row with the same ids (fresh ids, mapped
consistently, only if the target store already uses one of them), in one DuckDB transaction;
vectors then go to Chroma in chunks through the vector journal, as retain does, so a crash
part-way is finished on the next open. Vectors are re-embedded when the file has none or was
made with another embedder.
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import numpy as np

from agentmem._time import optional_utc
from agentmem.errors import InvalidInputError, StorageError
from agentmem.store.records import (
    from_db_time,
    insert_rows,
    json_list,
    sql_list,
    to_db_time,
)
from agentmem.store.vectors import vector_metadata

if TYPE_CHECKING:
    from agentmem.engine import Engine

FORMAT = 1
HEADER_TYPE = "agentmem-export"
_CHUNK = 1000

ProgressCallback = Callable[[int, int], None]
"""Called as ``progress(memories_done, memories_total)``."""


def _iso(value: datetime | None) -> str | None:
    aware = from_db_time(value)
    return None if aware is None else aware.isoformat()


def _db_time(value: object, field: str) -> datetime | None:
    return to_db_time(optional_utc(value, field=field))


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
            "SELECT id, name, kind, aliases, created_at FROM entities WHERE bank_id = ? "
            "ORDER BY created_at, id",
            [bank_id],
        )
        memories = db.fetchall(
            "SELECT m.id, m.episode_id, m.text, m.search_text, m.context_text, m.fact_type, "
            "m.occurred_start, m.occurred_end, m.mentioned_at, m.tags, m.importance, "
            "m.access_count, m.document_id, m.context, m.metadata, m.created_at, "
            "(SELECT list(me.entity_id ORDER BY me.entity_id) FROM memory_entities AS me "
            " WHERE me.memory_id = m.id), m.content_hash "
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
        with Path(path).open("w", encoding="utf-8") as out:

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
                    }
                )
            for start in range(0, len(memories), _CHUNK):
                chunk = memories[start : start + _CHUNK]
                stored = (
                    engine.vectors.get_vectors(collection, [m[0] for m in chunk]) if vectors else {}
                )
                for m in chunk:
                    write(_memory_line(m, stored.get(m[0])))
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


def _memory_line(m: tuple[Any, ...], vector: np.ndarray | None) -> dict[str, Any]:
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
    }


def read_header(path: str | Path) -> dict[str, Any]:
    """The header line of an export file.

    Raises:
        InvalidInputError: The file is not an agentmem export of a known format.
    """
    try:
        with Path(path).open(encoding="utf-8") as handle:
            header = json.loads(handle.readline())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidInputError(f"{path} is not an agentmem export: {exc}") from exc
    if not isinstance(header, dict) or header.get("type") != HEADER_TYPE:
        raise InvalidInputError(f"{path} is not an agentmem export (no header line)")
    if header.get("format") != FORMAT:
        raise InvalidInputError(f"{path} has export format {header.get('format')!r}, not 1")
    if not isinstance(header.get("bank_id"), str) or not isinstance(header.get("counts"), dict):
        raise InvalidInputError(f"{path} has a malformed header line")
    return header


def _lines(path: str | Path) -> Iterator[dict[str, Any]]:
    with Path(path).open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if number == 1 or not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InvalidInputError(f"line {number} of {path} is not JSON: {exc}") from exc
            if not isinstance(obj, dict) or "type" not in obj:
                raise InvalidInputError(f"line {number} of {path} has no type")
            yield obj


def _id_map(engine: Engine, path: str | Path) -> Callable[[str], str]:
    """Identity, unless the store already holds one of the file's ids: then fresh ids."""
    ids = [obj["id"] for obj in _lines(path) if obj["type"] in ("episode", "entity", "memory")]
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
    path: str | Path,
    bank_id: str,
    collection: str,
    *,
    progress: ProgressCallback | None = None,
) -> int:
    """Load an export into the empty bank ``bank_id``; returns the number of memories."""
    header = read_header(path)
    embedder = engine.embedder
    reuse_vectors = bool(header.get("vectors")) and (
        header.get("embedder"),
        header.get("dimension"),
    ) == (embedder.name, embedder.dimension)
    total = header["counts"].get("memories", 0)
    total = total if isinstance(total, int) else 0
    with engine.db.write_lock:
        if engine.db.fetchall("SELECT count(*) FROM memories WHERE bank_id = ?", [bank_id])[0][0]:
            raise InvalidInputError(
                f"bank {bank_id!r} already holds memories; import needs it empty"
            )
        new_id = _id_map(engine, path)
        try:
            with engine.db.transaction() as cur:
                cur.execute(
                    "UPDATE banks SET config = ? WHERE bank_id = ?",
                    [json.dumps(header.get("config") or {}), bank_id],
                )
                memory_ids = _insert_rows(engine, cur, path, bank_id, new_id)
        except (duckdb.ConstraintException, duckdb.ConversionException) as exc:
            # NULL in a required field, a duplicate id, a value of the wrong type.
            raise InvalidInputError(f"{path} does not hold a valid bank: {exc}") from exc
        except duckdb.Error as exc:
            raise StorageError(f"import failed: {exc}") from exc
        finally:
            engine.entity_indexes.pop(bank_id, None)
            engine.resolvers.pop(bank_id, None)
            engine.graphs.pop(bank_id, None)
            engine.bank_changed(bank_id)
        _write_vectors(engine, path, bank_id, collection, new_id, reuse_vectors, total, progress)
    engine.keyword.maybe_fold()
    return len(memory_ids)


def _insert_rows(
    engine: Engine, cur: Any, path: str | Path, bank_id: str, new_id: Callable[[str], str]
) -> list[str]:
    batches: dict[str, list[tuple[Any, ...]]] = {
        "episodes": [],
        "entities": [],
        "memories": [],
        "links": [],
        "entity_corrections": [],
    }
    memory_ids: list[str] = []
    for number, obj in enumerate(_lines(path), start=2):
        try:
            _collect(obj, batches, memory_ids, bank_id, new_id)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise InvalidInputError(
                f"line {number} of {path} is not a valid {obj.get('type')!r} record: {exc!r}"
            ) from exc
    # Episodes and entities first: memories refer to them.
    for table in ("episodes", "entities"):
        for start in range(0, len(batches[table]), _CHUNK):
            insert_rows(cur, table, batches[table][start : start + _CHUNK])
    rows = batches["memories"]
    for start in range(0, len(rows), _CHUNK):
        chunk = rows[start : start + _CHUNK]
        seqs = sorted(
            s
            for (s,) in cur.execute(
                "SELECT nextval('memory_seq') FROM range(?)", [len(chunk)]
            ).fetchall()
        )
        insert_rows(
            cur, "memories", [(r[0], seq, *r[2:-1]) for r, seq in zip(chunk, seqs, strict=True)]
        )
        # t: the memory's time, as retain sets it (occurrence start, else mention).
        insert_rows(
            cur,
            "memory_entities",
            [(r[0], e, bank_id, r[8] or r[10]) for r in chunk for e in r[-1]],
        )
        engine.keyword.add_pending(cur, seqs[0], seqs[-1])
        insert_rows(cur, "vector_journal", [(r[0], bank_id, "add") for r in chunk])
    for table in ("links", "entity_corrections"):
        for start in range(0, len(batches[table]), _CHUNK):
            insert_rows(cur, table, batches[table][start : start + _CHUNK])
    return memory_ids


def _collect(
    obj: Mapping[str, Any],
    batches: dict[str, list[tuple[Any, ...]]],
    memory_ids: list[str],
    bank_id: str,
    new_id: Callable[[str], str],
) -> None:
    """Turn one line into a row of its table (in ``batches``)."""
    kind = obj["type"]
    if kind == "episode":
        batches["episodes"].append(
            (
                new_id(obj["id"]),
                bank_id,
                json.dumps(obj["content"], ensure_ascii=False),
                obj.get("document_id"),
                obj.get("context"),
                _db_time(obj["mentioned_at"], "mentioned_at"),
                json.dumps(obj.get("metadata") or {}, ensure_ascii=False),
                _db_time(obj["created_at"], "created_at"),
                _content_hash(obj),
            )
        )
    elif kind == "entity":
        batches["entities"].append(
            (
                new_id(obj["id"]),
                bank_id,
                obj["name"],
                obj["kind"],
                list(obj.get("aliases") or ()),
                _db_time(obj["created_at"], "created_at"),
            )
        )
    elif kind == "memory":
        if obj.get("vector") is not None:
            _decode_vector(obj["vector"])  # a bad vector fails here, before anything commits
        batches["memories"].append(_memory_row(obj, bank_id, new_id))
        memory_ids.append(new_id(obj["id"]))
    elif kind == "link":
        batches["links"].append(
            (
                bank_id,
                new_id(obj["src_id"]),
                new_id(obj["dst_id"]),
                obj["kind"],
                float(obj["weight"]),
                _db_time(obj["created_at"], "created_at"),
            )
        )
    elif kind == "entity_correction":
        if obj["op"] not in ("alias", "split"):
            raise ValueError(f"unknown entity correction {obj['op']!r}")
        batches["entity_corrections"].append(
            (
                bank_id,
                obj["op"],
                str(obj["name"]),
                str(obj["target"]),
                _db_time(obj["created_at"], "created_at"),
            )
        )
    else:
        raise ValueError(f"unknown line type {kind!r}")


def _memory_row(
    obj: Mapping[str, Any], bank_id: str, new_id: Callable[[str], str]
) -> tuple[Any, ...]:
    """A memories row (seq placeholder 0) followed by the memory's entity ids."""
    episode = obj.get("episode_id")
    return (
        new_id(obj["id"]),
        0,
        bank_id,
        new_id(episode) if episode else None,
        obj["text"],
        obj["search_text"],
        obj["context_text"],
        obj["fact_type"],
        _db_time(obj.get("occurred_start"), "occurred_start"),
        _db_time(obj.get("occurred_end"), "occurred_end"),
        _db_time(obj["mentioned_at"], "mentioned_at"),
        list(obj.get("tags") or ()),
        float(obj["importance"]),
        int(obj.get("access_count") or 0),
        obj.get("document_id"),
        obj.get("context"),
        json.dumps(obj.get("metadata") or {}, ensure_ascii=False),
        _db_time(obj["created_at"], "created_at"),
        _content_hash(obj),
        [new_id(e) for e in obj.get("entity_ids") or ()],
    )


def _content_hash(obj: Mapping[str, Any]) -> str | None:
    """The line's content hash (retain/repeats.py); files written before it have none."""
    value = obj.get("content_hash")
    if value is not None and not isinstance(value, str):
        raise TypeError("content_hash must be a string")
    return value


def _decode_vector(text: object) -> np.ndarray:
    if not isinstance(text, str):
        raise TypeError("vector must be base64 text")
    vector = np.frombuffer(base64.b64decode(text, validate=True), dtype="<f4")
    if not vector.size or not np.isfinite(vector).all():
        raise ValueError("vector is empty or not finite")
    return vector


def _vector_metadata(memory: Mapping[str, Any]) -> dict[str, str | float]:
    return vector_metadata(
        memory["fact_type"],
        optional_utc(memory.get("occurred_start"), field="occurred_start"),
        optional_utc(memory.get("occurred_end"), field="occurred_end"),
        optional_utc(memory["mentioned_at"], field="mentioned_at"),  # type: ignore[arg-type]
    )


def _write_vectors(
    engine: Engine,
    path: str | Path,
    bank_id: str,
    collection: str,
    new_id: Callable[[str], str],
    reuse: bool,
    total: int,
    progress: ProgressCallback | None,
) -> None:
    """Second pass over the file: vectors to Chroma in chunks, clearing the journal."""
    chunk: list[Mapping[str, Any]] = []
    done = 0

    def flush() -> None:
        nonlocal done
        ids = [new_id(m["id"]) for m in chunk]
        if reuse and all(m.get("vector") for m in chunk):
            vectors = np.stack([_decode_vector(m["vector"]) for m in chunk])
        else:
            vectors = np.asarray(engine.embedder.embed([m["text"] for m in chunk]), np.float32)
        engine.vectors.upsert(collection, ids, vectors, [_vector_metadata(m) for m in chunk])
        engine.db.execute(
            f"DELETE FROM vector_journal WHERE bank_id = $bank "
            f"AND list_contains({sql_list('ids')}, memory_id)",
            {"bank": bank_id, "ids": json_list(ids)},
        )
        done += len(chunk)
        chunk.clear()
        if progress:
            progress(done, total)

    for obj in _lines(path):
        if obj["type"] == "memory":
            chunk.append(obj)
            if len(chunk) >= _CHUNK:
                flush()
    if chunk:
        flush()
