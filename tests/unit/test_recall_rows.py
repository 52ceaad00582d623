"""Recall from the in-process copies (keyword postings and document frequencies, candidate
rows) returns exactly what the SQL path returns: the same memories, scores and details."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentmem
from agentmem.consolidate.observations import refine_observation
from agentmem.store import vector_copy
from agentmem.testing import HashEmbedder

T0 = "2025-03-04T09:00:00Z"
TEXTS = [
    "Giulia moved to Turin in March.",
    "Giulia lives in Milan now.",
    "I adopted a cat named Pixel.",
    "Pixel knocked the parcel off my desk.",
    "Marco and Giulia went hiking on Sunday.",
    "My sister Anna paints landscapes.",
    "Anna sold a painting to Marco.",
    "The parcel for room 42 arrived late.",
    # Two pieces of news: a memory with pieces (retain/pieces.py).
    "So much has happened this month. Last week Anna sold her first painting at the fair.",
]
QUERIES = ["Where does Giulia live?", "What did Pixel do?", "Who bought a painting?", "parcel"]
_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("retain"), st.lists(st.sampled_from(TEXTS), min_size=1, max_size=3)),
        st.tuples(st.just("forget"), st.integers(1, 3)),
        st.tuples(st.just("reinforce"), st.sampled_from(QUERIES)),
        st.tuples(st.just("rewrite"), st.sampled_from(TEXTS)),
        st.tuples(st.just("alias"), st.sampled_from(["Gigi", "Annie"])),
        st.tuples(st.just("reopen"), st.none()),
        # Writes through a second AgentMemory on the same store, and to a second bank.
        st.tuples(st.just("other_retain"), st.lists(st.sampled_from(TEXTS), min_size=1)),
        st.tuples(st.just("other_forget"), st.integers(1, 2)),
        st.tuples(st.just("bank_c"), st.lists(st.sampled_from(TEXTS), min_size=1, max_size=3)),
    ),
    min_size=1,
    max_size=6,
)


def _recalled(
    mem: agentmem.AgentMemory, bank_id: str, query: str
) -> list[list[tuple[object, ...]]]:
    bank = mem.bank(bank_id)
    unfiltered = bank.recall(query, reinforce=False, now=T0)
    untagged = bank.recall(query, tags=[], tags_match="exact", reinforce=False, now=T0)
    return [
        [(h.memory, h.score, h.strategy_details) for h in hits] for hits in (unfiltered, untagged)
    ]


def _open(path: object, whole_copy: bool) -> agentmem.AgentMemory:
    """A store; with ``whole_copy``, one whose banks are too large for the vector store's own
    exact copy (store/flat_index.py), as past 25k memories: the copies then read every vector
    of a bank on a thread (store/vector_copy.py)."""
    mem = agentmem.AgentMemory(path, embedder=HashEmbedder())
    if whole_copy:
        mem._engine.vectors._store._flat = None
    return mem


def _assert_same_as_sql(mem: agentmem.AgentMemory) -> None:
    engine = mem._engine
    for bank_id in sorted(set(mem.banks()) & {"b", "c"}):
        collection = mem.bank(bank_id)._collection
        ids = [m.id for m in mem.bank(bank_id).memories()]
        kept = engine.recall_rows.vectors(bank_id, collection, ids)
        stored = engine.vectors.get_vectors(collection, ids)
        assert kept.keys() == stored.keys()
        assert all((kept[i] == stored[i]).all() for i in stored), bank_id
        for query in QUERIES:
            in_process = _recalled(mem, bank_id, query)
            copies = engine.keyword_mirrors, engine.recall_rows
            engine.keyword_mirrors = engine.recall_rows = None
            try:
                assert _recalled(mem, bank_id, query) == in_process, (bank_id, query)
            finally:
                engine.keyword_mirrors, engine.recall_rows = copies


def _apply(mem: agentmem.AgentMemory, op: str, arg: object, other: agentmem.AgentMemory) -> None:
    bank = mem.bank("b")
    if op.startswith("other_"):
        _apply(other, op.removeprefix("other_"), arg, mem)
    elif op == "bank_c":
        messages = [{"role": "user", "content": t} for t in arg]  # type: ignore[union-attr]
        mem.bank("c").retain(messages, mentioned_at=T0)
    elif op == "retain":
        tags = ["ops"] if len(arg) > 1 else []  # type: ignore[arg-type]
        messages = [{"role": "user", "content": t} for t in arg]  # type: ignore[union-attr]
        bank.retain(messages, mentioned_at=T0, tags=tags)
    elif op == "forget":
        ids = [m.id for m in bank.memories(limit=arg)]  # type: ignore[arg-type]
        if ids:
            bank.forget(ids)
    elif op == "reinforce":
        bank.recall(str(arg), now=T0)  # counts access, which the copies must see
    elif op == "rewrite":
        mem._engine.vectors.flush()  # an id staged twice before a flush fails the flush
        for memory in bank.memories(limit=1):
            refine_observation(mem._engine, "b", bank._collection, memory, str(arg), [])
    elif op == "alias":
        names = {e.name for e in bank.entities()}
        target = "Giulia" if arg == "Gigi" else "Anna"
        if target in names:
            bank.add_alias(target, str(arg))


@pytest.fixture
def small_vector_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whole copies of the vectors read two at a time: recalls meet them half read."""
    monkeypatch.setattr(vector_copy, "LOAD_BATCH", 2)


@pytest.mark.parametrize("whole_copy", [False, True], ids=["flat-copy", "whole-copy"])
@settings(
    max_examples=15,
    deadline=None,
    # The fixture only sets a module constant, the same for every example.
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(ops=_OPS)
def test_recall_from_copies_equals_recall_from_sql_through_every_write(
    tmp_path_factory, small_vector_batches, whole_copy, ops
):
    path = tmp_path_factory.mktemp("store")
    mem = _open(path, whole_copy)
    other = _open(path, whole_copy)  # one process, one store
    try:
        _apply(mem, "retain", TEXTS[:5], other)
        _assert_same_as_sql(mem)
        for op, arg in ops:
            if op == "reopen":
                mem.close()
                mem = _open(path, whole_copy)
            else:
                _apply(mem, op, arg, other)
            _assert_same_as_sql(mem)
        report = mem.check_integrity()
        assert report.ok, report.problems
    finally:
        other.close()
        mem.close()


def test_a_reinforcing_recall_is_counted_in_the_copy(store_path):
    with agentmem.AgentMemory(store_path, embedder=HashEmbedder()) as mem:
        bank = mem.bank("b")
        bank.retain([{"role": "user", "content": t} for t in TEXTS], mentioned_at=T0)
        first = bank.recall("Where does Giulia live?", top_k=3, now=T0)  # loads, then counts
        again = bank.recall("Where does Giulia live?", top_k=3, reinforce=False, now=T0)
        counts = {h.memory.id: h.memory.access_count for h in again}
        assert all(counts[h.memory.id] == h.memory.access_count + 1 for h in first)
        assert {m.id: m.access_count for m in bank.memories()}.items() >= counts.items()


def test_a_recalled_memory_is_the_callers_own(store_path):
    with agentmem.AgentMemory(store_path, embedder=HashEmbedder()) as mem:
        bank = mem.bank("b")
        bank.retain(
            [{"role": "user", "content": t, "metadata": {"turn": 1}} for t in TEXTS],
            mentioned_at=T0,
        )
        first = bank.recall("Where does Giulia live?", reinforce=False, now=T0)
        for hit in first:
            hit.memory.metadata["changed"] = True  # a caller's own dict
        again = bank.recall("Where does Giulia live?", reinforce=False, now=T0)
        assert [h.memory.id for h in again] == [h.memory.id for h in first]
        assert all(h.memory.metadata == {"turn": 1} for h in again)


def test_the_copys_vectors_are_the_vector_stores_through_rewrites_and_forgets(store_path):
    with agentmem.AgentMemory(store_path, embedder=HashEmbedder()) as mem:
        bank = mem.bank("b")
        bank.retain([{"role": "user", "content": t} for t in TEXTS], mentioned_at=T0)
        engine, collection = mem._engine, bank._collection

        def assert_same(ids: list[str]) -> None:
            kept = engine.recall_rows.vectors("b", collection, ids)
            stored = engine.vectors.get_vectors(collection, ids)
            assert kept.keys() == stored.keys()
            assert all((kept[i] == stored[i]).all() for i in ids if i in stored)

        ids = [m.id for m in bank.memories()]
        assert_same(ids[:1])  # the first read takes in every row's vector
        assert_same(ids)
        engine.vectors.flush()
        refine_observation(engine, "b", collection, bank.memories(limit=1)[0], TEXTS[2], [])
        assert_same(ids)
        bank.forget(ids[-2:])
        assert_same(ids)


def test_rows_dropped_by_another_thread_while_a_read_runs_are_still_returned(store_path):
    """A reinforcing recall on another thread drops the rows it counted (``counted``) at any
    moment: one landing while a recall reads the rows its copy lacks must not make the
    recall lose the rows it held (on three replicas under load, an acknowledged fact went
    missing from a recall through another replica so, and was there when asked again)."""
    with agentmem.AgentMemory(store_path, embedder=HashEmbedder()) as mem:
        bank = mem.bank("b")
        bank.retain([{"role": "user", "content": t} for t in TEXTS[:4]], mentioned_at=T0)
        rows = mem._engine.recall_rows
        held = [m.id for m in bank.memories()]
        rows.memories("b", held)  # the copy holds these rows now
        [new] = bank.retain(TEXTS[4], mentioned_at=T0).memories  # one it lacks

        read = rows._rows

        def read_while_another_recall_counts(bank_id, ids):
            rows.counted(bank_id, held)  # a reinforcing recall commits meanwhile
            return read(bank_id, ids)

        rows._rows = read_while_another_recall_counts
        try:
            found = rows.memories("b", [*held, new.id])
        finally:
            rows._rows = read
        assert set(found) == {*held, new.id}
        for memory_id, (memory, _) in found.items():
            assert memory == bank.get(memory_id)


def test_pieces_dropped_by_another_thread_while_a_read_runs_are_still_returned(
    store_path, monkeypatch
):
    """The same for the copy of the memories' pieces (read through, ``_read_through``)."""
    from agentmem.store import recall_rows as module

    with agentmem.AgentMemory(store_path, embedder=HashEmbedder()) as mem:
        bank = mem.bank("b")
        bank.retain([{"role": "user", "content": TEXTS[8]}], mentioned_at=T0)
        rows, dimension = mem._engine.recall_rows, mem._engine.embedder.dimension
        held = [m.id for m in bank.memories()]
        assert rows.pieces("b", held, dimension).keys() == set(held)  # kept now
        [new] = bank.retain(
            [{"role": "user", "content": TEXTS[8].replace("Anna", "Marta")}], mentioned_at=T0
        ).memories
        load = module.load_pieces

        def load_while_the_copy_drops_them(db, bank_id, ids, dim):
            for memory_id in held:
                rows._banks[bank_id].pieces.pop(memory_id, None)  # a change replayed meanwhile
            return load(db, bank_id, ids, dim)

        monkeypatch.setattr(module, "load_pieces", load_while_the_copy_drops_them)
        assert rows.pieces("b", [*held, new.id], dimension).keys() == {*held, new.id}
