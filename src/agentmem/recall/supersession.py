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

from collections.abc import Iterable
from datetime import datetime

from agentmem.engine import Engine
from agentmem.recall.candidates import Candidate
from agentmem.store.records import load_memories
from agentmem.store.supersedes_chains import SupersedesChains, read_chains
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
    rows = engine.recall_rows
    chains = read_chains(engine.db, bank_id) if rows is None else rows.supersedes_chains(bank_id)
    chained = {i: c for i, c in by_id.items() if chains.chain(i) is not None}
    if not chained:
        return
    memories = _Memories(engine, bank_id, {i: c.memory for i, c in by_id.items()})
    memories.load(i for m in chained for i in (*chains.newer(m), *chains.older(m)))
    for memory_id, candidate in chained.items():
        memory = candidate.memory
        candidate.superseded_by.extend(_in_force_above(chains, memories, memory, now))
        candidate.supersedes.extend(
            older
            for older in chains.older(memory_id)
            if older in memories and supersedes_at(memory, memories[older], now)
        )
    if not demote:
        return
    in_chain: dict[str | None, list[Candidate]] = {}
    for memory_id, candidate in chained.items():
        in_chain.setdefault(chains.chain(memory_id), []).append(candidate)
    # Oldest demotions last: along a chain a -> b -> c, c ends below b, b below a.
    for candidate in sorted(
        (c for c in candidates if c.superseded_by),
        key=lambda c: c.memory.mentioned_at,
        reverse=True,
    ):
        memory = candidate.memory
        newer = [
            other.relevance
            for other in in_chain[chains.chain(memory.id)]
            if (
                other.memory.mentioned_at > memory.mentioned_at
                or other.memory.id in chains.newer(memory.id)
            )
            and supersedes_at(other.memory, memory, now)
        ]
        candidate.relevance = min([candidate.relevance, *newer]) * DEMOTION


def _in_force_above(
    chains: SupersedesChains, memories: _Memories, memory: Memory, now: datetime
) -> list[str]:
    """The memories superseding ``memory`` at ``now``: those linked to it that are in force,
    or where none is (a change that lies ahead), the first in force further up the chain."""
    seen = {memory.id}
    step = [memory.id]
    while step:
        above = [n for s in step for n in chains.newer(s) if n not in seen]
        seen.update(above)
        memories.load(above)
        above = [n for n in dict.fromkeys(above) if n in memories]
        found = [n for n in above if supersedes_at(memories[n], memory, now)]
        if found:
            return found
        step = [n for n in above if memories[n].mentioned_at <= now]  # said, not begun
    return []


class _Memories(dict[str, Memory]):
    """Recall's candidates' memories and those of their chains it loaded (the forgotten stay
    out)."""

    def __init__(self, engine: Engine, bank_id: str, memories: dict[str, Memory]) -> None:
        super().__init__(memories)
        self._engine = engine
        self._bank_id = bank_id

    def load(self, ids: Iterable[str]) -> None:
        """Load the memories among ``ids`` not loaded yet."""
        missing = sorted({i for i in ids if i not in self})
        if not missing:
            return
        if self._engine.recall_rows is not None:
            loaded = self._engine.recall_rows.memories(self._bank_id, missing)
            self.update({i: memory for i, (memory, _) in loaded.items()})
        else:
            self.update(load_memories(self._engine.db, self._bank_id, missing))


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
