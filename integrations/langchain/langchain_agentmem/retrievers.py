"""``AgentMemRetriever``: a LangChain retriever over an agentmem bank."""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import Field

from agentmem.schemas import MemoryOut
from agentmem.types import RecallHit, RecallResult


def hit_document(hit: RecallHit) -> Document:
    """A recalled memory as a LangChain ``Document``.

    ``page_content`` is the memory's text; ``metadata`` holds every other field of the memory
    (``id``, ``fact_type``, ``mentioned_at``, ``entities``, ``tags``, ``metadata``, ...) as
    JSON-ready values, plus its recall ``score``.
    """
    metadata = MemoryOut.of(hit.memory).model_dump(mode="json", exclude={"text"})
    metadata["score"] = hit.score
    return Document(id=hit.memory.id, page_content=hit.memory.text, metadata=metadata)


class AgentMemRetriever(BaseRetriever):
    """Recall from an agentmem bank as a LangChain retriever.

    Args:
        bank: The :class:`agentmem.MemoryBank` to recall from.
        k: How many documents to return (``invoke(query, k=3)`` overrides it per call).
        recall_kwargs: Further arguments of ``bank.recall`` (``tags``, ``fact_types``,
            ``strategies``, ``max_tokens``, ``time_range``, ...); keyword arguments given to
            ``invoke`` override them per call.

    Example:
        >>> retriever = AgentMemRetriever(bank=mem.bank("assistant"), k=5)
        >>> docs = retriever.invoke("Which invoice is unpaid?")
        >>> docs[0].metadata["score"], docs[0].metadata["mentioned_at"]
    """

    bank: Any
    k: int = 4
    recall_kwargs: dict[str, Any] = Field(default_factory=dict)

    def _recall_args(self, k: int | None, overrides: dict[str, Any]) -> dict[str, Any]:
        return {**self.recall_kwargs, **overrides, "top_k": self.k if k is None else k}

    @staticmethod
    def _documents(result: RecallResult) -> list[Document]:
        return [hit_document(hit) for hit in result]

    def _get_relevant_documents(
        self,
        query: str,
        *,
        run_manager: CallbackManagerForRetrieverRun,
        k: int | None = None,
        **kwargs: Any,
    ) -> list[Document]:
        return self._documents(self.bank.recall(query, **self._recall_args(k, kwargs)))

    async def _aget_relevant_documents(
        self,
        query: str,
        *,
        run_manager: AsyncCallbackManagerForRetrieverRun,
        k: int | None = None,
        **kwargs: Any,
    ) -> list[Document]:
        return self._documents(await self.bank.arecall(query, **self._recall_args(k, kwargs)))
