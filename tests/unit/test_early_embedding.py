"""Retain starts embedding chat turns before spaCy has read them, when their texts are known."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pytest

import agentmem
from agentmem.retain.extract import OfflineExtractor
from agentmem.testing import HashEmbedder

T0 = "2025-03-04T09:00:00Z"


class CountingEmbedder(HashEmbedder):
    """Records every batch it embeds."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[str]] = []
        self.called = threading.Event()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.batches.append(list(texts))
        self.called.set()
        return super().embed(texts)


class WatchingExtractor(OfflineExtractor):
    """Notes whether the embedder was called while it was still extracting."""

    def __init__(self, embedder: CountingEmbedder) -> None:
        super().__init__()
        self.embedder = embedder
        self.embedded_meanwhile: list[bool] = []

    def extract(self, content):  # noqa: ANN001, ANN201
        self.embedded_meanwhile.append(self.embedder.called.wait(timeout=10))
        return super().extract(content)


class ShoutingExtractor(OfflineExtractor):
    """Gives other texts than it announced before parsing."""

    def extract(self, content):  # noqa: ANN001, ANN201
        return [replace(f, text=f.text.upper()) for f in super().extract(content)]


def _turns(*contents: str) -> list[dict]:
    return [{"role": "user", "name": "Ana", "content": c} for c in contents]


def test_chat_turns_are_embedded_while_they_are_extracted(store_path):
    embedder = CountingEmbedder()
    extractor = WatchingExtractor(embedder)
    with agentmem.AgentMemory(store_path, embedder=embedder, extractor=extractor) as mem:
        bank = mem.bank("b")
        bank.retain(
            _turns("Quixotrix invoices go out on Fridays.", "Zorblat ships on Mondays."),
            mentioned_at=T0,
        )
        assert extractor.embedded_meanwhile == [True]
        assert embedder.batches == [
            ["Ana: Quixotrix invoices go out on Fridays.", "Ana: Zorblat ships on Mondays."]
        ]
        hits = bank.recall("Ana: Zorblat ships on Mondays.", strategies=["semantic"], top_k=1)
        assert [h.text for h in hits] == ["Ana: Zorblat ships on Mondays."]


def test_texts_that_need_parsing_are_embedded_after_extraction(store_path):
    embedder = CountingEmbedder()
    with agentmem.AgentMemory(store_path, embedder=embedder) as mem:
        bank = mem.bank("b")
        bank.retain(
            "Quixotrix invoices go out on Fridays. Zorblat ships on Mondays.", mentioned_at=T0
        )
        long_turn = " ".join(["Zorblat ships on Mondays and the crates are blue."] * 20)
        bank.retain(_turns(long_turn), mentioned_at=T0)
        assert len(embedder.batches) == 2  # one per call, none thrown away
        assert len(embedder.batches[1]) > 1  # the long turn was split


def test_early_vectors_are_dropped_when_the_extractor_gives_other_texts(store_path):
    embedder = CountingEmbedder()
    with agentmem.AgentMemory(store_path, embedder=embedder, extractor=ShoutingExtractor()) as mem:
        bank = mem.bank("b")
        stored = bank.retain(_turns("Zorblat ships on Mondays."), mentioned_at=T0)
        assert [m.text for m in stored] == ["ANA: ZORBLAT SHIPS ON MONDAYS."]
        assert embedder.batches == [
            ["Ana: Zorblat ships on Mondays."],
            ["ANA: ZORBLAT SHIPS ON MONDAYS."],
        ]
        hits = bank.recall("ANA: ZORBLAT SHIPS ON MONDAYS.", strategies=["semantic"], top_k=1)
        assert hits.hits[0].strategy_details["semantic"]["score"] > 0.99


class SlowEmbedder(CountingEmbedder):
    """Takes a while, and says when it has finished."""

    def __init__(self) -> None:
        super().__init__()
        self.finished = threading.Event()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors = super().embed(texts)
        time.sleep(0.3)
        self.finished.set()
        return vectors


class FailingExtractor(OfflineExtractor):
    def __init__(self, embedder: CountingEmbedder) -> None:
        super().__init__()
        self.embedder = embedder

    def extract(self, content):  # noqa: ANN001, ANN201
        self.embedder.called.wait(timeout=10)  # the early embedding is under way
        raise RuntimeError("extractor broke")


def test_a_failed_retain_leaves_no_early_embedding_running(store_path):
    embedder = SlowEmbedder()
    extractor = FailingExtractor(embedder)
    with agentmem.AgentMemory(store_path, embedder=embedder, extractor=extractor) as mem:
        bank = mem.bank("b")
        with pytest.raises(agentmem.ExtractionError, match="extractor broke"):
            bank.retain(_turns("Zorblat ships on Mondays."), mentioned_at=T0)
        assert embedder.finished.is_set()  # waited for, not left running
        assert bank.memories() == []
