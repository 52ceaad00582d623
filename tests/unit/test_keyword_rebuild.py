"""Pending keyword postings are folded in the background; every row stays keyword-searchable."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentmem
from agentmem.testing import HashEmbedder

T0 = "2025-03-04T09:00:00Z"
# A fold is due every 30 rows, so a bulk retain starts many while it keeps writing.
FREQUENT = agentmem.EngineConfig(keyword_rebuild_min=30, keyword_rebuild_fraction=0.0)


def _retain_codes(bank: agentmem.MemoryBank, batch: int) -> dict[str, str]:
    codes = [f"Z{batch}Q{j}" for j in range(10)]
    messages = [{"role": "user", "content": f"Parcel {code} waits at the desk."} for code in codes]
    result = bank.retain(messages, mentioned_at=T0)
    return {m.id: code for m, code in zip(result.memories, codes, strict=True)}


def _found_by_code(bank: agentmem.MemoryBank, memory_id: str, code: str) -> bool:
    hits = bank.recall(code, strategies=["keyword"], top_k=5, reinforce=False)
    return memory_id in {h.memory.id for h in hits}


def test_rows_written_during_background_folds_are_searchable_at_once(store_path):
    folds: list[float] = []
    with agentmem.AgentMemory(store_path, embedder=HashEmbedder(), config=FREQUENT) as mem:
        bank = mem.bank("b")
        keyword = mem._engine.keyword
        original = keyword.fold_pending
        keyword.fold_pending = lambda: folds.append(original()) or folds[-1]  # count them
        stored: dict[str, str] = {}
        for batch in range(12):
            latest = _retain_codes(bank, batch)
            stored |= latest
            # Searchable when retain returns, whether a fold is running or not.
            memory_id, code = next(iter(latest.items()))
            assert _found_by_code(bank, memory_id, code)
        keyword.wait()
        assert folds  # the folds did run (in the background)
        assert all(_found_by_code(bank, i, code) for i, code in stored.items())
        report = mem.check_integrity()
        assert report.ok, report.problems
        assert report.memories == len(stored)
    with agentmem.AgentMemory(store_path, embedder=HashEmbedder(), config=FREQUENT) as mem:
        bank = mem.bank("b")
        assert mem.check_integrity().ok
        assert all(_found_by_code(bank, i, code) for i, code in stored.items())


def test_forgetting_while_a_fold_runs_loses_nothing_else(store_path):
    with agentmem.AgentMemory(store_path, embedder=HashEmbedder(), config=FREQUENT) as mem:
        bank = mem.bank("b")
        stored: dict[str, str] = {}
        for batch in range(4):
            stored |= _retain_codes(bank, batch)
        keyword = mem._engine.keyword
        keyword.wait()
        stored |= _retain_codes(bank, 99)  # pending postings a forget can remove...
        doomed = sorted(stored)[:15]
        keyword.maybe_fold()  # ...while a fold may be indexing them
        assert bank.forget(doomed) == len(doomed)
        keyword.wait()  # a fold that conflicted rolled back: it raises nothing
        kept = {i: c for i, c in stored.items() if i not in doomed}
        assert all(_found_by_code(bank, i, code) for i, code in kept.items())
        assert not any(_found_by_code(bank, i, stored[i]) for i in doomed)
        keyword.rebuild()  # a later rebuild succeeds and changes nothing for the reader
        assert all(_found_by_code(bank, i, code) for i, code in kept.items())
        report = mem.check_integrity()
        assert report.ok, report.problems
        assert report.memories == len(kept)


def test_a_store_without_term_sorted_postings_gets_them_on_open(store_path):
    with agentmem.AgentMemory(store_path, embedder=HashEmbedder(), config=FREQUENT) as mem:
        bank = mem.bank("b")
        stored = {}
        for batch in range(5):
            stored |= _retain_codes(bank, batch)
        mem._engine.keyword.wait()
        mem.rebuild_keyword_index()
        mem._engine.db.execute("DROP TABLE keyword_postings")  # as a store from before them
    with agentmem.AgentMemory(store_path, embedder=HashEmbedder(), config=FREQUENT) as mem:
        bank = mem.bank("b")
        assert mem._engine.keyword.pending_rows() == 0  # everything is in the built index
        assert all(_found_by_code(bank, i, code) for i, code in stored.items())
        assert mem.check_integrity().ok


def test_a_store_from_before_per_bank_statistics_is_upgraded_once_on_open(store_path):
    """Store-wide keyword_stats, postings without a bank, pending rows without one: on open the
    index is rebuilt with every bank's own statistics, and scores are those of a new store."""
    query = "parcel waits Z1Q2 desk"
    with agentmem.AgentMemory(store_path, embedder=HashEmbedder(), config=FREQUENT) as mem:
        banks = {name: mem.bank(name) for name in ("b", "c")}
        stored = _retain_codes(banks["b"], 0) | _retain_codes(banks["b"], 1)
        _retain_codes(banks["c"], 2)
        mem._engine.keyword.wait()
        _retain_codes(banks["b"], 3)  # left pending
        expected = mem._engine.keyword.search("b", query, 40)
        db = mem._engine.db
        for sql in (  # the tables as agentmem 0.1 left them
            "DROP TABLE keyword_bank_stats",
            "DROP TABLE keyword_removed",
            "CREATE OR REPLACE TABLE keyword_postings AS "
            "SELECT term, seq, len, tf_fact, tf_context FROM keyword_postings ORDER BY term",
            "ALTER TABLE keyword_pending DROP COLUMN bank_id",
            "CREATE TABLE keyword_stats AS SELECT 50 AS num_docs, 9.5 AS avgdl",
        ):
            db.execute(sql)
    with agentmem.AgentMemory(store_path, embedder=HashEmbedder(), config=FREQUENT) as mem:
        keyword, db = mem._engine.keyword, mem._engine.db
        assert keyword.pending_rows() == 0
        assert not db.fetchall("SELECT * FROM duckdb_tables() WHERE table_name = 'keyword_stats'")
        assert db.fetchall("SELECT bank_id, num_docs FROM keyword_bank_stats ORDER BY ALL") == [
            ("b", 30),
            ("c", 10),
        ]
        assert keyword.search("b", query, 40) == expected
        assert all(_found_by_code(mem.bank("b"), i, code) for i, code in stored.items())
        report = mem.check_integrity()
        assert report.ok, report.problems


def test_the_integrity_check_reports_statistics_that_drifted(store_path):
    with agentmem.AgentMemory(store_path, embedder=HashEmbedder(), config=FREQUENT) as mem:
        _retain_codes(mem.bank("b"), 0)
        assert mem.check_integrity().ok
        mem._engine.db.execute("UPDATE keyword_bank_stats SET total_len = total_len - 1")
        (problem,) = mem.check_integrity().problems
        assert "keyword statistics" in problem and "'b'" in problem
        mem.rebuild_keyword_index()  # recounts them
        assert mem.check_integrity().ok


def test_a_fold_changes_no_score_and_builds_what_a_rebuild_builds(store_path):
    with agentmem.AgentMemory(store_path, embedder=HashEmbedder(), config=FREQUENT) as mem:
        bank = mem.bank("b")
        keyword = mem._engine.keyword
        db = mem._engine.db
        for batch in range(3):
            _retain_codes(bank, batch)
        keyword.wait()
        _retain_codes(bank, 7)

        def scores() -> list[tuple[str, float]]:
            return keyword.search("b", "parcel waits Z7Q3 Z1Q2 desk", 40)

        pending = scores()
        keyword.fold_pending()
        folded = scores()
        assert keyword.pending_rows() == 0
        assert pending == folded  # the same statistics, summed exactly

        forgotten = [m.id for m in bank.memories(limit=4)]
        bank.forget(forgotten)  # built postings of rows that are gone must drop out
        _retain_codes(bank, 8)
        keyword.fold_pending()
        built = [db.fetchall(f"SELECT * FROM {t} ORDER BY ALL") for t in _BUILT]
        folded = scores()
        keyword.rebuild()
        assert [db.fetchall(f"SELECT * FROM {t} ORDER BY ALL") for t in _BUILT] == built
        assert scores() == folded
        assert not set(forgotten) & {i for i, _ in folded}


_BUILT = ("keyword_postings", "keyword_bank_stats")


_QUERIES = st.text(
    alphabet=st.sampled_from(
        list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        + list(" .,;:'\"!?-_()[]*/\\\t\n")
    ),
    max_size=80,
) | st.sampled_from(
    [
        "What did Caroline paint in the running club's 2023 show?",
        "The QUICK brown foxes were jumping; the Foxes' jumps!",
        "room 42 and INV-147514 at 9.30am",
        "café naïve Ümlaut İstanbul straße",  # not ASCII: the SQL tokeniser
        "记忆 עברית Ωμέγα",
        "",
        "the and of",  # stopwords only
    ]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(query=_QUERIES)
def test_query_terms_match_the_sql_tokeniser(store, query):
    """Queries split in Python give the terms the index's own SQL tokeniser gives."""
    from agentmem.store.keyword import _QUERY_TERMS

    keyword = store._engine.keyword
    expected = {row[0] for row in store._engine.db.fetchall(_QUERY_TERMS, {"query": query})}
    first = keyword.query_terms(query)
    assert len(first) == len(set(first))
    assert set(first) == expected
    assert set(keyword.query_terms(query)) == expected  # again, from the stem cache


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    with agentmem.AgentMemory(tmp_path_factory.mktemp("terms"), embedder=HashEmbedder()) as mem:
        yield mem


_TURNS = st.lists(
    st.text(
        alphabet=st.sampled_from(
            list("abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456789 .,;:'!?-_()")
            + list("éüçİıßØ记忆ΩΣµ\u0301\u00a0²½")
        ),
        min_size=1,
        max_size=60,
    ).filter(lambda text: any(c.isalnum() for c in text))
    | st.sampled_from(
        [
            "Caroline painted a lake; the lake's painting sold for $300!",
            "the and of it is",  # stopwords only: a row of length 0
            "Running runners ran: RUN, run, runs.",
            "café naïve Ümlaut İstanbul straße",
            "Ωμέγα and 记忆 at 9.30am, room 42",
        ]
    ),
    min_size=1,
    max_size=5,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(turns=_TURNS)
def test_a_write_indexes_the_postings_a_rebuild_would(pending_store, turns):
    """A retain's pending postings, counted in Python, are exactly those the rebuild's SQL
    makes of the same rows, and its bank's statistics stay those of the rows."""
    from agentmem.store.keyword import _RANGE, STATS_MISMATCH, _tokenized

    db = pending_store._engine.db
    (before,) = db.fetchall("SELECT coalesce(max(seq), 0) FROM memories")[0]
    bank_id = f"b{before}"
    messages = [{"role": "user", "name": "Ann", "content": turn} for turn in turns]
    pending_store.bank(bank_id).retain(messages, mentioned_at=T0)
    first, last = db.fetchall("SELECT min(seq), max(seq) FROM memories WHERE seq > ?", [before])[0]
    bounds = {"first": first, "last": last}
    expected = db.fetchall(f"SELECT * FROM ({_tokenized(_RANGE)}) ORDER BY ALL", bounds)
    written = db.fetchall(
        "SELECT bank_id, seq, field, term, tf, len FROM keyword_pending "
        f"WHERE {_RANGE} ORDER BY ALL",
        bounds,
    )
    assert written == expected
    assert db.fetchall(STATS_MISMATCH, {"bank": bank_id}) == []


@pytest.fixture(scope="module")
def pending_store(tmp_path_factory):
    never_fold = agentmem.EngineConfig(keyword_rebuild_min=10**9)
    with agentmem.AgentMemory(
        tmp_path_factory.mktemp("pending"), embedder=HashEmbedder(), config=never_fold
    ) as mem:
        yield mem
