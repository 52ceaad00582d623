"""Several writers (replicas) on one PostgreSQL keyword index: every row indexed once, every
bank's statistics exact, every write searchable through every replica once committed."""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator

import pytest

from agentmem.store.postgres.database import PostgresDatabase
from agentmem.store.postgres.keyword import (
    MISSING_ROWS,
    ORPHAN_ROWS,
    STATS_MISMATCH,
    PostgresKeywordIndex,
)

_INSERT = (
    "INSERT INTO memories (id, seq, bank_id, text, search_text, context_text, fact_type, "
    "mentioned_at, tags, importance, access_count, created_at) "
    "VALUES (?, ?, ?, ?, ?, '', 'world', '2025-03-04', '{}', 0.5, 0, '2025-03-04')"
)


@pytest.fixture
def replicas(pg_url: str) -> Iterator[list[tuple[PostgresDatabase, PostgresKeywordIndex]]]:
    opened = [PostgresDatabase(pg_url) for _ in range(3)]
    yield [(db, PostgresKeywordIndex(db, context_weight=0.3)) for db in opened]
    for db in opened:
        db.close()


def _next_seq(cur) -> int:  # noqa: ANN001
    return cur.execute("SELECT nextval('memory_seq')").fetchone()[0]


def _store(cur, seq: int, bank: str, text: str) -> None:  # noqa: ANN001
    cur.execute(_INSERT, [f"m{seq}", seq, bank, text, text])


def _consistent(db: PostgresDatabase, banks: set[str]) -> None:
    for bank in banks:
        assert db.fetchall(STATS_MISMATCH, {"bank": bank}) == []
        assert db.fetchall(MISSING_ROWS, {"bank": bank}) == []
    assert db.fetchall(ORPHAN_ROWS) == []
    duplicates = db.fetchall(
        "SELECT seq, term, count(*) FROM keyword_postings GROUP BY seq, term HAVING count(*) > 1"
    )
    assert duplicates == []


def test_a_range_holding_another_writers_committed_row_indexes_it_once(replicas) -> None:
    (a_db, a_index), (b_db, b_index), (c_db, c_index) = replicas
    done = threading.Event()
    b_committed = threading.Event()
    seqs: dict[str, list[int]] = {}

    def writer_a() -> None:
        with a_db.transaction() as cur:
            first = _next_seq(cur)
            seqs["a"] = [first]
            _store(cur, first, "bank", "Alice parks the blue bicycle")
            b_may_start.set()
            b_committed.wait(10)  # B took the next value and committed it meanwhile
            last = _next_seq(cur)
            seqs["a"].append(last)
            _store(cur, last, "bank", "Alice paints the garage blue")
            a_index.add_pending(cur, first, last)  # the range holds B's committed row
        done.set()

    b_may_start = threading.Event()
    thread = threading.Thread(target=writer_a)
    thread.start()
    b_may_start.wait(10)
    with b_db.transaction() as cur:
        seq = _next_seq(cur)
        _store(cur, seq, "bank", "Bob rides a blue bicycle")
        b_index.add_pending(cur, seq, seq)
    seqs["b"] = [seq]
    b_committed.set()
    thread.join(10)
    assert done.is_set()
    assert seqs["a"][0] < seqs["b"][0] < seqs["a"][1]
    _consistent(c_db, {"bank"})
    # Every replica scores the three rows alike, each counted once.
    hits = [index.search("bank", "blue bicycle", 10) for _, index in replicas]
    assert hits[0] == hits[1] == hits[2]
    assert sorted(i for i, _ in hits[0]) == sorted(f"m{s}" for s in seqs["a"] + seqs["b"])


def test_concurrent_writes_and_forgets_keep_every_banks_statistics_exact(replicas) -> None:
    words = [
        "blue",
        "red",
        "green",
        "bicycle",
        "garage",
        "invoice",
        "Berlin",
        "Lisbon",
        "tea",
        "coffee",
        "the",
        "and",
        "of",
    ]
    errors: list[BaseException] = []

    def work(db: PostgresDatabase, index: PostgresKeywordIndex, seed: int) -> None:
        rng = random.Random(seed)
        try:
            for _ in range(25):
                bank = rng.choice(["one", "two"])
                with db.transaction() as cur:
                    if rng.random() < 0.3:
                        doomed = [
                            r[0]
                            for r in cur.execute(
                                "SELECT seq FROM memories WHERE bank_id = ? ORDER BY random() "
                                "LIMIT 2 FOR UPDATE SKIP LOCKED",
                                [bank],
                            ).fetchall()
                        ]
                        index.remove_rows(cur, doomed)
                        for seq in doomed:
                            cur.execute("DELETE FROM memories WHERE seq = ?", [seq])
                    seqs = [_next_seq(cur) for _ in range(rng.randint(1, 4))]
                    for seq in seqs:
                        _store(cur, seq, bank, " ".join(rng.choices(words, k=rng.randint(0, 8))))
                    index.add_pending(cur, min(seqs), max(seqs))
        except BaseException as exc:  # reported by the test thread
            errors.append(exc)

    threads = [
        threading.Thread(target=work, args=(db, index, n)) for n, (db, index) in enumerate(replicas)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors, errors
    db, index = replicas[0]
    _consistent(db, {"one", "two"})
    stored = dict(db.fetchall("SELECT bank_id, count(*) FROM memories GROUP BY bank_id"))
    counted = dict(db.fetchall("SELECT bank_id, num_docs FROM keyword_bank_stats"))
    assert counted == stored and sum(stored.values()) > 50
    before = [index.search(bank, "blue bicycle tea", 60) for bank in ("one", "two")]
    index.rebuild()  # recounts from the rows: the same statistics, the same scores
    _consistent(db, {"one", "two"})
    assert [index.search(bank, "blue bicycle tea", 60) for bank in ("one", "two")] == before
