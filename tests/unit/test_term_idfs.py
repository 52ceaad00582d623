"""How informative a query's words are in a bank: idf from the bank's own keyword statistics."""

from __future__ import annotations

import pytest

import agentmem
from agentmem.store.keyword import bm25_idf
from agentmem.testing import HashEmbedder

T0 = "2025-03-04T09:00:00Z"
# Eight of ten turns say "parcel"; one says "violin", and its neighbours hold it only as context.
TURNS = [f"The parcel number {i} waits at the desk." for i in range(8)] + [
    "I practised the violin all evening.",
    "Dinner was pasta again.",
]


def _retain(bank: agentmem.MemoryBank, turns: list[str]) -> list[str]:
    result = bank.retain(
        [{"role": "user", "name": "Ana", "content": text} for text in turns], mentioned_at=T0
    )
    return [m.id for m in result.memories]


def test_idf_counts_the_rows_whose_own_text_holds_the_word(store_path):
    with agentmem.AgentMemory(store_path, embedder=HashEmbedder()) as mem:
        _retain(mem.bank("a"), TURNS)
        keyword = mem._engine.keyword
        idfs = keyword.term_idfs("a", ["parcel", "violin", "zebra", "the", "parcels"])
        rows = len(mem.bank("a").memories())
        assert rows == len(TURNS)
        assert idfs["parcel"] == pytest.approx(bm25_idf(rows, 8))
        # Its neighbours' context holds "violin" too; only the turn that says it counts.
        assert idfs["violin"] == pytest.approx(bm25_idf(rows, 1))
        # A word no row holds says the most; a stopword is absent; stems are the index's own.
        assert idfs["zebra"] == pytest.approx(bm25_idf(rows, 0))
        assert "the" not in idfs
        assert idfs["parcels"] == idfs["parcel"]
        assert idfs["parcel"] < idfs["violin"] < idfs["zebra"]
        assert keyword.term_idfs("a", []) == {}
        assert keyword.term_idfs("a", ["the", "and"]) == {}


def test_idf_is_the_banks_own_whether_rows_are_pending_folded_or_forgotten(store_path):
    with agentmem.AgentMemory(store_path, embedder=HashEmbedder()) as mem:
        ids = _retain(mem.bank("a"), TURNS)
        keyword = mem._engine.keyword
        before = keyword.term_idfs("a", ["parcel", "violin"])
        # Another bank full of violins changes nothing in bank a.
        _retain(mem.bank("b"), [f"The violin lesson {i} ran late." for i in range(30)])
        assert keyword.term_idfs("a", ["parcel", "violin"]) == pytest.approx(before)
        assert keyword.term_idfs("b", ["violin"])["violin"] == pytest.approx(bm25_idf(30, 30))
        keyword.rebuild()  # every posting built, none pending
        assert keyword.term_idfs("a", ["parcel", "violin"]) == pytest.approx(before)
        mem.bank("a").forget(ids[8])  # the violin turn
        after = keyword.term_idfs("a", ["parcel", "violin"])
        assert after["violin"] == pytest.approx(bm25_idf(len(TURNS) - 1, 0))
        assert after["parcel"] == pytest.approx(bm25_idf(len(TURNS) - 1, 8))
        assert mem.check_integrity().ok
    with agentmem.AgentMemory(store_path, embedder=HashEmbedder()) as mem:
        assert mem._engine.keyword.term_idfs("a", ["parcel", "violin"]) == pytest.approx(after)
