"""langchain-tests' standard retriever suite, offline, on a real agentmem store."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_tests.integration_tests import RetrieversIntegrationTests

from langchain_agentmem import AgentMemRetriever


class TestAgentMemRetrieverStandard(RetrieversIntegrationTests):
    @pytest.fixture(autouse=True)
    def _bank(self, bank: Any) -> None:
        self._memory_bank = bank

    @property
    def retriever_constructor(self) -> type[AgentMemRetriever]:
        return AgentMemRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"bank": self._memory_bank, "k": 2}

    @property
    def retriever_query_example(self) -> str:
        return "What does Alice drink?"
