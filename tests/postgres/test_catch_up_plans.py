"""A replica catching its mirrors up from the change log reads only the rows the changes name:
every statement of a catch-up can be answered through an index, whatever the bank's size.

Each statement the catch-up runs is planned again with sequential scans priced out
(``enable_seqscan = off``): a statement no index can answer still shows a Seq Scan then.
"""

from __future__ import annotations

from typing import Any

import psycopg

import agentmem
from agentmem.engine import _MIRRORS
from agentmem.store.postgres.database import _bindable, to_psycopg
from agentmem.testing import HashEmbedder
from tests.conftest import CONVERSATION, T0, T1


def _plan(url: str, sql: str, params: Any) -> str:  # noqa: ANN401
    with psycopg.connect(url, autocommit=True) as con:
        con.execute("SET enable_seqscan = off")
        con.execute("SET plan_cache_mode = force_custom_plan")
        rows = con.execute("EXPLAIN " + to_psycopg(sql), _bindable(params)).fetchall()
    return "\n".join(r[0] for r in rows)


def test_every_statement_of_a_catch_up_uses_an_index(pg_url: str) -> None:
    writer = agentmem.AgentMemory(pg_url, embedder=HashEmbedder())
    reader = agentmem.AgentMemory(pg_url, embedder=HashEmbedder())
    try:
        facts = writer.bank("a").retain(CONVERSATION, mentioned_at=T0).memories
        bank = reader.bank("a")
        bank.retain("Bob keeps bees in Ghent.", mentioned_at=T0)  # the write-side mirrors
        bank.recall("Where does Alice work?")
        bank.graph()
        loaded = [name for name in _MIRRORS if reader._engine.mirror(name, "a") is not None]
        assert {"graphs", "dated_facts", "entity_indexes"} <= set(loaded)
        # Writes of every kind the reader has to catch up with.
        more = writer.bank("a").retain("Alice moved to Lisbon in May.", mentioned_at=T1)
        writer.bank("a").link(more.memories[0].id, facts[0].id, "caused_by")
        writer.bank("a").add_alias("Alice", "Ally")
        writer.bank("a").forget([facts[-1].id])
        writer.bank("a").configure(temporal_sigma_days=3.0)

        engine, statements = reader._engine, []
        execute = engine.db.execute

        def recorded(sql: str, params: Any = None) -> Any:  # noqa: ANN401
            statements.append((sql, params))
            return execute(sql, params)

        engine.db.execute = recorded  # type: ignore[method-assign]
        try:
            caught_up = [name for name in loaded if engine.mirror(name, "a") is not None]
        finally:
            del engine.db.execute
        # Caught up from the log, not dropped for a reload (settings and entity corrections
        # reload the mirrors they touch, by design).
        assert {"graphs", "dated_facts"} <= set(caught_up)
        reads = [(s, p) for s, p in statements if s.lstrip().upper().startswith("SELECT")]
        assert len(reads) > len(loaded)  # each mirror read rows, not only the version
        for sql, params in reads:
            plan = _plan(pg_url, sql, params)
            assert "Seq Scan" not in plan, f"{sql}\n{plan}"
        assert ("Ally",) in {tuple(e.aliases) for e in bank.entities()}
    finally:
        reader.close()
        writer.close()
