"""Shared fixtures. Every test runs offline: models come from installed packages."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import agentmem

T0 = "2025-03-04T09:00:00Z"
T1 = "2025-03-20T15:30:00Z"

CONVERSATION = [
    {
        "role": "user",
        "name": "Alice",
        "content": "I moved to Berlin last June.",
        "metadata": {"turn": 1},
    },
    {
        "role": "assistant",
        "content": "How do you like the new job at Acme Corp?",
        "metadata": {"turn": 2},
    },
    {
        "role": "user",
        "name": "Alice",
        "content": "My office is room 42 and my manager is Bob.",
        "metadata": {"turn": 3},
    },
    {
        "role": "user",
        "name": "Alice",
        "content": "Invoice INV-20931 from Quixotrix is still unpaid.",
        "metadata": {"turn": 4},
    },
    {
        "role": "user",
        "name": "Alice",
        "content": "I prefer green tea over coffee in the morning.",
        "metadata": {"turn": 5},
    },
]


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    return tmp_path / "store"


@pytest.fixture
def mem(store_path: Path) -> Iterator[agentmem.AgentMemory]:
    memory = agentmem.AgentMemory(store_path)
    yield memory
    memory.close()


@pytest.fixture
def bank(mem: agentmem.AgentMemory) -> agentmem.MemoryBank:
    bank = mem.bank("alice")
    bank.retain(CONVERSATION, mentioned_at=T0, document_id="session-1")
    return bank
