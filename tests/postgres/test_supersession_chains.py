"""Supersession chains on PostgreSQL, between replicas: a statement links to the one it
replaces directly, and forgetting one in the middle through one replica relinks the chain,
which the other replica's recall (its graph and candidate rows caught up from the change log)
follows at its next call."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import agentmem
from agentmem.retain import slots
from agentmem.testing import HashEmbedder

T0 = datetime(2025, 1, 10, 9, tzinfo=UTC)


def _links(mem: agentmem.AgentMemory) -> set[tuple[str, str]]:
    rows = mem._engine.db.fetchall("SELECT src_id, dst_id FROM links WHERE kind = 'supersedes'")
    return {(src, dst) for src, dst in rows}


def test_a_chain_forgotten_in_the_middle_through_one_replica_is_followed_by_the_other(pg_url):
    with (
        agentmem.AgentMemory(pg_url, embedder=HashEmbedder()) as first,
        agentmem.AgentMemory(pg_url, embedder=HashEmbedder()) as second,
    ):
        bank = first.bank("b")
        said = ["I live in Berlin.", "We moved to Lisbon last week.", "We just moved to Porto."]
        berlin, lisbon, porto = (
            bank.retain(
                [{"role": "user", "name": "Ana", "content": text}],
                mentioned_at=T0 + timedelta(days=30 * n),
            )
            .memories[0]
            .id
            for n, text in enumerate(said)
        )
        assert _links(first) == {(lisbon, berlin), (porto, lisbon)}
        now = T0 + timedelta(days=61)
        other = second.bank("b")
        before = {h.memory.id: h for h in other.recall("Where does Ana live?", now=now).hits}
        assert before[berlin].strategy_details["superseded"] == {"by": [lisbon]}
        assert other.graph().has_edge(lisbon, berlin)

        bank.forget(lisbon)

        assert _links(second) == {(porto, berlin)}
        after = {
            h.memory.id: h
            for h in other.recall("Where does Ana live?", now=now, reinforce=False).hits
        }
        assert after[berlin].strategy_details["superseded"] == {"by": [porto]}
        assert other.graph().has_edge(porto, berlin)
        assert lisbon not in other.graph()
        assert second.check_integrity().ok


def test_slots_parsed_again_are_kept_again_on_postgresql(pg_url):
    """A replica that parses stored statements whose kept slots are missing (an import, a
    store written before they were kept) keeps them: the next replica parses none."""
    said = ["I live in Berlin.", "We moved to Lisbon last week.", "We just moved to Porto."]
    with agentmem.AgentMemory(pg_url, embedder=HashEmbedder()) as first:
        bank = first.bank("kept")
        for n, text in enumerate(said):
            bank.retain(
                [{"role": "user", "name": "Ana", "content": text}],
                mentioned_at=T0 + timedelta(days=30 * n),
            )
        first._engine.db.execute(
            "UPDATE memories SET statement_slots = NULL WHERE bank_id = 'kept'"
        )
    slots._PARSED.clear()
    with agentmem.AgentMemory(pg_url, embedder=HashEmbedder()) as second:
        second.bank("kept").retain(
            [{"role": "user", "name": "Ana", "content": "We moved to Rome."}],
            mentioned_at=T0 + timedelta(days=100),
        )
        kept = second._engine.db.fetchall(
            "SELECT text FROM memories WHERE bank_id = 'kept' AND statement_slots IS NOT NULL"
        )
        assert len(kept) == 4
        assert second.check_integrity().ok


def test_an_age_a_weight_and_an_amount_are_superseded_on_postgresql(pg_url):
    """The families' words (currency signs, "’m 3") read the same in PostgreSQL's regular
    expressions as in DuckDB's."""
    with agentmem.AgentMemory(pg_url, embedder=HashEmbedder()) as mem:
        bank = mem.bank("numbers")
        pairs = [
            ("I’m 34.", "I just turned 35!"),
            ("I weigh 80 kg.", "I'm down to 74 kilos now."),
            ("My rent is €1,200 a month.", "The landlord raised my rent to €1,350."),
        ]
        expected = set()
        for n, (older, newer) in enumerate(pairs):
            ids = [
                bank.retain(
                    [{"role": "user", "name": "Ana", "content": text}],
                    mentioned_at=T0 + timedelta(days=60 * k, minutes=n),
                )
                .memories[0]
                .id
                for k, text in enumerate((older, newer))
            ]
            expected.add((ids[1], ids[0]))
        assert _links(mem) >= expected
        assert mem.check_integrity().ok


def test_repair_keeps_again_the_slots_of_an_upgraded_bank_on_postgresql(pg_url):
    """Slots kept under other rules (an upgrade) are read and kept by ``repair()``."""
    with agentmem.AgentMemory(pg_url, embedder=HashEmbedder()) as mem:
        bank = mem.bank("upgraded")
        for n, text in enumerate(["I live in Berlin.", "My rent is €900.", "Thanks!"]):
            bank.retain(
                [{"role": "user", "name": "Ana", "content": text}],
                mentioned_at=T0 + timedelta(days=n),
            )
        mem._engine.db.execute(
            "UPDATE memories SET statement_slots = '[\"other rules\", []]' "
            "WHERE bank_id = 'upgraded' AND statement_slots IS NOT NULL"
        )
        assert mem.repair().slots >= 2  # other banks of the database may hold some too
        kept = mem._engine.db.fetchall(
            "SELECT statement_slots FROM memories WHERE bank_id = 'upgraded' "
            "AND statement_slots IS NOT NULL"
        )
        assert len(kept) == 2 and all(slots.is_kept_current(value) for (value,) in kept)
        assert mem.check_integrity().ok
