"""The quick answer to repeated imports of an absent module (store/absent_modules.py)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentmem.store import absent_modules
from agentmem.store.absent_modules import AbsentModules

NAME = "agentmem_no_such_module_for_tests"


class CountingFinder:
    """Counts the searches that reach the finders after the one under test."""

    def __init__(self) -> None:
        self.searches = 0

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> None:
        if fullname == NAME:
            self.searches += 1


@pytest.fixture
def finders() -> Iterator[tuple[AbsentModules, CountingFinder]]:
    absent, counting = AbsentModules([NAME]), CountingFinder()
    sys.meta_path[:0] = [absent, counting]
    try:
        yield absent, counting
    finally:
        sys.meta_path.remove(absent)
        sys.meta_path.remove(counting)
        sys.modules.pop(NAME, None)


def test_an_absent_module_is_searched_once_then_refused_at_once(
    finders: tuple[AbsentModules, CountingFinder],
) -> None:
    _, counting = finders
    for _ in range(5):
        with pytest.raises(ModuleNotFoundError) as raised:
            importlib.import_module(NAME)
        assert raised.value.name == NAME
    assert counting.searches == 1
    # Other names are not the finder's business.
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(NAME + "_other")


def test_a_module_installed_later_is_found_after_the_recheck(
    finders: tuple[AbsentModules, CountingFinder],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _, counting = finders
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(NAME)
    (tmp_path / f"{NAME}.py").write_text("VALUE = 42\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(NAME)  # within the second: still taken as absent
    clock = absent_modules.time.monotonic() + absent_modules.RECHECK_SECONDS + 1
    monkeypatch.setattr(absent_modules.time, "monotonic", lambda: clock)
    assert importlib.import_module(NAME).VALUE == 42
    assert counting.searches == 2


def test_install_is_once_and_skips_imported_modules(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        sys, "meta_path", [f for f in sys.meta_path if not isinstance(f, AbsentModules)]
    )
    absent_modules.install(["json", NAME])  # json is imported already
    absent_modules.install([NAME])
    [finder] = [f for f in sys.meta_path if isinstance(f, AbsentModules)]
    assert sys.meta_path[0] is finder
    assert finder.find_spec("json") is None  # never refused
