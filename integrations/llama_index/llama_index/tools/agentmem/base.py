"""``AgentMemToolSpec``: a bank's memory tools for LlamaIndex agents (``FunctionAgent``,
``ReActAgent``).

The tools are agentmem's own (``agentmem.tools``): the same names, descriptions and argument
schemas as the OpenAI, LangChain and MCP adapters, with the bank bound, never chosen by the
model. A mistake the model can fix (bad arguments, an unknown memory id) comes back as the
tool's output ``{"error": ...}`` so the agent can try again.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from typing import Any

from llama_index.core.tools import FunctionTool, ToolMetadata
from llama_index.core.tools.tool_spec.base import BaseToolSpec

from agentmem.errors import InvalidInputError, NotAvailableError, NotFoundError
from agentmem.tools import MemoryTool, available_tools


def _function_tool(tool: MemoryTool, bank: Any) -> FunctionTool:
    def run(**arguments: Any) -> str:
        try:
            result = tool.run(bank, arguments)
        except (InvalidInputError, NotFoundError, NotAvailableError) as exc:
            result = {"error": {"type": type(exc).__name__, "message": str(exc)}}
        return json.dumps(result, ensure_ascii=False, default=str)

    async def arun(**arguments: Any) -> str:
        return await asyncio.to_thread(run, **arguments)

    metadata = ToolMetadata(name=tool.name, description=tool.description, fn_schema=tool.args)
    return FunctionTool.from_defaults(fn=run, async_fn=arun, tool_metadata=metadata)


class AgentMemToolSpec(BaseToolSpec):
    """The memory tools of one agentmem bank, as a LlamaIndex tool spec.

    Args:
        bank: The :class:`agentmem.MemoryBank` the tools act on.
        names: Only these tools (default: every tool the bank can run: ``recall_memory``,
            ``retain_memory``, ``reflect_memory``, ``forget_memory``).

    Example:
        >>> from llama_index.core.agent.workflow import FunctionAgent
        >>> tools = AgentMemToolSpec(bank=mem.bank("assistant")).to_tool_list()
        >>> agent = FunctionAgent(tools=tools, llm=llm)
    """

    def __init__(self, bank: Any, *, names: Iterable[str] | None = None) -> None:
        if not callable(getattr(bank, "recall", None)):
            hint = " (pass mem.bank('id'), not the store)" if hasattr(bank, "bank") else ""
            raise InvalidInputError(f"bank must be an agentmem MemoryBank{hint}")
        self.bank = bank
        self._tools = available_tools(bank, names)
        self.spec_functions = [tool.name for tool in self._tools]

    def to_tool_list(self, *args: Any, **kwargs: Any) -> list[FunctionTool]:
        """The tools as ``FunctionTool``s, with agentmem's schemas and descriptions."""
        return [_function_tool(tool, self.bank) for tool in self._tools]
