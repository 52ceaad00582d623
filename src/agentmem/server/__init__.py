"""Servers over one :class:`~agentmem.AgentMemory`: REST (``agentmem[server]``) and MCP
(``agentmem[mcp]``).

Both bind 127.0.0.1 by default and take an optional bearer token; see
:func:`agentmem.server.rest.create_app` and :func:`agentmem.server.mcp_server.create_mcp_server`.
Nothing here is imported by ``import agentmem``: the web stack loads only when a server runs.
"""
