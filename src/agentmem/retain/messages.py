"""Validate and normalise what ``retain`` receives, before anything is written.

Every check that can fail runs here, so bad input raises :class:`InvalidInputError` and leaves
the bank untouched.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from agentmem._time import optional_utc, to_utc
from agentmem.errors import InvalidInputError
from agentmem.retain.facts import Message, RetainInput

MAX_CONTENT_CHARS = 1_000_000
MAX_MESSAGES = 10_000
# C0/C1 control characters except tab, newline and carriage return.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
# Lone surrogates (from bad decoding) cannot be stored as UTF-8.
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_DEFAULT_SPEAKERS = {"user": "User", "assistant": "Assistant", "system": "System"}


def clean_text(text: str) -> str:
    """Make text storable: lone surrogates become U+FFFD, control characters are removed."""
    return _CONTROL.sub("", _SURROGATE.sub("\ufffd", text))


def validate_json(value: object, *, field: str) -> dict[str, Any]:
    """A JSON object (dict with string keys, finite numbers), returned as a plain dict."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidInputError(f"{field} must be a JSON object (dict), got {type(value).__name__}")
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
        raise InvalidInputError(f"importance must be a number in [0, 1], got {value!r}")
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise InvalidInputError(f"importance must be in [0, 1], got {value!r}")
    return float(value)


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


def _message(raw: object, index: int, default_time: datetime) -> Message | None:
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
    if len(content) > MAX_CONTENT_CHARS:
        raise InvalidInputError(f"message {index} is longer than {MAX_CONTENT_CHARS} characters")
    content = clean_text(content).strip()
    name = validate_optional_str(data.get("name"), field=f"message {index} 'name'", max_len=256)
    timestamp = optional_utc(data.get("timestamp"), field=f"message {index} 'timestamp'")
    metadata = validate_json(data.get("metadata"), field=f"message {index} 'metadata'")
    if not content:
        return None  # an empty turn carries no fact; the episode still keeps it verbatim
    role = role.strip().lower()
    return Message(
        role=role,
        content=content,
        name=name or _DEFAULT_SPEAKERS.get(role),
        mentioned_at=timestamp or default_time,
        metadata=metadata,
    )


def normalize_content(
    content: object,
    *,
    mentioned_at: datetime,
    occurred_at: object = None,
    context: str | None = None,
) -> RetainInput:
    """Validate ``retain``'s content into a :class:`RetainInput`.

    Raises:
        InvalidInputError: empty content, malformed messages, bad times.
    """
    start, end = _occurrence(occurred_at)
    if isinstance(content, str):
        if len(content) > MAX_CONTENT_CHARS:
            raise InvalidInputError(f"content is longer than {MAX_CONTENT_CHARS} characters")
        text = clean_text(content).strip()
        if not text:
            raise InvalidInputError("content must not be empty")
        messages = (Message("user", text, None, mentioned_at),)
        return RetainInput(messages, True, start, end, context)
    if isinstance(content, Sequence) and not isinstance(content, bytes | bytearray):
        if not content:
            raise InvalidInputError("content must not be an empty list of messages")
        if len(content) > MAX_MESSAGES:
            raise InvalidInputError(f"at most {MAX_MESSAGES} messages per retain call")
        parsed = [_message(raw, i, mentioned_at) for i, raw in enumerate(content)]
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
