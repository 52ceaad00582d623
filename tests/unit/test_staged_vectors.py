"""Retain stages its vectors and writes them to Chroma in batches: nothing may notice."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np

import agentmem
from agentmem.testing import HashEmbedder

T0 = "2025-03-04T09:00:00Z"
T0_LATER = "2025-03-04T10:00:00Z"


def _chroma_ids(mem: agentmem.AgentMemory, bank: agentmem.MemoryBank) -> set[str]:
    """What Chroma itself holds, without flushing what is staged."""
    return mem._engine.vectors._store.ids(bank._collection)


def _journal(mem: agentmem.AgentMemory) -> set[str]:
    return {r[0] for r in mem._engine.db.fetchall("SELECT memory_id FROM vector_journal")}


def test_a_staged_fact_is_found_by_semantic_recall_as_soon_as_retain_returns(store_path):
    with agentmem.AgentMemory(store_path, embedder=HashEmbedder()) as mem:
        bank = mem.bank("b")
        stored = bank.retain("Quixotrix invoices are paid on Fridays.", mentioned_at=T0)
        ids = {m.id for m in stored}
        assert ids <= _journal(mem)  # staged, journalled, not yet in Chroma
        assert not ids & _chroma_ids(mem, bank)
        hits = bank.recall("Quixotrix invoices", strategies=["semantic"], reinforce=False)
        assert ids <= {h.memory.id for h in hits}
        assert ids <= _chroma_ids(mem, bank)  # the read flushed the batch...
        assert not ids & _journal(mem)  # ...and cleared its journal entries


def test_semantic_links_reach_staged_facts_without_flushing_them(store_path):
    with agentmem.AgentMemory(store_path, embedder=HashEmbedder()) as mem:
        bank = mem.bank("b")
        first = bank.retain("Quixotrix invoices are paid on Fridays.", mentioned_at=T0)
        # Said again later (the same text at the same time would be an exact repeat).
        again = bank.retain("Quixotrix invoices are paid on Fridays.", mentioned_at=T0_LATER)
        assert not _chroma_ids(mem, bank)  # both retains staged, nothing flushed
        graph = bank.graph()
        kinds = {
            k
            for _, dst, k in graph.edges(again.memories[0].id, data="kind")
            if dst == first.memories[0].id
        }
        assert "semantic" in kinds


def test_a_full_batch_is_written_without_any_read(store_path):
    with agentmem.AgentMemory(store_path, embedder=HashEmbedder()) as mem:
        bank = mem.bank("b")
        vectors = mem._engine.vectors
        ids: set[str] = set()
        for call in range(100):
            messages = [{"role": "user", "content": f"Fact {i} of call {call}."} for i in range(20)]
            ids |= {m.id for m in bank.retain(messages, mentioned_at=T0)}
            if vectors.staged == 0:
                break
        assert vectors.staged == 0
        assert 20 < len(ids) < 2000  # several retains were staged, then written together
        assert _chroma_ids(mem, bank) == ids
        assert not _journal(mem)


def test_forgetting_a_staged_fact_leaves_no_vector_behind(store_path):
    with agentmem.AgentMemory(store_path, embedder=HashEmbedder()) as mem:
        bank = mem.bank("b")
        doomed = bank.retain("Locker code K9X1 is for Ann.", mentioned_at=T0)
        kept = bank.retain("Locker code K9X2 is for Bob.", mentioned_at=T0)
        assert bank.forget([m.id for m in doomed]) == len(doomed)
        assert _chroma_ids(mem, bank) == {m.id for m in kept}
        report = mem.check_integrity()
        assert report.ok, report.problems
        assert report.in_flight == 0
        assert report.memories == report.vectors == len(kept)


def test_a_clean_close_writes_the_staged_vectors(store_path):
    with agentmem.AgentMemory(store_path, embedder=HashEmbedder()) as mem:
        ids = {m.id for m in mem.bank("b").retain("Ann likes tea.", mentioned_at=T0)}
        assert mem._engine.vectors.staged == len(ids)
    with agentmem.AgentMemory(store_path, embedder=HashEmbedder()) as mem:
        bank = mem.bank("b")
        assert not _journal(mem)
        assert ids <= _chroma_ids(mem, bank)


# Retains, then dies without closing: the staged vectors never reached Chroma.
_DIES_AFTER_RETAIN = textwrap.dedent(
    """
    import os, sys
    import agentmem
    from agentmem.testing import HashEmbedder

    mem = agentmem.AgentMemory(sys.argv[1], embedder=HashEmbedder())
    result = mem.bank("b").retain("Locker code K7Q3 is for Ann.", mentioned_at="2025-01-01")
    print(" ".join(m.id for m in result), flush=True)
    os._exit(0)
    """
)


def test_staged_vectors_of_a_process_that_died_are_restored_on_open(store_path: Path):
    out = subprocess.run(
        [sys.executable, "-c", _DIES_AFTER_RETAIN, str(store_path)],
        capture_output=True,
        text=True,
        check=True,
    )
    ids = set(out.stdout.split())
    assert ids
    with agentmem.AgentMemory(store_path, embedder=HashEmbedder()) as mem:
        bank = mem.bank("b")
        assert ids <= _chroma_ids(mem, bank)
        report = mem.check_integrity()
        assert report.ok, report.problems
        hits = bank.recall("locker code for Ann", strategies=["semantic"], reinforce=False)
        assert ids <= {h.memory.id for h in hits}


def test_a_fact_staged_twice_before_a_flush_keeps_its_later_vector(tmp_path):
    """An observation rewritten right after its retain is staged twice; Chroma refuses a
    batch holding one id twice, so the flush writes the later vector only."""
    import agentmem
    from agentmem.consolidate.observations import refine_observation
    from agentmem.testing import HashEmbedder

    embedder = HashEmbedder()
    with agentmem.AgentMemory(tmp_path / "s", embedder=embedder) as mem:
        bank = mem.bank("b")
        bank.retain("Parcel at the desk.", mentioned_at="2025-01-01T00:00:00Z")
        (memory,) = bank.memories()
        engine = mem._engine
        refine_observation(engine, "b", bank._collection, memory, "Desk parcel.", [])
        engine.vectors.flush()
        stored = engine.vectors.get_vectors(bank._collection, [memory.id])[memory.id]
        assert bank.memories()[0].text == "Desk parcel."
        assert float(np.dot(stored, embedder.embed(["Desk parcel."])[0])) > 0.999
        assert mem.check_integrity().ok


def test_vectors_staged_for_a_bank_deleted_and_imported_anew_elsewhere_are_dropped(tmp_path):
    """Two AgentMemory of one process on one store: the second stages a fact, the first
    exports the bank, deletes it and imports it again (same ids, a new collection). The
    stale stage must not be written into the deleted collection, and closing must work."""
    path = tmp_path / "s"
    first = agentmem.AgentMemory(path, embedder=HashEmbedder())
    second = agentmem.AgentMemory(path, embedder=HashEmbedder())
    try:
        first.bank("b").retain("Ann likes tea.", mentioned_at=T0)
        first.bank("b").recall("tea", reinforce=False)  # the first's own stage is written
        staged = {m.id for m in second.bank("b").retain("Bob likes coffee.", mentioned_at=T0)}
        assert second._engine.vectors.staged == len(staged)
        first.bank("b").export(tmp_path / "b.jsonl")
        first.delete_bank("b")
        first.import_(tmp_path / "b.jsonl")
        second.close()  # raised StorageError: the staged collection no longer exists
        bank = first.bank("b")
        assert staged <= _chroma_ids(first, bank)  # the import brought its vector along
        report = first.check_integrity()
        assert report.ok, report.problems
    finally:
        second.close()
        first.close()


def test_a_read_during_another_threads_flush_still_finds_the_staged_facts(store_path):
    """The stage is emptied only once Chroma holds its vectors: a concurrent read that found
    it empty while they were in flight searched Chroma without them (CI saw a LangChain
    ``ainvoke`` pair lose its semantic hits this way)."""
    embedder = HashEmbedder()
    with agentmem.AgentMemory(store_path, embedder=embedder) as mem:
        bank = mem.bank("b")
        ids = {m.id for m in bank.retain("Bob drinks espresso after lunch.", mentioned_at=T0)}
        vectors = mem._engine.vectors
        chroma = vectors._store
        in_upsert, release = threading.Event(), threading.Event()
        upsert = chroma.upsert

        def slow_upsert(*args, **kwargs):
            in_upsert.set()
            release.wait(10)
            return upsert(*args, **kwargs)

        chroma.upsert = slow_upsert
        flusher = threading.Thread(target=vectors.flush)
        flusher.start()
        assert in_upsert.wait(10)
        found: list[set[str]] = []
        query = embedder.embed_query("espresso")
        reader = threading.Thread(
            target=lambda: found.append({i for i, _ in vectors.query(bank._collection, query, 5)})
        )
        reader.start()
        reader.join(0.5)
        assert reader.is_alive()  # it waits for the flush in flight...
        release.set()
        flusher.join(10)
        reader.join(10)
        assert found == [ids]  # ...and then finds the fact
        assert mem.check_integrity().ok


def test_a_retain_whose_batch_write_fails_still_succeeds_and_nothing_is_lost(store_path, caplog):
    """The retain that fills a batch commits its facts before the batch goes to Chroma: a
    failed write there leaves everything staged and journalled, the retain returns, and the
    next read writes them and finds them."""
    with agentmem.AgentMemory(store_path, embedder=HashEmbedder()) as mem:
        bank = mem.bank("b")
        vectors = mem._engine.vectors
        vectors._batch_size = 3
        chroma = vectors._store
        upsert = chroma.upsert

        def server_gone(*args: object, **kwargs: object) -> None:
            raise agentmem.StorageError("vector write failed: server gone")

        chroma.upsert = server_gone
        texts = ["Ann likes tea.", "Bob drinks espresso after lunch.", "Cleo walks to work."]
        with caplog.at_level("WARNING", logger="agentmem"):
            ids = {m.id for t in texts for m in bank.retain(t, mentioned_at=T0).memories}
        assert any("vector write failed" in r.message for r in caplog.records)
        assert vectors.staged == len(ids) and ids <= _journal(mem)
        chroma.upsert = upsert
        hits = bank.recall("espresso after lunch", strategies=["semantic"], reinforce=False)
        assert hits[0].text == "Bob drinks espresso after lunch."
        assert ids <= _chroma_ids(mem, bank) and not ids & _journal(mem)
        assert mem.check_integrity().ok


def _scores(bank: agentmem.MemoryBank, query: str) -> list[tuple[str, float]]:
    return [(h.memory.id, h.score) for h in bank.recall(query, reinforce=False)]


def test_staged_facts_are_searched_in_the_held_copy_with_the_scores_they_keep(store_path):
    """Once a collection's exact copy is held, a staged vector goes into it at once: recall
    finds the fact without writing the stage, with the scores it has once written (one
    arithmetic: a bank's scores never move when its stage is written)."""
    with agentmem.AgentMemory(store_path, embedder=HashEmbedder()) as mem:
        bank = mem.bank("b")
        bank.retain("Ann likes tea.", mentioned_at=T0)
        bank.recall("tea", strategies=["semantic"], reinforce=False)  # reads the copy
        ids = {
            m.id for m in bank.retain("Quixotrix invoices are paid on Fridays.", mentioned_at=T0)
        }
        hits = bank.recall("Quixotrix invoices", strategies=["semantic"], reinforce=False)
        assert ids <= {h.memory.id for h in hits}
        assert not ids & _chroma_ids(mem, bank)  # found without a flush
        assert ids <= _journal(mem)
        staged = _scores(bank, "Quixotrix invoices on Fridays")
        mem._engine.vectors.flush()
        assert ids <= _chroma_ids(mem, bank)
        assert _scores(bank, "Quixotrix invoices on Fridays") == staged
        assert mem.check_integrity().ok


def test_reads_the_copy_cannot_answer_write_the_stage_first(store_path):
    with agentmem.AgentMemory(store_path, embedder=HashEmbedder()) as mem:
        bank = mem.bank("b")
        bank.retain("Ann likes tea.", mentioned_at=T0)
        bank.recall("tea", strategies=["semantic"], reinforce=False)
        ids = {m.id for m in bank.retain("Bob likes coffee.", mentioned_at=T0)}
        vectors = mem._engine.vectors
        query = HashEmbedder().embed_query("coffee")
        # A filter the copy has no operator for goes to Chroma: the stage is written first.
        where = {"fact_type": {"$nin": ["opinion"]}}
        found = {i for i, _ in vectors.query(bank._collection, query, 5, where)}
        assert ids <= found
        assert ids <= _chroma_ids(mem, bank)
        assert vectors.staged == 0


def test_a_copy_outgrown_by_a_stage_is_no_longer_read_beside_it(store_path, monkeypatch):
    """A stage that takes its collection's copy past the copies' room drops the copy: reads
    then go to Chroma, after the stage is written."""
    with agentmem.AgentMemory(store_path, embedder=HashEmbedder()) as mem:
        bank = mem.bank("b")
        bank.retain("Ann likes tea.", mentioned_at=T0)
        bank.recall("tea", strategies=["semantic"], reinforce=False)
        vectors = mem._engine.vectors
        assert vectors._store.held_copy(bank._collection) is not None
        monkeypatch.setattr(vectors._store._flat, "most", 1)
        ids = {m.id for m in bank.retain("Bob likes coffee.", mentioned_at=T0)}
        assert vectors._store.held_copy(bank._collection) is None
        hits = bank.recall("Bob likes coffee", strategies=["semantic"], reinforce=False)
        assert ids <= {h.memory.id for h in hits}
        assert ids <= _chroma_ids(mem, bank)
        assert mem.check_integrity().ok


def test_a_copy_read_after_a_stage_does_not_hide_the_staged_vectors(store_path):
    """Vectors staged before the collection's copy is read are not in it (it is read from
    Chroma): reads write them first."""
    with agentmem.AgentMemory(store_path, embedder=HashEmbedder()) as mem:
        bank = mem.bank("b")
        bank.retain("Ann likes tea.", mentioned_at=T0)
        vectors = mem._engine.vectors
        vectors.flush()
        ids = {m.id for m in bank.retain("Bob likes coffee.", mentioned_at=T0)}
        assert vectors.holds_copy(bank._collection)  # read now, from Chroma: without Bob
        hits = bank.recall("Bob likes coffee", strategies=["semantic"], reinforce=False)
        assert ids <= {h.memory.id for h in hits}
        assert ids <= _chroma_ids(mem, bank)
