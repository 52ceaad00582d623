"""Copy every bank of one store into another (DuckDB or PostgreSQL, either way round).

Bank by bank through the export/import path (store/transfer.py): each bank is exported, with
its vectors, to a temporary file and imported into the target, so ids, times, entities, links
and access counts arrive unchanged and nothing is re-embedded. Target banks holding anything
are refused before the first write, unless ``replace`` is given (they are deleted first).
Once copied, each bank's counts are compared and its integrity checked.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from agentmem.errors import InvalidInputError, NotFoundError, StorageError
from agentmem.memory import AgentMemory, validate_bank_id

try:
    import fcntl
except ImportError:  # not POSIX (Windows): no advisory locks, so no sweep either
    fcntl = None  # type: ignore[assignment]

#: The counts compared between a bank and its copy.
COUNTED = ("memories", "episodes", "entities", "links")

#: The name each migration's working directory starts with, in the system's temp directory.
WORKDIR_PREFIX = "agentmem-migrate-"


@dataclass(frozen=True, slots=True)
class MigratedBank:
    """One bank copied: its id and the counts (``COUNTED``) both stores agree on."""

    bank_id: str
    counts: dict[str, int]


def migrate(
    source: AgentMemory,
    target: AgentMemory,
    *,
    banks: Sequence[str] | None = None,
    replace: bool = False,
    progress: Callable[[str], None] = lambda line: None,
) -> list[MigratedBank]:
    """Copy ``banks`` (default: all) of ``source`` into ``target``.

    Args:
        source: The store read from (not changed).
        target: The store written to; open it with ``source``'s embedder.
        banks: Bank ids to copy; each must exist in ``source``.
        replace: Delete target banks that hold anything before copying into them.
        progress: Called with one line per step.

    Raises:
        NotFoundError: A bank of ``banks`` is not in ``source``.
        InvalidInputError: ``source`` and ``target`` are one store, or a target bank holds
            memories or episodes and ``replace`` is not given (nothing is written then).
        StorageError: A copy's counts differ from the original's, or its integrity check
            fails.
    """
    if _store_id(source) == _store_id(target):
        # One store under two names (another URL spelling, a symlink, a bind mount): with
        # replace, deleting the target's banks would delete the source's.
        raise InvalidInputError(f"--from and --to are the same store ({target.path})")
    available = source.banks()
    chosen = list(available if banks is None else dict.fromkeys(banks))
    for bank_id in chosen:
        validate_bank_id(bank_id)
        if bank_id not in available:
            raise NotFoundError(f"no bank {bank_id!r} in the source store")
    existing = set(target.banks())
    occupied = [b for b in chosen if b in existing and _holds_anything(target.bank(b).stats())]
    if occupied and not replace:
        raise InvalidInputError(
            f"the target already holds bank(s) {', '.join(map(repr, occupied))}; "
            "pass --replace to overwrite them"
        )
    migrated = []
    with _working_directory() as workdir:
        for number, bank_id in enumerate(chosen, start=1):
            step = f"bank {bank_id!r} ({number}/{len(chosen)})"
            if bank_id in occupied:
                target.delete_bank(bank_id)
                progress(f"{step}: deleted the target's copy")
            file = workdir / "bank.jsonl"
            count = source.bank(bank_id).export(file)
            progress(f"{step}: exported {count} memories")
            copy = target.import_(file, bank_id=bank_id)
            file.unlink()
            migrated.append(_verified(source, copy.id, target))
            progress(f"{step}: imported and verified {count} memories")
    return migrated


@contextmanager
def _working_directory() -> Iterator[Path]:
    """A private temporary directory for the exported banks, locked while this migration
    runs. A migration killed half-way leaves its export (a copy of a bank's data) behind:
    the next one removes every such directory whose lock nobody holds any more."""
    _remove_abandoned_workdirs()
    with tempfile.TemporaryDirectory(prefix=WORKDIR_PREFIX) as name:
        workdir = Path(name)
        if fcntl is None:
            yield workdir
            return
        with open(workdir / "lock.new", "w") as lock:
            # Locked before it takes the name another migration looks for.
            fcntl.flock(lock, fcntl.LOCK_EX)
            (workdir / "lock.new").rename(workdir / "lock")
            yield workdir


def _remove_abandoned_workdirs() -> None:
    """Remove the working directories of migrations that died (their lock is free), this
    user's only (a link, or another user's directory, is left alone)."""
    if fcntl is None:
        return
    for workdir in Path(tempfile.gettempdir()).glob(WORKDIR_PREFIX + "*"):
        try:
            if workdir.is_symlink() or workdir.stat().st_uid != os.getuid():
                continue
            with open(workdir / "lock") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                shutil.rmtree(workdir, ignore_errors=True)
        except OSError:  # running (locked), not ours, already gone, or from an older version
            continue


def _store_id(memory: AgentMemory) -> str | None:
    """The random id a store was given when it was created (kept in its ``meta`` table)."""
    return memory._engine.db.get_meta("store_id")


def _holds_anything(stats: dict) -> bool:
    return bool(stats["memories"] or stats["episodes"])


def _verified(source: AgentMemory, bank_id: str, target: AgentMemory) -> MigratedBank:
    """The bank's counts, checked equal in both stores, and the copy checked whole."""
    original = source.bank(bank_id).stats()
    copy = target.bank(bank_id).stats()
    differ = [
        f"{key} {original[key]} → {copy[key]}" for key in COUNTED if original[key] != copy[key]
    ]
    if differ:
        raise StorageError(f"bank {bank_id!r} was not copied whole: {', '.join(differ)}")
    report = target.bank(bank_id).check_integrity()
    if not report.ok:
        raise StorageError(
            f"bank {bank_id!r}: the copy fails its integrity check: {report.problems[0]}"
        )
    return MigratedBank(bank_id, {key: int(original[key]) for key in COUNTED})
