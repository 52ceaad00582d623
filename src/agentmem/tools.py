"""Memory as LLM tools: OpenAI tool definitions (Chat Completions and Responses) and dispatch.

Each tool is one pydantic model of its arguments; its docstring is the description the model
reads. The same models drive the LangChain tools and the MCP server, so every framework sees
the same tools::

    from openai import OpenAI
    from agentmem.tools import dispatch, openai_tools

    tools = openai_tools(bank)                      # Chat Completions shape, strict schemas
    reply = client.chat.completions.create(model=..., messages=messages, tools=tools)
    message = reply.choices[0].message
    messages.append(message)
    for call in message.tool_calls or ():
        messages.append(dispatch(bank, call))       # {"role": "tool", "tool_call_id": ...}

With the Responses API use ``openai_tools(bank, shape="responses")``; ``dispatch`` then
returns ``{"type": "function_call_output", "call_id": ..., "output": ...}``.

A tool whose bank verb an object lacks (a bank-like wrapper without ``reflect``, say) is left
out, so a model is never offered a tool that cannot run.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentmem.errors import InvalidInputError, NotAvailableError, NotFoundError
from agentmem.schemas import brief_hit
from agentmem.types import Memory, RecallHit

__all__ = [
    "MEMORY_TOOLS",
    "ForgetMemoryArgs",
    "MemoryTool",
    "RecallMemoryArgs",
    "ReflectMemoryArgs",
    "RetainMemoryArgs",
    "adispatch",
    "available_tools",
    "dispatch",
    "openai_tools",
    "parse_arguments",
    "run_tool",
    "strict_json_schema",
]

# Recall results handed to a model are capped so that one tool call cannot flood its context.
TOOL_RECALL_MAX_TOKENS = 2000
TOOL_RECALL_TOP_K = 5

Shape = Literal["chat", "responses"]


class RecallMemoryArgs(BaseModel):
    """Search long-term memory for facts relevant to a question, best first.

    Use it before answering anything about the user, earlier conversations, decisions or
    events. Exact names, codes and numbers in the query are matched as written.
    """

    model_config = ConfigDict(extra="forbid", title="recall_memory")

    query: str = Field(description="What to look for.")
    top_k: int | None = Field(
        default=None, description=f"How many memories to return; null for {TOOL_RECALL_TOP_K}."
    )
    tags: list[str] | None = Field(
        default=None, description="Only memories with at least one of these tags; null for all."
    )


class RetainMemoryArgs(BaseModel):
    """Store a fact in long-term memory so that it can be recalled in later conversations.

    Write one self-contained statement ("Alice's invoice INV-20931 is unpaid"), naming people
    and things rather than "he" or "it".
    """

    model_config = ConfigDict(extra="forbid", title="retain_memory")

    content: str = Field(description="The fact to remember.")
    tags: list[str] | None = Field(
        default=None, description="Scopes to file it under (e.g. a topic); null for none."
    )
    importance: float | None = Field(
        default=None, description="How important it is, from 0 to 1; null to estimate."
    )


class ReflectMemoryArgs(BaseModel):
    """Gather the memories and observations that bear on a question.

    Returns them as evidence; "answer" is a summary citing them when the memory has a
    language model of its own, and null otherwise (then answer from the evidence yourself).
    """

    model_config = ConfigDict(extra="forbid", title="reflect_memory")

    query: str = Field(description="The question to reflect on.")


class ForgetMemoryArgs(BaseModel):
    """Delete memories for good, by the ids that recall_memory returned.

    Only use it when the user asks to forget something or a memory is wrong.
    """

    model_config = ConfigDict(extra="forbid", title="forget_memory")

    memory_ids: list[str] = Field(description="Ids of the memories to delete.")


def _memory_ref(memory: Memory) -> dict[str, Any]:
    return {"id": memory.id, "text": memory.text}


def _recall(bank: Any, args: RecallMemoryArgs) -> dict[str, Any]:
    result = bank.recall(
        args.query,
        top_k=TOOL_RECALL_TOP_K if args.top_k is None else args.top_k,
        max_tokens=TOOL_RECALL_MAX_TOKENS,
        tags=args.tags,
    )
    return {"memories": [brief_hit(hit) for hit in result]}


def _retain(bank: Any, args: RetainMemoryArgs) -> dict[str, Any]:
    result = bank.retain(
        args.content,
        mentioned_at=datetime.now(UTC),
        tags=args.tags or (),
        importance=args.importance,
    )
    already = set(result.already_stored)
    return {
        "stored": [_memory_ref(m) for m in result if m.id not in already],
        # Held before this call: the same thing was retained already and is not stored twice.
        "already_stored": [_memory_ref(m) for m in result if m.id in already],
    }


def _reflect_item(item: Any) -> Any:
    if isinstance(item, RecallHit):
        return brief_hit(item)
    if isinstance(item, Memory):
        return _memory_ref(item)
    return item if isinstance(item, str | int | float | bool | None) else str(item)


def _reflect(bank: Any, args: ReflectMemoryArgs) -> dict[str, Any]:
    reflection = bank.reflect(args.query)
    return {
        "answer": getattr(reflection, "answer", None),
        "observations": [_reflect_item(o) for o in getattr(reflection, "observations", ())],
        "memories": [_reflect_item(m) for m in getattr(reflection, "memories", ())],
    }


def _forget(bank: Any, args: ForgetMemoryArgs) -> dict[str, Any]:
    # An id the bank does not hold is the model's mistake to fix, not a silent no-op.
    for memory_id in args.memory_ids:
        bank.get(memory_id)
    return {"deleted": bank.forget(args.memory_ids)}


@dataclass(frozen=True, slots=True)
class MemoryTool:
    """One memory tool: its name, argument model, the bank verb it needs and how it runs.

    Attributes:
        name: The tool's name as models see it.
        args: The pydantic model of its arguments; its docstring is the description.
        verb: The bank method it calls; the tool is offered only when the bank has it.
        read_only: It never changes the bank (MCP's ``readOnlyHint``).
        destructive: It deletes data (MCP's ``destructiveHint``).
    """

    name: str
    args: type[BaseModel]
    verb: str
    read_only: bool
    destructive: bool
    _run: Callable[[Any, Any], dict[str, Any]]

    @property
    def description(self) -> str:
        """What the model reads about the tool (the argument model's docstring)."""
        return inspect.cleandoc(self.args.__doc__ or "")

    def available(self, bank: Any) -> bool:
        """Whether ``bank`` has the verb this tool calls."""
        return callable(getattr(bank, self.verb, None))

    def run(self, bank: Any, arguments: str | Mapping[str, Any] | BaseModel | None) -> dict:
        """Validate ``arguments`` (a JSON string, a mapping or the model) and run the tool.

        Returns:
            The tool's JSON-ready result.

        Raises:
            InvalidInputError: The arguments do not match the tool's schema, or the bank
                refused them.
            NotAvailableError: The bank has no such verb in this version.
        """
        if not self.available(bank):
            raise NotAvailableError(f"{self.name} needs bank.{self.verb}(), not in this version")
        return self._run(bank, parse_arguments(self.args, arguments))


MEMORY_TOOLS: tuple[MemoryTool, ...] = (
    MemoryTool("recall_memory", RecallMemoryArgs, "recall", True, False, _recall),
    MemoryTool("retain_memory", RetainMemoryArgs, "retain", False, False, _retain),
    # Not read-only: with an LLM, reflect may store an "opinion" memory.
    MemoryTool("reflect_memory", ReflectMemoryArgs, "reflect", False, False, _reflect),
    MemoryTool("forget_memory", ForgetMemoryArgs, "forget", False, True, _forget),
)
_BY_NAME = {tool.name: tool for tool in MEMORY_TOOLS}


def parse_arguments(
    model: type[BaseModel], arguments: str | Mapping[str, Any] | BaseModel | None
) -> BaseModel:
    """Validate tool arguments given as a JSON string, a mapping or the model itself.

    Raises:
        InvalidInputError: Not JSON, not an object, or not matching ``model``.
    """
    if isinstance(arguments, model):
        return arguments
    if arguments is None or arguments == "":
        arguments = {}
    if isinstance(arguments, str | bytes):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError as exc:
            raise InvalidInputError(f"tool arguments are not valid JSON: {exc}") from None
    if not isinstance(arguments, Mapping):
        raise InvalidInputError("tool arguments must be a JSON object")
    try:
        return model.model_validate(dict(arguments))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}"
            for err in exc.errors()
        )
        raise InvalidInputError(f"invalid arguments for {model.__name__}: {problems}") from None


def available_tools(bank: Any, names: Iterable[str] | None = None) -> list[MemoryTool]:
    """The memory tools ``bank`` can run, optionally only those named.

    Raises:
        InvalidInputError: A name is not a memory tool.
    """
    if names is None:
        return [tool for tool in MEMORY_TOOLS if tool.available(bank)]
    wanted = [names] if isinstance(names, str) else list(names)
    unknown = sorted(set(wanted) - _BY_NAME.keys())
    if unknown:
        raise InvalidInputError(f"unknown memory tools {unknown}; known: {sorted(_BY_NAME)}")
    return [tool for tool in MEMORY_TOOLS if tool.name in wanted and tool.available(bank)]


def strict_json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of ``model`` as OpenAI's strict mode wants it.

    Every property is required (optional ones are nullable instead), no additional properties
    are allowed, and defaults and titles are dropped.
    """
    schema = copy.deepcopy(model.model_json_schema())
    if "$defs" in schema:
        raise InvalidInputError(f"{model.__name__}: nested models are not supported in tools")
    schema.pop("title", None)
    schema.pop("description", None)
    properties: dict[str, Any] = schema.get("properties", {})
    for prop in properties.values():
        prop.pop("title", None)
        prop.pop("default", None)
    schema["required"] = list(properties)
    schema["additionalProperties"] = False
    return schema


def openai_tools(
    bank: Any, shape: Shape = "chat", *, names: Iterable[str] | None = None
) -> list[dict[str, Any]]:
    """OpenAI tool definitions of the memory tools ``bank`` can run (strict schemas).

    Args:
        bank: A :class:`~agentmem.MemoryBank`.
        shape: "chat" for Chat Completions (``{"type": "function", "function": {...}}``) or
            "responses" for the Responses API (the same fields, flat).
        names: Only these tools (default: every tool the bank can run: recall_memory,
            retain_memory, reflect_memory and forget_memory).

    Returns:
        Tool definitions to pass as ``tools=``.

    Raises:
        InvalidInputError: Unknown shape or tool name.
    """
    if shape not in ("chat", "responses"):
        raise InvalidInputError(f"shape must be 'chat' or 'responses', got {shape!r}")
    definitions = []
    for tool in available_tools(bank, names):
        function = {
            "name": tool.name,
            "description": tool.description,
            "parameters": strict_json_schema(tool.args),
            "strict": True,
        }
        if shape == "chat":
            definitions.append({"type": "function", "function": function})
        else:
            definitions.append({"type": "function", **function})
    return definitions


def run_tool(
    bank: Any, name: str, arguments: str | Mapping[str, Any] | BaseModel | None
) -> dict[str, Any]:
    """Run one memory tool by name and return its JSON-ready result.

    Raises:
        InvalidInputError: Unknown tool, or arguments the tool or the bank refuse.
        NotFoundError: A memory the call names does not exist.
        NotAvailableError: The bank lacks the tool's verb in this version.
    """
    tool = _BY_NAME.get(name)
    if tool is None:
        raise InvalidInputError(f"{name!r} is not a memory tool; known: {sorted(_BY_NAME)}")
    return tool.run(bank, arguments)


def _field(source: Any, key: str) -> Any:
    if isinstance(source, Mapping):
        return source.get(key)
    return getattr(source, key, None)


def _parse_call(tool_call: Any) -> tuple[Shape, str, str, Any]:
    """(shape, call id, tool name, raw arguments) of a Chat or Responses function call."""
    function = _field(tool_call, "function")
    if function is not None:
        shape: Shape = "chat"
        call_id, name, arguments = (
            _field(tool_call, "id"),
            _field(function, "name"),
            _field(function, "arguments"),
        )
    elif _field(tool_call, "type") == "function_call":
        shape = "responses"
        call_id, name, arguments = (
            _field(tool_call, "call_id"),
            _field(tool_call, "name"),
            _field(tool_call, "arguments"),
        )
    else:
        raise InvalidInputError(
            "not a function tool call: expected a Chat Completions tool call (with 'function') "
            "or a Responses item of type 'function_call'"
        )
    if not isinstance(call_id, str) or not call_id:
        raise InvalidInputError("the tool call has no id")
    if not isinstance(name, str):
        raise InvalidInputError("the tool call has no function name")
    return shape, call_id, name, arguments


def dispatch(bank: Any, tool_call: Any) -> dict[str, Any]:
    """Run a tool call from either OpenAI API and return the message to send back.

    Args:
        bank: The :class:`~agentmem.MemoryBank` the tools act on.
        tool_call: A Chat Completions tool call (``message.tool_calls[i]``) or a Responses
            output item of type ``function_call``, as the openai client's object or a dict.

    Returns:
        For a Chat call ``{"role": "tool", "tool_call_id": ..., "content": ...}``; for a
        Responses call ``{"type": "function_call_output", "call_id": ..., "output": ...}``.
        The content is the tool's result as JSON. Mistakes the model can fix (bad arguments,
        an unknown memory id, a verb this version lacks) come back as
        ``{"error": {"type": ..., "message": ...}}`` so the model can try again.

    Raises:
        InvalidInputError: ``tool_call`` is not a function call, or names no memory tool.
        StorageError: The store failed; this is not the model's to fix.
    """
    shape, call_id, name, arguments = _parse_call(tool_call)
    if name not in _BY_NAME:
        raise InvalidInputError(f"{name!r} is not a memory tool; known: {sorted(_BY_NAME)}")
    try:
        result = run_tool(bank, name, arguments)
    except (InvalidInputError, NotFoundError, NotAvailableError) as exc:
        result = {"error": {"type": type(exc).__name__, "message": str(exc)}}
    output = json.dumps(result, ensure_ascii=False, default=str)
    if shape == "chat":
        return {"role": "tool", "tool_call_id": call_id, "content": output}
    return {"type": "function_call_output", "call_id": call_id, "output": output}


async def adispatch(bank: Any, tool_call: Any) -> dict[str, Any]:
    """:func:`dispatch` for ``AsyncOpenAI`` loops: the tool runs in a worker thread, so the
    event loop keeps serving while the bank works."""
    return await asyncio.to_thread(dispatch, bank, tool_call)
