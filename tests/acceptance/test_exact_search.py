"""An embedded bank's semantic search runs on an exact in-process copy of its vectors
(store/flat_index.py): it must follow every write of the session — retain, forget, another
bank's writes and deletion — and answer the same after the store is reopened."""

from __future__ import annotations

import agentmem
from tests.conftest import T0, T1

TOPICS = [
    "tomatoes in the greenhouse",
    "the quarterly tax filing",
    "a trip to the Alps",
    "the new espresso machine",
    "the dog's vet appointment",
    "learning the cello",
    "the leaking kitchen tap",
    "a chess tournament",
]
QUERY = "watering the tomato plants"


def _semantic(bank: agentmem.MemoryBank) -> list[str]:
    result = bank.recall(QUERY, strategies=["semantic"], top_k=5, now=T1, reinforce=False)
    return [hit.memory.id for hit in result]


def test_semantic_search_follows_the_sessions_writes_and_reopen(tmp_path):
    path = tmp_path / "store"
    with agentmem.AgentMemory(path) as mem:
        bank, other = mem.bank("garden"), mem.bank("other")
        notes = [f"Note {i}: I spent the evening on {t}." for i, t in enumerate(TOPICS * 3)]
        bank.retain([{"role": "user", "content": note} for note in notes], mentioned_at=T0)
        twin = other.retain("I watered the tomato plants twice today.", mentioned_at=T0)
        first = _semantic(bank)  # the copy of "garden" is read here
        assert len(first) == 5 and twin.memories[0].id not in first
        texts = {m.id: m.text for m in bank.memories()}
        assert "tomatoes" in texts[first[0]]

        assert bank.forget(ids=first[:2]) == 2
        after_forget = _semantic(bank)
        assert not set(first[:2]) & set(after_forget)

        new = bank.retain("I watered the tomato plants in the greenhouse.", mentioned_at=T1)
        assert _semantic(bank)[0] == new.memories[0].id

        other.retain("Watering tomato plants is my favourite chore.", mentioned_at=T1)
        mem.delete_bank("other")
        before_reopen = _semantic(bank)
        assert set(before_reopen) <= set(texts) | {new.memories[0].id}
        assert mem.check_integrity().ok
    with agentmem.AgentMemory(path) as mem:
        assert _semantic(mem.bank("garden")) == before_reopen
        assert mem.check_integrity().ok
