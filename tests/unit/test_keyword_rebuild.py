"""Keyword index rebuilds run in the background; every row stays keyword-searchable."""

from __future__ import annotations

import agentmem
from agentmem.testing import HashEmbedder

T0 = "2025-03-04T09:00:00Z"
# A rebuild is due every 30 rows, so a bulk retain starts many while it keeps writing.
FREQUENT = agentmem.EngineConfig(keyword_rebuild_min=30, keyword_rebuild_fraction=0.0)


def _retain_codes(bank: agentmem.MemoryBank, batch: int) -> dict[str, str]:
    codes = [f"Z{batch}Q{j}" for j in range(10)]
    messages = [{"role": "user", "content": f"Parcel {code} waits at the desk."} for code in codes]
    result = bank.retain(messages, mentioned_at=T0)
    return {m.id: code for m, code in zip(result.memories, codes, strict=True)}


def _found_by_code(bank: agentmem.MemoryBank, memory_id: str, code: str) -> bool:
    hits = bank.recall(code, strategies=["keyword"], top_k=5, reinforce=False)
    return memory_id in {h.memory.id for h in hits}


def test_rows_written_during_background_rebuilds_are_searchable_at_once(store_path):
    rebuilds: list[float] = []
    with agentmem.AgentMemory(store_path, embedder=HashEmbedder(), config=FREQUENT) as mem:
        bank = mem.bank("b")
        keyword = mem._engine.keyword
        original = keyword.rebuild
        keyword.rebuild = lambda: rebuilds.append(original()) or rebuilds[-1]  # count them
        stored: dict[str, str] = {}
        for batch in range(12):
            latest = _retain_codes(bank, batch)
            stored |= latest
            # Searchable when retain returns, whether a rebuild is running or not.
            memory_id, code = next(iter(latest.items()))
            assert _found_by_code(bank, memory_id, code)
        keyword.wait()
        assert rebuilds  # the rebuilds did run (in the background)
        assert all(_found_by_code(bank, i, code) for i, code in stored.items())
        report = mem.check_integrity()
        assert report.ok, report.problems
        assert report.memories == len(stored)
    with agentmem.AgentMemory(store_path, embedder=HashEmbedder(), config=FREQUENT) as mem:
        bank = mem.bank("b")
        assert mem.check_integrity().ok
        assert all(_found_by_code(bank, i, code) for i, code in stored.items())


def test_forgetting_while_a_rebuild_runs_loses_nothing_else(store_path):
    with agentmem.AgentMemory(store_path, embedder=HashEmbedder(), config=FREQUENT) as mem:
        bank = mem.bank("b")
        stored: dict[str, str] = {}
        for batch in range(4):
            stored |= _retain_codes(bank, batch)
        keyword = mem._engine.keyword
        keyword.wait()
        stored |= _retain_codes(bank, 99)  # pending postings a forget can remove...
        doomed = sorted(stored)[:15]
        keyword.maybe_rebuild()  # ...while a rebuild may be indexing them
        assert bank.forget(doomed) == len(doomed)
        keyword.wait()  # a rebuild that conflicted rolled back: it raises nothing
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
