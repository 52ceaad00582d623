"""``create_memory_tools``: a bank's memory tools as LangChain ``StructuredTool``s."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from typing import Any

from langchain_core.tools import StructuredTool, ToolException

from agentmem.errors import InvalidInputError, NotAvailableError, NotFoundError
from agentmem.tools import MemoryTool, available_tools


def _structured_tool(tool: MemoryTool, bank: Any) -> StructuredTool:
    def run(**arguments: Any) -> str:
        try:
            result = tool.run(bank, arguments)
        except (InvalidInputError, NotFoundError, NotAvailableError) as exc:
            raise ToolException(f"{type(exc).__name__}: {exc}") from exc
        return json.dumps(result, ensure_ascii=False, default=str)

    async def arun(**arguments: Any) -> str:
        return await asyncio.to_thread(run, **arguments)

    return StructuredTool.from_function(
        func=run,
        coroutine=arun,
        name=tool.name,
        description=tool.description,
        args_schema=tool.args,
        handle_tool_error=True,
    )


def create_memory_tools(bank: Any, *, names: Iterable[str] | None = None) -> list[StructuredTool]:
    """The memory tools of ``bank`` as LangChain tools, for ``create_agent`` or ``bind_tools``.

    The tools (recall_memory, retain_memory, forget_memory, and reflect_memory once banks have
    ``reflect``) share their argument models with :mod:`agentmem.tools`. The bank is bound
    here: the model never sees or chooses it. A call the bank refuses (an empty query, an
    importance above 1) returns the error as the tool's output, so the model can try again.

    Args:
        bank: The :class:`agentmem.MemoryBank` the tools act on.
        names: Only these tools (default: every tool the bank can run).

    Returns:
        ``StructuredTool``s whose output is the tool's result as JSON.

    Raises:
        agentmem.InvalidInputError: A name is not a memory tool.
    """
    return [_structured_tool(tool, bank) for tool in available_tools(bank, names)]
