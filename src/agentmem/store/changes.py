"""Per-bank versions and change log: how every in-process mirror of a bank stays current.

Every write to a bank calls :func:`record_change` inside its own transaction: the bank's
version goes up by one and an entry of the change log says what the write touched (the
memories and entities to look at again). A mirror of a bank (the graph, the dated facts, the
entity index, a bank's settings) remembers the version it reflects; before use it compares it
with :func:`bank_version` and, if behind, replays :func:`changes_since` — each change says
which ids to read again from the store, so replaying a change twice is harmless — or reloads
when the log no longer reaches back that far (it keeps the newest :data:`LOG_ROWS` changes per
bank) or a change rewrote the bank (import, delete_bank). Versions only ever go up:
``delete_bank`` is itself a change, so a re-created bank never repeats an old version.

A shared store (PostgreSQL) keeps versions and log in two tables written in the write's
transaction; the bank's version row, locked by :func:`lock_bank` until commit, queues the
writers of one bank, and a NOTIFY on ``agentmem_changes`` at commit wakes listeners (a hint:
notifications are lost on reconnect). A check reads the version row.

A store only this process writes (DuckDB: its file lock) keeps them in memory instead
(:class:`LocalChanges`, shared by every database of the process on that file): a check is a
dict read and a write costs nothing in the store. An entry joins the log when the write has
committed (:func:`published`); a write that rolled back leaves a gap, which makes readers
behind it reload.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

#: Tables of the versions and the change log of a shared store (PostgreSQL).
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
CREATE TABLE IF NOT EXISTS bank_accesses (
    bank_id VARCHAR PRIMARY KEY,
    accesses BIGINT NOT NULL
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
        "repair",  # repair() rewrote what memories' texts give (their piece vectors)
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
    One that only this process writes also has ``local_changes`` (:class:`LocalChanges`)."""

    def execute(self, sql: str, params: Any = None) -> Any: ...


def is_local(db: VersionedStore) -> bool:
    """Whether only this process writes the store (its versions are kept in memory)."""
    return _local(db) is not None


def lock_bank(db: VersionedStore, cur: Any, bank_id: str) -> int:
    """In a write transaction, before anything else: the bank's committed version, with no
    other writer able to commit a change to the bank until this transaction ends.

    On a shared store this locks the bank's version row (other processes' writes to the bank
    wait for this one); in one process the caller's write lock already excludes them.
    """
    local = _local(db)
    if local is not None:
        return local.version(bank_id)
    return int(
        cur.execute(
            "INSERT INTO bank_versions VALUES (?, 0) ON CONFLICT (bank_id) "
            "DO UPDATE SET version = bank_versions.version RETURNING version",
            [bank_id],
        ).fetchall()[0][0]
    )


def record_change(
    db: VersionedStore,
    cur: Any,
    bank_id: str,
    kind: str,
    memory_ids: Iterable[str] = (),
    entity_ids: Iterable[str] = (),
) -> int:
    """Bump the bank's version and log the change, in the caller's transaction (``cur``);
    returns the new version. Call once per write, after its rows are written; hand the
    version to ``Engine.bank_changed`` (which calls :func:`published`) once committed.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown change kind {kind!r}")
    memories, entities = tuple(sorted(set(memory_ids))), tuple(sorted(set(entity_ids)))
    local = _local(db)
    if local is not None:
        return local.reserve(bank_id, kind, memories, entities)
    version = int(
        cur.execute(
            "INSERT INTO bank_versions VALUES (?, 1) ON CONFLICT (bank_id) "
            "DO UPDATE SET version = bank_versions.version + 1 RETURNING version",
            [bank_id],
        ).fetchall()[0][0]
    )
    cur.execute(
        "INSERT INTO bank_changes VALUES (?, ?, ?, ?, ?)",
        [bank_id, version, kind, json.dumps(memories), json.dumps(entities)],
    )
    if version % _TRIM_EVERY == 0:
        cur.execute(
            "DELETE FROM bank_changes WHERE bank_id = ? AND version <= ?",
            [bank_id, version - LOG_ROWS],
        )
    cur.execute("SELECT pg_notify(?, ?)", [CHANNEL, f"{bank_id} {version}"])
    return version


def count_accesses(db: VersionedStore, cur: Any, bank_id: str) -> None:
    """In a reinforcing recall's transaction (``cur``): count that the bank's access counts
    moved. Not a change (no version, no log entry, no writer lock): a shared store's copies of
    rows read the counts again when this count has moved since they read them. In one
    process, the recall tells its copies itself."""
    if _local(db) is None:
        cur.execute(
            "INSERT INTO bank_accesses VALUES (?, 1) ON CONFLICT (bank_id) "
            "DO UPDATE SET accesses = bank_accesses.accesses + 1",
            [bank_id],
        )


def bank_state(db: VersionedStore, bank_id: str) -> tuple[int, int]:
    """The bank's version and how often its access counts moved (:func:`count_accesses`;
    always 0 in one process), in one read."""
    local = _local(db)
    if local is not None:
        return local.version(bank_id), 0
    version, accesses = db.execute(
        "SELECT (SELECT version FROM bank_versions WHERE bank_id = $bank), "
        "(SELECT accesses FROM bank_accesses WHERE bank_id = $bank)",
        {"bank": bank_id},
    ).fetchall()[0]
    return int(version or 0), int(accesses or 0)


def published(db: VersionedStore, bank_id: str, version: int) -> None:
    """A write that got ``version`` has committed (in memory: its change joins the log)."""
    local = _local(db)
    if local is not None:
        local.publish(bank_id, version)


def settled_version(db: VersionedStore, bank_id: str) -> int | None:
    """On a store only this process writes: the bank's version when no write to it is under
    way (none has reserved a version it has not published), else None. Two equal settled
    versions mean the bank did not change between them. None on a shared store."""
    local = _local(db)
    return None if local is None else local.settled(bank_id)


def bank_version(db: VersionedStore, bank_id: str, cur: Any = None) -> int:
    """The bank's current version (0 before its first write); on a shared store read
    through ``cur`` (a write's cursor, inside its transaction) when given."""
    local = _local(db)
    if local is not None:
        return local.version(bank_id)
    rows = (
        (db if cur is None else cur)
        .execute("SELECT version FROM bank_versions WHERE bank_id = ?", [bank_id])
        .fetchall()
    )
    return int(rows[0][0]) if rows else 0


def changes_since(
    db: VersionedStore, bank_id: str, version: int, cur: Any = None
) -> list[Change] | None:
    """The bank's changes after ``version``, oldest first; None when the log no longer holds
    all of them (the caller reloads). Read through ``cur`` when given, as above."""
    local = _local(db)
    if local is not None:
        return local.since(bank_id, version)
    reader = db if cur is None else cur
    rows = reader.execute(
        "SELECT version, kind, memory_ids, entity_ids FROM bank_changes "
        "WHERE bank_id = ? AND version > ? ORDER BY version",
        [bank_id, version],
    ).fetchall()
    changes = [
        Change(int(v), kind, tuple(json.loads(memories)), tuple(json.loads(entities)))
        for v, kind, memories, entities in rows
    ]
    return changes if _contiguous(changes, version) else None


def _contiguous(changes: list[Change], version: int) -> bool:
    # The newest change is never trimmed, so an empty answer means nothing happened since.
    return all(c.version == version + i for i, c in enumerate(changes, start=1))


class LocalChanges:
    """The versions and change log of the banks of one store file that only this process
    writes, shared by every database of the process on it (see :func:`local_changes`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        #: The write lock of every database of the file (``Database.write_lock``).
        self.write_lock = threading.RLock()
        self._next: dict[str, int] = {}  # the last version handed out, per bank
        self._versions: dict[str, int] = {}  # the newest committed version, per bank
        self._pending: dict[tuple[str, int], Change] = {}
        self._log: dict[str, deque[Change]] = {}
        self.users = 0

    def version(self, bank_id: str) -> int:
        return self._versions.get(bank_id, 0)

    def settled(self, bank_id: str) -> int | None:
        with self._lock:
            if any(key[0] == bank_id for key in self._pending):
                return None
            return self._versions.get(bank_id, 0)

    def reserve(
        self, bank_id: str, kind: str, memory_ids: tuple[str, ...], entity_ids: tuple[str, ...]
    ) -> int:
        with self._lock:
            version = self._next.get(bank_id, 0) + 1
            self._next[bank_id] = version
            self._pending[(bank_id, version)] = Change(version, kind, memory_ids, entity_ids)
            return version

    def publish(self, bank_id: str, version: int) -> None:
        with self._lock:
            change = self._pending.pop((bank_id, version), None)
            if change is None:
                return
            # Reservations before this one that were never published rolled back.
            for key in [k for k in self._pending if k[0] == bank_id and k[1] < version]:
                del self._pending[key]
            self._log.setdefault(bank_id, deque(maxlen=LOG_ROWS)).append(change)
            self._versions[bank_id] = max(version, self._versions.get(bank_id, 0))

    def since(self, bank_id: str, version: int) -> list[Change] | None:
        with self._lock:
            log = self._log.get(bank_id, ())
            changes = [c for c in log if c.version > version]
            newest = self._versions.get(bank_id, 0)
        if not changes:
            return [] if newest <= version else None
        return changes if _contiguous(changes, version) else None


_LOCAL: dict[str, LocalChanges] = {}
_LOCAL_LOCK = threading.Lock()


def local_changes(key: str) -> LocalChanges:
    """The in-memory versions and log of the store file ``key`` (a resolved path), for one
    more open database of it.

    Forgotten when the last database of the file closes (:func:`release_local_changes`):
    another process may write the file before this one opens it again, and no mirror of the
    closed databases is left to be kept current.
    """
    with _LOCAL_LOCK:
        local = _LOCAL.setdefault(key, LocalChanges())
        local.users += 1
        return local


def release_local_changes(key: str) -> None:
    """One database of the file ``key`` closed."""
    with _LOCAL_LOCK:
        local = _LOCAL.get(key)
        if local is not None:
            local.users -= 1
            if local.users <= 0:
                del _LOCAL[key]


def _local(db: VersionedStore) -> LocalChanges | None:
    return getattr(db, "local_changes", None)
