"""Shared fixtures. Every test runs offline: models come from installed packages.

The acceptance tests that open their store through ``store_path`` (so ``mem`` and ``bank``
too) run once per backend: the embedded DuckDB store and PostgreSQL (a database of the
session's throwaway server). ``--backend duckdb|postgresql|both`` or the environment variable
``AGENTMEM_TEST_BACKEND`` chooses. Without either, every test runs on DuckDB and those of
:data:`POSTGRES_BY_DEFAULT` on PostgreSQL too (the whole suite on PostgreSQL doubles its time).
A test about the embedded store's files is marked ``duckdb_only`` with the reason.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

import agentmem

T0 = "2025-03-04T09:00:00Z"
T1 = "2025-03-20T15:30:00Z"

CONVERSATION = [
    {
        "role": "user",
        "name": "Alice",
        "content": "I moved to Berlin last June.",
        "metadata": {"turn": 1},
    },
    {
        "role": "assistant",
        "content": "How do you like the new job at Acme Corp?",
        "metadata": {"turn": 2},
    },
    {
        "role": "user",
        "name": "Alice",
        "content": "My office is room 42 and my manager is Bob.",
        "metadata": {"turn": 3},
    },
    {
        "role": "user",
        "name": "Alice",
        "content": "Invoice INV-20931 from Quixotrix is still unpaid.",
        "metadata": {"turn": 4},
    },
    {
        "role": "user",
        "name": "Alice",
        "content": "I prefer green tea over coffee in the morning.",
        "metadata": {"turn": 5},
    },
]


def downgrade_store(path: Path, version: str, columns: list[tuple[str, str]]) -> None:
    """Make an embedded store look as agentmem's schema ``version`` left it: the ``(table,
    column)`` pairs added since dropped, the version recorded."""
    con = duckdb.connect(str(path / "agentmem.duckdb"))
    tables = ", ".join(f"'{table}'" for table in sorted({table for table, _ in columns}))
    indexes = con.execute(
        f"SELECT index_name FROM duckdb_indexes() WHERE table_name IN ({tables})"
    ).fetchall()
    for (name,) in indexes:  # DuckDB alters no table that has an index
        con.execute(f"DROP INDEX {name}")
    for table, column in columns:
        con.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
    con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", [version])
    con.close()


BACKENDS = ("duckdb", "postgresql")
ACCEPTANCE = Path(__file__).parent / "acceptance"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--backend",
        choices=(*BACKENDS, "both"),
        default=None,
        help="store backend(s) of the acceptance tests (default: $AGENTMEM_TEST_BACKEND, "
        "else DuckDB and a subset on PostgreSQL)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "duckdb_only(reason): about the embedded store's files; not run on PostgreSQL"
    )


#: The acceptance files run on PostgreSQL too by default: retain and recall, the store's
#: lifecycle, filters, forget, transfer, corrections, causes and hostile input.
POSTGRES_BY_DEFAULT = frozenset(
    {
        "test_retain_recall.py",
        "test_store.py",
        "test_filters_scoring_budget.py",
        "test_transfer.py",
        "test_entity_corrections.py",
        "test_causes.py",
        "test_bad_input.py",
        "test_reliability.py",
        "test_profiles_concurrent.py",
        "test_pieces.py",
        "test_idempotent_retain.py",
    }
)


def _backends(config: pytest.Config, path: Path) -> tuple[str, ...]:
    chosen = config.getoption("--backend") or os.environ.get("AGENTMEM_TEST_BACKEND")
    if chosen is None:
        return BACKENDS if path.name in POSTGRES_BY_DEFAULT else ("duckdb",)
    if chosen not in (*BACKENDS, "both"):
        raise pytest.UsageError(f"AGENTMEM_TEST_BACKEND must be one of {BACKENDS} or 'both'")
    return BACKENDS if chosen == "both" else (chosen,)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Run each acceptance test that opens its store through ``store_path`` per backend."""
    path = metafunc.definition.path
    if "store_path" not in metafunc.fixturenames or not path.is_relative_to(ACCEPTANCE):
        return
    only = metafunc.definition.get_closest_marker("duckdb_only")
    params = [
        pytest.param(
            name,
            marks=pytest.mark.skip(reason=f"DuckDB only: {only.args[0] if only.args else ''}")
            if only is not None and name != "duckdb"
            else (),
        )
        for name in _backends(metafunc.config, path)
    ]
    metafunc.parametrize("backend", params)


@pytest.fixture
def backend() -> str:
    """The store backend of a test not run per backend."""
    return "duckdb"


@pytest.fixture
def store_path(tmp_path: Path, backend: str, request: pytest.FixtureRequest) -> Path | str:
    """Where the test's store lives: a directory, or a fresh PostgreSQL database's URL."""
    if backend == "postgresql":
        return request.getfixturevalue("pg_url")
    return tmp_path / "store"


@pytest.fixture
def mem(store_path: Path) -> Iterator[agentmem.AgentMemory]:
    memory = agentmem.AgentMemory(store_path)
    yield memory
    memory.close()


@pytest.fixture
def bank(mem: agentmem.AgentMemory) -> agentmem.MemoryBank:
    bank = mem.bank("alice")
    bank.retain(CONVERSATION, mentioned_at=T0, document_id="session-1")
    return bank


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[object]:
    """One throwaway PostgreSQL (with pgvector) per test session, on a Unix socket."""
    from agentmem.testing_postgres import TemporaryPostgres

    server = TemporaryPostgres().start()
    yield server
    server.stop()


@pytest.fixture
def pg_url(pg_cluster: object) -> Iterator[str]:
    """A fresh, empty database of the session's PostgreSQL, as a ``postgresql://`` URL
    (dropped after the test: hundreds of them would fill the disk)."""
    import psycopg

    url = pg_cluster.create_database()  # type: ignore[attr-defined]
    yield url
    name = psycopg.conninfo.conninfo_to_dict(url)["dbname"]
    with psycopg.connect(pg_cluster.url(), autocommit=True) as con:  # type: ignore[attr-defined]
        con.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
