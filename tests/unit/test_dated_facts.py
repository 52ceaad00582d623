"""The in-memory time order retain picks temporal-link neighbours from."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agentmem
from agentmem.store.dated_facts import DatedFacts, midpoint
from agentmem.testing import HashEmbedder
from agentmem.types import Memory
from tests.unit.test_graph_mirror import fail_commits

JAN_15 = "2025-01-15T10:00:00Z"


def memory(memory_id: str, start: datetime | None, end: datetime | None = None) -> Memory:
    return Memory(
        id=memory_id,
        bank_id="b",
        text=memory_id,
        fact_type="world",
        occurred_start=start,
        occurred_end=end,
        mentioned_at=datetime(2025, 1, 15),
    )


def test_midpoint_of_an_interval_and_of_an_instant():
    day = memory("a", datetime(2025, 3, 3), datetime(2025, 3, 4))
    assert midpoint(day) == datetime(2025, 3, 3, 12, tzinfo=UTC).timestamp()
    instant = memory("b", datetime(2025, 3, 3, 9, 30, tzinfo=UTC))
    assert midpoint(instant) == datetime(2025, 3, 3, 9, 30, tzinfo=UTC).timestamp()
    assert midpoint(memory("c", None)) is None


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(min_value=0, max_value=10_000), max_size=40),
    st.integers(min_value=-100, max_value=10_100),
    st.integers(min_value=0, max_value=3_000),
)
def test_within_returns_exactly_the_facts_in_the_window_in_time_order(days, low, width):
    origin = datetime(2000, 1, 1, tzinfo=UTC).timestamp()
    dated = DatedFacts()
    dated.add(
        (memory(f"m{i}", datetime.fromtimestamp(origin + d * 3600, UTC)), i)
        for i, d in enumerate(days)
    )
    dated.add([(memory("undated", None), len(days))])
    ids, mids, seqs = dated.within(origin + low * 3600, origin + (low + width) * 3600)
    expected = sorted(
        (origin + d * 3600, i, f"m{i}") for i, d in enumerate(days) if low <= d <= low + width
    )
    # In time order, ties in the order of retain (seq).
    assert list(zip(mids.tolist(), seqs.tolist(), ids, strict=True)) == expected
    assert len(dated) == len(days)


def linked_to(bank: agentmem.MemoryBank, memory_id: str) -> set[str]:
    return {
        v if u == memory_id else u
        for u, v, d in bank.graph().edges(data=True)
        if d["kind"] == "temporal" and memory_id in (u, v)
    }


def test_a_forgotten_fact_is_no_temporal_neighbour(tmp_path):
    with agentmem.AgentMemory(tmp_path / "s", embedder=HashEmbedder()) as mem:
        bank = mem.bank("b")
        launch = bank.retain("The launch happened on 3 March 2025.", mentioned_at=JAN_15)
        bank.forget(ids=launch.memories[0].id)
        press = bank.retain("The press release went out on 4 March 2025.", mentioned_at=JAN_15)
        assert linked_to(bank, press.memories[0].id) == set()
        office = bank.retain("The office party was on 5 March 2025.", mentioned_at=JAN_15)
        assert linked_to(bank, office.memories[0].id) == {press.memories[0].id}
        assert bank.check_integrity().problems == ()


def test_a_retain_that_rolled_back_leaves_no_neighbour_behind(tmp_path, monkeypatch):
    with agentmem.AgentMemory(tmp_path / "s", embedder=HashEmbedder()) as mem:
        bank = mem.bank("b")
        kept = bank.retain("The launch happened on 3 March 2025.", mentioned_at=JAN_15)
        fail_commits(monkeypatch)
        with pytest.raises(agentmem.StorageError):
            bank.retain("The press release went out on 4 March 2025.", mentioned_at=JAN_15)
        monkeypatch.undo()
        office = bank.retain("The office party was on 5 March 2025.", mentioned_at=JAN_15)
        assert linked_to(bank, office.memories[0].id) == {kept.memories[0].id}
        assert len(bank.memories()) == 2
        assert bank.check_integrity().problems == ()


def test_the_time_order_survives_reopening(tmp_path):
    with agentmem.AgentMemory(tmp_path / "s", embedder=HashEmbedder()) as mem:
        launch = mem.bank("b").retain("The launch happened on 3 March 2025.", mentioned_at=JAN_15)
    with agentmem.AgentMemory(tmp_path / "s", embedder=HashEmbedder()) as mem:
        bank = mem.bank("b")
        press = bank.retain("The press release went out on 4 March 2025.", mentioned_at=JAN_15)
        assert linked_to(bank, press.memories[0].id) == {launch.memories[0].id}
