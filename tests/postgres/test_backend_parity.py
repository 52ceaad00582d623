"""The same conversation retained into the embedded store and into PostgreSQL recalls the same
memories in the same order (up to ties), strategy by strategy and fused, and stores the same."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

import agentmem

SAMPLE = json.loads(
    resources.files("agentmem.data").joinpath("sample_conversation.json").read_text("utf-8")
)
NOW = "2025-07-01T00:00:00Z"
STRATEGIES = ("semantic", "keyword", "graph", "temporal", "timeline", "causal", "analogical")


def _retained(location: str | Path) -> agentmem.AgentMemory:
    mem = agentmem.AgentMemory(location)
    bank = mem.bank("demo")
    for session in SAMPLE["sessions"]:
        bank.retain(session["messages"], mentioned_at=session["date"], document_id=session["id"])
    return mem


def _ranking(hits: list[agentmem.RecallHit]) -> list[tuple[float, str]]:
    """Hits as (score, text), ties (equal to 1e-6) put in text order."""
    return sorted((-round(h.score, 6), h.text) for h in hits)


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory, pg_cluster: object):  # noqa: ANN201
    duck = _retained(tmp_path_factory.mktemp("parity") / "store")
    pg = _retained(pg_cluster.create_database())  # type: ignore[attr-defined]
    yield duck, pg
    duck.close()
    pg.close()


def test_both_backends_store_the_same(stores: tuple[agentmem.AgentMemory, ...]) -> None:
    duck, pg = (s.bank("demo") for s in stores)
    assert sorted(m.text for m in duck.memories()) == sorted(m.text for m in pg.memories())
    assert [(e.name, e.kind, e.aliases, len(e.memory_ids)) for e in duck.entities()] == [
        (e.name, e.kind, e.aliases, len(e.memory_ids)) for e in pg.entities()
    ]
    assert duck.stats() | {"bank_id": None} == pg.stats() | {"bank_id": None}
    for mem in stores:
        assert mem.check_integrity().ok


@pytest.mark.parametrize("question", [q["question"] for q in SAMPLE["questions"]])
def test_both_backends_recall_the_same(
    stores: tuple[agentmem.AgentMemory, ...], question: str
) -> None:
    duck, pg = (s.bank("demo") for s in stores)
    for strategy in STRATEGIES:
        ranked = [_ranking(b.recall(question, strategies=[strategy], now=NOW)) for b in (duck, pg)]
        assert ranked[0] == ranked[1], strategy
    fused = [_ranking(b.recall(question, now=NOW)) for b in (duck, pg)]
    assert fused[0] == fused[1]
