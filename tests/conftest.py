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


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[object]:
    """One throwaway PostgreSQL (with pgvector) per test session, on a Unix socket."""
    from agentmem.testing_postgres import TemporaryPostgres

    server = TemporaryPostgres().start()
    yield server
    server.stop()


@pytest.fixture
def pg_url(pg_cluster: object) -> str:
    """A fresh, empty database of the session's PostgreSQL, as a ``postgresql://`` URL."""
    return pg_cluster.create_database()  # type: ignore[attr-defined]
