"""The REST server: one :class:`~agentmem.AgentMemory` over HTTP, documented by OpenAPI.

Run it with ``agentmem serve --path ./memdata`` (binds 127.0.0.1:8888), or mount the app::

    from agentmem import AgentMemory
    from agentmem.server.rest import create_app

    app = create_app(AgentMemory("./memdata"), token="s3cret")   # uvicorn module:app

The interactive documentation is at ``/docs`` and the schema at ``/openapi.json``.

Errors come back as JSON ``{"error": <type>, "detail": <message>}`` with these codes: 400 for
values agentmem refuses (:class:`~agentmem.InvalidInputError`), 401 for a missing or wrong
token, 403 for a browser page of another origin, 404 for an unknown bank, memory or entity,
413 for a body over the size limit, 421 for a ``Host`` the server does not answer to (DNS
rebinding), 422 for a body that does not match the schema (with the failing fields under
``errors``), 501 for a verb this version does not have (:class:`~agentmem.NotAvailableError`),
503 when another process holds the store (:class:`~agentmem.StoreLockedError`), 500 for any
other storage or internal failure.
"""

from __future__ import annotations

import asyncio
import logging
import tempfile
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from fastapi import Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.routing import APIRoute
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from agentmem import __version__
from agentmem.bank import MemoryBank
from agentmem.config import STRATEGY_PARAMS
from agentmem.errors import (
    AgentMemError,
    InvalidInputError,
    NotAvailableError,
    NotFoundError,
    StoreLockedError,
)
from agentmem.memory import AgentMemory, validate_bank_id
from agentmem.schemas import EntityOut, MemoryOut, RecallOut, RetainOut
from agentmem.server.auth import BearerAuth, check_token
from agentmem.server.guards import (
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_IMPORT_BYTES,
    BodyLimit,
    HostGuard,
    check_body_limit,
    error_name,
    normalize_allowed_hosts,
)
from agentmem.tools import run_tool

#: Served without the token: the interactive docs and the OpenAPI schema (no data).
DOCUMENTATION_PATHS = frozenset({"/docs", "/docs/oauth2-redirect", "/redoc", "/openapi.json"})
logger = logging.getLogger(__name__)

NDJSON = "application/x-ndjson"
#: Every keyword a recall strategy takes; ``strategy_params`` may hold only these.
STRATEGY_ARGUMENTS: frozenset[str] = frozenset().union(*STRATEGY_PARAMS.values())


class ErrorOut(BaseModel):
    """An error: its agentmem type and a message for people."""

    model_config = ConfigDict(title="Error")

    error: str = Field(description="The error's type, e.g. NotFoundError.")
    detail: str


class FieldErrorOut(BaseModel):
    """Where a request broke the schema, and how."""

    model_config = ConfigDict(title="FieldError")

    loc: list[str | int] = Field(description='E.g. ["body", "top_k"].')
    msg: str
    type: str


class ValidationErrorOut(ErrorOut):
    """A request that does not match the schema: every failing field."""

    model_config = ConfigDict(title="ValidationError")

    errors: list[FieldErrorOut]


_ERROR_STATUS: tuple[tuple[type[Exception], int], ...] = (
    (InvalidInputError, 400),
    (NotFoundError, 404),
    (NotAvailableError, 501),
    (StoreLockedError, 503),
    (AgentMemError, 500),
)
_DOCUMENTED_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorOut, "description": "agentmem refused a value"},
    403: {"model": ErrorOut, "description": "A browser page of another origin"},
    404: {"model": ErrorOut, "description": "No such bank, memory or entity"},
    413: {"model": ErrorOut, "description": "The body is over the size limit"},
    421: {"model": ErrorOut, "description": "The server does not answer to this Host"},
    422: {"model": ValidationErrorOut, "description": "The request does not match the schema"},
    500: {"model": ErrorOut, "description": "The store failed"},
    501: {"model": ErrorOut, "description": "Not available in this version"},
    503: {"model": ErrorOut, "description": "Another process holds the store"},
}


class MessageIn(BaseModel):
    """A chat message to retain."""

    model_config = ConfigDict(title="Message")

    role: str = Field(description='"user", "assistant", "system", "tool", ...')
    content: str
    name: str | None = Field(default=None, description="The speaker's name.")
    timestamp: datetime | None = Field(default=None, description="When it was said.")
    metadata: dict[str, Any] | None = Field(default=None, description="Kept on its facts.")


class RetainIn(BaseModel):
    """What to retain and how (the arguments of ``bank.retain``)."""

    model_config = ConfigDict(title="RetainRequest", extra="forbid")

    content: str | list[MessageIn] = Field(description="Text, or chat messages.")
    mentioned_at: datetime | None = Field(
        default=None, description="When the agent learned it (default: now)."
    )
    occurred_at: datetime | tuple[datetime, datetime] | None = Field(
        default=None, description="When it happened: a time or a [start, end] pair."
    )
    tags: list[str] = Field(default_factory=list)
    importance: float | None = Field(default=None, description="In [0, 1].")
    context: str | None = None
    document_id: str | None = None
    entity_id: str | None = None
    metadata: dict[str, Any] | None = None


class TimeRangeIn(BaseModel):
    """A time filter; an open side is unbounded."""

    model_config = ConfigDict(title="TimeRangeFilter", extra="forbid")

    start: datetime | None = None
    end: datetime | None = None


class RecallIn(BaseModel):
    """A recall query and its options (the arguments of ``bank.recall``)."""

    model_config = ConfigDict(title="RecallRequest", extra="forbid")

    query: str
    top_k: int = Field(default=10, ge=1, le=1000)
    max_tokens: int = Field(default=4096, ge=1, le=1_000_000)
    strategies: list[str] | None = Field(
        default=None, description='None runs TEMPR; or e.g. ["semantic", "keyword"].'
    )
    fact_types: list[str] | None = None
    tags: list[str] | None = None
    tags_match: Literal["any", "all", "exact"] = "any"
    time_range: TimeRangeIn | None = None
    now: datetime | None = Field(default=None, description="Recency is measured from here.")
    scoring_weights: dict[str, float] | None = None
    reinforce: bool = Field(default=True, description="Count this recall in access_count.")
    strategy_params: dict[str, Any] | None = Field(
        default=None, description="Parameters of individual strategies (entity, start, ...)."
    )


class ReflectIn(BaseModel):
    """A question to reflect on."""

    model_config = ConfigDict(title="ReflectRequest", extra="forbid")

    query: str


class ForgetIn(BaseModel):
    """Which memories to delete; the selectors combine with AND."""

    model_config = ConfigDict(title="ForgetRequest", extra="forbid")

    ids: list[str] | None = None
    tags: list[str] | None = None
    document_id: str | None = None


class LinkIn(BaseModel):
    """An explicit edge between two memories of the bank."""

    model_config = ConfigDict(title="LinkRequest", extra="forbid")

    src_id: str
    dst_id: str
    kind: str = Field(description='"caused_by", "followed_by", "related", ...')
    weight: float = 1.0


class DeletedOut(BaseModel):
    """How many memories were deleted."""

    model_config = ConfigDict(title="Deleted")

    deleted: int


class BanksOut(BaseModel):
    """The banks of the store."""

    model_config = ConfigDict(title="Banks")

    banks: list[str]


class HealthOut(BaseModel):
    """The server is up."""

    model_config = ConfigDict(title="Health")

    status: Literal["ok"]
    version: str


def _status_of(exc: Exception) -> int:
    return next((code for kind, code in _ERROR_STATUS if isinstance(exc, kind)), 500)


async def _agentmem_error(request: Request, exc: Exception) -> JSONResponse:
    status = _status_of(exc)
    if status == 500:
        logger.error("%s %s failed", request.method, request.url.path, exc_info=exc)
    headers = {"Retry-After": "1"} if status == 503 else None
    return JSONResponse(
        ErrorOut(error=type(exc).__name__, detail=str(exc)).model_dump(),
        status_code=status,
        headers=headers,
    )


async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
    """Starlette's own errors (unknown route, unparsable body, ...) in the same JSON shape."""
    body = ErrorOut(error=error_name(exc.status_code), detail=str(exc.detail))
    return JSONResponse(body.model_dump(), status_code=exc.status_code, headers=exc.headers)


async def _validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
    """A request that breaks the schema: a readable summary and the failing fields."""
    errors = [
        FieldErrorOut(
            loc=[p if isinstance(p, int) else str(p) for p in e.get("loc", ())],
            msg=str(e.get("msg", "")),
            type=str(e.get("type", "")),
        )
        for e in exc.errors()
    ]
    detail = "; ".join(f"{'.'.join(map(str, e.loc))}: {e.msg}" for e in errors)
    body = ValidationErrorOut(error="ValidationError", detail=detail, errors=errors)
    return JSONResponse(body.model_dump(), status_code=422)


async def _internal_error(request: Request, exc: Exception) -> JSONResponse:
    logger.error("%s %s failed", request.method, request.url.path, exc_info=exc)
    body = ErrorOut(error="InternalError", detail="internal server error; see the server log")
    return JSONResponse(body.model_dump(), status_code=500)


def _query_names(dependant: Any) -> set[str]:  # noqa: ANN401 (FastAPI's Dependant)
    """The query parameters a route's endpoint and its dependencies take."""
    names = {param.alias for param in dependant.query_params}
    for sub in dependant.dependencies:
        names |= _query_names(sub)
    return names


def _known_query_parameters(request: Request) -> None:
    """Refuse a query parameter the route does not take instead of ignoring it: a misspelt
    ``?bank=copy`` for ``?bank_id=copy`` would import under the file's own bank id."""
    route = request.scope.get("route")
    if not isinstance(route, APIRoute):
        return
    known = _query_names(route.dependant)
    unknown = sorted(set(request.query_params) - known)
    if unknown:
        takes = ", ".join(sorted(known)) or "none"
        raise RequestValidationError(
            [
                {
                    "loc": ("query", name),
                    "msg": f"unknown parameter (takes: {takes})",
                    "type": "extra_forbidden",
                }
                for name in unknown
            ]
        )


def create_app(
    memory: AgentMemory,
    *,
    token: str | None = None,
    allowed_hosts: Iterable[str] | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    max_import_bytes: int = DEFAULT_MAX_IMPORT_BYTES,
) -> FastAPI:
    """The REST application over ``memory`` (an ASGI app; FastAPI underneath).

    Args:
        memory: The store to serve. The app does not close it.
        token: When set, every request but the docs page and the schema (which hold no
            data) must carry ``Authorization: Bearer <token>``; others get 401.
        allowed_hosts: ``Host`` names the server answers to besides the address a client
            connected to (and ``localhost`` on loopback): the public name behind a reverse
            proxy or a DNS name; ``["*"]`` turns the check off. Others get 421.
        max_body_bytes: The largest request body (16 MiB by default); larger ones get 413
            before they are read.
        max_import_bytes: The largest ``POST /import`` file (2 GiB by default), streamed to
            a temporary file.

    Returns:
        The FastAPI application; ``app.state.memory`` is ``memory``.

    Raises:
        InvalidInputError: An empty token, a bad allowed host or a limit that is not a
            positive number of bytes.
    """
    # Checked here: Starlette builds the middleware only on the first request.
    if token is not None:
        check_token(token)
    allowed_hosts = normalize_allowed_hosts(allowed_hosts)
    check_body_limit(max_body_bytes)
    check_body_limit(max_import_bytes)
    errors = dict(_DOCUMENTED_ERRORS)
    if token is not None:
        errors[401] = {"model": ErrorOut, "description": "Missing or wrong bearer token"}
    app = FastAPI(
        title="agentmem",
        version=__version__,
        summary="Long-term memory for LLM agents: retain, recall, reflect.",
        responses=errors,
        dependencies=[Depends(_known_query_parameters)],
    )
    app.state.memory = memory
    app.add_exception_handler(AgentMemError, _agentmem_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(Exception, _internal_error)

    def existing_bank(bank_id: str) -> MemoryBank:
        validate_bank_id(bank_id)
        if bank_id not in memory.banks():
            raise NotFoundError(f"no bank {bank_id!r}")
        return memory.bank(bank_id)

    @app.get("/health", tags=["server"])
    def health() -> HealthOut:
        """Liveness: the server answers and its store is open."""
        memory.banks()
        return HealthOut(status="ok", version=__version__)

    @app.get("/banks", tags=["banks"])
    def list_banks() -> BanksOut:
        """Ids of every bank, sorted."""
        return BanksOut(banks=memory.banks())

    @app.get("/banks/{bank_id}", tags=["banks"])
    def bank_stats(bank_id: str) -> dict[str, Any]:
        """Counts of what a bank holds."""
        return existing_bank(bank_id).stats()

    @app.delete("/banks/{bank_id}", status_code=204, tags=["banks"])
    def delete_bank(bank_id: str) -> Response:
        """Delete a bank and everything in it."""
        memory.delete_bank(bank_id)
        return Response(status_code=204)

    @app.post("/banks/{bank_id}/retain", status_code=201, tags=["memories"])
    def retain(bank_id: str, body: RetainIn) -> RetainOut:
        """Retain text or chat messages; the bank is created on first use."""
        content: Any = body.content
        if isinstance(content, list):
            content = [m.model_dump(exclude_none=True) for m in content]
        options = {name: getattr(body, name) for name in RetainIn.model_fields if name != "content"}
        return RetainOut.of(memory.bank(bank_id).retain(content, **options))

    @app.post("/banks/{bank_id}/recall", tags=["memories"])
    def recall(bank_id: str, body: RecallIn) -> RecallOut:
        """Recall the memories that answer a query, best first, within a token budget."""
        params = body.strategy_params or {}
        clashes = sorted(params.keys() & RecallIn.model_fields.keys())
        if clashes:
            raise InvalidInputError(f"strategy_params must not repeat recall arguments {clashes}")
        unknown = sorted(params.keys() - STRATEGY_ARGUMENTS)
        if unknown:
            raise InvalidInputError(
                f"unknown strategy_params {unknown}; strategies take {sorted(STRATEGY_ARGUMENTS)}"
            )
        options = {
            name: getattr(body, name)
            for name in RecallIn.model_fields
            if name not in ("query", "time_range", "strategy_params")
        }
        if body.time_range is not None:
            options["time_range"] = (body.time_range.start, body.time_range.end)
        return RecallOut.of(existing_bank(bank_id).recall(body.query, **options, **params))

    @app.post("/banks/{bank_id}/reflect", tags=["memories"])
    def reflect(bank_id: str, body: ReflectIn) -> dict[str, Any]:
        """Reflect on a question: an answer (None offline), observations and memories."""
        return run_tool(existing_bank(bank_id), "reflect_memory", {"query": body.query})

    @app.get("/banks/{bank_id}/memories", tags=["memories"])
    def list_memories(
        bank_id: str, limit: int = Query(default=100, ge=0, le=100_000)
    ) -> list[MemoryOut]:
        """The bank's memories, oldest first."""
        return [MemoryOut.of(m) for m in existing_bank(bank_id).memories(limit=limit)]

    @app.get("/banks/{bank_id}/memories/{memory_id}", tags=["memories"])
    def get_memory(bank_id: str, memory_id: str) -> MemoryOut:
        """One memory by id."""
        return MemoryOut.of(existing_bank(bank_id).get(memory_id))

    @app.delete("/banks/{bank_id}/memories/{memory_id}", tags=["memories"])
    def delete_memory(bank_id: str, memory_id: str) -> DeletedOut:
        """Forget one memory everywhere (rows, vectors, keyword index, links)."""
        bank = existing_bank(bank_id)
        bank.get(memory_id)
        return DeletedOut(deleted=bank.forget([memory_id]))

    @app.post("/banks/{bank_id}/forget", tags=["memories"])
    def forget(bank_id: str, body: ForgetIn) -> DeletedOut:
        """Forget memories by ids, tags and/or document id (combined with AND)."""
        deleted = existing_bank(bank_id).forget(
            body.ids, tags=body.tags, document_id=body.document_id
        )
        return DeletedOut(deleted=deleted)

    @app.post("/banks/{bank_id}/links", status_code=204, tags=["memories"])
    def link(bank_id: str, body: LinkIn) -> Response:
        """Add an explicit edge ("caused_by", ...) between two memories."""
        existing_bank(bank_id).link(body.src_id, body.dst_id, body.kind, body.weight)
        return Response(status_code=204)

    @app.get("/banks/{bank_id}/entities", tags=["entities"])
    def list_entities(bank_id: str) -> list[EntityOut]:
        """The bank's canonical entities, by name."""
        return [EntityOut.of(e) for e in existing_bank(bank_id).entities()]

    @app.get("/banks/{bank_id}/entities/{name}", tags=["entities"])
    def get_entity(bank_id: str, name: str) -> EntityOut:
        """One entity by canonical name or alias (case-insensitive)."""
        return EntityOut.of(existing_bank(bank_id).entity(name))

    @app.get(
        "/banks/{bank_id}/export",
        tags=["export"],
        response_class=Response,
        responses={
            200: {"content": {NDJSON: {"schema": {"type": "string"}}}, "description": "JSON Lines"}
        },
    )
    def export(bank_id: str) -> Response:
        """The bank as JSON Lines. Answers 501 until banks have ``export``."""
        bank = existing_bank(bank_id)
        if not callable(getattr(bank, "export", None)):
            raise NotAvailableError("export is not available in this version")
        with tempfile.TemporaryDirectory(prefix="agentmem-export-") as tmp:
            path = Path(tmp) / f"{bank_id}.jsonl"
            bank.export(path)
            return Response(path.read_bytes(), media_type=NDJSON)

    @app.post(
        "/import",
        tags=["export"],
        openapi_extra={
            "requestBody": {
                "required": True,
                "description": "JSON Lines, as export writes them",
                "content": {NDJSON: {"schema": {"type": "string"}}},
            }
        },
    )
    async def import_(
        request: Request,
        bank_id: str | None = Query(
            default=None, description="Import under this id instead of the exported bank's."
        ),
    ) -> dict[str, Any]:
        """Import JSON Lines written by export into a new (or empty) bank.

        The body streams to a temporary file (up to the import size limit). The whole file is
        checked first; a line outside the contract of retain, link or configure is a 400
        naming the line and field, and nothing is written.
        """
        if not callable(getattr(memory, "import_", None)):
            raise NotAvailableError("import is not available in this version")
        options = {} if bank_id is None else {"bank_id": validate_bank_id(bank_id)}
        with tempfile.TemporaryDirectory(prefix="agentmem-import-") as tmp:
            path = Path(tmp) / "import.jsonl"
            with path.open("wb") as file:
                async for chunk in request.stream():
                    file.write(chunk)
            result = await asyncio.to_thread(memory.import_, path, **options)
        if isinstance(result, MemoryBank):
            stats = await asyncio.to_thread(result.stats)
            return {"result": {"bank_id": result.id, "memories": stats["memories"]}}
        return {"result": result if isinstance(result, dict | list | int | str) else str(result)}

    # Added innermost first: a request meets the Host check, then the token, then the limit.
    app.add_middleware(BodyLimit, max_bytes=max_body_bytes, per_path={"/import": max_import_bytes})
    if token is not None:
        # The docs page and the schema hold no data; a browser opens them without a header,
        # and the page's "Authorize" button then takes the token for every call it makes.
        app.add_middleware(BearerAuth, token=token, public_paths=DOCUMENTATION_PATHS)
    app.add_middleware(HostGuard, allowed_hosts=allowed_hosts)
    if token is None:
        return app
    original_openapi = app.openapi

    def openapi_with_bearer() -> dict[str, Any]:
        schema = original_openapi()
        schema.setdefault("components", {})["securitySchemes"] = {
            "bearer": {"type": "http", "scheme": "bearer"}
        }
        schema["security"] = [{"bearer": []}]
        return schema

    app.openapi = openapi_with_bearer  # type: ignore[method-assign]
    return app
