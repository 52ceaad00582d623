"""The shared spaCy pipeline: coarse POS without running the attribute ruler on every text."""

from __future__ import annotations

import spacy

from agentmem.models.nlp import MODEL_PACKAGE, coarse_pos, load_nlp

TEXTS = [
    "Melanie: I'm gonna paint a sunset with Caroline next Friday, aren't I?",
    "That is the book that Will gave me; there is nothing like it.",
    "Somebody said Apple and Mark met   at the Room 101 meetup.\n\nOK!!",
    "She has been running because she had to, and it did help.",
    "Whatever  ,  fine\t\tyes - Dr. Chen (MIT) won't do that anymore...",
]


def test_coarse_pos_is_what_the_attribute_ruler_gives():
    full = spacy.load(MODEL_PACKAGE, exclude=["lemmatizer", "parser"])
    full.enable_pipe("senter")
    assert full.has_pipe("attribute_ruler") and "attribute_ruler" in full.pipe_names
    nlp = load_nlp()
    assert "attribute_ruler" not in nlp.pipe_names  # the per-text cost is gone
    for text in TEXTS:
        expected = [(t.text, t.tag_, t.pos_) for t in full(text)]
        doc = nlp(text)
        assert [(t.text, t.tag_, coarse_pos(t)) for t in doc] == expected
        assert {t.pos_ for t in doc} == {""}
