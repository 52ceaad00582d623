"""Superseded memories rank below what superseded them (``supersedes`` links, made on retain
by ``retain/supersession.py``).

A candidate that a newer memory supersedes gets at most that memory's relevance (when it is a
candidate too) times :data:`DEMOTION`, so the newer statement comes first even on relevance
alone. A query that names a time ("where did Ana live in January?") may be asking for the old
fact: it is then marked but not demoted. Either way ``strategy_details["superseded"]`` names
the newer memories and ``strategy_details["supersedes"]`` the older ones.
"""

from __future__ import annotations

from agentmem.engine import Engine
from agentmem.recall.candidates import Candidate
from agentmem.retain.supersession import SUPERSEDES
from agentmem.store.records import sql_strings

#: Factor on a superseded memory's relevance.
DEMOTION = 0.9


def mark_superseded(
    engine: Engine, bank_id: str, candidates: list[Candidate], *, demote: bool
) -> None:
    """Record the supersedes links among and around the candidates; demote the superseded."""
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
    for newer, older in rows:
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
