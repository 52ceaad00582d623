"""An embedded collection of at most ``FLAT_MAX`` vectors is searched exactly in process
(store/flat_index.py): through any writes, its answers are those of an exact search of what
Chroma stores."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentmem.errors import StorageError
from agentmem.store.flat_index import FlatIndex, FlatIndexes
from agentmem.store.metadata_filter import matches, numeric_column, passing
from agentmem.store.vectors import OVERFETCH, VectorStore, _matches

COLLECTION = "bank-flat"
_TYPES = ("world", "experience", "opinion")
DIM = 8
_DATED = {"dated": True}
_EARLY = {"$and": [{"t_start": {"$gte": 2.0}}, {"t_start": {"$lt": 9.0}}]}
_WHERES = [
    None,
    _DATED,
    _EARLY,
    {"$or": [_DATED, _EARLY]},
    {"t_start": {"$in": [1.0, 4.0, 9.5]}},
    {"fact_type": "world"},  # not a number: row by row
    {"$and": [{"fact_type": {"$in": ["world", "opinion"]}}, {"dated": {"$eq": False}}]},
    {"missing": {"$gte": 0}},
]


def _vectors(rng: np.random.Generator, count: int) -> np.ndarray:
    return rng.normal(size=(count, DIM)).astype(np.float32)


def _exact(
    store: VectorStore, vector: np.ndarray, n: int, where: dict | None, nearest_only: bool
) -> list[tuple[str, float]]:
    """The answer of an exact search over what Chroma stores (its own HNSW search may miss a
    vector after updates, differently from one run to the next)."""
    stored = store._collection(COLLECTION).get(include=["embeddings", "metadatas"])
    if not stored["ids"]:
        return []
    rows = np.asarray(stored["embeddings"], dtype=np.float32)
    cosines = rows @ vector / np.linalg.norm(rows, axis=1) / np.linalg.norm(vector)
    order = list(np.argsort(-cosines, kind="stable"))
    if where is not None:
        order = order[: n * OVERFETCH[-1]] if nearest_only else order
        order = [r for r in order if _matches(stored["metadatas"][r], where)]
    return [(stored["ids"][r], float(cosines[r])) for r in order[:n]]


def _same(found: list[tuple[str, float]], expected: list[tuple[str, float]]) -> None:
    assert [i for i, _ in found] == [i for i, _ in expected]
    assert np.allclose([c for _, c in found], [c for _, c in expected], atol=1e-5)


_WRITES = st.lists(
    st.tuples(
        st.sampled_from(["upsert", "upsert", "delete", "drop"]),
        st.lists(st.integers(0, 39), min_size=1, max_size=15, unique=True),
        st.booleans(),
        st.floats(0.0, 12.0),
    ),
    max_size=6,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    writes=_WRITES,
    where=st.sampled_from(_WHERES),
    n=st.integers(1, 50),
    nearest_only=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_the_flat_copy_answers_as_an_exact_search_of_chroma_through_writes(
    writes, where, n, nearest_only, seed, tmp_path_factory
):
    path = tmp_path_factory.mktemp("chroma")
    store = VectorStore(path)
    reference = VectorStore(path, flat_max=0)  # the same Chroma, without the copy
    rng = np.random.default_rng(seed)
    store.upsert(
        COLLECTION,
        [f"m{i:02d}" for i in range(30)],
        _vectors(rng, 30),
        [
            {"dated": i % 3 == 0, "t_start": float(i % 12), "fact_type": _TYPES[i % 3]}
            for i in range(30)
        ],
    )
    queries = _vectors(rng, 2)
    store.query(COLLECTION, queries[0], 3)  # the copy is read before the writes
    for op, picked, dated, start in writes:
        ids = [f"m{i:02d}" for i in picked]
        if op == "delete":
            store.delete(COLLECTION, ids)
        elif op == "drop":
            store.drop(COLLECTION)
            reference._collections.pop(COLLECTION, None)  # its handle is of the dropped collection
        else:
            metadata = [
                {"dated": dated, "t_start": start + i, "fact_type": _TYPES[i % 3]}
                for i in range(len(ids))
            ]
            store.upsert(COLLECTION, ids, _vectors(rng, len(ids)), metadata)
        for vector in queries:
            _same(
                store.query(COLLECTION, vector, n, where, nearest_only=nearest_only),
                _exact(reference, vector, n, where, nearest_only),
            )
        every = sorted(reference.ids(COLLECTION))
        stored, expected = (
            store.get_vectors(COLLECTION, every),
            reference.get_vectors(COLLECTION, [*every, "m99"]),
        )
        assert stored.keys() == expected.keys()
        assert all(np.allclose(stored[i], expected[i]) for i in every)
    store.close()
    reference.close()


def test_a_collection_larger_than_the_limit_is_searched_by_chroma(tmp_path):
    store = VectorStore(tmp_path, flat_max=10)
    rng = np.random.default_rng(1)
    store.upsert(COLLECTION, [f"m{i}" for i in range(8)], _vectors(rng, 8), [{"n": 1}] * 8)
    query = _vectors(rng, 1)[0]
    store.query(COLLECTION, query, 3)
    assert store._flat.get(COLLECTION) is not None
    store.upsert(COLLECTION, [f"n{i}" for i in range(5)], _vectors(rng, 5), [{"n": 1}] * 5)
    assert store._flat.get(COLLECTION) is None  # grown past the limit: dropped
    assert {i for i, _ in store.query(COLLECTION, query, 13)} == store.ids(COLLECTION)
    assert store._flat.get(COLLECTION) is None  # not read again
    store.close()


def test_a_copy_without_room_is_refused_until_a_held_one_is_dropped():
    """No eviction: recalls alternating between large banks would read a collection each."""
    rng = np.random.default_rng(2)
    flats = FlatIndexes(most=10, total=12)

    def index(name: str, size: int) -> FlatIndex:
        return FlatIndex([f"{name}{i}" for i in range(size)], _vectors(rng, size), [None] * size)

    for name in ("a", "b"):
        assert flats.keep(name, index(name, 6), flats.writes(name)) is not None
    assert flats.keep("c", index("c", 1), flats.writes("c")) is None
    assert not flats.may_hold("c")
    flats.upsert("b", ["b9"], _vectors(rng, 1), [None])  # b grows past the room: let go
    assert flats.get("b") is None and not flats.may_hold("b")
    flats.drop("a")
    assert flats.may_hold("c") and flats.keep("c", index("c", 1), flats.writes("c"))
    assert flats.get("c") is not None


def test_a_copy_read_before_a_write_is_not_kept():
    rng = np.random.default_rng(3)
    flats = FlatIndexes()
    writes = flats.writes("a")
    flats.upsert("a", ["a0"], _vectors(rng, 1), [None])  # lands between the read and keep
    assert flats.keep("a", FlatIndex(["x"], _vectors(rng, 1), [None]), writes) is None
    assert flats.get("a") is None


def test_a_deleted_row_takes_the_last_rows_place():
    rng = np.random.default_rng(4)
    vectors = _vectors(rng, 5)
    index = FlatIndex([f"m{i}" for i in range(5)], vectors, [{"i": i} for i in range(5)])
    index.delete(["m1", "m4", "absent"])
    assert len(index) == 3
    for i in (0, 2, 3):
        found = index.nearest(vectors[i], 1)
        assert found[0][0] == f"m{i}" and found[0][1] == pytest.approx(1.0, abs=1e-5)
        assert index.nearest(vectors[i], 1, {"i": i})[0][0] == f"m{i}"
    assert set(index.vectors(["m0", "m1", "m3"])) == {"m0", "m3"}


def test_searches_and_writes_from_many_threads_end_as_stored(tmp_path):
    store = VectorStore(tmp_path)
    rng = np.random.default_rng(5)
    store.upsert(COLLECTION, [f"m{i}" for i in range(20)], _vectors(rng, 20), [{"n": 1}] * 20)
    query = _vectors(rng, 1)[0]
    errors: list[BaseException] = []

    def write(worker: int) -> None:
        local = np.random.default_rng(worker)
        try:
            for step in range(15):
                ids = [f"w{worker}-{step}", f"m{(worker + step) % 20}"]
                store.upsert(COLLECTION, ids, _vectors(local, 2), [{"n": 1}] * 2)
                store.delete(COLLECTION, [f"w{worker}-{step - 2}"])
        except BaseException as exc:  # noqa: BLE001 (reported below)
            errors.append(exc)

    def search() -> None:
        try:
            for _ in range(40):
                assert len(store.query(COLLECTION, query, 10)) == 10
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(w,)) for w in range(3)]
    threads += [threading.Thread(target=search) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors
    _same(store.query(COLLECTION, query, 40), _exact(store, query, 40, None, False))
    store.close()


_VALUE = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(-3, 3))
_LEAF = st.builds(
    lambda key, op, arg: {key: arg if op is None else {op: arg}},
    st.sampled_from(["a", "b"]),
    st.sampled_from([None, "$eq", "$gt", "$gte", "$lt", "$lte"]),
    st.one_of(st.booleans(), st.integers(-3, 3), st.floats(-3, 3)),
) | st.builds(
    lambda key, args: {key: {"$in": args}},
    st.sampled_from(["a", "b"]),
    st.lists(st.integers(-3, 3), max_size=3),
)
_WHERE = st.recursive(
    _LEAF,
    lambda inner: st.builds(
        lambda op, parts: {op: parts},
        st.sampled_from(["$and", "$or"]),
        st.lists(inner, min_size=1, max_size=3),
    ),
    max_leaves=5,
)


@settings(max_examples=300, deadline=None)
@given(
    rows=st.lists(st.fixed_dictionaries({}, optional={"a": _VALUE, "b": _VALUE}), max_size=12),
    where=_WHERE,
)
def test_a_filter_over_columns_passes_the_rows_it_passes_row_by_row(rows, where):
    metadatas = [{k: v for k, v in row.items() if v is not None} or None for row in rows]
    passed = passing(where, lambda key: numeric_column(metadatas, key), len(metadatas))
    assert passed is not None
    assert list(passed) == [matches(m, where) for m in metadatas]


def test_a_query_of_another_length_is_a_storage_error(tmp_path):
    rng = np.random.default_rng(6)
    for flat_max in (25_000, 0):  # searched in process, then by Chroma
        store = VectorStore(tmp_path / str(flat_max), flat_max=flat_max)
        store.upsert(COLLECTION, ["a", "b"], _vectors(rng, 2), [{"n": 1}] * 2)
        with pytest.raises(StorageError, match="vector query failed"):
            store.query(COLLECTION, np.ones(DIM + 1, dtype=np.float32), 2)
        assert (store._flat.get(COLLECTION) is not None) == bool(flat_max)
        store.close()


def test_holds_copy_says_whether_reads_come_from_the_copy(tmp_path):
    """Recall's rows keep vectors of their own only where the store holds no copy."""
    rng = np.random.default_rng(7)
    held, chroma = VectorStore(tmp_path / "held"), VectorStore(tmp_path / "chroma", flat_max=0)
    for store in (held, chroma):
        assert not store.holds_copy(COLLECTION)  # empty: nothing to hold yet
        store.upsert(COLLECTION, ["a", "b"], _vectors(rng, 2), [{"n": 1}] * 2)
    assert held.holds_copy(COLLECTION) and not chroma.holds_copy(COLLECTION)
    held.close()
    chroma.close()
