"""create_memory_tools: LangChain tools over a bank, driven by a fake chat model's tool calls."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import AIMessage, ToolMessage

import agentmem
from langchain_agentmem import create_memory_tools


def test_tools_expose_the_memory_verbs_without_the_bank(bank):
    tools = {tool.name: tool for tool in create_memory_tools(bank)}
    assert sorted(tools) == ["forget_memory", "recall_memory", "reflect_memory", "retain_memory"]
    for tool in tools.values():
        schema = tool.tool_call_schema.model_json_schema()
        assert "bank" not in json.dumps(schema).lower()
    assert tools["recall_memory"].args["query"]["type"] == "string"
    only = create_memory_tools(bank, names=["recall_memory"])
    assert [t.name for t in only] == ["recall_memory"]
    with pytest.raises(agentmem.InvalidInputError):
        create_memory_tools(bank, names=["rm_rf"])


def test_tool_calls_from_a_model_retain_and_recall(bank):
    tools = {tool.name: tool for tool in create_memory_tools(bank)}
    model_turn = AIMessage(
        content="",
        tool_calls=[
            {
                "name": "retain_memory",
                "args": {"content": "Dana's flight lands at 18:40.", "tags": ["travel"]},
                "id": "call_1",
                "type": "tool_call",
            },
        ],
    )
    result = tools["retain_memory"].invoke(model_turn.tool_calls[0])
    assert isinstance(result, ToolMessage) and result.tool_call_id == "call_1"
    stored = json.loads(result.content)["stored"][0]
    assert bank.get(stored["id"]).tags == ("travel",)

    found = tools["recall_memory"].invoke({"query": "When does Dana land?", "top_k": 1})
    assert json.loads(found)["memories"][0]["text"] == "Dana's flight lands at 18:40."


async def test_async_tools_and_errors_the_model_can_read(bank):
    tools = {tool.name: tool for tool in create_memory_tools(bank)}
    found = await tools["recall_memory"].ainvoke({"query": "espresso"})
    assert json.loads(found)["memories"][0]["text"] == "Bob drinks espresso after lunch."
    refused = await tools["retain_memory"].ainvoke({"content": "x", "importance": 5})
    assert refused.startswith("InvalidInputError") and "importance" in refused
    before = bank.stats()["memories"]
    missing = await tools["forget_memory"].ainvoke({"memory_ids": ["nope"]})
    assert missing.startswith("NotFoundError") and "nope" in missing
    assert bank.stats()["memories"] == before
