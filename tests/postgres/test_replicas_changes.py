"""store/changes.py on both backends: versions, the change log, its trimming, the per-bank
writer lock of a shared store and the NOTIFY sent at commit."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from agentmem.errors import StorageError, StoreLockedError
from agentmem.store.changes import (
    CHANNEL,
    LOG_ROWS,
    Change,
    bank_version,
    changes_since,
    lock_bank,
    published,
    record_change,
)
from agentmem.store.database import Database


@pytest.fixture(params=["duckdb", "postgresql"])
def db(request: pytest.FixtureRequest, tmp_path) -> Iterator[object]:  # noqa: ANN001
    if request.param == "duckdb":
        database = Database(tmp_path / "store.duckdb")
    else:
        from agentmem.store.postgres.database import PostgresDatabase

        database = PostgresDatabase(request.getfixturevalue("pg_url"))
    yield database
    database.close()


def write(db, bank_id: str, kind: str, memory_ids=(), entity_ids=()) -> int:  # noqa: ANN001
    with db.transaction() as cur:
        lock_bank(db, cur, bank_id)
        version = record_change(db, cur, bank_id, kind, memory_ids, entity_ids)
    published(db, bank_id, version)
    return version


def test_versions_count_committed_writes_and_the_log_says_what_they_touched(db):
    assert bank_version(db, "a") == 0
    assert changes_since(db, "a", 0) == []
    assert write(db, "a", "retain", ["m2", "m1", "m1"], ["e1"]) == 1
    assert write(db, "b", "configure") == 1  # banks count apart
    assert write(db, "a", "forget", ["m1"]) == 2
    assert bank_version(db, "a") == 2
    assert changes_since(db, "a", 0) == [
        Change(1, "retain", ("m1", "m2"), ("e1",)),
        Change(2, "forget", ("m1",), ()),
    ]
    assert changes_since(db, "a", 1) == [Change(2, "forget", ("m1",), ())]
    assert changes_since(db, "a", 2) == []


def test_a_rolled_back_write_leaves_no_change(db):
    write(db, "a", "retain", ["m1"])
    with pytest.raises(StorageError), db.transaction() as cur:
        record_change(db, cur, "a", "retain", ["m2"])
        cur.execute("SELECT * FROM no_such_table")
    assert bank_version(db, "a") == 1
    assert [c.version for c in changes_since(db, "a", 0)] == [1]
    after = write(db, "a", "link", ["m1", "m3"])
    assert bank_version(db, "a") == after
    assert [c.kind for c in changes_since(db, "a", after - 1)] == ["link"]
    # Versions are gapless on a shared store; in memory a rolled-back write leaves a gap,
    # and a reader from before it reloads.
    shared = getattr(db, "local_changes", None) is None
    assert after == (2 if shared else 3)
    log = changes_since(db, "a", 1)
    if shared:
        assert [c.kind for c in log] == ["link"]
    else:
        assert log is None


def test_unknown_kinds_are_refused(db):
    with pytest.raises(ValueError, match="unknown change kind"), db.transaction() as cur:
        record_change(db, cur, "a", "rename")
    assert bank_version(db, "a") == 0


def test_the_log_is_bounded_and_a_reader_behind_it_is_told_to_reload(db):
    total = LOG_ROWS + 150
    for _ in range(total):
        version = write(db, "a", "retain", ["m"])
    assert version == total
    if getattr(db, "local_changes", None) is None:
        kept = db.fetchall("SELECT count(*) FROM bank_changes WHERE bank_id = 'a'")[0][0]
        assert LOG_ROWS <= kept < LOG_ROWS + 100
    assert changes_since(db, "a", 0) is None  # trimmed: reload
    assert [c.version for c in changes_since(db, "a", total - 3)] == [total - 2, total - 1, total]


def test_versions_never_repeat_after_delete_bank(db):
    write(db, "a", "retain", ["m1"])
    write(db, "a", "delete_bank")
    assert write(db, "a", "retain", ["m9"]) == 3
    assert [c.kind for c in changes_since(db, "a", 1)] == ["delete_bank", "retain"]


def test_a_shared_store_lets_one_writer_per_bank_commit_at_a_time(pg_url):
    from agentmem.store.postgres.database import PostgresDatabase

    first, second = PostgresDatabase(pg_url), PostgresDatabase(pg_url)
    try:
        locked, release = threading.Event(), threading.Event()

        def hold() -> None:
            with first.transaction() as cur:
                lock_bank(first, cur, "a")
                locked.set()
                release.wait(30)
                record_change(first, cur, "a", "retain", ["m1"])

        holder = threading.Thread(target=hold)
        holder.start()
        assert locked.wait(30)
        # Another bank is free; this one waits for the holder (here: gives up at once).
        assert write(second, "b", "retain", ["x"]) == 1
        with pytest.raises(StoreLockedError), second.transaction() as cur:
            cur.execute("SET LOCAL lock_timeout = '10ms'")
            lock_bank(second, cur, "a")
        release.set()
        holder.join(30)
        assert write(second, "a", "forget", ["m1"]) == 2  # after the holder's, never beside it
        assert [c.kind for c in changes_since(second, "a", 0)] == ["retain", "forget"]
    finally:
        second.close()
        first.close()


def test_a_committed_write_notifies_listeners(pg_url):
    import psycopg

    from agentmem.store.postgres.database import PostgresDatabase

    db = PostgresDatabase(pg_url)
    listener = psycopg.connect(pg_url, autocommit=True)
    try:
        listener.execute(f"LISTEN {CHANNEL}")
        with pytest.raises(StorageError), db.transaction() as cur:
            record_change(db, cur, "a", "retain", ["m1"])
            cur.execute("SELECT * FROM no_such_table")  # rolled back: no notification
        write(db, "a", "retain", ["m2"])
        heard = [n.payload for n in listener.notifies(timeout=10, stop_after=1)]
        assert heard == ["a 1"]
    finally:
        listener.close()
        db.close()
