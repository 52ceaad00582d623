"""A bank's ``supersedes`` links as recall follows them: each memory's direct successors and
predecessors, and the chain (the links connected to it) it belongs to.

Retain links a statement to the ones it replaces directly (``retain/supersession.py``), so the
links of one slot ("Ana's home") form a chain, and recall asks of two candidates whether one
lies above the other in theirs (``recall/supersession.py``). Built from the bank's links at
once (one read; a few per cent of a bank's memories are statements of a slot), kept by
``store/recall_rows.py`` at the bank's version.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

_LINKS = (
    "SELECT src_id, dst_id FROM links WHERE bank_id = $bank AND kind = 'supersedes' "
    "ORDER BY created_at, src_id, dst_id"
)


class SupersedesChains:
    """The ``supersedes`` links of one bank, by memory."""

    def __init__(self, links: Iterable[tuple[str, str]]) -> None:
        """``links``: (newer, older) pairs, oldest link first."""
        self._newer: dict[str, list[str]] = {}
        self._older: dict[str, list[str]] = {}
        parent: dict[str, str] = {}
        for newer, older in links:
            if newer == older or newer in self._newer.get(older, ()):
                continue
            self._newer.setdefault(older, []).append(newer)
            self._older.setdefault(newer, []).append(older)
            parent[_root(parent, newer)] = _root(parent, older)
        self._chain = {memory_id: _root(parent, memory_id) for memory_id in parent}

    def newer(self, memory_id: str) -> Sequence[str]:
        """The memories that replaced ``memory_id`` directly, oldest link first."""
        return self._newer.get(memory_id, ())

    def older(self, memory_id: str) -> Sequence[str]:
        """The memories ``memory_id`` replaced directly, oldest link first."""
        return self._older.get(memory_id, ())

    def chain(self, memory_id: str) -> str | None:
        """The chain ``memory_id`` is in (one of its memories' ids), None outside any."""
        return self._chain.get(memory_id)


def read_chains(db: Any, bank_id: str) -> SupersedesChains:  # noqa: ANN401
    """The bank's chains as the store holds them now."""
    return SupersedesChains(
        (newer, older) for newer, older in db.fetchall(_LINKS, {"bank": bank_id})
    )


def _root(parent: dict[str, str], memory_id: str) -> str:
    """The root of ``memory_id``'s set (union-find, paths halved on the way)."""
    parent.setdefault(memory_id, memory_id)
    while parent[memory_id] != memory_id:
        parent[memory_id] = parent[parent[memory_id]]
        memory_id = parent[memory_id]
    return memory_id
