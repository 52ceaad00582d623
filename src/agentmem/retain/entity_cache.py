"""A bank's entity index and resolver as this process caches them, read from the store.

Both are mirrors of the store kept at the bank's version (store/changes.py): retain updates the
index in place as it creates and merges entities; a write made through another process is
caught up here, from the change log, before the next write uses them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentmem.retain.resolve import EntityIndex, EntityResolver, KnownEntity
from agentmem.store.changes import Change
from agentmem.store.records import json_list, kind_votes_from_json, sql_list

_NEIGHBORS_SQL = """
SELECT e.id, e.name, e.kind, e.aliases, e.kind_votes,
       (SELECT array_agg(DISTINCT lower(other.name)) FROM memory_entities AS a
        JOIN memory_entities AS b ON b.memory_id = a.memory_id AND b.entity_id <> a.entity_id
        JOIN entities AS other ON other.id = b.entity_id
        WHERE a.entity_id = e.id) AS neighbors
FROM entities AS e WHERE e.bank_id = $bank
"""


def load_entities(
    cur: Any, bank_id: str, entity_ids: Sequence[str] | None = None
) -> list[KnownEntity]:
    """The bank's stored entities (only ``entity_ids`` when given) with their neighbours."""
    sql, params = _NEIGHBORS_SQL, {"bank": bank_id}
    if entity_ids is not None:
        sql += f" AND list_contains({sql_list('ids')}, e.id)"
        params["ids"] = json_list(entity_ids)
    return [
        KnownEntity(
            id=row[0],
            name=row[1],
            kind=row[2],
            aliases=tuple(row[3] or ()),
            kind_votes=kind_votes_from_json(row[4]),
            neighbors=frozenset(row[5] or ()),
        )
        for row in cur.execute(sql, params).fetchall()
    ]


def catch_up_index(cur: Any, bank_id: str, index: EntityIndex, log: Sequence[Change]) -> bool:
    """Re-read the entities that writes elsewhere created, changed or left without memories;
    False (reload the index) after a correction, which may touch any entity's names."""
    if any(c.kind == "correct" for c in log):
        return False
    touched = sorted({e for c in log for e in c.entity_ids})
    if touched:
        for entity_id in touched:
            index.remove(entity_id)
        for entity in load_entities(cur, bank_id, touched):
            index.add(entity)
    return True


def load_resolver(cur: Any, bank_id: str, default: EntityResolver) -> EntityResolver:
    """``default`` with the bank's entity corrections (``retain/corrections.py``) applied."""
    rows = cur.execute(
        "SELECT op, name, target FROM entity_corrections WHERE bank_id = ? ORDER BY created_at",
        [bank_id],
    ).fetchall()
    if not rows:
        return default
    overrides = {name: target for op, name, target in rows if op == "alias"}
    splits = [(name, target) for op, name, target in rows if op == "split"]
    return EntityResolver(overrides=overrides, splits=splits)  # default rules otherwise


def catch_up_resolver(
    cur: Any, bank_id: str, resolver: EntityResolver, log: Sequence[Change]
) -> bool:
    """A resolver changes only with the bank's corrections: False (reload) after one."""
    return not any(c.kind == "correct" for c in log)
