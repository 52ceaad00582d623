"""Superseded memories rank below what superseded them (``supersedes`` links, made on retain
by ``retain/supersession.py``).

The links of a slot form a chain (each statement links to the ones it replaced directly).
A superseded candidate gets at most the relevance of every candidate above it in its chain
times :data:`DEMOTION`, so the newer statements come first even on relevance alone. A query
that names a time ("where did Ana live in January?") may be asking for the old fact: it is
then marked but not demoted. Either way ``strategy_details["superseded"]`` names the memories
that replaced it directly and ``strategy_details["supersedes"]`` those it replaced directly.

Supersession holds as of the recall's ``now``: a change said later, or one that lies ahead
("I'm moving to Lisbon next month" against "I live in Berlin"), supersedes nothing yet — the
old state holds until the change happens (and the next statement up the chain that is in
force supersedes it instead). A change of plan supersedes the old plan at once (both lie
ahead).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime

from agentmem.engine import Engine
from agentmem.recall.candidates import Candidate
from agentmem.retain.supersession import SUPERSEDES
from agentmem.store.records import load_memories, sql_strings
from agentmem.types import Memory

#: Factor on a superseded memory's relevance.
DEMOTION = 0.9


def mark_superseded(
    engine: Engine, bank_id: str, candidates: list[Candidate], *, demote: bool, now: datetime
) -> None:
    """Record the supersedes links among and around the candidates that hold at ``now``;
    demote the superseded."""
    by_id = {c.memory.id: c for c in candidates}
    if not by_id:
        return
    chain = _Chain(engine, bank_id, {i: c.memory for i, c in by_id.items()})
    chain.read(by_id)
    chain.load(
        [i for memory_id in by_id for i in (*chain.newer(memory_id), *chain.older(memory_id))]
    )
    for memory_id, candidate in by_id.items():
        candidate.superseded_by.extend(chain.in_force_above(memory_id, now))
        memories = chain.memories
        candidate.supersedes.extend(
            o
            for o in chain.older(memory_id)
            if o in memories and supersedes_at(memories[memory_id], memories[o], now)
        )
    if not demote:
        return
    above = chain.candidates_above(by_id)
    # Oldest demotions last: along a chain a -> b -> c, c ends below b, b below a.
    for candidate in sorted(
        (c for c in candidates if c.superseded_by),
        key=lambda c: c.memory.mentioned_at,
        reverse=True,
    ):
        newer = [
            by_id[i].relevance
            for i in above[candidate.memory.id]
            if supersedes_at(by_id[i].memory, candidate.memory, now)
        ]
        candidate.relevance = min([candidate.relevance, *newer]) * DEMOTION


class _Chain:
    """The ``supersedes`` links around recall's candidates, read as recall follows them.

    Retain links a statement to the ones it replaces directly (``retain/supersession.py``),
    so the links of a slot form a chain, newest on top: a candidate is superseded by the
    memories linked to it that are in force at the recall's ``now``; where none is yet (a change
    that lies ahead), by those in force further up. A superseded candidate ranks below every
    candidate above it in its chain.
    """

    def __init__(self, engine: Engine, bank_id: str, memories: dict[str, Memory]) -> None:
        self._engine = engine
        self._bank_id = bank_id
        self.memories = dict(memories)
        self._newer: dict[str, list[str]] = {}  # memory id -> those linked to it, oldest link first
        self._older: dict[str, list[str]] = {}
        self._read: set[str] = set()

    def newer(self, memory_id: str) -> list[str]:
        """The memories that replaced ``memory_id`` directly (read it first)."""
        return self._newer.get(memory_id, [])

    def older(self, memory_id: str) -> list[str]:
        """The memories ``memory_id`` replaced directly (read it first)."""
        return self._older.get(memory_id, [])

    def read(self, ids: Iterable[str]) -> None:
        """Read the links touching ``ids`` not read yet."""
        wanted = [i for i in dict.fromkeys(ids) if i not in self._read]
        if not wanted:
            return
        self._read.update(wanted)
        rows_reader = self._engine.recall_rows
        if rows_reader is not None:
            rows = rows_reader.supersedes_links(self._bank_id, wanted)
        else:
            listed = sql_strings(wanted)
            rows = self._engine.db.fetchall(
                "SELECT src_id, dst_id FROM links WHERE bank_id = $bank AND kind = $kind "
                f"AND (dst_id IN ({listed}) OR src_id IN ({listed})) "
                "ORDER BY created_at, src_id, dst_id",
                {"bank": self._bank_id, "kind": SUPERSEDES},
            )
        for newer, older in rows:
            if newer != older and newer not in self._newer.get(older, ()):
                self._newer.setdefault(older, []).append(newer)
                self._older.setdefault(newer, []).append(older)

    def load(self, ids: Iterable[str]) -> None:
        """Load the memories among ``ids`` not loaded yet (those forgotten stay out)."""
        missing = sorted({i for i in ids if i not in self.memories})
        if not missing:
            return
        if self._engine.recall_rows is not None:
            loaded = self._engine.recall_rows.memories(self._bank_id, missing)
            self.memories.update({i: memory for i, (memory, _) in loaded.items()})
        else:
            self.memories.update(load_memories(self._engine.db, self._bank_id, missing))

    def in_force_above(self, memory_id: str, now: datetime) -> list[str]:
        """The memories superseding ``memory_id`` at ``now``: those linked to it that are in
        force, or where none is, the first in force further up each path."""
        memory = self.memories[memory_id]
        found: list[str] = []
        seen = {memory_id}
        step = [memory_id]
        while step and not found:
            self.read(step)
            above = [n for s in step for n in self.newer(s) if n not in seen]
            seen.update(above)
            self.load(above)
            above = [n for n in dict.fromkeys(above) if n in self.memories]
            found = [n for n in above if supersedes_at(self.memories[n], memory, now)]
            # Said by ``now`` but not begun: one further up may be in force.
            step = [n for n in above if self.memories[n].mentioned_at <= now]
        return found

    def candidates_above(self, candidates: Mapping[str, Candidate]) -> dict[str, set[str]]:
        """Per candidate, the other candidates above it in its chain (through any memory)."""
        # Every memory above a candidate, read level by level.
        step, seen = list(candidates), set(candidates)
        while step:
            self.read(step)
            step = [n for s in step for n in self.newer(s) if n not in seen]
            seen.update(step)
        # Depth first from each candidate, a memory's set made once those above it are.
        above: dict[str, set[str]] = {}
        for start in candidates:
            stack = [(start, iter(self.newer(start)))]
            on_path = {start}
            while stack:
                node, up = stack[-1]
                following = next(up, None)
                if following is None:
                    stack.pop()
                    on_path.discard(node)
                    above[node] = {
                        c
                        for n in self.newer(node)
                        for c in ({n} & candidates.keys()) | above.get(n, set())
                    }
                elif following not in above and following not in on_path:  # hand-made loops
                    stack.append((following, iter(self.newer(following))))
                    on_path.add(following)
        return {c: above[c] - {c} for c in candidates}


def supersedes_at(newer: Memory, older: Memory, now: datetime) -> bool:
    """Whether ``newer`` replaces ``older`` as of ``now``: it was said by then, and what it
    says has begun (no occurrence, or one that has started), unless ``older`` lies ahead too
    (a plan changed before it happened)."""
    if newer.mentioned_at > now:
        return False
    start = newer.occurred_start
    return start is None or start <= now or _ahead(older, now)


def _ahead(memory: Memory, now: datetime) -> bool:
    return memory.occurred_start is not None and memory.occurred_start > now
