"""A bank's dated facts in time order, in memory: what retain's temporal links are chosen from.

Each new dated fact is linked to the facts nearest to it in time, so every retain needs the
bank's facts whose occurrence falls near the new ones. Read from DuckDB, that is a scan of the
whole bank (an index answers only equality there): ~5 ms a call at 100k memories, growing with
the bank. Here the midpoints of the facts' occurrence intervals are kept sorted, and a window
is two binary searches.

Loaded from the store on a bank's first retain in the process and kept by the engine between
writes at the bank's version (store/changes.py). Retain, the one frequent writer, adds its own
new facts once its transaction has committed; forget drops it; writes made through another
process are caught up from the change log. Used only under the store's write lock.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import numpy as np

from agentmem.store.records import json_list, sql_list
from agentmem.types import Memory

if TYPE_CHECKING:
    from agentmem.store.changes import Change

# Midpoints from whole microseconds, in SQL as in ``midpoint``: the same float either way, so
# facts of the same day tie exactly and ties are broken by the order of retain (``seq``), not
# by rounding.
_LOAD = """
SELECT (epoch_us(occurred_start) + epoch_us(coalesce(occurred_end, occurred_start))) / 2e6,
       seq, id
FROM memories WHERE bank_id = $bank AND occurred_start IS NOT NULL
"""


class DatedFacts:
    """Memory ids sorted by the midpoint of their occurrence (POSIX seconds), then by the
    order they were retained in (their ``seq``)."""

    def __init__(self, facts: Iterable[tuple[float, int, str]] = ()) -> None:
        self._mids, self._seqs, self._ids = _in_time_order(facts)

    @classmethod
    def load(cls, cur: Any, bank_id: str) -> DatedFacts:
        """The bank's dated facts as the store (``cur``) has them."""
        return cls(cur.execute(_LOAD, {"bank": bank_id}).fetchall())

    def catch_up(self, cur: Any, bank_id: str, log: Sequence[Change]) -> bool:
        """Apply writes made through other processes (store/changes.py): the memories they
        touched are dropped and read again from the store."""
        touched = {m for c in log for m in c.memory_ids}
        if not touched:
            return True
        kept = zip(self._mids, self._seqs, self._ids, strict=True)
        fresh = cur.execute(
            _LOAD + f" AND list_contains({sql_list('ids')}, id)",
            {"bank": bank_id, "ids": json_list(sorted(touched))},
        ).fetchall()
        self._mids, self._seqs, self._ids = _in_time_order(
            [
                *(fact for fact in kept if fact[2] not in touched),
                *((float(mid), int(seq), i) for mid, seq, i in fresh),
            ]
        )
        return True

    def __len__(self) -> int:
        return len(self._ids)

    def add(self, memories: Iterable[tuple[Memory, int]]) -> None:
        """Add the dated ones of these ``(memory, seq)`` (undated ones are ignored)."""
        for memory, seq in memories:
            mid = midpoint(memory)
            if mid is not None:
                low, high = bisect_left(self._mids, mid), bisect_right(self._mids, mid)
                at = bisect_right(self._seqs, seq, low, high)
                self._mids.insert(at, mid)
                self._seqs.insert(at, seq)
                self._ids.insert(at, memory.id)

    def within(self, low: float, high: float) -> tuple[list[str], np.ndarray, np.ndarray]:
        """Ids, midpoints and seqs of the facts whose midpoint is in ``[low, high]``, in time
        order."""
        first = bisect_left(self._mids, low)
        last = bisect_right(self._mids, high)
        mids = np.frombuffer(self._mids, dtype=np.float64)[first:last].copy()
        seqs = np.frombuffer(self._seqs, dtype=np.int64)[first:last].copy()
        return self._ids[first:last], mids, seqs


def _in_time_order(
    facts: Iterable[tuple[float, int, str]],
) -> tuple[array[float], array[int], list[str]]:
    ordered = sorted(facts)
    return (
        array("d", (mid for mid, _, _ in ordered)),
        array("q", (seq for _, seq, _ in ordered)),
        [memory_id for _, _, memory_id in ordered],
    )


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
