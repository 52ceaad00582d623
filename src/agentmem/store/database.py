"""The DuckDB file: system of record for banks, episodes, memories, entities and links.

One ``Database`` per ``AgentMemory``. Writes are serialised by one lock and run in explicit
transactions; reads use a cursor per thread (DuckDB's recommended way to share a database
between threads). The fts extension is loaded from the installed ``duckdb-extension-fts``
package by path on every connection, with auto-install and auto-load off, so nothing is ever
downloaded.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import duckdb

from agentmem.errors import ModelError, StorageError, StoreLockedError
from agentmem.store import absent_modules, changes

SCHEMA_VERSION = "4"
# DuckDB's message when another process holds the file ("Could not set lock on file ...:
# Conflicting lock is held in ..."); other messages holding "lock" (a corrupt "block") are not.
_LOCKED = re.compile(r"Could not set lock on file|Conflicting lock is held", re.IGNORECASE)
# Messages of a damaged file: a checksum failure, a truncated or overwritten file.
_CORRUPT = re.compile(
    r"corrupt|checksum|not a valid DuckDB database|Could not read enough bytes|invalidated",
    re.IGNORECASE,
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR);
CREATE TABLE IF NOT EXISTS banks (
    bank_id VARCHAR PRIMARY KEY,
    collection VARCHAR NOT NULL,
    embedder VARCHAR NOT NULL,
    dimension INTEGER NOT NULL,
    config JSON,
    created_at TIMESTAMP NOT NULL
);
CREATE TABLE IF NOT EXISTS episodes (
    id VARCHAR PRIMARY KEY,
    bank_id VARCHAR NOT NULL,
    content JSON NOT NULL,
    document_id VARCHAR,
    context VARCHAR,
    mentioned_at TIMESTAMP NOT NULL,
    metadata JSON,
    created_at TIMESTAMP NOT NULL,
    content_hash VARCHAR
);
CREATE SEQUENCE IF NOT EXISTS memory_seq START 1;
CREATE TABLE IF NOT EXISTS memories (
    id VARCHAR PRIMARY KEY,
    seq BIGINT NOT NULL,
    bank_id VARCHAR NOT NULL,
    episode_id VARCHAR,
    text VARCHAR NOT NULL,
    search_text VARCHAR NOT NULL,
    context_text VARCHAR NOT NULL,
    fact_type VARCHAR NOT NULL,
    occurred_start TIMESTAMP,
    occurred_end TIMESTAMP,
    mentioned_at TIMESTAMP NOT NULL,
    tags VARCHAR[] NOT NULL,
    importance DOUBLE NOT NULL,
    access_count INTEGER NOT NULL,
    document_id VARCHAR,
    context VARCHAR,
    metadata JSON,
    created_at TIMESTAMP NOT NULL,
    content_hash VARCHAR,
    -- base64 float16 unit vectors of the memory's sentences (retain/pieces.py), or NULL
    piece_vectors VARCHAR,
    -- the slots supersession reads in the text (retain/slots.py), JSON, or NULL
    statement_slots VARCHAR
);
CREATE TABLE IF NOT EXISTS entities (
    id VARCHAR PRIMARY KEY,
    bank_id VARCHAR NOT NULL,
    name VARCHAR NOT NULL,
    kind VARCHAR NOT NULL,
    aliases VARCHAR[] NOT NULL,
    created_at TIMESTAMP NOT NULL,
    -- kind -> summed confidence of the mentions resolved to the entity (retain/link.py)
    kind_votes JSON
);
-- Stores made before kind votes were kept.
ALTER TABLE entities ADD COLUMN IF NOT EXISTS kind_votes JSON;
-- t: the memory's time (occurrence start, else mention), so an entity's timeline is one
-- indexed lookup and a sort of that entity's rows.
CREATE TABLE IF NOT EXISTS memory_entities (
    memory_id VARCHAR NOT NULL,
    entity_id VARCHAR NOT NULL,
    bank_id VARCHAR NOT NULL,
    t TIMESTAMP NOT NULL
);
CREATE TABLE IF NOT EXISTS links (
    bank_id VARCHAR NOT NULL,
    src_id VARCHAR NOT NULL,
    dst_id VARCHAR NOT NULL,
    kind VARCHAR NOT NULL,
    weight DOUBLE NOT NULL,
    created_at TIMESTAMP NOT NULL
);
-- User corrections of entity resolution: op 'alias' (name always means target) or 'split'.
CREATE TABLE IF NOT EXISTS entity_corrections (
    bank_id VARCHAR NOT NULL,
    op VARCHAR NOT NULL,
    name VARCHAR NOT NULL,
    target VARCHAR NOT NULL,
    created_at TIMESTAMP NOT NULL
);
-- Vector writes not yet confirmed by Chroma: replayed on open (see store/reconcile.py).
CREATE TABLE IF NOT EXISTS vector_journal (
    memory_id VARCHAR NOT NULL,
    bank_id VARCHAR NOT NULL,
    op VARCHAR NOT NULL
);
-- Keyword postings of rows written since the last fold of the index (store/keyword.py);
-- bank_id last, where adding it to an older store's table puts it.
CREATE TABLE IF NOT EXISTS keyword_pending (
    seq BIGINT NOT NULL,
    field INTEGER NOT NULL,
    term VARCHAR NOT NULL,
    tf INTEGER NOT NULL,
    len INTEGER NOT NULL,
    bank_id VARCHAR
);
CREATE INDEX IF NOT EXISTS memories_bank ON memories (bank_id);
CREATE INDEX IF NOT EXISTS memories_seq ON memories (seq);
CREATE INDEX IF NOT EXISTS memories_document ON memories (document_id);
CREATE INDEX IF NOT EXISTS memory_entities_memory ON memory_entities (memory_id);
CREATE INDEX IF NOT EXISTS memory_entities_entity ON memory_entities (entity_id, t);
CREATE INDEX IF NOT EXISTS links_src ON links (src_id);
CREATE INDEX IF NOT EXISTS links_dst ON links (dst_id);
CREATE INDEX IF NOT EXISTS entities_bank ON entities (bank_id);
CREATE INDEX IF NOT EXISTS episodes_bank ON episodes (bank_id);
"""

# Upgrades of an older store, by the schema version they lead to. Columns are only ever added
# at the end of a table, so a store created new and one upgraded have the same column order
# (rows are inserted by position, see store/records.py).
_MIGRATIONS: tuple[tuple[str, str], ...] = (
    # 2: content hashes, for idempotent retain (retain/repeats.py). Rows stored before have
    # none: a document retained before is replaced once on its next retain.
    (
        "2",
        """
        ALTER TABLE episodes ADD COLUMN IF NOT EXISTS content_hash VARCHAR;
        ALTER TABLE memories ADD COLUMN IF NOT EXISTS content_hash VARCHAR;
        """,
    ),
    # 3: the vectors of a memory's sentences (retain/pieces.py). Memories stored before have
    # none: the reranker reads them as a text of one piece.
    ("3", "ALTER TABLE memories ADD COLUMN IF NOT EXISTS piece_vectors VARCHAR;"),
    # 4: the slots supersession reads in a fact (retain/slots.py), kept so that a
    # process reading a bank's statements for the first time does not parse them again.
    # Memories stored before have none: they are parsed as before.
    ("4", "ALTER TABLE memories ADD COLUMN IF NOT EXISTS statement_slots VARCHAR;"),
)
# After the migrations: indexes on columns that an older store gets from them.
_INDEXES = """
CREATE INDEX IF NOT EXISTS memories_content_hash ON memories (content_hash);
CREATE INDEX IF NOT EXISTS episodes_document ON episodes (document_id);
"""


def fts_extension_path() -> Path:
    """Path of the fts extension binary built for the installed duckdb version."""
    try:
        import duckdb_extension_fts
    except ImportError as exc:
        raise ModelError(
            "the duckdb-extension-fts package is missing (pip install duckdb-extension-fts)"
        ) from exc
    path = (
        Path(duckdb_extension_fts.__file__).parent
        / "extensions"
        / f"v{duckdb.__version__}"
        / "fts.duckdb_extension"
    )
    if not path.is_file():
        raise ModelError(
            f"no fts extension for duckdb {duckdb.__version__} at {path}; "
            "duckdb and duckdb-extension-fts versions must match exactly"
        )
    return path


class Database:
    """A DuckDB database file with agentmem's schema and the fts extension loaded.

    Attributes:
        local_changes: The banks' versions and change log (store/changes.py), kept in memory:
            only this process writes the file (DuckDB's lock).
    """

    #: Which SQL dialect the store speaks (``"postgresql"`` for ``PostgresDatabase``).
    dialect = "duckdb"

    def __init__(self, path: Path) -> None:
        self.path = path
        self.write_lock = threading.RLock()
        self._local = threading.local()
        absent_modules.install()  # DuckDB looks for pandas at every parameter
        try:
            self._con = duckdb.connect(
                str(path),
                config={"autoinstall_known_extensions": False, "autoload_known_extensions": False},
            )
        except duckdb.Error as exc:
            if _LOCKED.search(str(exc)):
                raise StoreLockedError(
                    f"{path} is open in another process. DuckDB allows one writer per file: "
                    "share one agentmem process between agents (agentmem serve) instead of "
                    "opening the store twice."
                ) from exc
            raise self._error("cannot open", exc) from exc
        try:
            self._con.execute(f"LOAD '{fts_extension_path()}'")
            self._con.execute(_SCHEMA)
            self._migrate()
            self._con.execute(_INDEXES)
        except duckdb.Error as exc:
            self._con.close()
            raise self._error("cannot initialise", exc) from exc
        self._cursors: list[duckdb.DuckDBPyConnection] = []
        self._cursors_lock = threading.Lock()
        self._closed = False
        self._versions_key = str(path.resolve())
        self.local_changes = changes.local_changes(self._versions_key)
        # One writer at a time per file, also between two AgentMemory of this process on it.
        self.write_lock = self.local_changes.write_lock

    def _error(self, doing: str, exc: duckdb.Error) -> StorageError:
        """A StorageError for a DuckDB failure, saying so when the file is damaged."""
        if _CORRUPT.search(str(exc)):
            return StorageError(
                f"{self.path} is corrupt ({exc}); agentmem cannot repair a damaged DuckDB "
                "file: restore the store from a backup, or import the banks' exports into a "
                "new store"
            )
        return StorageError(f"{doing} {self.path}: {exc}")

    def _migrate(self) -> None:
        """Bring the schema of an older store up to :data:`SCHEMA_VERSION`, in one
        transaction (a failed upgrade leaves the store as it was).

        Raises:
            StorageError: The store was written by a newer agentmem.
        """
        row = self._con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        stored = int(row[0]) if row else None
        if stored is not None and stored > int(SCHEMA_VERSION):
            self._con.close()
            raise StorageError(
                f"{self.path} has schema version {stored}; this agentmem reads up to "
                f"{SCHEMA_VERSION}: upgrade agentmem"
            )
        self._con.execute("BEGIN TRANSACTION")
        try:
            for version, sql in _MIGRATIONS:
                if stored is not None and stored < int(version):
                    self._con.execute(sql)
            self._con.execute(
                "INSERT INTO meta VALUES ('schema_version', ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                [SCHEMA_VERSION],
            )
            self._con.execute("COMMIT")
        except BaseException:
            self._con.execute("ROLLBACK")
            raise

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """This thread's cursor (created on first use)."""
        if self._closed:
            raise StorageError("the store is closed")
        cur = getattr(self._local, "cursor", None)
        if cur is None:
            # Not under the write lock: a thread's first read must never wait for a writer. A
            # writer may wait on what that read computes (a cached_property of Python 3.11
            # holds one lock for all instances of its class), and would wait for ever.
            with self._cursors_lock:
                if self._closed:
                    raise StorageError("the store is closed")
                cur = self._con.cursor()
                self._cursors.append(cur)
            self._local.cursor = cur
        return cur

    def execute(self, sql: str, params: list[Any] | tuple[Any, ...] | None = None) -> Any:
        """Run one statement on this thread's cursor, wrapping DuckDB errors."""
        try:
            return self.cursor().execute(sql, params or [])
        except duckdb.Error as exc:
            raise self._error("query failed on", exc) from exc

    def fetchall(self, sql: str, params: list[Any] | tuple[Any, ...] | None = None) -> list[Any]:
        """Run a query and return all rows."""
        return self.execute(sql, params).fetchall()

    @contextmanager
    def storage_errors(self) -> Iterator[None]:
        """Raise the DuckDB errors of the block (run on a cursor directly) as StorageError."""
        try:
            yield
        except duckdb.Error as exc:
            raise self._error("query failed on", exc) from exc

    @contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """Hold the write lock and run the block in one transaction (rolled back on error;
        DuckDB's errors are raised as StorageError)."""
        with self.write_lock:
            cur = self.cursor()
            cur.execute("BEGIN TRANSACTION")
            try:
                with self.storage_errors():
                    yield cur
            except BaseException:
                with suppress(duckdb.Error):  # a failed ROLLBACK must not hide the cause
                    cur.execute("ROLLBACK")
                raise
            else:
                try:
                    cur.execute("COMMIT")
                except duckdb.Error as exc:
                    raise self._error("commit failed on", exc) from exc

    @contextmanager
    def snapshot(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A cursor whose reads in the block all see one snapshot of the store, without the
        write lock (what an in-process mirror catches up from)."""
        cur = self.cursor()
        with self.storage_errors():
            cur.execute("BEGIN TRANSACTION")
            try:
                yield cur
            finally:
                cur.execute("COMMIT")

    def get_meta(self, key: str) -> str | None:
        """A value of the meta table."""
        rows = self.fetchall("SELECT value FROM meta WHERE key = ?", [key])
        return rows[0][0] if rows else None

    def close(self) -> None:
        """Close every cursor and the connection (checkpointing the WAL)."""
        if self._closed:
            return
        with self.write_lock, self._cursors_lock:
            self._closed = True
            for cur in self._cursors:
                with suppress(duckdb.Error):
                    cur.close()
            with suppress(duckdb.Error):
                self._con.execute("CHECKPOINT")
            self._con.close()
            changes.release_local_changes(self._versions_key)
