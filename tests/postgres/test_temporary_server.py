"""The test PostgreSQL itself: pgvector present, a database per test, Unix socket only."""

from __future__ import annotations

import psycopg


def test_each_test_gets_an_empty_database_with_pgvector(pg_url: str, pg_cluster: object) -> None:
    with psycopg.connect(pg_url) as con:
        (version,) = con.execute(
            "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
        ).fetchone()
        assert version.startswith("0.8")
        assert con.execute("SHOW listen_addresses").fetchone() == ("",)
        tables = con.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'"
        ).fetchone()
        assert tables == (0,)
    assert pg_cluster.create_database() != pg_url  # type: ignore[attr-defined]
