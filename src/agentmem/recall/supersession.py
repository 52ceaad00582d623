"""Superseded memories rank below what superseded them (``supersedes`` links, made on retain
by ``retain/supersession.py``).

A candidate that a newer memory supersedes gets at most that memory's relevance (when it is a
candidate too) times :data:`DEMOTION`, so the newer statement comes first even on relevance
alone. A query that names a time ("where did Ana live in January?") may be asking for the old
fact: it is then marked but not demoted. Either way ``strategy_details["superseded"]`` names
the newer memories and ``strategy_details["supersedes"]`` the older ones.

Supersession holds as of the recall's ``now``: a change said later, or one that lies ahead
("I'm moving to Lisbon next month" against "I live in Berlin"), supersedes nothing yet — the
old state holds until the change happens. A change of plan supersedes the old plan at once
(both lie ahead).
"""

from __future__ import annotations

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
    if engine.recall_rows is not None:
        rows = engine.recall_rows.supersedes_links(bank_id, list(by_id))
    else:
        ids = sql_strings(by_id)
        rows = engine.db.fetchall(
            "SELECT src_id, dst_id FROM links WHERE bank_id = $bank AND kind = $kind "
            f"AND (dst_id IN ({ids}) OR src_id IN ({ids})) ORDER BY created_at, src_id, dst_id",
            {"bank": bank_id, "kind": SUPERSEDES},
        )
    memories = {i: c.memory for i, c in by_id.items()}
    others = {i for link in rows for i in link if i not in memories}
    if others and engine.recall_rows is not None:
        loaded = engine.recall_rows.memories(bank_id, sorted(others))
        memories.update({i: memory for i, (memory, _) in loaded.items()})
    elif others:
        memories.update(load_memories(engine.db, bank_id, sorted(others)))
    for newer, older in rows:
        if newer not in memories or older not in memories:
            continue  # forgotten since the links were read
        if not supersedes_at(memories[newer], memories[older], now):
            continue
        if older in by_id:
            by_id[older].superseded_by.append(newer)
        if newer in by_id:
            by_id[newer].supersedes.append(older)
    if not demote:
        return
    # Oldest demotions last: along a chain a -> b -> c, c ends below b, b below a.
    for candidate in sorted(
        (c for c in candidates if c.superseded_by),
        key=lambda c: c.memory.mentioned_at,
        reverse=True,
    ):
        newer = [by_id[i].relevance for i in candidate.superseded_by if i in by_id]
        candidate.relevance = min([candidate.relevance, *newer]) * DEMOTION


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
