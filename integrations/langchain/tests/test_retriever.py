"""AgentMemRetriever: documents carry the memory, k works everywhere, async is async."""

from __future__ import annotations

import asyncio

import pytest

import agentmem
from langchain_agentmem import AgentMemRetriever


def test_documents_carry_the_memory_fields_and_score(bank):
    docs = AgentMemRetriever(bank=bank, k=3).invoke("Which invoice is unpaid?")
    assert len(docs) == 3
    top = docs[0]
    assert top.page_content == "Invoice INV-20931 from Quixotrix is still unpaid."
    assert top.id == top.metadata["id"]
    assert bank.get(top.id).text == top.page_content
    assert top.metadata["mentioned_at"] == "2025-03-01T09:00:00Z"
    assert top.metadata["tags"] == ["work"]
    assert "Quixotrix" in top.metadata["entities"]
    assert [d.metadata["score"] for d in docs] == sorted(
        (d.metadata["score"] for d in docs), reverse=True
    )


def test_invoke_kwargs_override_the_constructor(bank):
    retriever = AgentMemRetriever(bank=bank, k=4, recall_kwargs={"tags": ["home"]})
    assert retriever.invoke("tea") == []  # nothing is tagged "home"
    assert len(retriever.invoke("tea", tags=["work"], k=1)) == 1


def test_async_recall_runs_concurrently_and_agrees_with_sync(bank):
    retriever = AgentMemRetriever(bank=bank, k=2)

    async def both():
        return await asyncio.gather(retriever.ainvoke("espresso"), retriever.ainvoke("Lisbon"))

    espresso, lisbon = asyncio.run(both())
    assert espresso[0].page_content == "Bob drinks espresso after lunch."
    assert lisbon[0].page_content == "The team offsite is in Lisbon in June."
    assert [d.id for d in retriever.invoke("espresso")] == [d.id for d in espresso]


def test_bad_queries_raise_agentmem_errors(bank):
    with pytest.raises(agentmem.InvalidInputError):
        AgentMemRetriever(bank=bank).invoke("   ")


def test_documents_say_why_they_came_back_and_keep_their_metadata_flat(bank):
    bank.retain(
        "The espresso machine is on the second floor.",
        mentioned_at="2025-03-02T09:00:00Z",
        metadata={"source": "wiki", "tags": "collides with a field"},
    )
    docs = AgentMemRetriever(bank=bank, k=5).invoke("where is the espresso machine?")
    doc = next(d for d in docs if "second floor" in d.page_content)
    assert doc.metadata["source"] == "wiki"
    assert doc.metadata["metadata.tags"] == "collides with a field"
    assert doc.metadata["tags"] == []
    assert "metadata" not in doc.metadata
    assert 0.0 <= doc.metadata["relevance"] <= 1.0
    assert "semantic" in doc.metadata["strategy_details"]
    assert "semantic #" in doc.metadata["why"]


def test_top_k_is_accepted_as_k_and_a_disagreement_is_refused(bank):
    retriever = AgentMemRetriever(bank=bank, k=4)
    assert len(retriever.invoke("Which invoice is unpaid?", top_k=2)) == 2
    assert len(retriever.invoke("Which invoice is unpaid?", k=2, top_k=2)) == 2
    with pytest.raises(agentmem.InvalidInputError, match="disagree"):
        retriever.invoke("Which invoice is unpaid?", k=1, top_k=3)


def test_the_store_given_as_the_bank_is_refused_at_construction(bank, memory):
    with pytest.raises(ValueError, match="not the store"):
        AgentMemRetriever(bank=memory)
