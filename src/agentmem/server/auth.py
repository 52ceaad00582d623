"""Bearer-token authentication as ASGI middleware, shared by the REST and MCP servers."""

from __future__ import annotations

import hmac
import json
from typing import Any

from agentmem.errors import InvalidInputError

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


def check_bind(host: str, token: str | None) -> None:
    """Refuse to expose an unauthenticated server beyond this machine.

    Raises:
        InvalidInputError: ``host`` is not a loopback address and no token is set.
    """
    if host not in LOOPBACK_HOSTS and not token:
        raise InvalidInputError(
            f"refusing to serve on {host} without a token: anyone who can reach it could read "
            "and delete memories; pass --token (or bind 127.0.0.1)"
        )


class BearerAuth:
    """ASGI middleware: every HTTP request must carry ``Authorization: Bearer <token>``.

    Requests without it, or with another token, get ``401`` with a JSON body and a
    ``WWW-Authenticate: Bearer`` header. The comparison takes constant time.

    Args:
        app: The ASGI application to protect.
        token: The token clients must present.

    Raises:
        InvalidInputError: ``token`` is empty.
    """

    def __init__(self, app: Any, token: str) -> None:
        if not token:
            raise InvalidInputError("the bearer token must not be empty")
        self.app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or self._authorized(scope):
            await self.app(scope, receive, send)
            return
        body = json.dumps(
            {"error": "Unauthorized", "detail": "missing or wrong bearer token"}
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"www-authenticate", b'Bearer realm="agentmem"'),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    def _authorized(self, scope: dict[str, Any]) -> bool:
        for name, value in scope.get("headers", ()):
            if name == b"authorization":
                return hmac.compare_digest(value, self._expected)
        return False
