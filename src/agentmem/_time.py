"""Datetime normalisation: every time agentmem stores or compares is an aware UTC datetime."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime, time

from agentmem.errors import InvalidInputError

# The times agentmem holds: DuckDB TIMESTAMPTZ and Python datetimes agree on this range (a day
# inside datetime's, for time zones); outside it is bad input, and no date read from text.
EARLIEST = datetime(1, 1, 2, tzinfo=UTC)
LATEST = datetime(9999, 12, 30, tzinfo=UTC)


def utc_now() -> datetime:
    """The current time, aware, in UTC."""
    return datetime.now(UTC)


def to_utc(value: object, *, field: str) -> datetime:
    """Normalise a datetime, date, ISO string or POSIX timestamp to an aware UTC datetime.

    The one way a time enters agentmem: naive datetimes mean UTC (as SPEC.md says); anything
    else, and any time whose UTC value falls outside years 1-9999 (``9999-12-31T23:00-05:00``
    included), raises InvalidInputError.
    """
    moment = value
    if isinstance(moment, str):
        try:
            moment = datetime.fromisoformat(moment.strip().replace("Z", "+00:00"))
        except ValueError:
            raise InvalidInputError(f"{field}: not an ISO 8601 datetime: {value!r}") from None
    if isinstance(moment, datetime):
        try:  # an aware time near year 1 or 9999 can leave the range on its way to UTC
            result = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
        except (OverflowError, ValueError):
            raise InvalidInputError(f"{field}: datetime out of range: {_shown(value)}") from None
    elif isinstance(moment, date):
        result = datetime.combine(moment, time(), tzinfo=UTC)
    elif isinstance(moment, int | float) and not isinstance(moment, bool):
        if not math.isfinite(moment):
            raise InvalidInputError(f"{field}: timestamp must be finite, got {value!r}")
        try:
            result = datetime.fromtimestamp(moment, UTC)
        except (OverflowError, OSError, ValueError):
            raise InvalidInputError(f"{field}: timestamp out of range: {value!r}") from None
    else:
        raise InvalidInputError(
            f"{field}: expected a datetime, date, ISO string or timestamp, "
            f"got {type(value).__name__}"
        )
    if not EARLIEST <= result <= LATEST:
        raise InvalidInputError(f"{field}: datetime out of range: {_shown(value)}")
    return result


def _shown(value: object) -> str:
    """A time as an error message shows it: ISO 8601 for a datetime or date, not its repr
    ("datetime.datetime(1, 1, 1, 0, 0, tzinfo=TzInfo(0))" reached REST clients)."""
    return repr(value.isoformat()) if isinstance(value, date) else repr(value)


def optional_utc(value: object, *, field: str) -> datetime | None:
    """Like :func:`to_utc`, but None stays None."""
    return None if value is None else to_utc(value, field=field)
