"""The MCP server through the SDK's own client: in memory, over streamable HTTP on 127.0.0.1,
and over stdio from the ``agentmem mcp`` command."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

import agentmem
from agentmem.server.mcp_server import create_mcp_server, streamable_http_app
from agentmem.testing import HashEmbedder

from .conftest import SLOW_MACHINE, TOKEN

SRC = str(Path(agentmem.__file__).resolve().parents[1])


@pytest.fixture
def bank(tmp_path):
    with agentmem.AgentMemory(tmp_path / "store", embedder=HashEmbedder()) as mem:
        yield mem.bank("assistant")


async def test_tools_carry_read_only_and_destructive_annotations(bank):
    async with Client(create_mcp_server(bank)) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert sorted(tools) == ["forget_memory", "recall_memory", "reflect_memory", "retain_memory"]
    recall, retain, forget = tools["recall_memory"], tools["retain_memory"], tools["forget_memory"]
    assert recall.annotations.read_only_hint is True
    assert tools["reflect_memory"].annotations.read_only_hint is False  # may store an opinion
    assert retain.annotations.read_only_hint is False
    assert retain.annotations.destructive_hint is False
    assert forget.annotations.destructive_hint is True
    assert recall.input_schema["required"] == ["query"]
    assert recall.input_schema["properties"]["top_k"]["description"].startswith("How many")
    assert recall.description.startswith("Search long-term memory")


async def test_retain_recall_and_forget_through_the_client(bank):
    async with Client(create_mcp_server(bank)) as client:
        stored = await client.call_tool(
            "retain_memory", {"content": "Invoice INV-20931 is unpaid.", "tags": ["billing"]}
        )
        assert not stored.is_error
        memory_id = stored.structured_content["stored"][0]["id"]
        assert bank.get(memory_id).tags == ("billing",)

        found = await client.call_tool("recall_memory", {"query": "INV-20931", "top_k": 1})
        hits = found.structured_content["memories"]
        assert [h["id"] for h in hits] == [memory_id]
        assert "INV-20931" in found.content[0].text

        gone = await client.call_tool("forget_memory", {"memory_ids": [memory_id]})
        assert gone.structured_content == {"deleted": 1}
    assert bank.stats()["memories"] == 0


async def test_refused_calls_are_tool_errors_with_agentmem_messages(bank):
    async with Client(create_mcp_server(bank)) as client:
        empty = await client.call_tool("recall_memory", {"query": "   "})
        assert empty.is_error
        assert "InvalidInputError" in empty.content[0].text
        missing = await client.call_tool("retain_memory", {"tags": ["x"]})
        assert missing.is_error and "content" in missing.content[0].text
        too_big = await client.call_tool("retain_memory", {"content": "x", "importance": 3})
        assert too_big.is_error and "importance" in too_big.content[0].text
        # A misspelt argument is refused, not dropped (the SDK alone would ignore it).
        misspelt = await client.call_tool("retain_memory", {"content": "Tea.", "tag": ["x"]})
        assert misspelt.is_error and "tag" in misspelt.content[0].text
        assert "Extra inputs are not permitted" in misspelt.content[0].text
        schemas = [tool.input_schema for tool in (await client.list_tools()).tools]
        assert [schema["additionalProperties"] for schema in schemas] == [False] * 4
    assert bank.stats()["memories"] == 0


async def test_streamable_http_on_loopback_with_a_bearer_token(bank, serve):
    app = streamable_http_app(create_mcp_server(bank), token=TOKEN)
    with serve(app) as url:
        async with httpx2.AsyncClient(timeout=SLOW_MACHINE) as anonymous:
            refused = await anonymous.post(f"{url}/mcp", json={})
        assert refused.status_code == 401

        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=SLOW_MACHINE) as http,
            Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client,
        ):
            await client.call_tool("retain_memory", {"content": "Alice drinks green tea."})
            found = await client.call_tool("recall_memory", {"query": "what does Alice drink"})
    assert found.structured_content["memories"][0]["text"] == "Alice drinks green tea."


async def test_streamable_http_refuses_foreign_hosts_and_origins(bank, serve):
    app = streamable_http_app(create_mcp_server(bank), allowed_hosts=["mcp.example.com"])
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    with serve(app) as url:
        async with httpx2.AsyncClient(timeout=SLOW_MACHINE) as http:
            foreign = await http.post(f"{url}/mcp", json=ping, headers={"Host": "evil.example"})
            cross_site = await http.post(
                f"{url}/mcp", json=ping, headers={"Origin": "https://evil.example"}
            )
            named = await http.post(f"{url}/mcp", json=ping, headers={"Host": "mcp.example.com:80"})
    assert foreign.status_code == 421 and foreign.json()["error"] == "MisdirectedRequest"
    assert cross_site.status_code == 403 and cross_site.json()["error"] == "Forbidden"
    assert named.status_code not in (403, 421)  # past the guard: the SDK answers


async def test_agentmem_mcp_command_serves_stdio(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")])}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "agentmem.cli", "mcp", "--path", str(tmp_path / "s"), "--bank", "cli"],
        env=env,
    )
    async with Client(params) as client:
        names = sorted(tool.name for tool in (await client.list_tools()).tools)
        await client.call_tool("retain_memory", {"content": "The office wifi is hunter2."})
        found = await client.call_tool("recall_memory", {"query": "wifi"})
    assert names == ["forget_memory", "recall_memory", "reflect_memory", "retain_memory"]
    assert found.structured_content["memories"][0]["text"] == "The office wifi is hunter2."
    with agentmem.AgentMemory(tmp_path / "s") as mem:  # the command closed the store
        assert mem.bank("cli").stats()["memories"] == 1
