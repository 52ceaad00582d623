"""A quick answer to DuckDB's repeated look for pandas when pandas is not installed.

DuckDB (1.5) tries ``import pandas`` twice for every parameter of every statement. Python
does not remember a failed import, so without pandas each try searches the whole import path
again: about a quarter of the time of a long retain went there. :class:`AbsentModules`
remembers for a second that a module is absent and fails such tries at once; after that
second the import path is searched again, so a module installed while the process runs is
found. It changes nothing when the module is installed (the first import succeeds and Python
keeps it).
"""

from __future__ import annotations

import importlib.abc
import sys
import threading
import time
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

#: How long an absence found by searching the import path is taken as known, in seconds.
RECHECK_SECONDS = 1.0


class AbsentModules(importlib.abc.MetaPathFinder):
    """A finder, first on ``sys.meta_path``, for a few top-level module names: within
    :data:`RECHECK_SECONDS` of a search that did not find one, importing it fails at once."""

    def __init__(self, names: Sequence[str]) -> None:
        self._names = frozenset(names)
        self._searched: dict[str, float] = {}
        self._lock = threading.Lock()

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None = None,
        target: ModuleType | None = None,
    ) -> ModuleSpec | None:
        if fullname not in self._names:
            return None
        now = time.monotonic()
        with self._lock:
            recent = now - self._searched.get(fullname, -RECHECK_SECONDS) < RECHECK_SECONDS
            if not recent:
                self._searched[fullname] = now
        if recent:
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)
        return None  # the other finders search; a module they find is kept in sys.modules


def install(names: Sequence[str] = ("pandas",)) -> None:
    """Put an :class:`AbsentModules` for ``names`` first on ``sys.meta_path`` (once), for
    those of them not imported already."""
    if any(isinstance(finder, AbsentModules) for finder in sys.meta_path):
        return
    absent = [name for name in names if name not in sys.modules]
    if absent:
        sys.meta_path.insert(0, AbsentModules(absent))
