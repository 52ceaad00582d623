"""Word idfs (what the reranker weighs a query's words by) are the same on both backends."""

from __future__ import annotations

import agentmem
from agentmem.testing import HashEmbedder

T0 = "2025-03-04T09:00:00Z"
TURNS = [f"The parcel number {i} waits at the desk." for i in range(8)] + [
    "I practised the violin all evening.",
    "Dinner was pasta again.",
]
WORDS = ["parcel", "parcels", "violin", "zebra", "the", "desk", "évening"]


def _idfs(location: object) -> dict[str, float]:
    with agentmem.AgentMemory(location, embedder=HashEmbedder()) as mem:
        bank = mem.bank("a")
        bank.retain([{"role": "user", "content": t} for t in TURNS], mentioned_at=T0)
        mem.bank("other").retain("violin violin violin", mentioned_at=T0)
        bank.forget(bank.memories()[0].id)
        return mem._engine.keyword.term_idfs("a", WORDS)


def test_word_idfs_agree_between_duckdb_and_postgresql(tmp_path, pg_url):
    duck = _idfs(tmp_path / "store")
    assert duck == _idfs(pg_url)
    assert duck["parcel"] < duck["violin"] < duck["zebra"] and "the" not in duck
