"""Datetime normalisation: every time agentmem stores or compares is an aware UTC datetime."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime, time

from agentmem.errors import InvalidInputError

# DuckDB TIMESTAMPTZ and Python datetimes agree on this range; outside it is bad input.
_MIN = datetime(1, 1, 2, tzinfo=UTC)
_MAX = datetime(9999, 12, 30, tzinfo=UTC)


def utc_now() -> datetime:
    """The current time, aware, in UTC."""
    return datetime.now(UTC)


def to_utc(value: object, *, field: str) -> datetime:
    """Normalise a datetime, date, ISO string or POSIX timestamp to an aware UTC datetime.

    Naive datetimes mean UTC (as SPEC.md says). Anything else raises InvalidInputError.
    """
    if isinstance(value, datetime):
        try:
            result = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        except OverflowError:  # an aware time near year 1 or 9999 that UTC cannot hold
            raise InvalidInputError(f"{field}: datetime out of range in UTC: {value!r}") from None
    elif isinstance(value, date):
        result = datetime.combine(value, time(), tzinfo=UTC)
    elif isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise InvalidInputError(f"{field}: not an ISO 8601 datetime: {value!r}") from None
        return to_utc(parsed, field=field)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        if not math.isfinite(value):
            raise InvalidInputError(f"{field}: timestamp must be finite, got {value!r}")
        try:
            result = datetime.fromtimestamp(value, UTC)
        except (OverflowError, OSError, ValueError):
            raise InvalidInputError(f"{field}: timestamp out of range: {value!r}") from None
    else:
        raise InvalidInputError(
            f"{field}: expected a datetime, date, ISO string or timestamp, "
            f"got {type(value).__name__}"
        )
    if not _MIN <= result <= _MAX:
        raise InvalidInputError(f"{field}: datetime out of range: {value!r}")
    return result


def optional_utc(value: object, *, field: str) -> datetime | None:
    """Like :func:`to_utc`, but None stays None."""
    return None if value is None else to_utc(value, field=field)
