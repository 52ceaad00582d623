"""The same conversation retained into the embedded store and into PostgreSQL recalls the same
memories in the same order (up to ties), strategy by strategy and fused, and stores the same."""

from __future__ import annotations

import itertools
import json
import uuid
from importlib import resources
from pathlib import Path
from unittest.mock import patch

import pytest

import agentmem

SAMPLE = json.loads(
    resources.files("agentmem.data").joinpath("sample_conversation.json").read_text("utf-8")
)
NOW = "2025-07-01T00:00:00Z"
STRATEGIES = ("semantic", "keyword", "graph", "temporal", "causal", "analogical")
LINKS = "SELECT src_id, dst_id, kind, weight FROM links ORDER BY src_id, dst_id, kind"
# Cosines of float32 vectors are computed in float32 by Chroma and in float8 by pgvector.
TIE = 1e-5


def _retained(location: str | Path) -> agentmem.AgentMemory:
    """The sample retained into a store, its ids numbered in order of creation: ids break
    ties (of facts at the same time, say), so random ones would make any two stores differ."""
    numbers = itertools.count(1)
    mem = agentmem.AgentMemory(location)
    with patch.object(uuid, "uuid4", lambda: uuid.UUID(int=next(numbers))):
        bank = mem.bank("demo")
        for session in SAMPLE["sessions"]:
            bank.retain(
                session["messages"], mentioned_at=session["date"], document_id=session["id"]
            )
    return mem


def _ranking(hits: list[agentmem.RecallHit]) -> list[tuple[float, frozenset[str]]]:
    """Hits best first as (score, texts) groups: hits within :data:`TIE` of the group's first
    score are tied, in any order."""
    groups: list[tuple[float, set[str]]] = []
    for hit in hits:
        if groups and groups[-1][0] - hit.score <= TIE:
            groups[-1][1].add(hit.text)
        else:
            groups.append((hit.score, {hit.text}))
    return [(score, frozenset(texts)) for score, texts in groups]


def _assert_same(ranked: list[list[tuple[float, frozenset[str]]]], what: str) -> None:
    duck, pg = ranked
    assert [texts for _, texts in duck] == [texts for _, texts in pg], what
    assert [score for score, _ in duck] == pytest.approx([score for score, _ in pg], abs=TIE)


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
    assert duck.stats() == pg.stats()
    assert [(m.id, m.text, m.entities, m.occurred_start) for m in duck.memories()] == [
        (m.id, m.text, m.entities, m.occurred_start) for m in pg.memories()
    ]
    links = [
        [(*row[:3], round(row[3], 6)) for row in mem._engine.db.fetchall(LINKS)] for mem in stores
    ]
    assert links[0] == links[1]
    for mem in stores:
        assert mem.check_integrity().ok


@pytest.mark.parametrize("question", [q["question"] for q in SAMPLE["questions"]])
def test_both_backends_recall_the_same(
    stores: tuple[agentmem.AgentMemory, ...], question: str
) -> None:
    duck, pg = (s.bank("demo") for s in stores)
    for strategy in STRATEGIES:
        ranked = [_ranking(b.recall(question, strategies=[strategy], now=NOW)) for b in (duck, pg)]
        _assert_same(ranked, strategy)
    timeline = [
        _ranking(b.recall(question, strategies=["timeline"], entity="Maya", now=NOW))
        for b in (duck, pg)
    ]
    _assert_same(timeline, "timeline")
    _assert_same([_ranking(b.recall(question, now=NOW)) for b in (duck, pg)], "fused")
