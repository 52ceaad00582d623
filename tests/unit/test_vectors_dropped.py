"""A read of a collection that is gone (its bank deleted, maybe while the read was on its
way) answers empty and creates nothing: no empty collection outlives its bank."""

from __future__ import annotations

import numpy as np
import pytest

from agentmem.store.vectors import VectorStore

COLLECTION = "bank-dropped"
VECTOR = np.array([1.0, 0.0, 0.0], dtype=np.float32)


def _reads(store: VectorStore) -> dict[str, object]:
    return {
        "query": store.query(COLLECTION, VECTOR, 5),
        "filtered query": store.query(COLLECTION, VECTOR, 5, {"dated": True}),
        "query_many": store.query_many(COLLECTION, np.stack([VECTOR, VECTOR]), 5),
        "get_vectors": store.get_vectors(COLLECTION, ["m0"]),
        "ids": store.ids(COLLECTION),
        "count": store.count(COLLECTION),
        "dimension": store.dimension(COLLECTION),
        "delete": store.delete(COLLECTION, ["m0"]),
    }


@pytest.mark.parametrize("flat_max", [25_000, 0], ids=["flat-copy", "chroma"])
@pytest.mark.parametrize("ever_written", [True, False], ids=["dropped", "never-written"])
def test_reads_of_a_missing_collection_answer_empty_and_create_nothing(
    tmp_path, flat_max, ever_written
):
    store = VectorStore(tmp_path, flat_max=flat_max)
    try:
        if ever_written:
            store.upsert(COLLECTION, ["m0"], VECTOR[None, :], [{"dated": True}])
            assert store.count(COLLECTION) == 1
            store.drop(COLLECTION)
        assert _reads(store) == {
            "query": [],
            "filtered query": [],
            "query_many": [[], []],
            "get_vectors": {},
            "ids": set(),
            "count": 0,
            "dimension": None,
            "delete": None,
        }
        assert COLLECTION not in {c.name for c in store._client.list_collections()}
        store.upsert(COLLECTION, ["m1"], VECTOR[None, :], [{"dated": False}])  # a write does
        assert store.ids(COLLECTION) == {"m1"}
    finally:
        store.close()
