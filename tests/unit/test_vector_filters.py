"""A filtered vector query looks among the nearest vectors first, and asks Chroma to filter
only when too few of them match: the answer is the same either way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentmem.store.vectors import OVERFETCH, VectorStore, _can_match, _matches

COLLECTION = "bank-test"
QUERY = np.array([1.0, 0.0, 0.0], dtype=np.float32)


def _store(path: Path, dated: list[bool]) -> VectorStore:
    """Vectors ever further from QUERY; ``dated[i]`` is the metadata of the i-th nearest.
    Searched through Chroma (no exact in-process copy: test_flat_index.py)."""
    store = VectorStore(path, flat_max=0)
    angles = np.linspace(0.0, 1.5, len(dated))
    vectors = np.stack([np.cos(angles), np.sin(angles), np.zeros_like(angles)], axis=1)
    store.upsert(
        COLLECTION,
        [f"m{i:02d}" for i in range(len(dated))],
        vectors,
        [{"dated": d, "t_start": float(i)} for i, d in enumerate(dated)],
    )
    return store


def _filtered_calls(store: VectorStore) -> list[Any]:
    """Record the ``where`` of every Chroma query the store makes."""
    col = store._collection(COLLECTION)
    calls: list[Any] = []
    original = col.query

    def query(**kwargs: Any) -> Any:
        calls.append(kwargs.get("where"))
        return original(**kwargs)

    col.query = query
    return calls


def test_enough_matches_among_the_nearest_need_no_filtered_query(tmp_path):
    store = _store(tmp_path, [i % 2 == 0 for i in range(40)])
    calls = _filtered_calls(store)
    found = store.query(COLLECTION, QUERY, 3, {"dated": True})
    assert [i for i, _ in found] == ["m00", "m02", "m04"]
    assert calls == [None]  # one unfiltered over-fetch
    store.close()


def test_too_few_matches_among_the_nearest_widen_the_search_once(tmp_path):
    dated = [False] * 60
    dated[20] = dated[25] = dated[39] = True  # beyond the 3 × 4 nearest, within the 3 × 16
    store = _store(tmp_path, dated)
    calls = _filtered_calls(store)
    found = store.query(COLLECTION, QUERY, 3, {"dated": True})
    assert [i for i, _ in found] == ["m20", "m25", "m39"]
    assert calls == [None, None]  # two unfiltered over-fetches, no filtered query
    assert 3 * OVERFETCH[0] < 20 and 3 * OVERFETCH[1] > 39
    store.close()


def test_too_few_matches_among_the_widest_fall_back_to_the_filtered_query(tmp_path):
    dated = [False] * 60
    dated[50] = dated[55] = dated[59] = True  # beyond the 3 × 16 nearest
    store = _store(tmp_path, dated)
    calls = _filtered_calls(store)
    found = store.query(COLLECTION, QUERY, 3, {"dated": True})
    assert [i for i, _ in found] == ["m50", "m55", "m59"]
    assert calls == [None, None, {"dated": True}]
    assert 3 * OVERFETCH[-1] < 50
    store.close()


def test_a_preference_keeps_to_the_matches_among_the_widest_nearest(tmp_path):
    dated = [False] * 60
    dated[40] = dated[55] = dated[59] = True  # one within the 3 × 16 nearest, two beyond
    store = _store(tmp_path, dated)
    calls = _filtered_calls(store)
    found = store.query(COLLECTION, QUERY, 3, {"dated": True}, nearest_only=True)
    assert [i for i, _ in found] == ["m40"]
    assert calls == [None, None]
    store.close()


def test_a_small_collection_is_filtered_from_its_nearest_alone(tmp_path):
    store = _store(tmp_path, [False, True, False, False])  # fewer than n × 4 in all
    calls = _filtered_calls(store)
    assert [i for i, _ in store.query(COLLECTION, QUERY, 3, {"dated": True})] == ["m01"]
    assert calls == [None]
    store.close()


@pytest.mark.parametrize(
    "where",
    [
        {"dated": True},
        {"dated": {"$eq": False}},
        {"t_start": {"$in": [1.0, 4.0, 9.0]}},
        {"$and": [{"t_start": {"$gte": 3.0}}, {"t_start": {"$lt": 7.0}}]},
        {"$or": [{"t_start": {"$lte": 1.0}}, {"$and": [{"dated": True}, {"t_start": {"$gt": 8}}]}]},
        {"missing": {"$gte": 0}},
    ],
)
def test_matches_agrees_with_chroma(tmp_path, where):
    store = _store(tmp_path, [i % 3 == 0 for i in range(12)])
    col = store._collection(COLLECTION)
    every = col.get(include=["metadatas"])
    assert _can_match(where)
    ours = {i for i, m in zip(every["ids"], every["metadatas"], strict=True) if _matches(m, where)}
    assert ours == set(col.get(where=where, include=[])["ids"])
    store.close()


def test_an_operator_it_does_not_evaluate_goes_to_chroma(tmp_path):
    assert not _can_match({"$and": [{"fact_type": {"$nin": ["world"]}}]})
    store = _store(tmp_path, [True] * 40)
    calls = _filtered_calls(store)
    store.query(COLLECTION, QUERY, 3, {"t_start": {"$ne": 0.0}})
    assert calls == [{"t_start": {"$ne": 0.0}}]
    store.close()


_DATED = {"dated": True}
_EARLY = {"$and": [{"t_start": {"$gte": 2.0}}, {"t_start": {"$lt": 9.0}}]}


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    writes=st.lists(
        st.tuples(
            st.sampled_from(["upsert", "delete"]),
            st.lists(st.integers(0, 29), min_size=1, max_size=12, unique=True),
            st.booleans(),
            st.floats(0.0, 12.0),
        ),
        max_size=5,
    ),
    where=st.sampled_from([_DATED, _EARLY, {"$or": [_DATED, _EARLY]}]),
    n=st.integers(1, 4),
    nearest_only=st.booleans(),
)
def test_the_metadata_copy_filters_as_chroma_metadata_does(
    writes, where, n, nearest_only, tmp_path_factory
):
    """Filtered queries read an embedded collection's metadata from a copy the store keeps at
    its own writes; through upserts and deletes they answer as reading Chroma's metadata."""
    path = tmp_path_factory.mktemp("chroma")
    store = _store(path, [i % 3 == 0 for i in range(30)])
    reference = VectorStore(path, flat_max=0)  # the same embedded Chroma, without the copy
    reference.embedded = False
    rng = np.random.default_rng(len(writes))
    for step, (op, picked, dated, start) in enumerate(writes):
        ids = [f"m{i:02d}" for i in picked]
        if op == "delete":
            store.delete(COLLECTION, ids)
        else:
            vectors = rng.normal(size=(len(ids), 3)).astype(np.float32)
            metadata = [{"dated": dated, "t_start": start + i} for i in range(len(ids))]
            store.upsert(COLLECTION, ids, vectors, metadata)
        if step == 0:  # the copy holds what a filtered query read before the writes
            store.query(COLLECTION, QUERY, n, where)
        for vector in (QUERY, np.array([0.0, 1.0, 0.0], dtype=np.float32)):
            assert store.query(
                COLLECTION, vector, n, where, nearest_only=nearest_only
            ) == reference.query(COLLECTION, vector, n, where, nearest_only=nearest_only)
    assert COLLECTION in store._metadata or not writes
    store.close()
