"""PostgresDatabase: DuckDB-style statements on PostgreSQL, transactions, schema, errors."""

from __future__ import annotations

import threading

import psycopg
import pytest

import agentmem
from agentmem.errors import InvalidInputError, StorageError
from agentmem.store.postgres.database import PostgresDatabase, redacted, to_psycopg
from agentmem.store.postgres.schema import SCHEMA_VERSION


def test_placeholders_are_translated_outside_quoted_text_and_comments() -> None:
    sql = "SELECT '?', \"$x\", $a, ?, 'it''s $b %', 5 % 2 -- what's $c ?\nFROM t WHERE y = $b_2"
    assert to_psycopg(sql) == (
        "SELECT '?', \"$x\", %(a)s, %s, 'it''s $b %%', 5 %% 2 -- what's $c ?\n"
        "FROM t WHERE y = %(b_2)s"
    )


def test_passwords_are_not_shown() -> None:
    assert redacted("postgresql://me:secret@db:5432/x") == "postgresql://me:***@db:5432/x"
    assert redacted("postgresql://me@/x?host=/run") == "postgresql://me@/x?host=/run"


def test_statements_parameters_and_the_schema(pg_url: str) -> None:
    db = PostgresDatabase(pg_url)
    try:
        assert db.get_meta("schema_version") == SCHEMA_VERSION
        db.execute("INSERT INTO meta VALUES (?, ?)", ["k", "100%"])
        assert db.fetchall("SELECT value FROM meta WHERE key = $key", {"key": "k"}) == [("100%",)]
        assert db.fetchall(
            "SELECT list_contains($ids, 'b'), list_has_any($a, $b), list_has_all($a, $b), "
            "list_sort($b), contains('Berlin', 'erl'), "
            'from_json(\'["x", "y"]\', \'["VARCHAR"]\')',
            {"ids": ["a", "b"], "a": ["x", "y"], "b": ["y", "x"]},
        ) == [(True, True, True, ["x", "y"], True, ["x", "y"])]
        assert db.fetchall("SELECT list_has_any(ARRAY['a'], $none)", {"none": []}) == [(False,)]
        # A '%' outside quotes is an operator, with parameters or without.
        assert db.fetchall("SELECT 7 % 4, '%', '100%'") == [(3, "%", "100%")]
        assert db.fetchall("SELECT 7 % 4", []) == db.fetchall("SELECT 7 % ?", [4]) == [(3,)]
        assert db.fetchall('SELECT ? || \'%\', "%" FROM (SELECT 1 AS "%") AS t', ["5"]) == [
            ("5%", 1)
        ]
        with db.transaction() as cur:
            assert cur.execute("SELECT 9 % 5").fetchall() == [(4,)]
    finally:
        db.close()


def test_a_transaction_is_all_or_nothing_and_sees_its_own_writes(pg_url: str) -> None:
    db = PostgresDatabase(pg_url)
    try:
        with pytest.raises(RuntimeError), db.transaction() as cur:
            cur.execute("INSERT INTO meta VALUES ('a', '1')")
            # statements of the thread outside the cursor run in the same transaction
            assert db.get_meta("a") == "1"
            seen = []
            other = threading.Thread(target=lambda: seen.append(db.get_meta("a")))
            other.start()
            other.join()
            assert seen == [None]  # not committed
            raise RuntimeError("abort")
        assert db.get_meta("a") is None
        with db.transaction() as cur:
            cur.execute("INSERT INTO meta VALUES ('a', '2')")
        assert db.get_meta("a") == "2"
        with pytest.raises(StorageError, match="duplicate key"), db.transaction() as cur:
            cur.execute("INSERT INTO meta VALUES ('b', '1')")
            cur.execute("INSERT INTO meta VALUES ('a', '3')")
        assert db.get_meta("b") is None and db.get_meta("a") == "2"
    finally:
        db.close()


def test_reopening_keeps_the_rows_and_a_newer_schema_is_refused(pg_url: str) -> None:
    db = PostgresDatabase(pg_url)
    db.execute("INSERT INTO meta VALUES ('kept', 'yes')")
    db.close()
    db = PostgresDatabase(pg_url)
    assert db.get_meta("kept") == "yes"
    db.close()
    with pytest.raises(StorageError, match="closed"):
        db.get_meta("kept")
    with psycopg.connect(pg_url, autocommit=True) as con:
        con.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(StorageError, match="schema version 99"):
        PostgresDatabase(pg_url)


def test_unreachable_servers_and_bad_urls_are_clear_errors(pg_url: str, tmp_path) -> None:  # noqa: ANN001
    with pytest.raises(StorageError, match=r"cannot connect to PostgreSQL at .*\*\*\*") as info:
        PostgresDatabase(f"postgresql://me:hunter2@/x?host={tmp_path}", connect_timeout=1)
    assert "hunter2" not in str(info.value)
    with pytest.raises(StorageError, match="does not exist"):
        PostgresDatabase(pg_url.replace("/t_", "/missing_"))
    with pytest.raises(StorageError, match="role"):
        PostgresDatabase(pg_url.replace("postgres@", "nobody_here@"))
    with pytest.raises(InvalidInputError, match="not a PostgreSQL URL"):
        PostgresDatabase("postgresql://a@b/c?nonsense_option=1")


def test_a_store_of_schema_3_gains_the_piece_vectors_and_slots_columns(pg_url: str) -> None:
    with agentmem.AgentMemory(pg_url) as mem:
        mem.bank("b").retain("Giulia is a marine biologist in Naples.", mentioned_at="2025-03-04")
    with psycopg.connect(pg_url, autocommit=True) as con:
        con.execute("ALTER TABLE memories DROP COLUMN statement_slots")
        con.execute("ALTER TABLE memories DROP COLUMN piece_vectors")
        con.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    with agentmem.AgentMemory(pg_url) as mem:
        assert mem._engine.db.get_meta("schema_version") == SCHEMA_VERSION == "5"
        bank = mem.bank("b")
        bank.retain(
            [{"role": "user", "name": "Tim", "content": "Hi there Ada. I went to a conference."}],
            mentioned_at="2025-03-05",
        )
        assert mem.repair().pieces == 0  # the old fact is one sentence; the new has its pieces
        stored = dict(mem._engine.db.fetchall("SELECT text, piece_vectors FROM memories"))
        assert stored["Giulia is a marine biologist in Naples."] is None
        assert stored["Tim: Hi there Ada. I went to a conference."] is not None
        assert mem.check_integrity().ok
