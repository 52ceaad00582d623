"""AgentMemToolSpec: agentmem's memory tools as LlamaIndex FunctionTools."""

from __future__ import annotations

import asyncio
import json

import pytest
from llama_index.core.tools import FunctionTool

import agentmem
from agentmem.tools import MEMORY_TOOLS
from llama_index.tools.agentmem import AgentMemToolSpec


def test_the_tools_are_agentmems_with_their_schemas(bank):
    tools = AgentMemToolSpec(bank=bank).to_tool_list()
    assert all(isinstance(tool, FunctionTool) for tool in tools)
    assert [t.metadata.name for t in tools] == [t.name for t in MEMORY_TOOLS]
    recall = tools[0].metadata
    assert recall.description == MEMORY_TOOLS[0].description
    assert set(recall.get_parameters_dict()["properties"]) == {"query", "top_k", "tags"}


def test_retain_then_recall_through_the_tools_sync_and_async(bank):
    tools = {t.metadata.name: t for t in AgentMemToolSpec(bank=bank).to_tool_list()}
    stored = json.loads(
        tools["retain_memory"].call(content="Dana's flight lands at 18:40.").content
    )
    memory_id = stored["stored"][0]["id"]
    assert bank.get(memory_id).text == "Dana's flight lands at 18:40."
    found = asyncio.run(tools["recall_memory"].acall(query="When does Dana land?", top_k=1))
    assert json.loads(found.content)["memories"][0]["id"] == memory_id


def test_mistakes_come_back_to_the_model_and_change_nothing(bank):
    tools = {t.metadata.name: t for t in AgentMemToolSpec(bank=bank).to_tool_list()}
    refused = json.loads(tools["retain_memory"].call(content="x", importance=5).content)
    assert refused["error"]["type"] == "InvalidInputError"
    missing = json.loads(tools["forget_memory"].call(memory_ids=["nope"]).content)
    assert missing["error"]["type"] == "NotFoundError"
    assert bank.stats()["memories"] == 0


def test_a_subset_of_tools_and_a_store_instead_of_a_bank(bank, tmp_path):
    only = AgentMemToolSpec(bank=bank, names=["recall_memory"]).to_tool_list()
    assert [t.metadata.name for t in only] == ["recall_memory"]
    with pytest.raises(agentmem.InvalidInputError, match="unknown memory tools"):
        AgentMemToolSpec(bank=bank, names=["drop_tables"])
    with (
        agentmem.AgentMemory(tmp_path / "other") as mem,
        pytest.raises(agentmem.InvalidInputError, match="not the store"),
    ):
        AgentMemToolSpec(bank=mem)
