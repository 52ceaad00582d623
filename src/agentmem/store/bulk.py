"""Reading a bank whole, as an in-process mirror's first load does: in few statements, numbers
as numpy arrays rather than a Python object per value, and without the garbage collector
traversing the heap every few thousand containers."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from agentmem.store.dialect import POSTGRESQL, dialect_of


def fetch_arrays(
    conn: Any, sql: str, params: dict[str, Any], types: dict[str, str]
) -> dict[str, np.ndarray]:  # noqa: ANN401
    """The rows of a query of numbers, one numpy array per column, without a Python object
    per value: DuckDB's ``fetchnumpy``, on PostgreSQL the rows packed in binary into one value
    (``PostgresDatabase.fetch_arrays``).

    ``types`` maps each column, in order, to ``int4``, ``int8``, ``float8`` or ``bool``; the
    query casts its columns to those types (both dialects spell them so) and returns no NULL.
    """
    if dialect_of(conn) == POSTGRESQL:
        return conn.fetch_arrays(sql, params, types)
    found = conn.execute(sql, params).fetchnumpy()
    return {name: np.asarray(found[name], dtype=_NUMPY[kind]) for name, kind in types.items()}


def bulk_read(cur: Any) -> None:  # noqa: ANN401
    """Prepare a snapshot's transaction for reading a bank whole (a mirror's load): on
    PostgreSQL, memory enough for its joins and sorts to stay in memory (the default spills
    those of a 100k bank to disk). Nothing on DuckDB."""
    if dialect_of(cur) == POSTGRESQL:
        cur.execute("SET LOCAL work_mem = '256MB'")


_NUMPY = {"int4": np.int32, "int8": np.int64, "float8": np.float64, "bool": np.bool_}


@contextmanager
def collection_paused() -> Iterator[None]:
    """Hold off Python's cyclic garbage collector for a bulk load. A mirror's load creates
    hundreds of thousands of small containers the collector tracks (an ``array`` per graph
    slot, a tuple per row), and every few thousand of them it would traverse the whole heap,
    models included: most of a load's CPU. Other threads' collections wait for the block too;
    if two blocks overlap, the first to end turns collection back on."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
