"""Use agentmem from an MCP client, offline: launch ``agentmem mcp`` over stdio and call tools.

This is what a desktop MCP client does with the configuration
``{"command": "agentmem", "args": ["mcp", "--path", "./memdata", "--bank", "assistant"]}``.

    python cookbook/mcp_client.py [--path ./memdata]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile

from mcp import Client
from mcp.client.stdio import StdioServerParameters


async def run(path: str) -> None:
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "agentmem.cli", "mcp", "--path", path, "--bank", "assistant"],
        env=dict(os.environ),
    )
    async with Client(server) as client:
        for tool in (await client.list_tools()).tools:
            hints = tool.annotations
            print(
                f"tool {tool.name}: read-only={hints.read_only_hint}, "
                f"destructive={hints.destructive_hint}"
            )
        await client.call_tool("retain_memory", {"content": "Carol's birthday is on May 12."})
        found = await client.call_tool("recall_memory", {"query": "When is Carol's birthday?"})
        for memory in found.structured_content["memories"]:
            print(f"recalled {memory['score']:.2f}: {memory['text']}")
        refused = await client.call_tool("recall_memory", {"query": ""})
        print("an empty query is a tool error:", refused.is_error, refused.content[0].text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--path", default=None, help="store directory (default: temporary)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(run(args.path or tmp))


if __name__ == "__main__":
    main()
