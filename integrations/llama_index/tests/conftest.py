"""A temporary agentmem store for the LlamaIndex adapters."""

from __future__ import annotations

import pytest

import agentmem
from agentmem.testing import HashEmbedder


@pytest.fixture
def bank(tmp_path):
    with agentmem.AgentMemory(tmp_path / "store", embedder=HashEmbedder()) as mem:
        yield mem.bank("assistant")
