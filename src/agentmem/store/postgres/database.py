"""A PostgreSQL database as the system of record, with the interface of ``store.Database``.

The shared code writes DuckDB-style SQL placeholders (``?`` positional, ``$name`` named with a
dict of parameters); :func:`to_psycopg` turns them into psycopg's (``%s``, ``%(name)s``, and
every ``%`` doubled), leaving those in quoted literals, identifiers and comments alone, and
caches the result per statement. Statements always go with parameters (none is an empty list),
so psycopg reads them the same way. Connections come from a psycopg pool; a transaction holds
one connection for its thread, and statements the thread runs meanwhile (through ``execute``
or a cursor) run in it, as they run on the thread's DuckDB cursor in the embedded store.
"""

from __future__ import annotations

import functools
import re
import threading
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import numpy as np

from agentmem.errors import InvalidInputError, ModelError, StorageError, StoreLockedError
from agentmem.store.postgres.schema import (
    FUNCTIONS,
    MIGRATIONS,
    SCHEMA_LOCK,
    SCHEMA_VERSION,
    tables,
)

#: URL schemes that name a PostgreSQL database where a store path is expected.
URL_SCHEMES = ("postgresql://", "postgres://")

# A quoted literal or identifier, a comment (placeholders in them are not), a placeholder, a %.
_TOKEN = re.compile(
    r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*|\$(?P<name>[A-Za-z_]\w*)|(?P<mark>[?%])"
)


def _without_nul(value: Any) -> Any:  # noqa: ANN401
    """A parameter PostgreSQL can bind. Its text cannot hold NUL, and agentmem stores no
    control character in a text column (retain and import remove them), so a NUL comes only
    with a value looked up; U+0001, never stored either, stands in for it and matches nothing
    alike. (JSON text, where a NUL is the escape ``\\u0000``, is stored as it is.)"""
    if isinstance(value, str):
        return value.replace("\x00", "\x01") if "\x00" in value else value
    if isinstance(value, list | tuple):
        return [_without_nul(v) for v in value]
    return value


def _bindable(params: Sequence[Any] | dict[str, Any] | None) -> Any:  # noqa: ANN401
    """Parameters for psycopg, never None: psycopg reads the statement's placeholders (and
    the ``%%`` that :func:`to_psycopg` wrote for a ``%``) only when given parameters."""
    if not params:
        return {} if isinstance(params, dict) else []
    if isinstance(params, dict):
        return {k: _without_nul(v) for k, v in params.items()}
    return [_without_nul(v) for v in params]


def is_postgres_url(path: object) -> bool:
    """Whether a store location is a PostgreSQL URL rather than a directory."""
    return isinstance(path, str) and path.startswith(URL_SCHEMES)


def redacted(url: str) -> str:
    """The URL without its password, for messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)
    user = netloc[0].split(":", 1)[0]
    return urlunsplit(parts._replace(netloc=f"{user}:***@{netloc[1]}"))


@functools.lru_cache(maxsize=4096)
def to_psycopg(sql: str) -> str:
    """DuckDB-style placeholders → psycopg's: ``?`` and ``$name`` outside quoted text and
    comments; every ``%`` doubled (psycopg's escape for it, also inside quotes)."""

    def replace(match: re.Match[str]) -> str:
        if match["name"] is not None:
            return f"%({match['name']})s"
        if match["mark"] == "?":
            return "%s"
        # psycopg reads every '%' as a placeholder's start, quoted or not.
        return match[0].replace("%", "%%")

    return _TOKEN.sub(replace, sql)


class Result:
    """The rows of one statement, fetched before its connection went back to the pool."""

    __slots__ = ("_position", "_rows", "description", "rowcount")

    def __init__(self, rows: list[tuple], description: Any, rowcount: int) -> None:  # noqa: ANN401
        self._rows = rows
        self._position = 0
        self.description = description
        self.rowcount = rowcount

    def fetchone(self) -> tuple | None:
        if self._position >= len(self._rows):
            return None
        self._position += 1
        return self._rows[self._position - 1]

    def fetchall(self) -> list[tuple]:
        rows = self._rows[self._position :]
        self._position = len(self._rows)
        return rows

    def fetchmany(self, size: int = 1) -> list[tuple]:
        rows = self._rows[self._position : self._position + size]
        self._position += len(rows)
        return rows


class Cursor:
    """What ``Database.cursor()`` and ``transaction()`` hand out: ``execute`` returns the
    statement's rows (also readable from the cursor, as from a DuckDB cursor)."""

    def __init__(self, db: PostgresDatabase) -> None:
        self._db = db
        self._last: Result | None = None
        self.dialect = db.dialect

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] | None = None) -> Result:
        self._last = self._db.execute(sql, params)
        return self._last

    def executemany(self, sql: str, rows: Sequence[Sequence[Any] | dict[str, Any]]) -> None:
        self._db.executemany(sql, rows)

    def fetchone(self) -> tuple | None:
        return self._last.fetchone() if self._last is not None else None

    def fetchall(self) -> list[tuple]:
        return self._last.fetchall() if self._last is not None else []

    def fetchmany(self, size: int = 1) -> list[tuple]:
        return self._last.fetchmany(size) if self._last is not None else []

    def fetch_arrays(
        self, sql: str, params: Sequence[Any] | dict[str, Any] | None, types: dict[str, str]
    ) -> dict[str, np.ndarray]:
        """See :meth:`PostgresDatabase.fetch_arrays`."""
        return self._db.fetch_arrays(sql, params, types)

    @property
    def description(self) -> Any:  # noqa: ANN401
        return self._last.description if self._last is not None else None


def _psycopg() -> Any:  # noqa: ANN401
    try:
        import psycopg
        import psycopg_pool
    except ImportError as exc:
        raise ModelError(
            'a PostgreSQL store needs psycopg 3 with its pool (pip install "agentmem[postgres]")'
        ) from exc
    return psycopg, psycopg_pool


class PostgresDatabase:
    """A PostgreSQL database with agentmem's schema, reached through a connection pool.

    Args:
        url: ``postgresql://user[:password]@host[:port]/database[?options]`` (``postgres://``
            too; ``?host=/socket/dir`` for a Unix socket).
        max_connections: Size of the pool (threads of this process using the store at once).
        connect_timeout: Seconds to wait for the server when connecting.

    Raises:
        InvalidInputError: The URL cannot be parsed.
        StorageError: The server cannot be reached, refuses the login, or the database holds
            a newer agentmem schema. The message names the URL without its password.
    """

    dialect = "postgresql"

    def __init__(
        self, url: str, *, max_connections: int = 8, connect_timeout: float = 10.0
    ) -> None:
        psycopg, psycopg_pool = _psycopg()
        self._psycopg = psycopg
        self.url = url
        self.path = redacted(url)  # what messages call the store
        self.write_lock = threading.RLock()
        self._local = threading.local()
        self._closed = False
        try:
            psycopg.conninfo.conninfo_to_dict(url)
        except psycopg.ProgrammingError as exc:
            raise InvalidInputError(f"not a PostgreSQL URL: {self.path} ({exc})") from exc
        # Connect once directly first: a pool only reports a timeout, this says why.
        try:
            psycopg.connect(url, connect_timeout=max(1, round(connect_timeout))).close()
        except psycopg.Error as exc:
            raise StorageError(
                f"cannot connect to PostgreSQL at {self.path}: {_reason(exc)}"
            ) from exc
        self._pool = psycopg_pool.ConnectionPool(
            url,
            min_size=1,
            max_size=max_connections,
            kwargs={"autocommit": True, "connect_timeout": max(1, round(connect_timeout))},
            configure=_configure,
            timeout=connect_timeout,
            open=False,
            name="agentmem",
        )
        try:
            self._pool.open(wait=True, timeout=connect_timeout)
            self._create_schema()
        except BaseException as exc:
            self._pool.close()
            if isinstance(exc, psycopg_pool.PoolTimeout):
                raise StorageError(f"cannot connect to PostgreSQL at {self.path}") from exc
            raise

    # -- errors -----------------------------------------------------------------------------

    def _error(self, doing: str, exc: Exception) -> StorageError:
        """A StorageError (StoreLockedError for a lock timeout) for a psycopg failure."""
        errors = self._psycopg.errors
        if isinstance(exc, errors.LockNotAvailable | errors.DeadlockDetected):
            return StoreLockedError(f"{doing} {self.path}: {_reason(exc)}")
        if isinstance(exc, self._psycopg.OperationalError):
            # Replace the pool's broken connections now (a restarted server leaves every idle
            # one dead), so this failure is the only one the outage causes.
            self._pool.check()
            return StorageError(f"lost the connection to PostgreSQL at {self.path}: {_reason(exc)}")
        return StorageError(f"{doing} {self.path}: {_reason(exc)}")

    @contextmanager
    def storage_errors(self) -> Iterator[None]:
        """Raise the psycopg errors of the block as StorageError."""
        try:
            yield
        except self._psycopg.Error as exc:
            raise self._error("query failed on", exc) from exc

    # -- schema -----------------------------------------------------------------------------

    def _create_schema(self) -> None:
        """Create or upgrade the schema under an advisory lock (one replica at a time).

        Raises:
            StorageError: The database was written by a newer agentmem.
        """
        with self.transaction() as cur:
            cur.execute("SELECT pg_advisory_xact_lock(?)", [SCHEMA_LOCK])
            exists = cur.execute("SELECT to_regclass('meta') IS NOT NULL").fetchone()[0]
            row = (
                cur.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
                if exists
                else None
            )
            stored = int(row[0]) if row else None
            if stored is not None and stored > int(SCHEMA_VERSION):
                raise StorageError(
                    f"{self.path} has schema version {stored}; this agentmem reads up to "
                    f"{SCHEMA_VERSION}: upgrade agentmem"
                )
            if stored == int(SCHEMA_VERSION):
                self._identify(cur)
                return
            with self._connection() as con:  # scripts: no placeholders to translate
                con.execute(FUNCTIONS)
                has_c_utf8 = con.execute(
                    "SELECT count(*) FROM pg_collation WHERE collname = 'pg_c_utf8'"
                ).fetchone()[0]
                con.execute(tables(bool(has_c_utf8)))
                for version, sql in MIGRATIONS:
                    if stored is not None and stored < int(version):
                        con.execute(sql)
            cur.execute(
                "INSERT INTO meta VALUES ('schema_version', ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                [SCHEMA_VERSION],
            )
            self._identify(cur)

    @staticmethod
    def _identify(cur: Cursor) -> None:
        """Give the store its random ``store_id`` (as the embedded store has): the same
        store reached through two URLs is one id."""
        cur.execute(
            "INSERT INTO meta VALUES ('store_id', ?) ON CONFLICT DO NOTHING", [uuid.uuid4().hex]
        )

    # -- statements -------------------------------------------------------------------------

    @contextmanager
    def _connection(self) -> Iterator[Any]:
        """This thread's transaction connection, else one from the pool for the block."""
        if self._closed:
            raise StorageError("the store is closed")
        con = getattr(self._local, "connection", None)
        if con is not None:
            yield con
            return
        try:
            with self._pool.connection() as con:
                yield con
        except self._pool_errors() as exc:
            raise StorageError(f"cannot connect to PostgreSQL at {self.path}: {exc}") from exc

    def _pool_errors(self) -> type[Exception]:
        import psycopg_pool

        return psycopg_pool.PoolTimeout

    def cursor(self) -> Cursor:
        """A cursor for this thread (statements run in its transaction, if it is in one)."""
        if self._closed:
            raise StorageError("the store is closed")
        return Cursor(self)

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] | None = None) -> Result:
        """Run one statement (in this thread's transaction, if any), wrapping psycopg errors."""
        try:
            with self._connection() as con:
                cur = con.execute(to_psycopg(sql), _bindable(params))
                rows = cur.fetchall() if cur.description is not None else []
                return Result(rows, cur.description, cur.rowcount)
        except self._psycopg.Error as exc:
            raise self._error("query failed on", exc) from exc

    def executemany(self, sql: str, rows: Sequence[Sequence[Any] | dict[str, Any]]) -> None:
        """Run one statement once per parameter row, in one round trip where possible."""
        if not rows:
            return
        try:
            with self._connection() as con, con.cursor() as cur:
                cur.executemany(to_psycopg(sql), [_bindable(row) for row in rows])
        except self._psycopg.Error as exc:
            raise self._error("query failed on", exc) from exc

    def fetchall(self, sql: str, params: Sequence[Any] | dict[str, Any] | None = None) -> list[Any]:
        """Run a query and return all rows."""
        return self.execute(sql, params).fetchall()

    def fetch_arrays(
        self, sql: str, params: Sequence[Any] | dict[str, Any] | None, types: dict[str, str]
    ) -> dict[str, np.ndarray]:
        """The rows of a query of numbers as one numpy array per column, sent as one value:
        the server packs every row's columns in binary (``int8send`` ...) and concatenates
        the rows in the query's order (an aggregate reads an ordered subquery in its order),
        so the client reads them in place, with no Python object per value (what a bulk read,
        a mirror's load, spends its time on otherwise; COPY would still cost one per row).

        Args:
            sql: The query; its columns are named as the keys of ``types``, each of exactly
                that type (cast them) and never NULL.
            params: Its parameters.
            types: Column name → ``int4``, ``int8``, ``float8`` or ``bool``.

        Raises:
            StorageError: The query fails, or a row holds a NULL.
        """
        packed = " || ".join(f"{_SEND[kind]}(q.{name})" for name, kind in types.items())
        row = np.dtype([(name, _BINARY[kind]) for name, kind in types.items()])
        data, count = self.execute(
            f"SELECT string_agg({packed}, ''::bytea), count(*) FROM ({sql}) AS q", params
        ).fetchone()
        data = data or b""
        if len(data) != count * row.itemsize:  # string_agg skips a row holding a NULL
            raise StorageError(f"a query of {self.path} returned NULL where {types} are read")
        rows = np.frombuffer(data, dtype=row, count=count)
        return {name: rows[name].astype(_BINARY[kind].lstrip(">")) for name, kind in types.items()}

    @contextmanager
    def transaction(self) -> Iterator[Cursor]:
        """Hold the write lock and run the block in one transaction on one connection
        (rolled back on error; psycopg's errors are raised as StorageError). A transaction
        opened inside another is a savepoint of it."""
        with self.write_lock:
            if getattr(self._local, "connection", None) is not None:
                with self._local.connection.transaction(), self.storage_errors():
                    yield Cursor(self)
                return
            with self._new_transaction():
                yield Cursor(self)

    @contextmanager
    def snapshot(self) -> Iterator[Cursor]:
        """A cursor whose reads in the block all see one snapshot of the database (a read-only
        REPEATABLE READ transaction), without the write lock; inside this thread's
        transaction, that transaction's view."""
        if getattr(self._local, "connection", None) is not None:
            yield Cursor(self)
            return
        with self._new_transaction("ISOLATION LEVEL REPEATABLE READ READ ONLY"):
            yield Cursor(self)

    @contextmanager
    def _new_transaction(self, characteristics: str = "") -> Iterator[None]:
        """A pooled connection in a transaction, this thread's for the block."""
        with self._connection() as con:
            self._local.connection = con
            try:
                with self.storage_errors(), con.transaction():
                    if characteristics:
                        con.execute(f"SET TRANSACTION {characteristics}")
                    yield
            finally:
                self._local.connection = None

    def get_meta(self, key: str) -> str | None:
        """A value of the meta table."""
        rows = self.fetchall("SELECT value FROM meta WHERE key = ?", [key])
        return rows[0][0] if rows else None

    def close(self) -> None:
        """Close the pool's connections. Safe to call twice."""
        if self._closed:
            return
        with self.write_lock:
            self._closed = True
            with suppress(Exception):
                self._pool.close()


#: Per type :meth:`PostgresDatabase.fetch_arrays` reads: the function giving its binary form,
#: and numpy's type of that form (numbers are sent big-endian).
_SEND = {"int4": "int4send", "int8": "int8send", "float8": "float8send", "bool": "boolsend"}
_BINARY = {"int4": ">i4", "int8": ">i8", "float8": ">f8", "bool": "?"}


def _configure(con: Any) -> None:  # noqa: ANN401
    """Session settings of every pooled connection."""
    con.execute("SET TIME ZONE 'UTC'")
    # Plans made for the bound values: lists bound as JSON are then expanded once, at
    # planning, and partial indexes (one per bank) stay usable by prepared statements.
    con.execute("SET plan_cache_mode = force_custom_plan")


def _reason(exc: BaseException) -> str:
    """psycopg's message, first line only (the rest repeats the statement)."""
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]
