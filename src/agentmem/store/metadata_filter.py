"""Chroma's metadata filter (``where``) evaluated in process, as Chroma evaluates it.

Used where the store holds the metadata itself: the embedded vector store's copy of each
collection's metadata (``store/vectors.py``) and its exact in-process copies
(``store/flat_index.py``), which filter a whole collection at once, column by column.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

# Operators of Chroma's metadata filter that :func:`matches` evaluates like Chroma does.
_COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "$eq": operator.eq,
    "$gt": operator.gt,
    "$gte": operator.ge,
    "$lt": operator.lt,
    "$lte": operator.le,
    "$in": lambda value, wanted: value in wanted,
}


def can_match(where: Mapping[str, Any]) -> bool:
    """Whether :func:`matches` knows every operator of ``where``."""
    for key, condition in where.items():
        if key in ("$and", "$or"):
            if not all(can_match(part) for part in condition):
                return False
        elif isinstance(condition, Mapping) and not set(condition) <= set(_COMPARE):
            return False
    return True


def matches(metadata: Mapping[str, Any] | None, where: Mapping[str, Any]) -> bool:
    """Whether one vector's metadata passes a Chroma ``where`` filter (see :func:`can_match`).

    A key the metadata lacks fails every comparison, as in Chroma.
    """
    metadata = metadata or {}
    for key, condition in where.items():
        if key == "$and":
            passed = all(matches(metadata, part) for part in condition)
        elif key == "$or":
            passed = any(matches(metadata, part) for part in condition)
        elif key not in metadata:
            passed = False
        elif isinstance(condition, Mapping):
            passed = all(_COMPARE[op](metadata[key], arg) for op, arg in condition.items())
        else:
            passed = metadata[key] == condition
        if not passed:
            return False
    return True


def _number(value: Any) -> bool:  # noqa: ANN401
    return isinstance(value, bool | int | float)


def numeric_column(metadatas: Sequence[Mapping[str, Any] | None], key: str) -> np.ndarray | None:
    """One key's values over rows as floats (a bool as 0/1, an absent key NaN: it fails every
    comparison, as in Chroma); None when a value is not a number or bool."""
    values = [None if m is None else m.get(key) for m in metadatas]
    if not all(v is None or _number(v) for v in values):
        return None
    return np.array([math.nan if v is None else float(v) for v in values], dtype=np.float64)


def passing(
    where: Mapping[str, Any], column: Callable[[str], np.ndarray | None], size: int
) -> np.ndarray | None:
    """Which of ``size`` rows pass ``where``, each key's values read with ``column`` (see
    :func:`numeric_column`); None when a key or an argument is not numeric, for
    :func:`matches` to decide row by row."""
    passed = np.ones(size, dtype=bool)
    for key, condition in where.items():
        if key in ("$and", "$or"):
            parts = [passing(part, column, size) for part in condition]
            if any(p is None for p in parts):
                return None
            combine = np.logical_and if key == "$and" else np.logical_or
            mask = combine.reduce(parts) if parts else np.full(size, key == "$and")
        else:
            values = column(key)
            tests = condition if isinstance(condition, Mapping) else {"$eq": condition}
            if values is None or not set(tests) <= set(_COMPARE):
                return None
            mask = np.ones(size, dtype=bool)
            for op, arg in tests.items():
                wanted = list(arg) if op == "$in" else [arg]
                if not all(_number(a) for a in wanted):
                    return None
                if op == "$in":
                    mask &= np.isin(values, np.array(wanted, dtype=np.float64))
                else:
                    mask &= _COMPARE[op](values, float(arg))
        passed &= mask
    return passed
