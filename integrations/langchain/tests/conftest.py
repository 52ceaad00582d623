"""A temporary agentmem store with a few memories, for the LangChain adapters."""

from __future__ import annotations

import pytest

import agentmem
from agentmem.testing import HashEmbedder

FACTS = [
    "Alice prefers green tea in the morning.",
    "Bob drinks espresso after lunch.",
    "Invoice INV-20931 from Quixotrix is still unpaid.",
    "The team offsite is in Lisbon in June.",
    "Alice's manager is Carol.",
]


@pytest.fixture
def memory(tmp_path):
    with agentmem.AgentMemory(tmp_path / "store", embedder=HashEmbedder()) as mem:
        yield mem


@pytest.fixture
def bank(memory):
    bank = memory.bank("assistant")
    for fact in FACTS:
        bank.retain(fact, mentioned_at="2025-03-01T09:00:00Z", tags=["work"])
    return bank
