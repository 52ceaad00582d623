"""The MCP server: a bank's memory tools for any MCP client, on the ``mcp`` v2 SDK.

Run it with ``agentmem mcp --path ./memdata --bank assistant`` (stdio, for desktop clients) or
``agentmem mcp ... --transport streamable-http`` (binds 127.0.0.1:8765, path ``/mcp``). Or
build it yourself::

    from agentmem import AgentMemory
    from agentmem.server.mcp_server import create_mcp_server

    server = create_mcp_server(AgentMemory("./memdata").bank("assistant"))
    server.run()                                  # stdio

The tools are those of :mod:`agentmem.tools` (recall_memory, retain_memory, forget_memory,
and reflect_memory), with MCP's read-only / destructive
annotations. A call the bank refuses comes back as a tool error with agentmem's message.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Coroutine, Iterable
from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import ToolAnnotations
from pydantic import ConfigDict, Field

from agentmem import __version__
from agentmem.bank import MemoryBank
from agentmem.errors import InvalidInputError, NotAvailableError, NotFoundError
from agentmem.server.auth import BearerAuth
from agentmem.server.guards import HostGuard
from agentmem.tools import MemoryTool, available_tools

_INSTRUCTIONS = (
    "Long-term memory. Call recall_memory before answering questions about the user, earlier "
    "conversations or decisions; call retain_memory with self-contained facts worth keeping."
)


def _tool_function(
    tool: MemoryTool, bank: MemoryBank
) -> Callable[..., Coroutine[Any, Any, dict[str, Any]]]:
    """An async function whose signature is the tool's argument model, for the SDK to read."""

    async def call(**arguments: Any) -> dict[str, Any]:
        try:
            return await asyncio.to_thread(tool.run, bank, arguments)
        except (InvalidInputError, NotFoundError, NotAvailableError) as exc:
            raise ToolError(f"{type(exc).__name__}: {exc}") from exc

    parameters = [
        inspect.Parameter(
            name,
            inspect.Parameter.KEYWORD_ONLY,
            annotation=Annotated[field.annotation, Field(description=field.description)],
            default=inspect.Parameter.empty if field.is_required() else field.default,
        )
        for name, field in tool.args.model_fields.items()
    ]
    call.__signature__ = inspect.Signature(parameters, return_annotation=dict[str, Any])  # type: ignore[attr-defined]
    call.__name__ = tool.name
    call.__doc__ = tool.description
    return call


def _sdk_tool(tool: MemoryTool, bank: MemoryBank) -> Tool:
    """The SDK's registration of one memory tool, refusing arguments it does not name.

    The SDK builds the argument model from the function's signature and drops names it does
    not know, so a misspelt argument (``tag`` for ``tags``) would vanish without a word; here
    the model forbids them, and the published schema says so (``additionalProperties``).
    """
    registered = Tool.from_function(
        _tool_function(tool, bank),
        name=tool.name,
        description=tool.description,
        annotations=ToolAnnotations(
            title=tool.name.replace("_", " "),
            read_only_hint=tool.read_only,
            destructive_hint=tool.destructive,
            idempotent_hint=tool.read_only,
            open_world_hint=False,
        ),
        structured_output=True,
    )
    loose = registered.fn_metadata.arg_model
    strict = type(
        loose.__name__, (loose,), {"model_config": ConfigDict(**loose.model_config, extra="forbid")}
    )
    registered.fn_metadata.arg_model = strict
    registered.parameters = strict.model_json_schema(by_alias=True)
    return registered


def create_mcp_server(bank: MemoryBank, *, name: str = "agentmem") -> MCPServer:
    """An MCP server offering ``bank``'s memory tools.

    Args:
        bank: The bank the tools act on (the model never chooses a bank).
        name: The server's name as clients see it.

    Returns:
        An :class:`mcp.server.MCPServer`; ``run()`` serves stdio, and
        :func:`streamable_http_app` gives the HTTP app.
    """
    return MCPServer(
        name,
        instructions=_INSTRUCTIONS,
        version=__version__,
        log_level="WARNING",
        tools=[_sdk_tool(tool, bank) for tool in available_tools(bank)],
    )


def streamable_http_app(
    server: MCPServer, *, token: str | None = None, allowed_hosts: Iterable[str] | None = None
) -> Any:
    """The server's streamable-HTTP ASGI app (path ``/mcp``), behind a bearer token if given.

    ``Host`` and ``Origin`` are checked as the REST server checks them
    (:class:`~agentmem.server.guards.HostGuard`), on any interface it is bound to.

    Args:
        server: From :func:`create_mcp_server`.
        token: When set, every request must carry ``Authorization: Bearer <token>``.
        allowed_hosts: ``Host`` names to answer to besides the address a client connected to
            (and ``localhost`` on loopback); ``["*"]`` turns the check off.
    """
    # The SDK's own check knows only loopback names, so a server bound to a LAN address
    # would refuse its clients; HostGuard replaces it.
    unchecked = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    app = server.streamable_http_app(transport_security=unchecked)
    if token is not None:
        app = BearerAuth(app, token)
    return HostGuard(app, allowed_hosts)


__all__ = ["create_mcp_server", "streamable_http_app"]
