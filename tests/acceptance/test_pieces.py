"""A memory's pieces (``retain/pieces.py``): the sentences of a turn that says several things,
embedded alone at retain and stored with it, read by the reranker as the best piece's gain.

What is stored is asserted on the store's rows (what pieces a text gets, that they decode, that
they go with their memory), what recall makes of it through ``strategy_details``, and both
after reopening, export/import, an upgrade from a store without pieces and damage to the
stored value. Runs on both backends.
"""

from __future__ import annotations

import base64
import json
import math
from datetime import UTC, datetime

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agentmem
from agentmem.recall.calibrated import CalibratedReranker
from agentmem.recall.candidates import Candidate, StrategyHit
from agentmem.retain.pieces import (
    MAX_PIECES,
    MIN_WORDS,
    decode_pieces,
    encode_pieces,
    piece_texts,
)
from agentmem.store.database import SCHEMA_VERSION
from agentmem.types import Memory
from tests.conftest import T0, downgrade_store

NEWS = (
    "Hey Ada! Good to see you again. So much has happened since we talked. "
    "Last week I went to a Harry Potter conference in the UK."
)
TURNS = [
    {"role": "user", "name": "Tim", "content": NEWS},
    {"role": "user", "name": "Ada", "content": "Wow, that sounds like a great trip."},
    {"role": "user", "name": "Ada", "content": "I love it. [shared an image: a dog on a beach]"},
]
QUERY = "Which conference did Tim go to?"


def _stored(mem: agentmem.AgentMemory, bank_id: str) -> dict[str, str | None]:
    """Memory text -> its stored piece vectors, as the store holds them."""
    rows = mem._engine.db.fetchall(
        "SELECT text, piece_vectors FROM memories WHERE bank_id = ?", [bank_id]
    )
    return dict(rows)


def _piece_cosine(bank: agentmem.MemoryBank, text: str) -> float | None:
    hits = bank.recall(QUERY, top_k=10, reinforce=False).hits
    (hit,) = [h for h in hits if h.memory.text == text]
    return hit.strategy_details["rerank"].get("piece_cosine")


def _retained(store_path) -> float:  # noqa: ANN001
    """Retain the turns into bank "b" of a store, closed again; the news turn's piece cosine."""
    with agentmem.AgentMemory(store_path) as mem:
        bank = mem.bank("b")
        bank.retain(TURNS, mentioned_at=T0)
        return _piece_cosine(bank, f"Tim: {NEWS}")


def test_pieces_are_the_sentences_with_the_speaker():
    assert piece_texts(f"Tim: {NEWS}") == [
        "Tim: Good to see you again.",
        "Tim: So much has happened since we talked.",
        "Tim: Last week I went to a Harry Potter conference in the UK.",
    ]
    # A bracketed aside is a piece of its own; a text of one piece keeps none.
    assert piece_texts("Ada: I love it. [shared an image: a dog on a beach]") == [
        "Ada: I love it.",
        "Ada: [shared an image: a dog on a beach]",
    ]
    assert piece_texts("Ada: Wow, that sounds like a great trip.") == []
    assert piece_texts("Dr. Who: Hi. Fine.") == []  # no piece of three words
    assert piece_texts("Giulia is a marine biologist. She lives in Naples.") == [
        "Giulia is a marine biologist.",
        "She lives in Naples.",
    ]
    assert len(piece_texts("Tim: " + "I was there. " * 100)) == MAX_PIECES


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=2000))
def test_any_text_cuts_into_bounded_pieces_of_whole_words(text):
    pieces = piece_texts(text)
    assert len(pieces) <= MAX_PIECES
    assert pieces == [] or len(pieces) >= 2
    assert all(len(p.split()) >= MIN_WORDS for p in pieces)


@settings(max_examples=100, deadline=None)
@given(
    st.integers(1, MAX_PIECES),
    st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=8, max_size=8),
)
def test_stored_pieces_decode_to_their_unit_vectors(count, values):
    vectors = np.tile(np.asarray(values, np.float32), (count, 1)) + np.eye(
        count, 8, dtype=np.float32
    )
    decoded = decode_pieces(encode_pieces(vectors), 8)
    units = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    assert decoded.shape == (count, 8)
    assert np.allclose(decoded, units, atol=2e-3)


@pytest.mark.parametrize(
    "stored", ["not base64!", "", "AAAA", encode_pieces(np.ones((MAX_PIECES + 1, 8), np.float32))]
)
def test_a_stored_value_that_is_no_pieces_is_refused(stored):
    with pytest.raises(agentmem.InvalidInputError):
        decode_pieces(stored, 8)


def test_retain_stores_pieces_for_the_turns_that_say_several_things(mem):
    bank = mem.bank("b")
    bank.retain(TURNS, mentioned_at=T0)
    stored = _stored(mem, "b")
    news, single, caption = (f"{t['name']}: {t['content']}" for t in TURNS)
    assert stored[single] is None
    assert decode_pieces(stored[news], 384).shape == (3, 384)
    assert decode_pieces(stored[caption], 384).shape == (2, 384)
    # The sentence about the conference is closer to the question than the whole turn.
    hits = bank.recall(QUERY, top_k=10, reinforce=False).hits
    rerank = next(h for h in hits if h.memory.text == news).strategy_details["rerank"]
    assert rerank["piece_cosine"] > rerank["cosine"]
    assert (
        "piece_cosine"
        not in next(h for h in hits if h.memory.text == single).strategy_details["rerank"]
    )
    assert bank.check_integrity().ok


def test_a_bank_set_to_keep_no_pieces_embeds_none(mem):
    with pytest.raises(agentmem.InvalidInputError, match="pieces must be booleans"):
        mem.bank("b").configure(pieces="no")
    bank = mem.bank("b")
    bank.configure(pieces=False)
    bank.retain(TURNS, mentioned_at=T0)
    assert set(_stored(mem, "b").values()) == {None}
    assert mem.repair().pieces == 0
    bank.configure(pieces=True)
    bank.retain("Giulia is a marine biologist. She lives in Naples.", mentioned_at=T0)
    stored = _stored(mem, "b")  # plain text: a fact per sentence, so no pieces
    assert stored["Giulia is a marine biologist."] is stored["She lives in Naples."] is None
    assert mem.repair().pieces == 2  # the turns retained while the bank kept none
    assert mem.check_integrity().ok


def test_pieces_survive_reopening_and_go_with_their_memory(store_path):
    news = f"Tim: {NEWS}"
    before = _retained(store_path)
    with agentmem.AgentMemory(store_path) as mem:
        bank = mem.bank("b")
        assert _piece_cosine(bank, news) == pytest.approx(before)
        # A second bank with the same turns has its own pieces; forgetting one bank's memory
        # removes its pieces with it and leaves the other bank's.
        other = mem.bank("other")
        other.retain(TURNS, mentioned_at=T0)
        (memory,) = [m for m in bank.memories() if m.text == news]
        bank.forget(memory.id)
        assert news not in _stored(mem, "b")
        assert _stored(mem, "other")[news] is not None
        assert _piece_cosine(other, news) == pytest.approx(before)
        assert mem.check_integrity().ok


@pytest.mark.parametrize("vectors", [True, False])
def test_export_and_import_give_the_same_pieces(mem, tmp_path, vectors):
    bank = mem.bank("b")
    bank.retain(TURNS, mentioned_at=T0)
    path = tmp_path / "b.jsonl"
    bank.export(path, vectors=vectors)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    in_file = {o["text"]: o.get("pieces") for o in lines if o["type"] == "memory"}
    copy = mem.import_(path, bank_id="copy")
    original, imported = _stored(mem, "b"), _stored(mem, "copy")
    assert original.keys() == imported.keys()
    for text, stored in original.items():
        # With vectors the file carries the pieces as stored; without, import embeds them.
        assert in_file[text] == (stored if vectors else None)
        assert (stored is None) == (imported[text] is None)
        if stored is not None:
            assert np.allclose(
                decode_pieces(stored, 384), decode_pieces(imported[text], 384), atol=2e-3
            )
    news = f"Tim: {NEWS}"
    assert _piece_cosine(copy, news) == pytest.approx(_piece_cosine(bank, news), abs=2e-3)
    assert mem.check_integrity().ok


@pytest.mark.parametrize(
    ("pieces", "message"),
    [
        (7, "must be base64 text"),
        ("%%%", "not base64"),
        (encode_pieces(np.ones((2, 8), np.float32)), "not 1 to 16 vectors of 384"),
        (base64.b64encode(np.full(384, np.inf, "<f2").tobytes()).decode(), "not finite"),
    ],
)
def test_an_import_with_bad_pieces_is_refused_and_writes_nothing(mem, tmp_path, pieces, message):
    bank = mem.bank("b")
    bank.retain(TURNS, mentioned_at=T0)
    path = tmp_path / "b.jsonl"
    bank.export(path)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    (line,) = [o for o in lines if o["type"] == "memory" and o["text"] == f"Tim: {NEWS}"]
    line["pieces"] = pieces
    path.write_text("".join(json.dumps(o) + "\n" for o in lines))
    with pytest.raises(agentmem.InvalidInputError, match=f"field 'pieces'.*{message}"):
        mem.import_(path, bank_id="copy")
    assert "copy" not in mem.banks()
    assert mem.check_integrity().ok


def test_damaged_pieces_are_reported_and_repaired_while_recall_goes_on(store_path):
    news = f"Tim: {NEWS}"
    good = _retained(store_path)
    with agentmem.AgentMemory(store_path) as mem:
        mem._engine.db.execute(
            "UPDATE memories SET piece_vectors = 'bad' WHERE bank_id = 'b' AND text = ?", [news]
        )
    with agentmem.AgentMemory(store_path) as mem:
        bank = mem.bank("b")
        # Recall reads the damaged value as none; the check names it; repair embeds it again.
        assert _piece_cosine(bank, news) is None
        (problem,) = bank.check_integrity().problems
        assert "piece vectors do not decode" in problem
        assert mem.repair().pieces == 1
        assert bank.check_integrity().ok
        assert _piece_cosine(bank, news) == pytest.approx(good, abs=2e-3)
        assert mem.repair().pieces == 0


@pytest.mark.duckdb_only("the upgrade of an embedded store file")
def test_a_store_without_pieces_is_upgraded_and_repair_fills_them(store_path):
    news = f"Tim: {NEWS}"
    good = _retained(store_path)
    downgrade_store(
        store_path, "2", [("memories", "statement_slots"), ("memories", "piece_vectors")]
    )
    with agentmem.AgentMemory(store_path) as mem:
        assert mem._engine.db.get_meta("schema_version") == SCHEMA_VERSION
        bank = mem.bank("b")
        assert _piece_cosine(bank, news) is None  # stored before pieces: read as one piece
        assert bank.check_integrity().ok
        bank.retain("Giulia is a marine biologist. She lives in Naples.", mentioned_at=T0)
        assert mem.repair().pieces == 2
        assert _piece_cosine(bank, news) == pytest.approx(good, abs=2e-3)
        assert mem.check_integrity().ok


def _memory(memory_id: str, text: str) -> Memory:
    return Memory(memory_id, "b", text, "world", None, None, datetime(2025, 3, 4, tzinfo=UTC))


def _candidate(memory: Memory, piece_cosine: float | None) -> Candidate:
    hits = {
        "semantic": StrategyHit(memory_id=memory.id, rank=1, score=0.3, normalized=0.3),
        "keyword": StrategyHit(memory_id=memory.id, rank=1, score=1.0, normalized=1.0),
    }
    return Candidate(memory=memory, hits=hits, cosine=0.3, piece_cosine=piece_cosine)


def test_the_reranker_counts_a_closer_piece_and_never_a_farther_one():
    reranker = CalibratedReranker()
    other = _candidate(_memory("o", "Ada: g h i."), None)

    def relevance(piece_cosine: float | None) -> float:
        candidate = _candidate(_memory("m", "Tim: a b c. d e f."), piece_cosine)
        return reranker.rerank("a question", [candidate, other])[0]

    assert relevance(0.5) > relevance(0.3) == relevance(None) == relevance(0.1)
    assert not math.isnan(relevance(0.5))
