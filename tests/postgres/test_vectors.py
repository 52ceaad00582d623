"""PostgresVectorStore: pgvector with a partial HNSW index per bank collection."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import psycopg
import pytest

import agentmem
from agentmem.errors import InvalidInputError
from agentmem.store.postgres.database import PostgresDatabase
from agentmem.store.postgres.vectors import PostgresVectorStore, _index_name, _Vector
from agentmem.store.vectors import VectorStore, _matches
from agentmem.testing import HashEmbedder


def _unit(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    x = rng.normal(size=(n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _exact(vectors: np.ndarray, ids: list[str], query: np.ndarray, k: int) -> list[str]:
    return [ids[j] for j in np.argsort(-(vectors @ query), kind="stable")[:k]]


@pytest.fixture
def db(pg_url: str) -> Iterator[PostgresDatabase]:
    database = PostgresDatabase(pg_url)
    yield database
    database.close()


@pytest.fixture
def store(db: PostgresDatabase) -> PostgresVectorStore:
    return PostgresVectorStore(db)


def _meta(i: int) -> dict[str, object]:
    return {"fact_type": ["world", "experience"][i % 2], "dated": i % 3 == 0, "t_start": float(i)}


def test_recall_at_10_of_the_index_in_two_banks(store: PostgresVectorStore, db) -> None:
    rng = np.random.default_rng(11)
    sizes = {"bank-big": 3000, "bank-small": 600}
    data = {}
    for collection, size in sizes.items():
        vectors = _unit(rng, size, 32)
        ids = [f"{collection}-{i}" for i in range(size)]
        store.create_collection(collection, 32)
        for start in range(0, size, 500):
            part = slice(start, start + 500)
            store.upsert(
                collection, ids[part], vectors[part], [_meta(i) for i in range(size)][part]
            )
        data[collection] = (vectors, ids)
    db.execute("ANALYZE vectors")  # the planner then picks each collection's own index
    for collection, (vectors, ids) in data.items():
        q = vectors[0]
        with db._connection() as con:
            explained = "\n".join(
                r[0]
                for r in con.execute(
                    "EXPLAIN " + store._nearest_sql(collection, 32, "TRUE", 10),
                    {"q": _Vector(q)},
                ).fetchall()
            )
        assert _index_name(collection) in explained, explained
        queries = _unit(rng, 60, 32)
        found = [store.query(collection, query, 10) for query in queries]
        assert all(i in set(ids) for hits in found for i, _ in hits)  # never another bank's
        recall = np.mean(
            [
                len({i for i, _ in hits} & set(_exact(vectors, ids, query, 10))) / 10
                for hits, query in zip(found, queries, strict=True)
            ]
        )
        assert recall >= 0.95, (collection, recall)
        # query_many answers the same, in one statement.
        assert store.query_many(collection, queries[:5], 10) == found[:5]


def test_similarities_follow_the_chroma_store(store: PostgresVectorStore, tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(50, 16)).astype(np.float32)  # not unit: cosine normalises
    ids = [f"m{i}" for i in range(50)]
    metas = [_meta(i) for i in range(50)]
    chroma = VectorStore(tmp_path)
    chroma.upsert("bank-c", ids, vectors, metas)
    store.upsert("bank-c", ids, vectors, metas)
    for query in rng.normal(size=(5, 16)).astype(np.float32):
        ours = store.query("bank-c", query, 10)
        theirs = chroma.query("bank-c", query, 10)
        assert [i for i, _ in ours] == [i for i, _ in theirs]
        assert np.allclose([s for _, s in ours], [s for _, s in theirs], atol=1e-5)
    chroma.close()


FILTERS = [
    {"fact_type": "world"},
    {"fact_type": {"$in": ["experience"]}},
    {"fact_type": {"$nin": ["experience"]}},
    {"fact_type": {"$ne": "world"}},
    {"dated": True},
    {"$and": [{"t_start": {"$gte": 10.0}}, {"t_start": {"$lt": 40}}]},
    {"$or": [{"t_start": {"$lte": 3}}, {"fact_type": "experience", "dated": True}]},
    {"$and": []},
    {"$or": []},
    {"missing": {"$gt": 0}},
    {"t_start": {"$gt": "a string never compares with a number"}},
]


@pytest.mark.parametrize("where", FILTERS)
def test_filters_select_what_the_chroma_filter_does(store: PostgresVectorStore, where) -> None:
    rng = np.random.default_rng(5)
    vectors = _unit(rng, 80, 8)
    ids = [f"m{i}" for i in range(80)]
    metas = [_meta(i) for i in range(80)]
    store.upsert("bank-f", ids, vectors, metas)
    query = vectors[7]
    matching = [i for i, m in zip(ids, metas, strict=True) if _filter_matches(m, where)]
    expected = [i for i in _exact(vectors, ids, query, 80) if i in set(matching)]
    assert [i for i, _ in store.query("bank-f", query, 80, where)] == expected
    assert [i for i, _ in store.query("bank-f", query, 5, where)] == expected[:5]
    # nearest_only keeps to the matches among the n × 16 nearest: here every vector.
    assert [i for i, _ in store.query("bank-f", query, 5, where, nearest_only=True)] == (
        expected[:5]
    )


def _filter_matches(metadata: dict, where: dict) -> bool:
    """The Chroma store's own evaluation, with the operators it leaves to Chroma."""
    for key, condition in where.items():
        if isinstance(condition, dict) and "$nin" in condition:
            return key in metadata and metadata[key] not in condition["$nin"]
        if isinstance(condition, dict) and "$ne" in condition:
            return key in metadata and metadata[key] != condition["$ne"]
        if isinstance(condition, dict) and any(
            isinstance(v, str) and not isinstance(metadata.get(key), str)
            for v in condition.values()
        ):
            return False
    return _matches(metadata, where)


def test_unknown_filter_operators_are_refused(store: PostgresVectorStore) -> None:
    store.upsert("bank-u", ["a"], np.ones((1, 4), dtype=np.float32), [{"x": 1}])
    with pytest.raises(InvalidInputError, match=r"\$like"):
        store.query("bank-u", np.ones(4), 3, {"x": {"$like": 1}})


def test_delete_drop_and_vectors_read_back(store: PostgresVectorStore, db) -> None:
    rng = np.random.default_rng(9)
    vectors = _unit(rng, 20, 8)
    ids = [f"m{i}" for i in range(20)]
    store.upsert("bank-d", ids, vectors, [_meta(i) for i in range(20)])
    store.upsert("bank-e", ids[:3], vectors[:3], [_meta(i) for i in range(3)])
    stored = store.get_vectors("bank-d", [*ids[:3], "absent"])
    assert set(stored) == set(ids[:3])
    assert all(np.array_equal(stored[i], vectors[n]) for n, i in enumerate(ids[:3]))
    assert store.dimension("bank-d") == 8

    store.delete("bank-d", [*ids[:5], "absent"])
    assert store.ids("bank-d") == set(ids[5:])
    assert store.count("bank-d") == 15
    assert {i for i, _ in store.query("bank-d", vectors[0], 20)} == set(ids[5:])

    store.drop("bank-d")
    assert store.count("bank-d") == 0
    assert store.dimension("bank-d") is None
    assert store.query("bank-d", vectors[0], 5) == []
    indexes = {r[0] for r in db.fetchall("SELECT indexname FROM pg_indexes")}
    assert _index_name("bank-d") not in indexes
    assert _index_name("bank-e") in indexes
    assert store.ids("bank-e") == set(ids[:3])  # the other bank keeps its vectors
    # A collection of the same name may come back with another dimension.
    store.upsert("bank-d", ["x"], np.ones((1, 3), dtype=np.float32), [{}])
    assert store.dimension("bank-d") == 3


def test_a_vector_of_another_dimension_is_refused_and_nothing_is_written(
    store: PostgresVectorStore, db
) -> None:
    store.upsert("bank-x", ["a"], np.ones((1, 4), dtype=np.float32), [{}])
    with pytest.raises(InvalidInputError, match="dimension 5 .* dimension 4"):
        store.upsert("bank-x", ["b", "c"], np.ones((2, 5), dtype=np.float32), [{}, {}])
    with pytest.raises(InvalidInputError, match="dimension 3"):
        store.query("bank-x", np.ones(3), 2)
    assert store.ids("bank-x") == {"a"}
    # Another process's store sees the collection's dimension from the table.
    assert PostgresVectorStore(db)._checked_dimension("bank-x", np.ones((1, 4))) == 4


def test_writes_commit_and_roll_back_with_the_callers_transaction(
    store: PostgresVectorStore, db
) -> None:
    store.create_collection("bank-t", 4)
    vectors = np.eye(4, dtype=np.float32)
    with pytest.raises(RuntimeError), db.transaction() as cur:
        store.write_in(cur, "b", "bank-t", ["a", "b"], vectors[:2], [{}, {}])
        assert store.count("bank-t") == 2  # the transaction sees its own writes
        assert store.query("bank-t", vectors[1], 1)[0][0] == "b"
        raise RuntimeError("the retain fails after its vectors were written")
    assert store.count("bank-t") == 0
    with db.transaction() as cur:
        store.write_in(cur, "b", "bank-t", ["a", "b"], vectors[:2], [{}, {}])
        store.delete_in(cur, "b", "bank-t", ["a"])
    store.stage("b", "bank-t", ["a", "b"], vectors[:2], [{}, {}])  # after commit: nothing left
    store.delete("bank-t", ["a"])
    assert store.ids("bank-t") == {"b"}
    assert store.staged == 0 and not store.embedded
    with pytest.raises(RuntimeError), db.transaction() as cur:
        store.drop_in(cur, "b", "bank-t")
        assert store.count("bank-t") == 0
        raise RuntimeError("the bank's deletion fails")
    assert store.ids("bank-t") == {"b"}
    with db.transaction() as cur:
        store.drop_in(cur, "b", "bank-t")
    store.drop("bank-t")
    assert store.count("bank-t") == 0
    assert _index_name("bank-t") not in {
        r[0] for r in db.fetchall("SELECT indexname FROM pg_indexes")
    }


def test_repeated_ids_keep_the_last_vector(store: PostgresVectorStore) -> None:
    vectors = np.eye(3, dtype=np.float32)
    store.upsert("bank-r", ["a", "a", "b"], vectors, [{"n": 0}, {"n": 1}, {"n": 2}])
    assert np.array_equal(store.get_vectors("bank-r", ["a"])["a"], vectors[1])
    assert [i for i, _ in store.query("bank-r", vectors[1], 1, {"n": 1})] == ["a"]


def test_a_collections_first_write_inside_a_transaction_creates_it(
    store: PostgresVectorStore, db
) -> None:
    vectors = np.eye(4, dtype=np.float32)
    with db.transaction() as cur:
        db.execute("INSERT INTO meta VALUES ('k', 'v')")  # the transaction holds other locks
        store.write_in(cur, "b", "bank-new", ["a"], vectors[:1], [{}])
    assert store.ids("bank-new") == {"a"}
    indexes = {r[0] for r in db.fetchall("SELECT indexname FROM pg_indexes")}
    assert _index_name("bank-new") in indexes
    with pytest.raises(RuntimeError), db.transaction() as cur:
        store.write_in(cur, "b", "bank-newer", ["a"], vectors[:1], [{}])
        raise RuntimeError("rolled back")
    # The collection stays registered (empty); its vectors went with the transaction.
    assert store.count("bank-newer") == 0
    assert store._checked_dimension("bank-newer", vectors) == 4


def test_a_missing_vector_index_is_reported_and_repair_builds_it(pg_url):
    with agentmem.AgentMemory(pg_url, embedder=HashEmbedder()) as mem:
        bank = mem.bank("b")
        bank.retain("Ana moved to Lisbon in March.", mentioned_at="2025-03-04T09:00:00Z")
        other = mem.bank("c")
        other.retain("Kenji booked the flights.", mentioned_at="2025-03-04T09:00:00Z")
        assert mem.check_integrity().ok
        index = _index_name(bank._collection)
        mem._engine.db.execute(f"DROP INDEX {index}")
        report = mem.check_integrity()
        assert len(report.problems) == 1 and "'b'" in report.problems[0]
        assert "no index" in report.problems[0]
        assert not other.check_integrity().problems  # the other bank's index is there
        before = [m.text for m in bank.recall("Where does Ana live?", top_k=3)]
        mem.repair()
        assert mem.check_integrity().ok
        assert [m.text for m in bank.recall("Where does Ana live?", top_k=3)] == before
    with psycopg.connect(pg_url) as con:
        assert con.execute(
            "SELECT count(*) FROM pg_indexes WHERE indexname = %s", [index]
        ).fetchone() == (1,)
