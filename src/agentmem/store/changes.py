"""Per-bank versions and change log: how every in-process mirror of a bank stays current.

Every write to a bank calls :func:`record_change` inside its own transaction: the bank's
version goes up by one and a row of the change log says what the write touched (the memories
and entities to look at again). A mirror of a bank (the graph, the dated facts, the entity
index, a bank's settings) remembers the version it reflects; before use it compares it with
:func:`bank_version` and, if behind, replays :func:`changes_since` — each change says which
ids to read again from the store, so replaying a change twice is harmless — or reloads when
the log no longer reaches back that far (it keeps the newest :data:`LOG_ROWS` changes per bank)
or a change rewrote the bank (import, delete_bank).

Versions only ever go up: ``delete_bank`` is itself a change, so a bank deleted and created
again never repeats a version a mirror of the old bank holds.

On a store only this process opens (DuckDB) the current versions are also kept in memory
(``db.known_versions``), shared by every ``AgentMemory`` of the process on that file and set by
each write once it has committed: a check is a dict read. On a shared store (PostgreSQL, no
``known_versions``) several processes write, so the version is read from the store at every
check, writers to one bank queue on its version row, and a NOTIFY on ``agentmem_changes`` at
commit wakes listeners (a hint: notifications are lost on reconnect).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

#: Tables of the versions and the change log (portable SQL: DuckDB and PostgreSQL).
SCHEMA = """
CREATE TABLE IF NOT EXISTS bank_versions (
    bank_id VARCHAR PRIMARY KEY,
    version BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS bank_changes (
    bank_id VARCHAR NOT NULL,
    version BIGINT NOT NULL,
    kind VARCHAR NOT NULL,
    memory_ids VARCHAR NOT NULL,
    entity_ids VARCHAR NOT NULL,
    PRIMARY KEY (bank_id, version)
);
"""
#: How many changes each bank's log keeps; a mirror further behind reloads.
LOG_ROWS = 1000
#: Trim the log once every this many versions (a write then deletes up to this many rows).
_TRIM_EVERY = 100
#: The channel of the PostgreSQL NOTIFY sent by every write ("bank_id version").
CHANNEL = "agentmem_changes"

#: What a write did. ``memory_ids`` are the memories it added, changed or removed;
#: ``entity_ids`` the entities it created, renamed, merged, split or left without memories.
#: Recall's access counts (``reinforce``) are not changes: no mirror holds them, and a change
#: per recall would flood the log.
KINDS = frozenset(
    {
        "retain",  # new memories (and those a re-retained document replaced)
        "forget",  # removed memories; entity_ids: the entities they mentioned
        "link",  # an explicit edge between the two memory_ids
        "configure",  # the bank's settings
        "correct",  # entity corrections (alias, merge, split, rename): the entity_ids
        "observe",  # consolidation rewrote observations (memory_ids)
        "import",  # the bank was loaded from an export: reload
        "delete_bank",  # the bank is gone: drop
    }
)
#: Kinds after which a mirror is rebuilt from the store rather than caught up.
RELOAD_KINDS = frozenset({"import", "delete_bank"})


@dataclass(frozen=True, slots=True)
class Change:
    """One write to a bank, as the change log holds it."""

    version: int
    kind: str
    memory_ids: tuple[str, ...]
    entity_ids: tuple[str, ...]


class VersionedStore(Protocol):
    """What this module needs of a database (``store/database.py`` or its PostgreSQL twin).
    One that only this process writes also has ``known_versions`` (a :class:`KnownVersions`)."""

    def execute(self, sql: str, params: Any = None) -> Any: ...


def known(db: VersionedStore) -> KnownVersions | None:
    """The in-memory versions of a store only this process writes; None for a shared one."""
    return getattr(db, "known_versions", None)


def lock_bank(db: VersionedStore, cur: Any, bank_id: str) -> int:
    """In a write transaction, before anything else: the bank's committed version, with no
    other writer able to commit a change to the bank until this transaction ends.

    On a shared store this locks the bank's version row (other processes' writes to the bank
    wait for this one); in one process the caller's write lock already excludes them.
    """
    if known(db) is not None:
        return bank_version(db, bank_id)
    return int(
        cur.execute(
            "INSERT INTO bank_versions VALUES (?, 0) ON CONFLICT (bank_id) "
            "DO UPDATE SET version = bank_versions.version RETURNING version",
            [bank_id],
        ).fetchall()[0][0]
    )


def record_change(
    cur: Any,
    bank_id: str,
    kind: str,
    memory_ids: Iterable[str] = (),
    entity_ids: Iterable[str] = (),
) -> int:
    """Bump the bank's version and log the change, in the caller's transaction; returns the
    new version. Call once per write, after its rows are written; hand the version to
    ``Engine.bank_changed`` once committed.

    On PostgreSQL the version row stays locked until the transaction ends, so writes to one
    bank take versions one after another and a version is never skipped.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown change kind {kind!r}")
    version = cur.execute(
        "INSERT INTO bank_versions VALUES (?, 1) ON CONFLICT (bank_id) "
        "DO UPDATE SET version = bank_versions.version + 1 RETURNING version",
        [bank_id],
    ).fetchall()[0][0]
    cur.execute(
        "INSERT INTO bank_changes VALUES (?, ?, ?, ?, ?)",
        [bank_id, version, kind, _ids(memory_ids), _ids(entity_ids)],
    )
    if version % _TRIM_EVERY == 0:
        cur.execute(
            "DELETE FROM bank_changes WHERE bank_id = ? AND version <= ?",
            [bank_id, version - LOG_ROWS],
        )
    if getattr(cur, "dialect", "duckdb") == "postgresql":
        cur.execute("SELECT pg_notify(?, ?)", [CHANNEL, f"{bank_id} {version}"])
    return int(version)


def bank_version(db: VersionedStore, bank_id: str, cur: Any = None) -> int:
    """The bank's current version (0 before its first write); read through ``cur`` (a
    write's cursor, inside its transaction) when the store is shared and it is given."""
    versions = known(db)
    if versions is not None:
        version = versions.get(bank_id)
        if version is not None:
            return version
    reader = db if cur is None else cur
    rows = reader.execute(
        "SELECT version FROM bank_versions WHERE bank_id = ?", [bank_id]
    ).fetchall()
    version = int(rows[0][0]) if rows else 0
    if versions is not None:
        versions.advance(bank_id, version)
    return version


def changes_since(reader: Any, bank_id: str, version: int) -> list[Change] | None:
    """The bank's changes after ``version``, oldest first; None when the log no longer holds
    all of them (the caller reloads). ``reader`` is the database or a cursor (a write's,
    inside its transaction)."""
    rows = reader.execute(
        "SELECT version, kind, memory_ids, entity_ids FROM bank_changes "
        "WHERE bank_id = ? AND version > ? ORDER BY version",
        [bank_id, version],
    ).fetchall()
    changes = [
        Change(int(v), kind, tuple(json.loads(memories)), tuple(json.loads(entities)))
        for v, kind, memories, entities in rows
    ]
    if any(c.version != version + i for i, c in enumerate(changes, start=1)):
        return None
    if not changes:
        newest = reader.execute(
            "SELECT version FROM bank_versions WHERE bank_id = ?", [bank_id]
        ).fetchall()
        if newest and int(newest[0][0]) > version:
            return None  # trimmed past the newest version the caller has
    return changes


def published(db: VersionedStore, bank_id: str, version: int) -> None:
    """Tell this process's readers that a write which got ``version`` has committed."""
    versions = known(db)
    if versions is not None:
        versions.advance(bank_id, version)


class KnownVersions:
    """The current versions of the banks of one store file, shared by every ``Database`` this
    process opens on it (see :func:`known_versions`). Only ever moves forward."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._versions: dict[str, int] = {}
        self.users = 0

    def get(self, bank_id: str) -> int | None:
        return self._versions.get(bank_id)

    def advance(self, bank_id: str, version: int) -> None:
        with self._lock:
            if version > self._versions.get(bank_id, -1):
                self._versions[bank_id] = version


_KNOWN: dict[str, KnownVersions] = {}
_KNOWN_LOCK = threading.Lock()


def known_versions(key: str) -> KnownVersions:
    """The versions of the store file ``key`` (a resolved path) for one more open database.

    Forgotten when the last database of the file closes (:func:`release_versions`): another
    process may write the file before this one opens it again.
    """
    with _KNOWN_LOCK:
        known = _KNOWN.setdefault(key, KnownVersions())
        known.users += 1
        return known


def release_versions(key: str) -> None:
    """One database of the file ``key`` closed."""
    with _KNOWN_LOCK:
        known = _KNOWN.get(key)
        if known is not None:
            known.users -= 1
            if known.users <= 0:
                del _KNOWN[key]


def _ids(values: Iterable[str]) -> str:
    return json.dumps(sorted(set(values)), ensure_ascii=False)
