"""SQL that DuckDB and PostgreSQL spell differently, one small named helper per construct.

Shared code writes DuckDB's SQL where PostgreSQL accepts it too (the PostgreSQL schema defines
the list functions it uses, see ``store/postgres/schema.py``); what cannot be shared is built
here from the connection it runs on: a ``Database`` or ``PostgresDatabase``, or a cursor of a
transaction of either. DuckDB's own cursors carry no dialect: a connection without one is
DuckDB's.
"""

from __future__ import annotations

import json
from typing import Any

DUCKDB = "duckdb"
POSTGRESQL = "postgresql"


def dialect_of(conn: Any) -> str:  # noqa: ANN401
    """``"duckdb"`` or ``"postgresql"``: the dialect of a database or a cursor of one."""
    return getattr(conn, "dialect", DUCKDB)


def regex_search(conn: Any, column: str, param: str) -> str:  # noqa: ANN401
    """A condition: the case-insensitive regular expression in ``$param`` matches somewhere
    in ``column`` (the patterns passed are plain alternations, the same in RE2 and
    PostgreSQL's ARE)."""
    if dialect_of(conn) == POSTGRESQL:
        return f"{column} ~* ${param}"
    return f"regexp_matches({column}, ${param}, 'i')"


def any_lowered_equals(conn: Any, list_column: str, param: str) -> str:  # noqa: ANN401
    """A condition: some element of the string list ``list_column``, lower-cased, equals
    ``$param``."""
    if dialect_of(conn) == POSTGRESQL:
        return f"EXISTS (SELECT 1 FROM unnest({list_column}) AS a(x) WHERE lower(x) = ${param})"
    return f"list_contains(list_transform({list_column}, a -> lower(a)), ${param})"


def share_lock(conn: Any) -> str:  # noqa: ANN401
    """The locking clause that keeps a row read in a transaction from being deleted before
    it commits ("" on DuckDB, whose single writer holds every row)."""
    return " FOR SHARE" if dialect_of(conn) == POSTGRESQL else ""


_column_types: dict[tuple[str, str], dict[str, str]] = {}


def column_types(conn: Any, table: str) -> dict[str, str]:  # noqa: ANN401
    """Column name → type of a table, in column order (cached: the schema is fixed)."""
    dialect = dialect_of(conn)
    types = _column_types.get((dialect, table))
    if types is None:
        sql = (
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_name = ? AND table_schema = current_schema() ORDER BY ordinal_position"
            if dialect == POSTGRESQL
            else "SELECT column_name, data_type FROM duckdb_columns() "
            "WHERE table_name = ? AND schema_name = 'main' ORDER BY column_index"
        )
        types = dict(conn.execute(sql, [table]).fetchall())
        _column_types[(dialect, table)] = types
    return types


def _unnested_json(conn: Any, table: str, param: str) -> str:  # noqa: ANN401
    """DuckDB: the rows of ``table`` bound as JSON in ``$param``, as a select list."""
    structure = json.dumps(
        [
            {
                name: [kind.removesuffix("[]")] if kind.endswith("[]") else kind
                for name, kind in (
                    (n, "VARCHAR" if t == "JSON" else t)
                    for n, t in column_types(conn, table).items()
                )
            }
        ]
    )
    return f"unnest(from_json(${param}, '{structure}'), recursive := true)"


def json_rows(conn: Any, table: str, param: str = "rows") -> str:  # noqa: ANN401
    """SQL for a row source with the columns of ``table``, read from the JSON array of
    objects (column name → value, missing ones NULL) bound as text in ``$param``."""
    if dialect_of(conn) == POSTGRESQL:
        return f"json_populate_recordset(NULL::{table}, CAST(${param} AS json))"
    return f"(SELECT {_unnested_json(conn, table, param)})"


def insert_json_rows(conn: Any, table: str, param: str = "rows") -> str:  # noqa: ANN401
    """An INSERT of the rows bound as JSON in ``$param`` (see :func:`json_rows`)."""
    if dialect_of(conn) == POSTGRESQL:
        return f"INSERT INTO {table} SELECT * FROM {json_rows(conn, table, param)}"
    return f"INSERT INTO {table} BY NAME SELECT {_unnested_json(conn, table, param)}"
