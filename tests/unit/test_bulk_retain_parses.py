"""Bulk retain's shortcuts give what the long way gives: slots taken from the extractor's parse,
tense tags of a call's texts in one batch, the repeat check not read twice (retain/pipeline.py)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from importlib import resources

import pytest

import agentmem
from agentmem.models.nlp import load_nlp
from agentmem.retain import pipeline, slots, timing
from agentmem.retain.facts import ExtractedFact
from agentmem.store.changes import LocalChanges
from agentmem.temporal import tense
from agentmem.testing import HashEmbedder

T0 = datetime(2024, 2, 10, tzinfo=UTC)

_TURNS = [
    "I live in Berlin now.",
    "We moved to Lisbon last week.",
    "My new phone number is 555-0199.",
    "Green is my favorite color now.",
    "We're planning a trip to Porto in March.",
    "The Porto trip is cancelled.",
    "I paid the invoice on March 3.",
    "The invoice is due on March 3.",
    "I've been planning a trip for April.",
    "We will launch on Friday.",
    "I started a new job this year.",
    "Thanks, that helps!",
]


@pytest.fixture(autouse=True)
def _empty_caches(monkeypatch):
    monkeypatch.setattr(slots, "_PARSED", {})
    monkeypatch.setattr(tense, "_TAGS", {})


def test_slots_remembered_from_a_parse_are_those_read_anew():
    texts = [f"Ana: {turn}" for turn in _TURNS]
    read = slots.slots_of(texts)
    slots._PARSED.clear()
    for text, doc in zip(texts, load_nlp().pipe(_TURNS), strict=True):
        slots.remember_parsed(text, doc)
    assert set(slots._PARSED) == set(texts)  # nothing left to parse
    assert slots.slots_of(texts) == read
    assert any(read)


def test_a_parse_of_other_text_is_not_remembered():
    slots.remember_parsed("Ana: I live in Berlin.", load_nlp()("I live in Rome."))
    assert not slots._PARSED


def _fact(text: str, message: int = 0) -> ExtractedFact:
    return ExtractedFact(text=text, fact_type="world", mentioned_at=T0, message_index=message)


def _counted_batches(monkeypatch) -> list[list[str]]:
    batches: list[list[str]] = []
    tag = tense._tag

    def counted(texts):
        batches.append(list(texts))
        return tag(texts)

    monkeypatch.setattr(tense, "_tag", counted)
    return batches


def test_a_call_tagged_together_is_anchored_as_fact_by_fact(monkeypatch):
    facts = [_fact(f"Ana: {turn}", i) for i, turn in enumerate(_TURNS)]  # a message each
    one_by_one = [timing.anchor_in_time(f) for f in facts]
    tense._TAGS.clear()
    batches = _counted_batches(monkeypatch)
    together = timing.anchor_all_in_time(facts)
    assert together == one_by_one
    assert any(f.occurred_start for f in together)
    assert len(batches) == 1 and len(batches[0]) > 1  # every text wanted, tagged in one batch
    # Texts with no date a tense could pick are not tagged at all.
    assert "Ana: We moved to Lisbon last week." not in batches[0]
    assert "Ana: Thanks, that helps!" not in batches[0]


def test_every_text_whose_tense_is_read_is_tagged_up_front(monkeypatch):
    """What ``may_read_tense`` picks covers every text ``clause_direction`` reads the tags of:
    anchoring the sample conversation's turns tags them in the one batch, none alone."""
    sample = json.loads(
        resources.files("agentmem.data").joinpath("sample_conversation.json").read_text("utf-8")
    )
    facts = [
        ExtractedFact(
            text=f"{m['name']}: {m['content']}",
            fact_type="world",
            mentioned_at=datetime.fromisoformat(s["date"]),
            message_index=i,
        )
        for s in sample["sessions"]
        for i, m in enumerate(s["messages"])
    ]
    batches = _counted_batches(monkeypatch)
    anchored = timing.anchor_all_in_time(facts)
    assert len(batches) == 1
    assert sum(f.occurred_start is not None for f in anchored) > 5


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("I paid the invoice on March 3.", True),
        ("See you on Friday!", True),
        # A period holding the moment it is said: its tense says which side is stored.
        ("I went to the gym this morning.", True),
        ("I'll be in Rome this week.", True),
        ("We went hiking last summer.", False),  # "last" names the occurrence
        ("The launch was in Q3 2023.", False),
        ("The meeting moved to Thursday.", False),  # the day moved to: ahead, whatever the tense
        ("Thanks, that helps!", False),
    ],
)
def test_only_texts_whose_tense_is_read_are_tagged_up_front(text, read, monkeypatch):
    batches = _counted_batches(monkeypatch)
    timing.anchor_all_in_time([_fact(f"Ana: {text}")])
    assert bool(batches and batches[0]) is read
    assert len(batches) <= 1


def test_amounts_whose_date_the_tense_decides_are_tagged_with_the_rest(monkeypatch):
    # "for" + an amount (a present perfect's span) and "in" + an amount (ahead unless past)
    # read their clause's tense too: tagged in the one batch, not each alone afterwards.
    texts = ["I paid the invoice on March 3.", "I've been running for a month.", "I fly in 2 days."]
    tense._TAGS.clear()
    batches = _counted_batches(monkeypatch)
    anchored = timing.anchor_all_in_time([_fact(f"Ana: {text}", i) for i, text in enumerate(texts)])
    assert [len(batch) for batch in batches] == [3]
    assert all(f.occurred_start is not None for f in anchored)


def test_sentences_that_may_go_on_an_episode_are_tagged_together(monkeypatch):
    """The undated sentences after a dated one of their message are tagged in one batch
    before it is decided whether they go on telling its episode; chat turns, each a message
    of its own, are not."""
    texts = ["Last summer we drove to Santa Fe.", "We stayed at a motel.", "We ate tacos."]
    tense._TAGS.clear()
    batches = _counted_batches(monkeypatch)
    anchored = timing.anchor_all_in_time([_fact(text) for text in texts])
    assert batches == [texts[1:]]
    assert len({(f.occurred_start, f.occurred_end) for f in anchored}) == 1
    tense._TAGS.clear()
    batches.clear()
    timing.anchor_all_in_time([_fact(text, i) for i, text in enumerate(texts)])
    assert batches == []


_DATED_TURNS = [
    *_TURNS,
    "My flight leaves on Monday.",
    "The wedding is in August.",
    "She turns 30 on May 5.",
    "I love the painting I did in May.",
    "On March 3, we will launch.",
    "I want to visit in April.",
    "I've been to Kyoto in April.",
    "Dr. Mai Tran: call me on the 28th.",
    "The course runs from May 3 to May 5.",
]


def test_tags_remembered_from_a_parse_date_as_tags_read_anew(monkeypatch):
    """The extractor's parse of a turn gives the tense tags of its fact ("Ana: turn"), so a
    chat retain does not run spaCy twice over the same words; the dates are the same."""
    facts = [_fact(f"Ana: {turn}") for turn in _DATED_TURNS]
    read_anew = timing.anchor_all_in_time(facts)
    tense._TAGS.clear()
    for fact, doc in zip(facts, load_nlp().pipe(_DATED_TURNS), strict=True):
        tense.remember_tags(fact.text, doc)
    batches = _counted_batches(monkeypatch)
    assert timing.anchor_all_in_time(facts) == read_anew
    assert sum(f.occurred_start is not None for f in read_anew) > 10
    assert not any(batches)  # nothing tagged again


def test_tags_of_a_parse_of_other_text_are_not_remembered():
    tense.remember_tags("Ana: I paid it on March 3.", load_nlp()("I paid it on March 4."))
    tense.remember_tags("3.", load_nlp()("I paid it on March 3."))
    assert not tense._TAGS


def test_a_chat_retain_tags_no_whole_turn_again(store_path, monkeypatch):
    batches = _counted_batches(monkeypatch)
    with agentmem.AgentMemory(store_path, embedder=HashEmbedder()) as mem:
        bank = mem.bank("b")
        messages = [{"role": "user", "name": "Ana", "content": t} for t in _DATED_TURNS]
        bank.retain(messages, mentioned_at=T0)
        dated = {m.text: m.occurred_start for m in bank.memories()}
    assert not any(batches)
    assert dated["Ana: The invoice is due on March 3."] == datetime(2024, 3, 3, tzinfo=UTC)
    assert dated["Ana: I paid the invoice on March 3."] == datetime(2023, 3, 3, tzinfo=UTC)


def test_a_version_is_settled_only_with_no_write_under_way():
    changes = LocalChanges()
    assert changes.settled("b") == 0
    version = changes.reserve("b", "retain", ("m",), ())
    assert changes.settled("b") is None  # reserved, not committed: the bank may be changing
    assert changes.settled("other") == 0
    changes.publish("b", version)
    assert changes.settled("b") == version


def test_a_document_rewritten_while_a_retain_extracts_is_decided_again(store_path, monkeypatch):
    """The repeat check read before extraction is not trusted once the bank has moved on."""
    with agentmem.AgentMemory(store_path, embedder=HashEmbedder()) as mem:
        bank = mem.bank("b")
        bank.retain("Ana lives in Berlin.", mentioned_at=T0, document_id="doc")
        extract = pipeline._extract

        def rewritten_meanwhile(*args, **kwargs):
            monkeypatch.setattr(pipeline, "_extract", extract)
            bank.retain("Ana lives in Rome.", mentioned_at=T0, document_id="doc")
            return extract(*args, **kwargs)

        monkeypatch.setattr(pipeline, "_extract", rewritten_meanwhile)
        result = bank.retain("Ana lives in Lisbon.", mentioned_at=T0, document_id="doc")
        assert [m.text for m in bank.memories(document_id="doc")] == ["Ana lives in Lisbon."]
        assert len(result.replaced) == 1
        assert bank.check_integrity().ok
