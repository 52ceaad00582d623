"""Recall runs the arms that need no embedding while the query's embedding is in the model."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from agentmem import AgentMemory
from agentmem.recall import pipeline
from agentmem.recall.context import StrategyContext
from agentmem.testing import HashEmbedder

FACTS = [
    "Alice moved to Berlin in June.",
    "Bob adopted a grey cat named Pixel.",
    "The quarterly report is due on Friday.",
]


class ModelLike(HashEmbedder):
    """An embedder that, like MiniLM, says when its model runs; the "model" waits until the
    work started beside it has read the keyword idfs, so that work must run meanwhile."""

    def __init__(self, *, calls_beside: bool = True) -> None:
        super().__init__()
        self.calls_beside = calls_beside
        self.model_running = threading.Event()
        self.idfs_read = threading.Event()
        self.waited = False

    def embed_query_beside(self, text: str, beside: Callable[[], object]) -> np.ndarray:
        if self.calls_beside:
            self.model_running.set()
            beside()
            self.waited = self.idfs_read.wait(timeout=10)
        return self.embed_query(text)


@pytest.fixture
def recorded_keyword_arm(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether the model was running when each keyword arm started; the arm also reads the
    query's word idfs, a property of the recall's own, as the reranker does."""
    started: list[bool] = []
    keyword = pipeline.STRATEGIES["keyword"]

    def recording(ctx: StrategyContext):  # noqa: ANN202
        embedder = ctx.engine.embedder
        started.append(embedder.model_running.is_set())
        _ = ctx.query_word_idfs  # must not wait for the embedding's own lock
        embedder.idfs_read.set()
        return keyword(ctx)

    monkeypatch.setitem(pipeline.STRATEGIES, "keyword", recording)
    return started


def _memory(tmp_path: Path, embedder: HashEmbedder) -> AgentMemory:
    mem = AgentMemory(tmp_path / "store", embedder=embedder)  # type: ignore[arg-type]
    bank = mem.bank("b")
    for fact in FACTS:
        bank.retain(fact, mentioned_at="2025-03-04T09:00:00Z")
    return mem


def test_the_keyword_arm_runs_while_the_query_is_in_the_model(
    tmp_path: Path, recorded_keyword_arm: list[bool]
) -> None:
    embedder = ModelLike()
    with _memory(tmp_path, embedder) as mem:
        result = mem.bank("b").recall("Where did Alice move?", reinforce=False)
    assert recorded_keyword_arm == [True]
    assert embedder.waited  # the idfs were read while the model ran, not after
    assert result.hits[0].text == FACTS[0]
    assert {"keyword", "semantic"} <= set(result.hits[0].strategy_details)


@pytest.mark.parametrize("embedder", [HashEmbedder(), ModelLike(calls_beside=False)])
def test_recall_is_whole_with_an_embedder_that_says_nothing_of_its_model(
    tmp_path: Path, embedder: HashEmbedder
) -> None:
    with _memory(tmp_path, embedder) as mem:
        bank = mem.bank("b")
        result = bank.recall("Where did Alice move?", reinforce=False)
        keyword_only = bank.recall("Where did Alice move?", strategies=["keyword"])
        assert bank.check_integrity().ok
    assert result.hits[0].text == FACTS[0]
    assert {"keyword", "semantic"} <= set(result.hits[0].strategy_details)
    assert keyword_only.hits[0].text == FACTS[0]
