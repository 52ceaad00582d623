"""Rows ↔ values: the SQL that reads and writes memories, episodes, entities and links.

Times are stored as naive UTC ``TIMESTAMP`` and come back as aware UTC datetimes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from agentmem.config import RecallConfig
from agentmem.store.database import Database
from agentmem.types import Memory


def to_db_time(value: datetime | None) -> datetime | None:
    """Aware datetime → naive UTC for a TIMESTAMP column."""
    return None if value is None else value.astimezone(UTC).replace(tzinfo=None)


def from_db_time(value: datetime | None) -> datetime | None:
    """Naive UTC from a TIMESTAMP column → aware datetime."""
    return None if value is None else value.replace(tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class MemoryRow:
    """A memory about to be inserted, with the columns only the store needs."""

    memory: Memory
    seq: int
    search_text: str
    context_text: str
    created_at: datetime


MEMORY_SELECT = """
SELECT m.id, m.bank_id, m.text, m.fact_type, m.occurred_start, m.occurred_end, m.mentioned_at,
       (SELECT list(e.name ORDER BY e.name) FROM memory_entities AS me
        JOIN entities AS e ON e.id = me.entity_id WHERE me.memory_id = m.id) AS entity_names,
       m.tags, m.importance, m.access_count, m.document_id, m.context, m.metadata, m.episode_id
FROM memories AS m
"""


def memory_from_row(row: Sequence[Any]) -> Memory:
    """Build a :class:`Memory` from a row of :data:`MEMORY_SELECT`."""
    return Memory(
        id=row[0],
        bank_id=row[1],
        text=row[2],
        fact_type=row[3],
        occurred_start=from_db_time(row[4]),
        occurred_end=from_db_time(row[5]),
        mentioned_at=from_db_time(row[6]),  # type: ignore[arg-type]
        entities=tuple(row[7] or ()),
        tags=tuple(row[8] or ()),
        importance=float(row[9]),
        access_count=int(row[10]),
        document_id=row[11],
        context=row[12],
        metadata=json.loads(row[13]) if row[13] else {},
        episode_id=row[14],
    )


def execute_many(cur: Any, sql: str, rows: Sequence[Sequence[Any]]) -> None:
    """``executemany`` that accepts an empty batch (DuckDB refuses one)."""
    if rows:
        cur.executemany(sql, rows)


def insert_memories(cur: Any, rows: Sequence[MemoryRow]) -> None:
    """Insert memory rows (access_count starts at 0)."""
    execute_many(
        cur,
        "INSERT INTO memories VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?)",
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
                m.document_id,
                m.context,
                json.dumps(m.metadata, ensure_ascii=False),
                to_db_time(r.created_at),
            )
            for r in rows
            for m in (r.memory,)
        ],
    )


def load_memories(
    db: Database, bank_id: str, ids: Sequence[str], config: RecallConfig | None = None
) -> dict[str, Memory]:
    """Memories of a bank by id, optionally through a recall's hard filters."""
    if not ids:
        return {}
    clause, params = filter_clause(config)
    rows = db.fetchall(
        MEMORY_SELECT + f"WHERE m.bank_id = $bank_id AND list_contains($ids, m.id) {clause}",
        {"bank_id": bank_id, "ids": list(ids), **params},
    )
    return {row[0]: memory_from_row(row) for row in rows}


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
