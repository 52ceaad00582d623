"""The in-process keyword mirror ranks and scores exactly as the SQL BM25 it mirrors."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentmem
from agentmem.consolidate.observations import refine_observation
from agentmem.store.keyword_mirror import c_round
from agentmem.testing import HashEmbedder

T0 = "2025-03-04T09:00:00Z"
# Folds are due often, so rows move from pending to built postings between catch-ups.
FREQUENT = agentmem.EngineConfig(keyword_rebuild_min=12, keyword_rebuild_fraction=0.0)
WORDS = ["parcel", "desk", "Giulia", "hiking", "hiked", "Z7Q3", "room", "42", "painting", "the"]
_SENTENCE = st.lists(st.sampled_from(WORDS), min_size=1, max_size=9).map(
    lambda words: " ".join(words).capitalize() + "."
)
_OPS = st.lists(
    st.one_of(
        st.tuples(
            st.just("retain"),
            st.sampled_from(["b", "c"]),
            st.lists(_SENTENCE, min_size=1, max_size=6),
        ),
        st.tuples(st.just("forget"), st.sampled_from(["b", "c"]), st.integers(1, 4)),
        st.tuples(st.just("rewrite"), st.just("b"), _SENTENCE),
        st.tuples(st.just("fold"), st.just("b"), st.none()),
        st.tuples(st.just("delete_bank"), st.sampled_from(["b", "c"]), st.none()),
        st.tuples(st.just("reopen"), st.just("b"), st.none()),
    ),
    min_size=1,
    max_size=7,
)
QUERIES = [
    "parcel",
    "Giulia hiking room 42",
    "hike paintings at the desk",
    "Z7Q3 Z7Q3 parcel desk Giulia",
    "the",
    "nothing matches this",
]


def _assert_mirror_matches_sql(mem: agentmem.AgentMemory) -> None:
    engine = mem._engine
    for bank_id in ("b", "c"):
        for query in QUERIES:
            terms = engine.keyword.query_terms(query)
            for limit in (3, 60):
                expected = engine.keyword.search(bank_id, query, limit)
                assert engine.keyword_mirrors.search(bank_id, terms, limit) == expected, (
                    bank_id,
                    query,
                    limit,
                )
        # The reranker's word weights: document frequencies over the rows' own text.
        terms = engine.keyword.query_terms(" ".join(WORDS + QUERIES))
        expected_df = engine.keyword.document_frequencies(bank_id, terms)
        assert engine.keyword_mirrors.document_frequencies(bank_id, terms) == expected_df


def _apply(mem: agentmem.AgentMemory, op: str, bank_id: str, arg: object) -> None:
    engine = mem._engine
    if op == "retain":
        messages = [{"role": "user", "content": text} for text in arg]  # type: ignore[union-attr]
        mem.bank(bank_id).retain(messages, mentioned_at=T0)
    elif op == "forget" and bank_id in mem.banks():
        ids = [m.id for m in mem.bank(bank_id).memories(limit=arg)]  # type: ignore[arg-type]
        if ids:
            mem.bank(bank_id).forget(ids)
    elif op == "rewrite" and bank_id in mem.banks():
        bank = mem.bank(bank_id)
        engine.vectors.flush()  # an id staged twice before a flush fails the flush
        for memory in bank.memories(limit=1):
            refine_observation(engine, bank_id, bank._collection, memory, str(arg), [])
    elif op == "fold":
        engine.keyword.wait()
        engine.keyword.fold_pending()
    elif op == "delete_bank" and bank_id in mem.banks():
        mem.delete_bank(bank_id)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=_OPS)
def test_mirror_ranks_and_scores_as_sql_through_every_write(tmp_path_factory, ops):
    path = tmp_path_factory.mktemp("store")
    mem = agentmem.AgentMemory(path, embedder=HashEmbedder(), config=FREQUENT)
    try:
        _apply(mem, "retain", "b", ["Parcel at the desk.", "Giulia hiked to room 42."])
        _apply(mem, "retain", "c", ["Parcel parcel Z7Q3."])
        _assert_mirror_matches_sql(mem)  # loaded here; later checks catch it up
        for op, bank_id, arg in ops:
            if op == "reopen":
                mem.close()
                mem = agentmem.AgentMemory(path, embedder=HashEmbedder(), config=FREQUENT)
            else:
                _apply(mem, op, bank_id, arg)
            _assert_mirror_matches_sql(mem)
        report = mem.check_integrity()
        assert report.ok, report.problems
    finally:
        mem.close()


def test_keyword_recall_is_the_same_with_the_mirror_off(store_path):
    texts = ["Giulia paints at the desk.", "The parcel for room 42 waits.", "Giulia hiked."]
    results = []
    for in_process in (True, False):
        config = agentmem.EngineConfig(in_process_recall=in_process)
        with agentmem.AgentMemory(store_path, embedder=HashEmbedder(), config=config) as mem:
            bank = mem.bank("b")
            assert (mem._engine.keyword_mirrors is not None) is in_process
            if in_process:
                bank.retain([{"role": "user", "content": t} for t in texts], mentioned_at=T0)
            hits = bank.recall("Giulia parcel", strategies=["keyword"], reinforce=False)
            results.append([(h.memory.id, h.strategy_details["keyword"]["score"]) for h in hits])
    assert results[0] and results[0] == results[1]


def test_rounding_is_half_away_from_zero_as_in_sql():
    values = np.array([0.5, 1.5, 2.5, 0.49999999999999994, 3.4999999, -2.5, 7.0])
    assert c_round(values).tolist() == [1.0, 2.0, 3.0, 0.0, 3.0, -3.0, 7.0]
