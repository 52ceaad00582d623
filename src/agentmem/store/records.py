"""Rows ↔ values: the SQL that reads and writes memories, episodes, entities and links.

Times are stored as naive UTC ``TIMESTAMP`` and come back as aware UTC datetimes.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

from agentmem.config import RecallConfig
from agentmem.errors import InvalidInputError, NotFoundError
from agentmem.retain.pieces import decode_pieces
from agentmem.store.database import Database
from agentmem.store.dialect import column_types, insert_json_rows, json_rows, share_lock
from agentmem.types import Memory


def to_db_time(value: datetime | None) -> datetime | None:
    """Aware datetime → naive UTC for a TIMESTAMP column."""
    return None if value is None else value.astimezone(UTC).replace(tzinfo=None)


def from_db_time(value: datetime | None) -> datetime | None:
    """Naive UTC from a TIMESTAMP column → aware datetime."""
    return None if value is None else value.replace(tzinfo=UTC)


def require_bank(cur: Any, bank_id: str, collection: str) -> None:  # noqa: ANN401
    """Raise NotFoundError unless the bank exists and is the incarnation that owns
    ``collection``.

    Every write runs this inside its transaction, under the write lock: a call that began
    before ``delete_bank`` then either committed before it or fails here, never writing rows
    of a deleted bank or into a bank re-created under the same id (each incarnation of a bank
    has a vector collection of its own).
    """
    found = cur.execute(
        "SELECT 1 FROM banks WHERE bank_id = ? AND collection = ?" + share_lock(cur),
        [bank_id, collection],
    ).fetchall()
    if not found:
        raise NotFoundError(f"no bank {bank_id!r}: it was deleted")


def insert_bank(
    cur: Any,  # noqa: ANN401
    bank_id: str,
    collection: str,
    embedder: str,
    dimension: int,
    config: str,
) -> bool:
    """Create a bank's row (``config`` as JSON text) in the caller's transaction; False when
    the bank exists already (another writer created it first)."""
    return bool(
        cur.execute(
            "INSERT INTO banks VALUES (?, ?, ?, ?, ?, now()) ON CONFLICT DO NOTHING "
            "RETURNING bank_id",
            [bank_id, collection, embedder, dimension, config],
        ).fetchall()
    )


@dataclass(frozen=True, slots=True)
class MemoryRow:
    """A memory about to be inserted, with the columns only the store needs."""

    memory: Memory
    seq: int
    search_text: str
    context_text: str
    created_at: datetime
    content_hash: str | None = None  # of the source message (retain/repeats.py)
    statement_slots: str | None = None  # as supersession reads the text (retain/slots.py)


_MEMORY_COLUMNS = """
SELECT m.id, m.bank_id, m.text, m.fact_type, m.occurred_start, m.occurred_end, m.mentioned_at,
       (SELECT array_agg(e.name ORDER BY e.name) FROM memory_entities AS me
        JOIN entities AS e ON e.id = me.entity_id WHERE me.memory_id = m.id) AS entity_names,
       m.tags, m.importance, m.access_count, m.document_id, m.context, m.metadata, m.episode_id
"""
MEMORY_SELECT = _MEMORY_COLUMNS + "FROM memories AS m\n"


def select_memories(where: str, *, order: str = "m.seq", limit: int | None = None) -> str:
    """SQL for the rows of :data:`MEMORY_SELECT` whose memory (``m``) passes ``where``, in
    ``order``, at most ``limit``: the memories are chosen before their entity names are
    gathered, which DuckDB otherwise gathers for every memory of the table first (a list of
    20 took 400 ms at 100k memories, 8 ms chosen first)."""
    chosen = f"SELECT * FROM memories AS m WHERE {where} ORDER BY {order}"
    if limit is not None:
        chosen += f" LIMIT {int(limit)}"
    return _MEMORY_COLUMNS + f"FROM ({chosen}) AS m\nORDER BY {order}"


def memory_selector(
    bank_id: str,
    ids: list[str] | None = None,
    tags: list[str] | None = None,
    document_id: str | None = None,
) -> tuple[str, dict[str, Any]]:
    """A WHERE clause (and its parameters) for the bank's memories matching every given
    selector: any of ``ids``, any of ``tags``, ``document_id``."""
    conditions = ["bank_id = $bank"]
    params: dict[str, Any] = {"bank": bank_id}
    if ids is not None:
        conditions.append(f"list_contains({sql_list('ids')}, id)")
        params["ids"] = json_list(ids)
    if tags is not None:
        conditions.append("list_has_any(tags, $tags)")
        params["tags"] = tags
    if document_id is not None:
        conditions.append("document_id = $document_id")
        params["document_id"] = document_id
    return " AND ".join(conditions), params


def memory_from_row(row: Sequence[Any]) -> Memory:
    """Build a :class:`Memory` from a row of :data:`MEMORY_SELECT`."""
    return memory_from_parts(memory_parts(row))


#: A memory's fields as :class:`Memory` holds them, in its order, but the metadata as the JSON
#: text stored (see :func:`memory_parts`).
MemoryParts = tuple[Any, ...]


def memory_parts(row: Sequence[Any]) -> MemoryParts:
    """A row of :data:`MEMORY_SELECT` converted once for many :class:`Memory` values: all but
    the metadata, which every memory built gets a dict of its own from
    (:func:`memory_from_parts`)."""
    return (
        *row[:4],
        from_db_time(row[4]),
        from_db_time(row[5]),
        from_db_time(row[6]),
        tuple(row[7] or ()),
        tuple(row[8] or ()),
        float(row[9]),
        int(row[10]),
        *row[11:15],
    )


def memory_from_parts(parts: MemoryParts) -> Memory:
    """The :class:`Memory` of :func:`memory_parts`, with its metadata parsed anew."""
    return Memory(*parts[:13], json.loads(parts[13]) if parts[13] else {}, parts[14])


# DuckDB's Python binding tries ``import pandas`` twice for every value it converts (1.5.5);
# without pandas installed each failed import searches sys.path, ~0.1 ms a time, which made
# per-row ``executemany`` the top cost of retain and a 100-id list parameter cost ~9 ms.
# Bulk rows and id lists are therefore bound as one JSON text parameter and expanded in SQL.


def _json_default(value: object) -> object:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"cannot bind {type(value).__name__}")


def json_list(values: Iterable[object]) -> str:
    """A list of scalars as the JSON text a :func:`sql_list` placeholder expects."""
    return json.dumps(list(values), ensure_ascii=False, default=_json_default)


def sql_list(param: str, sql_type: str = "VARCHAR") -> str:
    """SQL for the list bound as JSON text in ``$param`` (see :func:`json_list`)."""
    return f"from_json(${param}, '[\"{sql_type}\"]')"


def sql_strings(values: Iterable[str]) -> str:
    """Comma-separated SQL string literals, quotes doubled (nothing else is special in them).

    For the few places where a literal list lets DuckDB use an index or skip row groups that
    a bound parameter would not: ``id IN ('a', 'b')`` is answered from the primary key.
    """
    return ", ".join("'" + value.replace("'", "''") + "'" for value in values)


def wanted_ids(param: str = "ids") -> str:
    """SQL for a table of one column ``id``: the ids bound as JSON text in ``$param``.

    Join it with ``memories`` rather than test ``list_contains`` on every row of the bank:
    DuckDB then reads only the rows wanted (at 100k memories ~2× faster for 150 ids).
    """
    return f"(SELECT unnest({sql_list(param)}) AS id)"


#: Rows per INSERT statement of :func:`insert_rows`.
INSERT_BATCH = 1000


def insert_rows(cur: Any, table: str, rows: Sequence[Sequence[Any]]) -> None:  # noqa: ANN401
    """Insert rows given in the table's column order, all bound as one JSON parameter."""
    if not rows:
        return
    names = list(column_types(cur, table))
    sql = insert_json_rows(cur, table)
    # In bounded statements: DuckDB's working memory for one grows with its JSON parameter.
    for start in range(0, len(rows), INSERT_BATCH):
        payload = json.dumps(
            [dict(zip(names, row, strict=True)) for row in rows[start : start + INSERT_BATCH]],
            ensure_ascii=False,
            default=_json_default,
        )
        cur.execute(sql, {"rows": payload})


def insert_memories(cur: Any, rows: Sequence[MemoryRow]) -> None:
    """Insert memory rows (access_count starts at 0; piece vectors follow once embedded,
    see :func:`write_pieces`)."""
    insert_rows(
        cur,
        "memories",
        [
            (
                m.id,
                r.seq,
                m.bank_id,
                m.episode_id,
                m.text,
                r.search_text,
                r.context_text,
                m.fact_type,
                to_db_time(m.occurred_start),
                to_db_time(m.occurred_end),
                to_db_time(m.mentioned_at),
                list(m.tags),
                m.importance,
                0,
                m.document_id,
                m.context,
                json.dumps(m.metadata, ensure_ascii=False),
                to_db_time(r.created_at),
                r.content_hash,
                None,
                r.statement_slots,
            )
            for r in rows
            for m in (r.memory,)
        ],
    )


def write_pieces(cur: Any, pieces: Mapping[str, str | None]) -> None:  # noqa: ANN401
    """Set the stored piece vectors (``retain/pieces.py``) of memories, by memory id."""
    if pieces:
        cur.execute(
            f"UPDATE memories SET piece_vectors = u.piece_vectors FROM {json_rows(cur, 'memories')}"
            " AS u WHERE memories.id = u.id",
            {"rows": json.dumps([{"id": i, "piece_vectors": p} for i, p in pieces.items()])},
        )


def load_pieces(
    conn: Any,  # noqa: ANN401
    bank_id: str,
    ids: Iterable[str],
    dimension: int,
) -> dict[str, np.ndarray]:
    """The stored piece vectors of those of ``ids`` that are the bank's memories and have
    them (one row per piece); a value that does not decode counts as none (integrity reports
    it)."""
    found = {}
    for memory_id, text in memories_by_id(conn, bank_id, ids, "m.id, m.piece_vectors"):
        if text is not None:
            with contextlib.suppress(InvalidInputError):
                found[memory_id] = decode_pieces(text, dimension)
    return found


# Recall loads ~150 candidates by id. Joining on the unnested id list (rather than
# list_contains on every row, with entity names from a correlated subquery over the whole
# memory_entities table) halves the cost: ~8 → 4.5 ms at 10k memories, ~36 → 18 ms at 100k.
_LOAD_BY_IDS = f"""
WITH wanted AS {wanted_ids()},
names AS (
    SELECT me.memory_id, array_agg(ARRAY[e.name, e.kind] ORDER BY e.name, e.kind) AS entity_pairs
    FROM wanted JOIN memory_entities AS me ON me.memory_id = wanted.id
    JOIN entities AS e ON e.id = me.entity_id
    GROUP BY me.memory_id
)
SELECT m.id, m.bank_id, m.text, m.fact_type, m.occurred_start, m.occurred_end, m.mentioned_at,
       names.entity_pairs, m.tags, m.importance, m.access_count, m.document_id, m.context,
       m.metadata, m.episode_id
FROM wanted JOIN memories AS m ON m.id = wanted.id
LEFT JOIN names ON names.memory_id = m.id
WHERE m.bank_id = $bank_id
"""


# Ids that are safe as SQL literals as they are (this library's ids are hex).
_PLAIN_ID = re.compile(r"[\w.:-]+")


def split_plain_ids(ids: Iterable[str]) -> tuple[list[str], list[str]]:
    """Ids to write as SQL literals and the rest (quotes, control characters), to bind.

    A literal id list is answered from the primary-key index, flat as the bank grows; bound
    ids (or a bank filter in the same WHERE) make DuckDB scan every row (~3 ms at 100k).
    """
    plain: list[str] = []
    other: list[str] = []
    for memory_id in ids:
        (plain if _PLAIN_ID.fullmatch(memory_id) else other).append(memory_id)
    return plain, other


def memories_by_id(conn: Any, bank_id: str, ids: Iterable[str], columns: str) -> list[tuple]:  # noqa: ANN401
    """``columns`` (SQL over alias ``m``) of those of ``ids`` that are memories of the bank.

    ``conn`` is the database or a transaction's cursor. Plain ids are written as literals and
    their bank checked here (see :func:`split_plain_ids`); any others are bound.
    """
    plain, other = split_plain_ids(ids)
    rows: list[tuple] = []
    if plain:
        found = conn.execute(
            f"SELECT m.bank_id, {columns} FROM memories AS m WHERE m.id IN ({sql_strings(plain)})"
        ).fetchall()
        rows += [row[1:] for row in found if row[0] == bank_id]
    if other:
        rows += conn.execute(
            f"SELECT {columns} FROM {wanted_ids()} AS wanted "
            "JOIN memories AS m ON m.id = wanted.id WHERE m.bank_id = $bank",
            {"bank": bank_id, "ids": json_list(other)},
        ).fetchall()
    return rows


# Literal ids are answered from the primary-key (and memory_entities) indexes; bound ids, or
# a second condition in the same WHERE, make DuckDB scan the bank. 50 candidates at 100k
# memories: ~6.7 ms in these two statements, ~14.5 ms in _LOAD_BY_IDS.
_LOAD_BY_LITERAL_IDS = """
WITH me AS (
    SELECT memory_id, array_agg(entity_id) AS entity_ids FROM memory_entities
    WHERE memory_id IN ({ids}) GROUP BY memory_id
)
SELECT m.id, m.bank_id, m.text, m.fact_type, m.occurred_start, m.occurred_end, m.mentioned_at,
       me.entity_ids, m.tags, m.importance, m.access_count, m.document_id, m.context,
       m.metadata, m.episode_id
FROM (SELECT * FROM memories WHERE id IN ({ids})) AS m LEFT JOIN me ON me.memory_id = m.id
"""


EntityKinds = tuple[tuple[str, str], ...]
"""The ``(name, kind)`` pairs of a memory's entities, sorted."""


def load_memories(
    db: Database, bank_id: str, ids: Sequence[str], config: RecallConfig | None = None
) -> dict[str, Memory]:
    """Memories of a bank by id, optionally through a recall's hard filters."""
    loaded = load_memories_with_kinds(db, bank_id, ids, config)
    return {memory_id: memory for memory_id, (memory, _) in loaded.items()}


def load_memories_with_kinds(
    db: Database, bank_id: str, ids: Sequence[str], config: RecallConfig | None = None
) -> dict[str, tuple[Memory, EntityKinds]]:
    """As :func:`load_memories`, each memory with the kinds of its entities (same queries)."""
    if not ids:
        return {}
    wanted = list(dict.fromkeys(ids))
    clause, params = filter_clause(config)
    plain, other = split_plain_ids(wanted)
    if clause or other:
        rows = db.fetchall(
            _LOAD_BY_IDS + clause, {"bank_id": bank_id, "ids": json_list(wanted), **params}
        )
        return {row[0]: _with_kinds(row, [(n, k) for n, k in row[7] or ()]) for row in rows}
    rows = [
        row
        for row in db.fetchall(_LOAD_BY_LITERAL_IDS.replace("{ids}", sql_strings(plain)))
        if row[1] == bank_id
    ]
    entity_ids = sorted({e for row in rows for e in row[7] or ()})
    entities = (
        {
            entity_id: (name, kind)
            for entity_id, name, kind in db.fetchall(
                f"SELECT id, name, kind FROM entities WHERE id IN ({sql_strings(entity_ids)})"
            )
        }
        if entity_ids
        else {}
    )
    return {
        row[0]: _with_kinds(row, sorted(entities[e] for e in row[7] or () if e in entities))
        for row in rows
    }


def _with_kinds(row: tuple, pairs: Sequence[tuple[str, str]]) -> tuple[Memory, EntityKinds]:
    """A loaded row (entities as ``(name, kind)`` pairs, sorted) as a memory and its kinds."""
    return memory_from_row((*row[:7], [name for name, _ in pairs], *row[8:])), tuple(pairs)


def filter_clause(config: RecallConfig | None) -> tuple[str, dict[str, Any]]:
    """``AND ...`` SQL over alias ``m`` for the hard filters of a recall, with its parameters."""
    if config is None:
        return "", {}
    parts: list[str] = []
    params: dict[str, Any] = {}
    if config.fact_types:
        parts.append("list_contains($fact_types, m.fact_type)")
        params["fact_types"] = list(config.fact_types)
    if config.tags is not None:
        params["tags"] = list(config.tags)
        if config.tags_match == "exact":
            parts.append("list_sort(m.tags) = $tags")  # stored tags are sorted too
        elif config.tags and config.tags_match == "all":
            parts.append("list_has_all(m.tags, $tags)")
        elif config.tags:
            parts.append("list_has_any(m.tags, $tags)")
        else:
            del params["tags"]  # "any"/"all" of no tags is no constraint
    if config.time_range is not None:
        # A memory's time is its occurrence when known, else when it was mentioned.
        parts.append(
            "(CASE WHEN m.occurred_start IS NOT NULL "
            "THEN m.occurred_start < $tr_end AND coalesce(m.occurred_end, m.occurred_start) "
            ">= $tr_start ELSE m.mentioned_at >= $tr_start AND m.mentioned_at < $tr_end END)"
        )
        params["tr_start"] = to_db_time(config.time_range.start)
        params["tr_end"] = to_db_time(config.time_range.end)
    return "".join(f" AND {p}" for p in parts), params


def kind_votes_to_json(votes: Sequence[tuple[str, float]]) -> str:
    """An entity's kind votes as stored: a JSON object, kind -> summed confidence."""
    return json.dumps(dict(votes))


def kind_votes_from_json(value: object) -> tuple[tuple[str, float], ...]:
    """Stored kind votes as (kind, weight) pairs sorted by kind; malformed values count as
    none (the entity's stored kind then stands alone)."""
    try:
        votes = json.loads(value) if isinstance(value, str) else value
    except ValueError:
        return ()
    if not isinstance(votes, dict):
        return ()
    return tuple(
        sorted(
            (str(k), float(v))
            for k, v in votes.items()
            if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) and v > 0
        )
    )
