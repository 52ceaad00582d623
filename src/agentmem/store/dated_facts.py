"""A bank's dated facts in time order, in memory: what retain's temporal links are chosen from.

Each new dated fact is linked to the facts nearest to it in time, so every retain needs the
bank's facts whose occurrence falls near the new ones. Read from DuckDB, that is a scan of the
whole bank (an index answers only equality there): ~5 ms a call at 100k memories, growing with
the bank. Here the midpoints of the facts' occurrence intervals are kept sorted, and a window
is two binary searches.

Loaded from the store on a bank's first retain in the process and kept by the engine between
writes. Every write to a bank drops it (``Engine.bank_changed``); retain, the one frequent
writer, hands it back with its own new facts added once its transaction has committed, so a
write that rolled back or came from elsewhere (forget, import) never leaves it stale. Used only
under the store's write lock.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from agentmem.types import Memory

# Midpoints from whole microseconds, in SQL as in ``midpoint``: the same float either way, so
# facts of the same day tie exactly and ties are broken by id, not by rounding.
_LOAD = """
SELECT (epoch_us(occurred_start) + epoch_us(coalesce(occurred_end, occurred_start))) / 2e6, id
FROM memories WHERE bank_id = $bank AND occurred_start IS NOT NULL
"""


class DatedFacts:
    """Memory ids sorted by the midpoint of their occurrence (POSIX seconds)."""

    def __init__(self, facts: Iterable[tuple[float, str]] = ()) -> None:
        ordered = sorted(facts)
        self._mids = array("d", (mid for mid, _ in ordered))
        self._ids = [memory_id for _, memory_id in ordered]

    @classmethod
    def load(cls, cur: Any, bank_id: str) -> DatedFacts:
        """The bank's dated facts as the store (``cur``) has them."""
        return cls(cur.execute(_LOAD, {"bank": bank_id}).fetchall())

    def __len__(self) -> int:
        return len(self._ids)

    def add(self, memories: Iterable[Memory]) -> None:
        """Add the dated ones of these memories (undated ones are ignored)."""
        for memory in memories:
            mid = midpoint(memory)
            if mid is not None:
                at = bisect_right(self._mids, mid)
                self._mids.insert(at, mid)
                self._ids.insert(at, memory.id)

    def within(self, low: float, high: float) -> tuple[list[str], np.ndarray]:
        """Ids and midpoints of the facts whose midpoint is in ``[low, high]``, in time order."""
        first = bisect_left(self._mids, low)
        last = bisect_right(self._mids, high)
        mids = np.frombuffer(self._mids, dtype=np.float64)[first:last].copy()
        return self._ids[first:last], mids


def midpoint(memory: Memory) -> float | None:
    """The middle of a memory's occurrence interval in POSIX seconds; None when undated."""
    start = memory.occurred_start
    if start is None:
        return None
    end = memory.occurred_end or start
    return (_epoch_us(start) + _epoch_us(end)) / 2e6


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def _epoch_us(moment: datetime) -> int:
    # Naive values hold UTC, as DuckDB's epoch_us() reads them.
    aware = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return (aware - _EPOCH) // _MICROSECOND
