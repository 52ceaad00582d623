"""``AgentMemRetriever``: a LangChain retriever over an agentmem bank."""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import Field, field_validator

from agentmem.errors import InvalidInputError
from agentmem.schemas import RecallHitOut
from agentmem.types import RecallHit, RecallResult


def hit_document(hit: RecallHit) -> Document:
    """A recalled memory as a LangChain ``Document``.

    ``page_content`` is the memory's text. ``metadata`` holds the memory's fields (``id``,
    ``fact_type``, ``mentioned_at``, ``entities``, ``tags``, ...) as JSON-ready values, its
    own metadata flat beside them (a key that collides with a field keeps a ``metadata.``
    prefix), and why it came back: ``score``, ``relevance``, ``why`` and ``strategy_details``.
    """
    fields = RecallHitOut.of(hit).model_dump(mode="json")
    memory = fields["memory"]
    own = memory.pop("metadata")
    memory.pop("text")
    metadata = {(f"metadata.{k}" if k in memory else k): v for k, v in own.items()}
    metadata.update(memory)
    metadata["score"] = hit.score
    metadata["relevance"] = hit.strategy_details.get("rerank", {}).get("score")
    metadata["why"] = hit.why
    metadata["strategy_details"] = fields["strategy_details"]
    return Document(id=hit.memory.id, page_content=hit.memory.text, metadata=metadata)


class AgentMemRetriever(BaseRetriever):
    """Recall from an agentmem bank as a LangChain retriever.

    Args:
        bank: The :class:`agentmem.MemoryBank` to recall from.
        k: How many documents to return (``invoke(query, k=3)`` or ``top_k=3`` overrides it
            per call).
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

    @field_validator("bank")
    @classmethod
    def _a_bank(cls, bank: Any) -> Any:
        if not (
            callable(getattr(bank, "recall", None)) and callable(getattr(bank, "arecall", None))
        ):
            hint = (
                " (pass mem.bank('id'), not the store)"
                if callable(getattr(bank, "bank", None))
                else ""
            )
            raise InvalidInputError(f"bank must be an agentmem MemoryBank{hint}")
        return bank

    def _recall_args(self, k: int | None, overrides: dict[str, Any]) -> dict[str, Any]:
        top_k = overrides.pop("top_k", None)
        if k is not None and top_k is not None and k != top_k:
            raise InvalidInputError(f"k={k} and top_k={top_k} disagree: give one of them")
        chosen = k if k is not None else top_k
        return {**self.recall_kwargs, **overrides, "top_k": self.k if chosen is None else chosen}

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
