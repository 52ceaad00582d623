"""In-process recall on PostgreSQL: the keyword mirror and the candidate-row copy answer as
the SQL does through every write, and stay coherent between replicas (two ``AgentMemory`` on
one database): a write through one is seen through the other at its next call."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings

import agentmem
from agentmem.store.postgres.database import PostgresDatabase
from agentmem.testing import HashEmbedder
from tests.unit import test_keyword_mirror as keyword_cases
from tests.unit import test_recall_rows as row_cases

T0 = "2025-03-04T09:00:00Z"


@contextmanager
def _database(pg_cluster: object) -> Iterator[str]:
    """A fresh database of the session's server for one hypothesis example."""
    url = pg_cluster.create_database()  # type: ignore[attr-defined]
    try:
        yield url
    finally:
        name = psycopg.conninfo.conninfo_to_dict(url)["dbname"]
        with psycopg.connect(pg_cluster.url(), autocommit=True) as con:  # type: ignore[attr-defined]
            con.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _open(url: str, **kwargs: object) -> agentmem.AgentMemory:
    return agentmem.AgentMemory(url, embedder=HashEmbedder(), **kwargs)  # type: ignore[arg-type]


def _in_turn(url, setup, ops, apply, check) -> None:
    """Two AgentMemory objects on one database (replicas) write in turn, the first one
    reopened where ``ops`` say; after every step both copies must equal the SQL path."""
    mem = _open(url)
    other = _open(url)  # a replica: its writes reach the first one's copies by the log
    try:
        setup(mem, other)
        check(mem)
        for step, (op, *args) in enumerate(ops):
            writer = mem if step % 2 else other
            if op == "reopen":
                mem.close()
                mem = _open(url)
            else:
                apply(writer, op, args, mem if writer is other else other)
            check(mem)
            check(other)
        report = mem.check_integrity()
        assert report.ok, report.problems
    finally:
        mem.close()
        other.close()


def _two_keyword_banks(mem, other) -> None:
    keyword_cases._apply(mem, "retain", "b", ["Parcel at the desk.", "Giulia hiked."])
    keyword_cases._apply(other, "retain", "c", ["Parcel parcel Z7Q3."])


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=keyword_cases._OPS)
def test_keyword_mirror_ranks_and_scores_as_sql_through_every_write(pg_cluster, ops):
    with _database(pg_cluster) as url:
        _in_turn(
            url,
            _two_keyword_banks,
            ops,
            lambda writer, op, args, _: keyword_cases._apply(writer, op, *args),
            keyword_cases._assert_mirror_matches_sql,
        )


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=row_cases._OPS)
def test_recall_from_copies_equals_recall_from_sql_through_every_write(pg_cluster, ops):
    with _database(pg_cluster) as url:
        _in_turn(
            url,
            lambda mem, other: row_cases._apply(mem, "retain", row_cases.TEXTS[:5], other),
            ops,
            lambda writer, op, args, peer: row_cases._apply(writer, op, *args, peer),
            row_cases._assert_same_as_sql,
        )


@pytest.fixture
def replicas(pg_url: str) -> Iterator[tuple[agentmem.AgentMemory, agentmem.AgentMemory]]:
    first, second = _open(pg_url), _open(pg_url)
    yield first, second
    first.close()
    second.close()


def _keyword_hits(mem: agentmem.AgentMemory, query: str) -> list[str]:
    hits = mem.bank("b").recall(query, strategies=["keyword"], reinforce=False, now=T0)
    return [h.memory.text for h in hits]


def test_the_mirrors_are_used_on_postgresql(replicas):
    a, _ = replicas
    engine = a._engine
    assert engine.keyword_mirrors is not None and engine.recall_rows is not None
    a.bank("b").retain("Giulia keeps the parcel at her desk.", mentioned_at=T0)
    terms = engine.keyword.query_terms("parcel")
    assert engine.keyword_mirrors.search("b", terms, 5) == engine.keyword.search("b", "parcel", 5)


def test_a_write_through_one_replica_is_recalled_through_the_other_at_its_next_call(replicas):
    a, b = replicas
    a.bank("b").retain("Giulia keeps the parcel at her desk.", mentioned_at=T0)
    assert _keyword_hits(b, "parcel") == ["Giulia keeps the parcel at her desk."]  # b loads
    a.bank("b").retain("The parcel for room 42 came late.", mentioned_at=T0)
    assert sorted(_keyword_hits(b, "parcel")) == [
        "Giulia keeps the parcel at her desk.",
        "The parcel for room 42 came late.",
    ]
    late = next(m for m in a.bank("b").memories() if "room 42" in m.text)
    a.bank("b").forget([late.id])
    assert _keyword_hits(b, "parcel") == ["Giulia keeps the parcel at her desk."]
    full = b.bank("b").recall("Where is the parcel?", reinforce=False, now=T0)
    assert late.id not in {h.memory.id for h in full}
    assert [m.text for m in b.bank("b").memories()] == ["Giulia keeps the parcel at her desk."]


def test_a_bank_deleted_through_one_replica_is_gone_through_the_other(replicas):
    a, b = replicas
    a.bank("b").retain("Giulia keeps the parcel at her desk.", mentioned_at=T0)
    held = b.bank("b")
    assert _keyword_hits(b, "parcel")
    a.delete_bank("b")
    assert "b" not in b.banks()
    assert list(held.recall("Where is the parcel?", reinforce=False, now=T0)) == []
    a.bank("b").retain("Marco paints the parcel blue.", mentioned_at=T0)  # the id again
    assert _keyword_hits(b, "parcel") == ["Marco paints the parcel blue."]
    assert [m.text for m in b.bank("b").memories()] == ["Marco paints the parcel blue."]
    assert b.check_integrity().ok


def test_access_counts_of_another_replicas_recalls_are_read(replicas):
    a, b = replicas
    a.bank("b").retain("Giulia keeps the parcel at her desk.", mentioned_at=T0)
    query = "Where is the parcel?"
    (before,) = b.bank("b").recall(query, reinforce=False, now=T0)  # b's copy holds the row
    a.bank("b").recall(query, now=T0)  # counts one access (not a change of the bank)
    a.bank("b").recall(query, now=T0)
    (after,) = b.bank("b").recall(query, reinforce=False, now=T0)
    assert after.memory.access_count == before.memory.access_count + 2
    assert after.score > before.score  # reinforcement is part of the score
    assert [m.access_count for m in a.bank("b").memories()] == [after.memory.access_count]


def test_a_recall_reads_the_banks_version_once_and_counts_only_when_they_moved(
    replicas, monkeypatch
):
    a, b = replicas
    a.bank("b").retain("Giulia keeps the parcel at her desk.", mentioned_at=T0)
    bank = b.bank("b")
    query = "Where is the parcel?"
    bank.recall(query, reinforce=False, now=T0)  # every copy loaded, counts read once
    statements: list[str] = []
    execute = PostgresDatabase.execute

    def recorded(db, sql, params=None):  # noqa: ANN001, ANN202
        statements.append(sql)
        return execute(db, sql, params)

    monkeypatch.setattr(PostgresDatabase, "execute", recorded)

    def recall_reads() -> tuple[int, int, list]:
        statements.clear()
        hits = bank.recall(query, reinforce=False, now=T0)
        versions = sum("bank_versions" in sql for sql in statements)
        counts = sum("access_count" in sql for sql in statements)
        return versions, counts, [h.memory.access_count for h in hits]

    a.bank("b").retain("The parcel for room 42 came late.", mentioned_at=T0)
    versions, counts, seen = recall_reads()
    assert versions == 1 and len(seen) == 2  # the other replica's write, from that one read
    assert recall_reads()[:2] == (1, 0)  # nobody reinforced: no count is read again
    a.bank("b").recall(query, now=T0)  # counts accesses through the other replica
    versions, counts, seen = recall_reads()
    assert (versions, counts) == (1, 1) and sorted(seen) == [1, 1]
    assert recall_reads() == (1, 0, seen)
