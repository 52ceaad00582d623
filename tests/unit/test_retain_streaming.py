"""Retain embeds the offline extractor's facts in chunks while it reads the later messages."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import numpy as np
import pytest

import agentmem
from agentmem.retain.extract import OfflineExtractor
from agentmem.retain.facts import ExtractedFact, RetainInput
from agentmem.retain.messages import normalize_content
from agentmem.retain.pipeline import EMBED_CHUNK, _embedding_text
from agentmem.testing import HashEmbedder
from tests.conftest import CONVERSATION, T0

# More messages than two chunks, so three embedding calls make up one retain.
MESSAGES = [
    {"role": "user", "name": "Maria", "content": f"Maria met Kenji in Oslo on day {i}."}
    for i in range(2 * EMBED_CHUNK + 5)
]


def test_streamed_facts_are_the_extracted_facts_at_any_batch_size():
    content = normalize_content(CONVERSATION, mentioned_at=datetime(2025, 3, 4, tzinfo=UTC))
    extractor = OfflineExtractor()
    expected = extractor.extract(content)
    assert len(expected) == len(CONVERSATION)
    for batch_size in (1, 2, 1000):
        assert list(extractor.iter_facts(content, batch_size=batch_size)) == expected


def test_each_memory_gets_the_vector_of_its_own_text(tmp_path):
    embedder = HashEmbedder()
    with agentmem.AgentMemory(tmp_path / "s", embedder=embedder) as mem:
        memories = mem.bank("b").retain(MESSAGES, mentioned_at=T0).memories
        stored = mem._engine.vectors.get_vectors(
            mem.bank("b")._collection, [m.id for m in memories]
        )
    assert len(memories) == len(MESSAGES)
    extractor = OfflineExtractor()
    facts = extractor.extract(
        normalize_content(MESSAGES, mentioned_at=datetime(2025, 3, 4, tzinfo=UTC))
    )
    expected = embedder.embed([_embedding_text(f) for f in facts])
    assert np.allclose(np.stack([stored[m.id] for m in memories]), expected, atol=1e-6)


class FailingMidway(OfflineExtractor):
    """Yields a chunk and more of facts, so their embedding has started, then fails."""

    def iter_facts(
        self, content: RetainInput, *, batch_size: int | None = None
    ) -> Iterator[ExtractedFact]:
        facts = super().iter_facts(content, batch_size=batch_size)
        for _ in range(EMBED_CHUNK + 2):
            yield next(facts)
        raise RuntimeError("the extractor broke")


def test_an_extractor_failing_midway_stores_nothing(tmp_path):
    with agentmem.AgentMemory(
        tmp_path / "s", embedder=HashEmbedder(), extractor=FailingMidway()
    ) as mem:
        bank = mem.bank("b")
        with pytest.raises(agentmem.ExtractionError, match="the extractor broke"):
            bank.retain(MESSAGES, mentioned_at=T0)
        assert bank.stats()["memories"] == 0
    with agentmem.AgentMemory(tmp_path / "s", embedder=HashEmbedder()) as mem:
        assert mem.bank("b").retain(MESSAGES[:3], mentioned_at=T0).memories
        assert mem.bank("b").stats()["memories"] == 3
