"""User corrections of entity resolution: explicit aliases and splits, persisted per bank.

The resolver is conservative, so it sometimes keeps two entities apart ("Bob" and "Robert
Chen" without agreeing context) or, rarely, joins two. A user fixes that on the bank:

* ``bank.add_alias("Robert Chen", "Bob")``: "Bob" always means Robert Chen. An entity called
  "Bob" is merged into Robert Chen; where "Bob" was an alias of another entity, the memories
  that say "Bob" (and none of that entity's other names) move to Robert Chen.
* ``bank.split_alias("Robert Chen", "Bob")``: "Bob" never means Robert Chen. The alias is
  removed, and the memories that say "Bob" (and none of Robert Chen's other names) move to an
  entity of their own.

Corrections are stored in ``entity_corrections`` and become the bank's resolver
``overrides``/``splits``, which win over every rule of the resolver (competitors let the fuzzy
resolver override users: hindsight PR #3576), for every later retain and after reopening.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentmem.errors import InvalidInputError, NotFoundError, shown
from agentmem.retain.link import bank_entity_index
from agentmem.retain.resolve import KnownEntity
from agentmem.store.changes import record_change
from agentmem.store.graph import loaded_graph, mirror_dropped_on_failure
from agentmem.store.records import json_list, require_bank, sql_list

if TYPE_CHECKING:
    from agentmem.engine import Engine


def _key(name: str) -> str:
    return " ".join(name.split()).casefold()


def validate_name(value: object, field: str) -> str:
    """A non-empty entity name of at most 200 characters, spacing normalised.

    Raises:
        InvalidInputError: Anything else.
    """
    if not isinstance(value, str) or not value.strip():
        raise InvalidInputError(f"{field} must be a non-empty string")
    name = " ".join(value.split())
    if len(name) > 200 or any(ord(c) < 32 for c in name):
        raise InvalidInputError(f"invalid {field} {shown(value)}")
    return name


def find_entity(engine: Engine, cur: Any, bank_id: str, name_or_alias: str) -> KnownEntity:
    """The entity a name or alias denotes; its canonical name wins over others' aliases.

    Raises:
        NotFoundError: No entity has that name or alias.
    """
    wanted = _key(name_or_alias)
    matches = [e for e in bank_entity_index(engine, cur, bank_id) if wanted in map(_key, e.names)]
    if not matches:
        raise NotFoundError(f"no entity {name_or_alias!r} in bank {bank_id!r}")
    return next((e for e in matches if _key(e.name) == wanted), matches[0])


def add_alias(engine: Engine, bank_id: str, collection: str, entity: str, alias: str) -> str:
    """Make ``alias`` a name of ``entity`` for good; returns the entity's id."""
    with _correction(engine, bank_id, collection) as correction:
        cur = correction.cur
        target = find_entity(engine, cur, bank_id, entity)
        others = [
            e
            for e in bank_entity_index(engine, cur, bank_id)
            if e.id != target.id and _key(alias) in map(_key, e.names)
        ]
        touched = {target.id}
        for other in others:
            if _key(other.name) == _key(alias):
                _merge(cur, other, target)
            else:
                _move_mentions(cur, other, target.id, alias)
                _set_aliases(cur, other.id, [a for a in other.aliases if _key(a) != _key(alias)])
            touched.add(other.id)
        if _key(alias) not in map(_key, target.names):
            _set_aliases(cur, target.id, [*target.aliases, alias])
        _record(cur, bank_id, "alias", alias, target.name)
        _refresh(engine, correction, bank_id, touched)
    return target.id


def split_alias(
    engine: Engine, bank_id: str, collection: str, entity: str, alias: str
) -> str | None:
    """Declare that ``alias`` never names ``entity``; returns the id of the entity that now
    holds the memories saying ``alias``, or None when none did."""
    with _correction(engine, bank_id, collection) as correction:
        cur = correction.cur
        target = find_entity(engine, cur, bank_id, entity)
        if _key(alias) == _key(target.name):
            raise InvalidInputError(
                f"{alias!r} is the canonical name of this entity; split one of its aliases"
            )
        created: str | None = None
        if _key(alias) in map(_key, target.aliases):
            created = uuid.uuid4().hex
            cur.execute(
                "INSERT INTO entities (id, bank_id, name, kind, aliases, created_at) "
                "VALUES (?, ?, ?, ?, ?, now())",
                [created, bank_id, alias, target.kind, []],
            )
            if not _move_mentions(cur, target, created, alias):
                cur.execute("DELETE FROM entities WHERE id = ?", [created])
                created = None
            _set_aliases(cur, target.id, [a for a in target.aliases if _key(a) != _key(alias)])
        _record(cur, bank_id, "split", alias, target.name)
        _refresh(engine, correction, bank_id, {target.id} | ({created} if created else set()))
    return created


def _record(cur: Any, bank_id: str, op: str, name: str, target: str) -> None:
    # A new correction replaces any earlier one about the same pair.
    cur.execute(
        "DELETE FROM entity_corrections WHERE bank_id = ? AND lower(name) = lower(?) "
        "AND lower(target) = lower(?)",
        [bank_id, name, target],
    )
    cur.execute(
        "INSERT INTO entity_corrections VALUES (?, ?, ?, ?, now())", [bank_id, op, name, target]
    )


def _set_aliases(cur: Any, entity_id: str, aliases: list[str]) -> None:
    cur.execute("UPDATE entities SET aliases = ? WHERE id = ?", [aliases, entity_id])


def _merge(cur: Any, source: KnownEntity, target: KnownEntity) -> None:
    """Move every memory of ``source`` to ``target`` and delete ``source``."""
    cur.execute(
        "DELETE FROM memory_entities WHERE entity_id = $src AND memory_id IN "
        "(SELECT memory_id FROM memory_entities WHERE entity_id = $dst)",
        {"src": source.id, "dst": target.id},
    )
    cur.execute(
        "UPDATE memory_entities SET entity_id = $dst WHERE entity_id = $src",
        {"src": source.id, "dst": target.id},
    )
    known = {_key(n) for n in target.names}
    extra = [n for n in source.names if _key(n) not in known]
    _set_aliases(cur, target.id, [*target.aliases, *extra])
    cur.execute("DELETE FROM entities WHERE id = ?", [source.id])


def _move_mentions(cur: Any, source: KnownEntity, target_id: str, name: str) -> int:
    """Relink the memories of ``source`` that say ``name`` but none of its other names."""
    says = re.compile(rf"(?<!\w){re.escape(name)}(?!\w)", re.IGNORECASE)
    others = [
        re.compile(rf"(?<!\w){re.escape(n)}(?!\w)", re.IGNORECASE)
        for n in source.names
        if _key(n) != _key(name)
    ]
    rows = cur.execute(
        "SELECT m.id, m.text FROM memory_entities AS me JOIN memories AS m ON m.id = me.memory_id "
        "WHERE me.entity_id = ?",
        [source.id],
    ).fetchall()
    moving = [
        memory_id
        for memory_id, text in rows
        if says.search(text) and not any(p.search(text) for p in others)
    ]
    if moving:
        cur.execute(
            "UPDATE memory_entities SET entity_id = $dst "
            f"WHERE entity_id = $src AND list_contains({sql_list('ids')}, memory_id)",
            {"src": source.id, "dst": target_id, "ids": json_list(moving)},
        )
    cur.execute(
        "DELETE FROM entities WHERE id = ? AND id NOT IN (SELECT entity_id FROM memory_entities)",
        [source.id],
    )
    return len(moving)


@dataclass
class _Correction:
    cur: Any  # the correction's transaction
    version: int | None = None  # what its change got (store/changes.py)


def _refresh(engine: Engine, correction: _Correction, bank_id: str, entity_ids: set[str]) -> None:
    """Last step of a correction: refresh the graph mirror's entities, log the change."""
    graph = loaded_graph(engine, bank_id)
    if graph is not None:
        graph.refresh_entities(correction.cur, bank_id, entity_ids)
    correction.version = record_change(
        engine.db, correction.cur, bank_id, "correct", entity_ids=entity_ids
    )


@contextmanager
def _correction(engine: Engine, bank_id: str, collection: str) -> Iterator[_Correction]:
    """The transaction of one correction, under the write lock.

    The bank's entity caches are dropped when it ends, failed or not (they are rebuilt from
    the store on next use; corrections are rare), and its graph mirror if it failed, COMMIT
    included (the mirror was refreshed from rows that rolled back).
    """
    with engine.db.write_lock, mirror_dropped_on_failure(engine, bank_id):
        correction = None
        try:
            with engine.db.transaction() as cur:
                require_bank(cur, bank_id, collection)
                engine.begin_write(cur, bank_id)
                correction = _Correction(cur)
                yield correction
        except BaseException:
            correction = None
            raise
        finally:
            engine.drop_mirror("entity_indexes", bank_id)
            engine.drop_mirror("resolvers", bank_id)
            engine.bank_changed(bank_id, correction.version if correction else None)
