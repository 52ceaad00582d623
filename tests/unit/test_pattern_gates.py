"""The gates that spare a text the patterns it cannot match (_pattern_gates.py): a time rule
or a cause cue a text matches is always admitted."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentmem._pattern_gates import Gates
from agentmem.retain.causes import _CUE_PATTERNS, _CUES, cause_clauses
from agentmem.temporal.expressions import _RULES, _rules_for

# Words and pieces the rules are made of, to build texts that match them often.
PIECES = (  # noqa: SIM905 - a sentence of pieces reads better than a list of strings
    "last next this coming past previous the a few couple two 3 12 2024 '19 1990s 80s ago "
    "in on at by for since until through from to and or of early mid late end beginning "
    "today tonight yesterday tomorrow morning evening night week weekend fortnight month "
    "year decade quarter Q3 H1 spring summer fall winter Christmas Easter Xmas Halloween "
    "Thanksgiving New Year's Eve Valentine's Day Monday Tue Fri Sunday January Feb March "
    "Sept December 1st 2nd 3rd 14th twenty-first fifth EOD COB EOW close business half "
    "away within hence 5/6 03/04/2025 2025-03-04 2025-03 9:30 T10:00 holidays festive - –"
).split()


@settings(max_examples=1500, deadline=None)
@given(
    st.lists(
        st.one_of(st.sampled_from(PIECES), st.text(max_size=6)),
        min_size=1,
        max_size=12,
    ),
    st.sampled_from([" ", "", "  ", "-"]),
)
def test_a_rule_a_text_matches_is_always_admitted(pieces: list[str], joiner: str) -> None:
    text = joiner.join(pieces)
    admitted = _rules_for(text)
    for rule in _RULES:
        if rule.pattern.search(text):
            assert rule.name in admitted, (rule.name, text)


@pytest.mark.parametrize(
    "text",
    [
        "We met in ſummer.",  # a long s reads as "s" under IGNORECASE
        "SEE YOU ON FRIDAY",
        "ＭＯＮＤＡＹ works",  # full-width letters fold as the pattern reads them
        "back on the ٣rd",  # a digit of another script
        "The K\u212aelvin meeting is next week.",
    ],
)
def test_case_and_script_do_not_hide_a_match_from_its_gate(text: str) -> None:
    admitted = _rules_for(text)
    for rule in _RULES:
        if rule.pattern.search(text):
            assert rule.name in admitted, rule.name


def test_a_text_that_names_no_time_is_searched_by_no_rule() -> None:
    assert _rules_for("That sounds great, thanks!") == frozenset()
    assert "month" in _rules_for("We flew to Rome in March.")
    assert "year" in _rules_for("It was 2019.")


@pytest.mark.parametrize(
    "text",
    [
        # Words holding the first letters of a month, a chat spelling or a cue: alternatives
        # the gates read as a shared prefix ("ma" of "march|may", "tom", a "c" of "[Bb]c")
        # let such texts through.
        "Macy made a custom mattress for the atom lab.",
        "The cat sat on a mat because it was warm.",
    ],
)
def test_gates_read_whole_words_not_shared_first_letters(text: str) -> None:
    assert not {"month", "day_word"} & _rules_for(text)
    assert not {"opening", "trailing"} & _CUES.admitted(text.replace("because", "and"))


def test_the_letters_alternatives_share_are_read_with_the_rest_of_each() -> None:
    # re's parser takes "ma" out of "march|may": the gate holds both words, not "ma".
    gates = Gates({"month": re.compile(r"\b(?-i:march|may)\b", re.IGNORECASE)})
    assert gates.admitted("See you march 9th") == {"month"}
    assert gates.admitted("Macy made a mattress") == frozenset()


def test_letters_ignorecase_takes_for_ascii_ones_pass_the_gate_as_those() -> None:
    # "sınce" and "SİNCE" match "since" under IGNORECASE; the gate dropped them.
    gates = Gates({"since": re.compile(r"\bsince\b", re.IGNORECASE)})
    for text in ("sınce", "SİNCE", "ſince", "since"):
        assert re.search(r"\bsince\b", text, re.IGNORECASE)
        assert gates.admitted(text) == {"since"}, text
    assert cause_clauses("We stayed home sınce it rained hard.") == ["it rained hard"]


def test_a_pattern_whose_matches_need_no_word_is_always_searched() -> None:
    gates = Gates({"letters": re.compile(r"[A-Z][a-z]+"), "word": re.compile(r"\bnoon\b")})
    assert gates.admitted("xyz") == {"letters"}
    assert gates.admitted("at NOON") == {"letters", "word"}


CUE_PIECES = (  # noqa: SIM905 - as PIECES
    "because since so as that due to thanks owing result consequence caused causes led "
    "leads resulted meant which is why that's why hence consequently causing forcing "
    "leading fired fined promoted hurts sore exhausted tired from for of the rain we I it "
    "was were is got felt late , . ; - my our the storm API down"
).split()


@settings(max_examples=1500, deadline=None)
@given(
    st.lists(st.one_of(st.sampled_from(CUE_PIECES), st.text(max_size=6)), min_size=1, max_size=14)
)
def test_a_cause_cue_a_sentence_matches_is_always_admitted(pieces: list[str]) -> None:
    sentence = " ".join(pieces)
    admitted = _CUES.admitted(sentence)
    for name, pattern in _CUE_PATTERNS.items():
        if pattern.search(sentence):
            assert name in admitted, (name, sentence)
