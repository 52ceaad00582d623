"""``AgentMemRetriever``: a LlamaIndex retriever over an agentmem bank."""

from __future__ import annotations

from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.callbacks import CallbackManager
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from agentmem.schemas import MemoryOut
from agentmem.types import RecallHit, RecallResult

# What the LLM sees of a memory besides its text: when it was said and when it happened.
LLM_METADATA = ("mentioned_at", "occurred_start", "occurred_end")


def hit_node(hit: RecallHit) -> NodeWithScore:
    """A recalled memory as a scored ``TextNode`` (id = memory id, metadata = its fields)."""
    metadata = MemoryOut.of(hit.memory).model_dump(mode="json", exclude={"text"})
    hidden = [key for key, value in metadata.items() if key not in LLM_METADATA or value is None]
    node = TextNode(
        id_=hit.memory.id,
        text=hit.memory.text,
        metadata=metadata,
        excluded_llm_metadata_keys=hidden,
        excluded_embed_metadata_keys=list(metadata),
    )
    return NodeWithScore(node=node, score=hit.score)


class AgentMemRetriever(BaseRetriever):
    """Recall from an agentmem bank as a LlamaIndex retriever.

    Args:
        bank: The :class:`agentmem.MemoryBank` to recall from.
        similarity_top_k: How many nodes to return.
        recall_kwargs: Further arguments of ``bank.recall`` (``tags``, ``fact_types``,
            ``strategies``, ``max_tokens``, ``time_range``, ...).
        callback_manager: LlamaIndex callbacks.
        verbose: Print retrieval steps.

    Example:
        >>> retriever = AgentMemRetriever(bank=mem.bank("assistant"), similarity_top_k=5)
        >>> engine = RetrieverQueryEngine.from_args(retriever, llm=llm)
    """

    def __init__(
        self,
        bank: Any,
        similarity_top_k: int = 10,
        recall_kwargs: dict[str, Any] | None = None,
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
    ) -> None:
        super().__init__(callback_manager=callback_manager, verbose=verbose)
        self.bank = bank
        self.similarity_top_k = similarity_top_k
        self.recall_kwargs = dict(recall_kwargs or {})

    def _recall_args(self) -> dict[str, Any]:
        return {**self.recall_kwargs, "top_k": self.similarity_top_k}

    @staticmethod
    def _nodes(result: RecallResult) -> list[NodeWithScore]:
        return [hit_node(hit) for hit in result]

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self._nodes(self.bank.recall(query_bundle.query_str, **self._recall_args()))

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        result = await self.bank.arecall(query_bundle.query_str, **self._recall_args())
        return self._nodes(result)
