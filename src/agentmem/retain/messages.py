"""Validate and normalise what ``retain`` receives, before anything is written.

Every check that can fail runs here, so bad input raises :class:`InvalidInputError` and leaves
the bank untouched.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from agentmem._time import optional_utc, to_utc
from agentmem.errors import InvalidInputError, shown
from agentmem.retain.facts import Message, RetainInput

# C0/C1 control characters except tab, newline and carriage return.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
# Lone surrogates (from bad decoding) cannot be stored as UTF-8.
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_DEFAULT_SPEAKERS = {"user": "User", "assistant": "Assistant", "system": "System"}


def clean_text(text: str) -> str:
    """Make text storable: lone surrogates become U+FFFD, control characters are removed."""
    return _CONTROL.sub("", _SURROGATE.sub("\ufffd", text))


def check_retain_size(content: object, *, max_chars: int, max_messages: int) -> None:
    """Refuse a call larger than the limits before any work is done on it: its messages'
    count, and their characters all together (not only each message's)."""
    if isinstance(content, str):
        total = len(content)
    elif isinstance(content, Sequence) and not isinstance(content, bytes | bytearray):
        if len(content) > max_messages:
            raise InvalidInputError(
                f"{len(content)} messages in one retain call; the limit is {max_messages}"
            )
        texts = (
            m.get("content") if isinstance(m, Mapping) else getattr(m, "content", None)
            for m in content
        )
        total = sum(len(text) for text in texts if isinstance(text, str))
    else:
        return  # not content at all: normalize_content says so
    if total > max_chars:
        raise InvalidInputError(
            f"content is {total} characters in all; the limit of one retain call is "
            f"{max_chars} (split it over several calls)"
        )


def check_depth(value: object, *, field: str, max_depth: int) -> None:
    """Refuse JSON-like data nested deeper than ``max_depth`` dicts and lists, without
    recursing (so depth is an InvalidInputError, never a RecursionError)."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, Mapping):
            children: Any = node.values()
        elif isinstance(node, list | tuple):
            children = node
        else:
            continue
        if depth > max_depth:
            raise InvalidInputError(f"{field} is nested deeper than {max_depth} levels")
        stack.extend((child, depth + 1) for child in children)


def validate_json(value: object, *, field: str, max_depth: int) -> dict[str, Any]:
    """A JSON object (dict with string keys, finite numbers) nested at most ``max_depth``
    levels, returned as a plain dict."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidInputError(f"{field} must be a JSON object (dict), got {type(value).__name__}")
    check_depth(value, field=field, max_depth=max_depth)
    try:
        plain = json.loads(json.dumps(dict(value), allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"{field} is not JSON-serialisable: {exc}") from None
    return _without_surrogates(plain)


def _without_surrogates(value: Any) -> Any:
    """Lone surrogates in JSON strings become U+FFFD, as in text: UTF-8 cannot store them."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_without_surrogates(k): _without_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_surrogates(v) for v in value]
    return value


def validate_importance(value: object) -> float | None:
    """None, or a finite number in [0, 1]."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidInputError(f"importance must be a number in [0, 1], got {shown(value)}")
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise InvalidInputError(f"importance must be in [0, 1], got {value!r}")
    return float(value)


def string_list(values: object, *, field: str) -> list[str]:
    """One string or an iterable of strings, as a list: anything else (a number, a mapping,
    bytes, a datetime) is refused here rather than failing somewhere inside."""
    if isinstance(values, str):
        return [values]
    if isinstance(values, Mapping | bytes | bytearray) or not isinstance(values, Iterable):
        raise InvalidInputError(
            f"{field} must be a string or a list of strings, got {shown(values)}"
        )
    items = list(values)
    for item in items:
        if not isinstance(item, str):
            raise InvalidInputError(f"{field} must be strings, got {shown(item)}")
    return items


def validate_optional_str(value: object, *, field: str, max_len: int = 1024) -> str | None:
    """None, or a non-empty string of at most ``max_len`` characters."""
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise InvalidInputError(f"{field} must be a non-empty string")
    if len(value) > max_len:
        raise InvalidInputError(f"{field} is longer than {max_len} characters")
    return clean_text(value.strip())


def _occurrence(occurred_at: object) -> tuple[datetime | None, datetime | None]:
    if occurred_at is None:
        return None, None
    if isinstance(occurred_at, tuple | list):
        if len(occurred_at) != 2:
            raise InvalidInputError("occurred_at must be a datetime or a (start, end) pair")
        start = to_utc(occurred_at[0], field="occurred_at start")
        end = to_utc(occurred_at[1], field="occurred_at end")
        if end < start:
            raise InvalidInputError("occurred_at end is before its start")
        return start, end
    start = to_utc(occurred_at, field="occurred_at")
    return start, start


def _message(raw: object, index: int, default_time: datetime, max_depth: int) -> Message | None:
    if isinstance(raw, Mapping):
        data = raw
    elif hasattr(raw, "content") and hasattr(raw, "role"):  # message objects (SDK types)
        data = {k: getattr(raw, k, None) for k in ("role", "content", "name", "timestamp")}
        data["metadata"] = getattr(raw, "metadata", None)
    else:
        raise InvalidInputError(
            f"message {index} must be a dict with 'role' and 'content', got {type(raw).__name__}"
        )
    role, content = data.get("role"), data.get("content")
    if not isinstance(role, str) or not role.strip():
        raise InvalidInputError(f"message {index} needs a non-empty string 'role'")
    if not isinstance(content, str):
        raise InvalidInputError(f"message {index} 'content' must be a string")
    content = clean_text(content).strip()
    name = validate_optional_str(data.get("name"), field=f"message {index} 'name'", max_len=256)
    timestamp = optional_utc(data.get("timestamp"), field=f"message {index} 'timestamp'")
    metadata = validate_json(
        data.get("metadata"), field=f"message {index} 'metadata'", max_depth=max_depth
    )
    if not content:
        return None  # an empty turn carries no fact; the episode still keeps it verbatim
    role = role.strip().lower()
    return Message(
        role=role,
        content=content,
        name=name or _DEFAULT_SPEAKERS.get(role),
        mentioned_at=timestamp or default_time,
        metadata=metadata,
        timed=timestamp is not None,
    )


def normalize_content(
    content: object,
    *,
    mentioned_at: datetime,
    occurred_at: object = None,
    context: str | None = None,
    max_depth: int,
) -> RetainInput:
    """Validate ``retain``'s content into a :class:`RetainInput` (its size is checked first,
    by :func:`check_retain_size`); message metadata may nest ``max_depth`` levels.

    Raises:
        InvalidInputError: empty content, malformed messages, bad times.
    """
    start, end = _occurrence(occurred_at)
    if isinstance(content, str):
        text = clean_text(content).strip()
        if not text:
            raise InvalidInputError("content must not be empty")
        messages = (Message("user", text, None, mentioned_at),)
        return RetainInput(messages, True, start, end, context)
    if isinstance(content, Sequence) and not isinstance(content, bytes | bytearray):
        if not content:
            raise InvalidInputError("content must not be an empty list of messages")
        # The episode keeps each message whole, so the whole list is bounded: itself and a
        # message add two levels to the metadata's.
        check_depth(content, field="content", max_depth=max_depth + 2)
        parsed = [_message(raw, i, mentioned_at, max_depth) for i, raw in enumerate(content)]
        kept = tuple(m for m in parsed if m is not None)
        if not kept:
            raise InvalidInputError("every message has empty content")
        return RetainInput(kept, False, start, end, context)
    raise InvalidInputError(
        f"content must be a string or a list of chat messages, got {type(content).__name__}"
    )


def raw_episode(content: object) -> str:
    """The content as JSON for the episode row, kept as given (after text cleaning)."""

    def default(obj: object) -> object:
        if isinstance(obj, datetime):
            return obj.isoformat()
        if hasattr(obj, "content"):
            return {k: getattr(obj, k, None) for k in ("role", "content", "name")}
        return str(obj)

    def clean(obj: object) -> object:
        if isinstance(obj, str):
            return clean_text(obj)
        if isinstance(obj, Mapping):
            return {str(k): clean(v) for k, v in obj.items()}
        if isinstance(obj, list | tuple):
            return [clean(v) for v in obj]
        if isinstance(obj, float) and not math.isfinite(obj):
            return None
        return obj

    return json.dumps(clean(content), default=default, ensure_ascii=False)
