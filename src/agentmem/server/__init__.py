"""Servers over one :class:`~agentmem.AgentMemory`: REST (``agentmem[server]``) and MCP
(``agentmem[mcp]``).

Both bind 127.0.0.1 by default and take an optional bearer token; see
:func:`agentmem.server.rest.create_app` and :func:`agentmem.server.mcp_server.create_mcp_server`.
Nothing here is imported by ``import agentmem``: the web stack loads only when a server runs
(this package's own module holds only the defaults the CLI shows).
"""

from __future__ import annotations

#: The largest request body the REST server reads: far above any retain or recall body (the
#: content limit is in characters, JSON escapes take up to six bytes each), far below what
#: would strain the server's memory.
DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024
#: The largest ``POST /import`` file, streamed to disk: an export with vectors of a bank of a
#: few hundred thousand memories.
DEFAULT_MAX_IMPORT_BYTES = 2 * 1024 * 1024 * 1024
