"""llama_index.retrievers.agentmem: nodes carry memories; a query engine answers from them."""

from __future__ import annotations

from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import MetadataMode

from llama_index.retrievers.agentmem import AgentMemRetriever

FACTS = [
    "Invoice INV-20931 from Quixotrix is still unpaid.",
    "Alice prefers green tea in the morning.",
    "The team offsite is in Lisbon in June.",
]


def _fill(bank):
    for fact in FACTS:
        bank.retain(fact, mentioned_at="2025-03-01T09:00:00Z", tags=["work"])


def test_nodes_carry_the_memory_and_its_score(bank):
    _fill(bank)
    nodes = AgentMemRetriever(bank=bank, similarity_top_k=2).retrieve("Which invoice is unpaid?")
    assert len(nodes) == 2
    top = nodes[0]
    assert top.node.get_content() == FACTS[0]
    assert bank.get(top.node.node_id).text == FACTS[0]
    assert top.node.metadata["tags"] == ["work"]
    assert top.score == max(n.score for n in nodes)
    llm_view = top.node.get_content(metadata_mode=MetadataMode.LLM)
    assert "mentioned_at: 2025-03-01T09:00:00Z" in llm_view
    assert "bank_id" not in llm_view and "occurred_start" not in llm_view


async def test_async_retrieval_agrees_with_sync(bank):
    _fill(bank)
    retriever = AgentMemRetriever(bank=bank, similarity_top_k=3, recall_kwargs={"reinforce": False})
    sync_ids = [n.node.node_id for n in retriever.retrieve("Lisbon offsite")]
    async_ids = [n.node.node_id for n in await retriever.aretrieve("Lisbon offsite")]
    assert async_ids == sync_ids
    assert bank.get(sync_ids[0]).text == FACTS[2]


def test_recall_kwargs_filter(bank):
    _fill(bank)
    bank.retain("Alice's cat is called Quixotrix.", mentioned_at="2025-03-02", tags=["home"])
    retriever = AgentMemRetriever(bank=bank, recall_kwargs={"tags": ["home"]})
    assert [n.node.get_content() for n in retriever.retrieve("Quixotrix")] == [
        "Alice's cat is called Quixotrix."
    ]


def test_a_query_engine_answers_from_recalled_memories(bank):
    _fill(bank)
    engine = RetrieverQueryEngine.from_args(
        AgentMemRetriever(bank=bank, similarity_top_k=1), llm=MockLLM()
    )
    response = engine.query("Which invoice is unpaid?")
    # MockLLM answers with its prompt, so the answer shows the context the engine built.
    assert FACTS[0] in str(response)
    assert [n.node.get_content() for n in response.source_nodes] == [FACTS[0]]
