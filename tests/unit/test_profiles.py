"""Entity profiles without a store: which statements give which items, and what a profile says."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from agentmem.consolidate.profiles import (
    ASPECTS,
    ITEM_WORDS,
    MAX_ITEMS,
    items_of,
    planned_profiles,
    profile_text,
    statement_of,
)
from agentmem.types import Memory

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def _memory(text: str, entities: tuple[str, ...], n: int = 0, fact_type: str = "experience"):  # noqa: ANN202
    return Memory(
        id=f"m{n}",
        bank_id="b",
        text=text,
        fact_type=fact_type,
        occurred_start=None,
        occurred_end=None,
        mentioned_at=T0 + timedelta(days=n),
        entities=entities,
    )


def test_a_chat_turn_is_its_speakers_statement_and_a_sentence_its_subjects() -> None:
    assert statement_of(_memory("Mel: I paint.", ("Mel",))) == ("Mel", "I paint.", True)
    assert statement_of(_memory("Alice visited Rome.", ("Alice", "Rome"))) == (
        "Alice",
        "visited Rome.",
        False,
    )
    assert statement_of(_memory("The sky is blue.", ())) is None
    assert statement_of(_memory("Note: buy milk.", ())) is None  # "Note" is nobody


def test_items_come_from_first_person_clauses_of_the_speaker() -> None:
    turn = _memory("Mel: You should try it! I signed up for a pottery class yesterday.", ("Mel",))
    assert items_of(turn) == [("Mel", "activities", "signed up for a pottery class yesterday")]
    # Said about the listener, not by the speaker about herself.
    assert items_of(_memory("Mel: You joined a pottery class, right?", ("Mel",))) == []
    # A cue with nothing besides it says nothing.
    assert items_of(_memory("Mel: I love it!", ("Mel",))) == []
    # Observations and opinions are no evidence of their own.
    profile = _memory("Mel: I joined a choir at the church.", ("Mel",), fact_type="observation")
    assert items_of(profile) == []


def test_image_captions_are_not_items() -> None:
    turn = _memory(
        "Mel: I joined a choir at church. [shared an image: a photo of a dog at the park]",
        ("Mel",),
    )
    assert items_of(turn) == [("Mel", "activities", "joined a choir at church")]


def test_a_profile_needs_two_facts_and_keeps_the_newest() -> None:
    facts = [_memory(f"Mel: I joined club number {n} downtown.", ("Mel",), n) for n in range(20)]
    planned = planned_profiles(facts)
    items = planned[("Mel", "activities")]
    assert [item.memory_id for item in items] == [f"m{n}" for n in range(19, 19 - MAX_ITEMS, -1)]
    assert planned_profiles(facts[:1]) == {}
    assert planned_profiles(facts, subjects=["Bob"]) == {}


def test_profile_text_is_its_title_and_items() -> None:
    assert profile_text("Mel", "pets", ["adopted a dog named Rex", "feeds the cat"]) == (
        "Mel's pets: adopted a dog named Rex; feeds the cat."
    )


_VOCABULARY = (
    "I my we you joined visited love enjoy plan going to my kids dog book movie job trip "
    "the a pottery class Rome Paris and but so yesterday, - ; ! ? . really just also"
)
_WORDS = st.sampled_from(_VOCABULARY.split())


@given(st.lists(_WORDS, min_size=1, max_size=40))
def test_every_item_is_words_of_its_statement(words: list[str]) -> None:
    text = "Mel: " + " ".join(words)
    said = {w.strip(" ,-–—'\"()").lower() for w in re.split(r"[\s.!?;:,]+", text)}
    found = items_of(_memory(text, ("Mel",)))
    assert len({aspect for _, aspect, _ in found}) == len(found)  # one item per aspect
    assert {aspect for _, aspect, _ in found} <= {a.key for a in ASPECTS}
    for subject, _, item in found:
        assert subject == "Mel"
        assert 0 < len(item.split()) <= ITEM_WORDS
        assert {w.strip(" ,-–—'\"()").lower() for w in item.split()} <= said
