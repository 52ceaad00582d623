"""ASGI middleware that refuses a request before the application sees it: a ``Host`` or
``Origin`` the server does not answer to (DNS rebinding, cross-site requests from a browser),
and a body over the size limit.

Both answer in the servers' JSON error shape ``{"error": <type>, "detail": <message>}``.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterable, Mapping
from http import HTTPStatus
from typing import Any
from urllib.parse import urlsplit

from starlette.exceptions import HTTPException

from agentmem.errors import InvalidInputError
from agentmem.server import DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_IMPORT_BYTES

LOOPBACK_NAMES = frozenset({"localhost", "localhost.", "127.0.0.1", "::1"})


# Reason phrases that changed between Python versions (RFC 9110 renamed them).
_ERROR_NAMES = {413: "ContentTooLarge", 422: "UnprocessableContent"}


def error_name(status: int) -> str:
    """The ``error`` field of a plain HTTP refusal: its reason phrase in CamelCase."""
    if status in _ERROR_NAMES:
        return _ERROR_NAMES[status]
    return HTTPStatus(status).phrase.title().replace(" ", "").replace("-", "")


async def send_error(
    send: Any,
    status: int,
    detail: str,
    *,
    headers: Iterable[tuple[bytes, bytes]] = (),
) -> None:
    """Answer with ``status`` and a JSON error body (and ``headers``, e.g. ``Connection:
    close`` when the request body is left unread)."""
    body = json.dumps({"error": error_name(status), "detail": detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _header(scope: Mapping[str, Any], name: bytes) -> bytes | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return value
    return None


def host_name(host: str) -> str:
    """The name part of a ``Host`` header value, lower case: ``[::1]:80`` → ``::1``."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:].partition("]")[0]
    return host.rpartition(":")[0] if host.count(":") == 1 else host


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def _is_loopback(name: str) -> bool:
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return name in LOOPBACK_NAMES


def normalize_allowed_hosts(hosts: Iterable[str] | None) -> frozenset[str]:
    """Host names from settings or the command line, checked and in lower case.

    Raises:
        InvalidInputError: A name is empty or holds a scheme, path or space.
    """
    names = set()
    for host in hosts or ():
        if not isinstance(host, str) or not host.strip() or any(c in host for c in "/ \t\n@"):
            raise InvalidInputError(f"an allowed host is a name such as example.com, got {host!r}")
        names.add(host_name(host) if host != "*" else "*")
    return frozenset(names)


class HostGuard:
    """ASGI middleware against DNS rebinding: the ``Host`` must name this server.

    A web page whose own domain resolves to 127.0.0.1 would otherwise reach the server from a
    browser. Accepted are the address the client connected to (``127.0.0.1``, ``[::1]``, a LAN
    address when bound to it or to every interface), ``localhost`` on a loopback connection,
    and the names in ``allowed_hosts`` (for a reverse proxy or a DNS name; ``"*"`` accepts
    any). Others get ``421 Misdirected Request``; a request without ``Host``, ``400``. A
    browser's ``Origin``, when sent, must name an accepted host too (else ``403``): a page of
    another site cannot post to the server even where no preflight stops it.
    """

    def __init__(self, app: Any, allowed_hosts: Iterable[str] | None = None) -> None:
        self.app = app
        self.allowed = normalize_allowed_hosts(allowed_hosts)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or "*" in self.allowed:
            await self.app(scope, receive, send)
            return
        raw = _header(scope, b"host")
        if raw is None:
            await send_error(send, 400, "the request has no Host header")
            return
        server = scope.get("server")
        name = host_name(raw.decode("latin-1"))
        if not self._answers_to(name, server):
            await send_error(
                send,
                421,
                f"this server does not answer to Host {name!r}; start it with --allowed-host "
                f"{name} (allowed_hosts=[...]) if that name is meant to reach it",
            )
            return
        origin = _header(scope, b"origin")
        if origin is not None:
            origin_host = urlsplit(origin.decode("latin-1").strip()).hostname
            if origin_host is None or not self._answers_to(origin_host, server):
                await send_error(
                    send,
                    403,
                    f"requests from the web origin {origin.decode('latin-1')!r} are not accepted",
                )
                return
        await self.app(scope, receive, send)

    def _answers_to(self, name: str, server: tuple[str, int] | None) -> bool:
        if name in self.allowed:
            return True
        local = host_name(server[0]) if server else None
        if local is None or not _is_ip(local):  # a Unix socket, or an in-process test client
            return name == local or name in LOOPBACK_NAMES
        if _is_ip(name):
            return ipaddress.ip_address(name) == ipaddress.ip_address(local)
        return name in LOOPBACK_NAMES and _is_loopback(local)


def check_body_limit(limit: object) -> int:
    """A body limit as given in settings: a positive number of bytes.

    Raises:
        InvalidInputError: It is not.
    """
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InvalidInputError(f"a body limit is a positive number of bytes, got {limit!r}")
    return limit


class BodyTooLarge(HTTPException):
    """The request body went over the limit while it was being read."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"the request body is over this server's limit of {limit} bytes")


class BodyLimit:
    """ASGI middleware bounding request bodies before they are read.

    A ``Content-Length`` over the limit is answered ``413`` at once, without reading a byte; a
    chunked body is counted as it streams and cut at the limit (the application sees
    :class:`BodyTooLarge`, which the servers answer ``413``).

    Args:
        app: The ASGI application.
        max_bytes: The limit of every route not in ``per_path``.
        per_path: Other limits by exact path (``/import`` streams its file to disk).
    """

    def __init__(self, app: Any, max_bytes: int, per_path: Mapping[str, int] | None = None) -> None:
        for limit in (max_bytes, *(per_path or {}).values()):
            check_body_limit(limit)
        self.app = app
        self.max_bytes = max_bytes
        self.per_path = dict(per_path or {})

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.per_path.get(scope["path"], self.max_bytes)
        declared = _header(scope, b"content-length")
        if declared is not None and declared.strip().isdigit() and int(declared) > limit:
            await send_error(
                send,
                413,
                f"the request body ({int(declared)} bytes) is over this server's limit of "
                f"{limit} bytes",
                headers=[(b"connection", b"close")],
            )
            return
        received = 0
        started = False

        async def limited_receive() -> dict[str, Any]:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise BodyTooLarge(limit)
            return message

        async def tracked_send(message: dict[str, Any]) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, limited_receive, tracked_send)
        except BodyTooLarge as exc:  # raised where no exception handler turned it into a reply
            if started:
                raise
            await send_error(send, 413, exc.detail, headers=[(b"connection", b"close")])


__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_IMPORT_BYTES",
    "BodyLimit",
    "BodyTooLarge",
    "HostGuard",
    "check_body_limit",
    "error_name",
    "host_name",
    "normalize_allowed_hosts",
    "send_error",
]
