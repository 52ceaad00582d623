"""Bearer-token authentication as ASGI middleware, shared by the REST and MCP servers."""

from __future__ import annotations

import hmac
from typing import Any

from agentmem.errors import InvalidInputError
from agentmem.server.guards import send_error

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


def check_token(token: str) -> str:
    """A bearer token as servers take it: non-empty printable ASCII without spaces (what an
    ``Authorization`` header can carry unchanged).

    Raises:
        InvalidInputError: The token is empty or holds spaces or other characters.
    """
    if not isinstance(token, str) or not token:
        raise InvalidInputError("the bearer token must not be empty")
    if not (token.isascii() and token.isprintable()) or " " in token:
        raise InvalidInputError("the bearer token must be printable ASCII without spaces")
    return token


class BearerAuth:
    """ASGI middleware: every HTTP request must carry ``Authorization: Bearer <token>``.

    The scheme is case-insensitive (RFC 7235); the token is compared in constant time.
    Requests without it, or with another token, get ``401`` with a JSON body and a
    ``WWW-Authenticate: Bearer`` header.

    Args:
        app: The ASGI application to protect.
        token: The token clients must present.
        public_paths: Paths served without the token (pages that hold no data, such as the
            API's documentation, which a browser opens without a way to add the header).

    Raises:
        InvalidInputError: ``token`` is empty or not printable ASCII without spaces.
    """

    def __init__(self, app: Any, token: str, public_paths: frozenset[str] = frozenset()) -> None:
        self.app = app
        self._expected = check_token(token).encode()
        self._public = public_paths

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        public = scope["type"] == "http" and scope.get("path") in self._public
        if scope["type"] != "http" or public or self._authorized(scope):
            await self.app(scope, receive, send)
            return
        await send_error(
            send,
            401,
            "missing or wrong bearer token",
            headers=[(b"www-authenticate", b'Bearer realm="agentmem"')],
        )

    def _authorized(self, scope: dict[str, Any]) -> bool:
        for name, value in scope.get("headers", ()):
            if name == b"authorization":
                scheme, _, credentials = value.strip().partition(b" ")
                return scheme.lower() == b"bearer" and hmac.compare_digest(
                    credentials.strip(), self._expected
                )
        return False
