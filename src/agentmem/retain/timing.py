"""Anchor each fact in time: when it happened, resolved from its text.

A fact said at ``mentioned_at`` that holds a time expression ("I went to the support group
yesterday", said at 1:56 pm on 8 May 2023) happened in that expression's interval, resolved
against ``mentioned_at`` — never against the time of processing, which is how competitors end
up with wrong dates. An explicit ``occurred_at`` on the retain call wins; facts with no time
expression ("Alice prefers coffee") keep a null occurrence.

A date without a year resolves by the tense of its clause (see ``agentmem.temporal.tense``):
"the invoice is due on March 3", said in February, is the coming March 3; "I paid it on
March 3" the last one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta

from agentmem.retain.facts import ExtractedFact
from agentmem.temporal import ParsedTime, find_time_expressions
from agentmem.temporal.anaphora import follow_on
from agentmem.temporal.expressions import (
    may_read_tense,
    names_a_time_of_day,
    time_of_day_alone,
)
from agentmem.temporal.tense import (
    JUST,
    Direction,
    clause_direction,
    done_just_now,
    may_narrate,
    narrates,
    says_it_is_to_come,
    subject_clause_end,
    tag_texts,
)

# Stored occurrence intervals are inclusive; parsed ones are half-open.
_INCLUSIVE = timedelta(microseconds=1)
# "later this year", "earlier today": the words before a period say which side of when it
# was said is meant, whatever the tense ("Later this year we're renovating").
_SIDE_BEFORE = re.compile(r"\b(?P<side>later|earlier)(?:\s+on)?\s+$", re.IGNORECASE)


def anchor_in_time(fact: ExtractedFact, *, date_order: str = "MDY") -> ExtractedFact:
    """The fact with its occurrence resolved from its text, unless it already has one.

    The first time expression of the fact wins: in "I moved in June and started work last
    week", the fact is about the move. ``date_order`` is the bank's ("MDY" or "DMY").
    """
    return _anchored(fact, _first_time(fact, date_order))


def anchor_all_in_time(
    facts: list[ExtractedFact], *, date_order: str = "MDY"
) -> list[ExtractedFact]:
    """:func:`anchor_in_time` of each fact; first the texts whose tense may decide a date, or
    the side of a period holding the moment they were said ("this week"), are tagged by spaCy
    together, not one by one (same tags, a fraction of the time).

    A fact that names no date of its own but a time told from the one before ("The next day
    I visited the Louvre") is dated from the previous dated fact of the same message; one that
    names no time but goes on telling the episode of the dated fact right before it ("Last
    summer we drove to Santa Fe. We stayed three nights at a motel.") is stored in its period;
    one with a time of day alone ("I'm meeting Zoe for coffee at 3 pm") at that hour; one
    telling of what was just done ("I just landed in Denver") in the day before it was said.
    """
    tag_texts(f.text for f in facts if _to_anchor(f) and may_read_tense(f.text))
    dated = [_anchored(fact, _first_time(fact, date_order)) for fact in facts]
    tag_texts(_may_go_on(dated))
    anchored: list[ExtractedFact] = []
    previous: ExtractedFact | None = None  # the last dated fact of the current message
    told_before = False  # whether the fact before (not a part) was that one
    for fact, done in zip(facts, dated, strict=True):
        if previous is not None and previous.message_index != fact.message_index:
            previous, told_before = None, False
        if _to_anchor(done) and previous is not None:
            done = _told_from(done, previous)
            if done.occurred_start is None and told_before:
                done = _told_on(done, previous)
        if _to_anchor(done):
            done = _at_time_of_day(done)
        if done.part_of is None:
            told_before = done.occurred_start is not None
            if told_before:
                previous = done
        anchored.append(done)
    return _done_just_now(anchored)


# How long before it was said "just" reaches ("I just finished my first marathon", said on
# Monday morning of Sunday's race).
_JUST_NOW = timedelta(days=1)


def _done_just_now(facts: list[ExtractedFact]) -> list[ExtractedFact]:
    """The facts, those that name no time but tell of what was just done ("I just landed in
    Denver") dated in the day before they were said."""
    undated = [f.text for f in facts if _to_anchor(f) and JUST.search(f.text)]
    if not undated:
        return facts
    tag_texts(undated)
    return [
        replace(
            f, occurred_start=f.mentioned_at - _JUST_NOW, occurred_end=f.mentioned_at - _INCLUSIVE
        )
        if _to_anchor(f) and done_just_now(f.text)
        else f
        for f in facts
    ]


def _may_go_on(dated: list[ExtractedFact]) -> Iterator[str]:
    """The texts of the undated facts after a dated one of their message, which may go on
    telling its episode (tagged together before :func:`_told_on` reads them), and of those
    with a time of day alone (:func:`_at_time_of_day`)."""
    message = None  # the message of the last dated fact
    for fact in dated:
        if fact.occurred_start is not None and fact.part_of is None:
            message = fact.message_index
        elif _to_anchor(fact) and (
            (message == fact.message_index and may_narrate(fact.text))
            or names_a_time_of_day(fact.text)
        ):
            yield fact.text


def _at_time_of_day(fact: ExtractedFact) -> ExtractedFact:
    """``fact``, which names no day, at the hour its time of day names ("I'm meeting Zoe for
    coffee at 3 pm": that day, 15:00-16:00)."""
    if _BIRTH.search(fact.text):
        return fact  # "She was born at 3 am" says the hour, not the day
    found = time_of_day_alone(fact.text, fact.mentioned_at)
    if found is None:
        return fact
    return replace(fact, occurred_start=found.start, occurred_end=found.end - _INCLUSIVE)


def _first_time(fact: ExtractedFact, date_order: str) -> ParsedTime | None:
    """The first time expression of a fact whose occurrence is read from its text, passing
    one that only describes a noun ("The Q3 roadmap review is on the 12th": the review is on
    the 12th) or tells of the subject in its own clause ("The film we watched on Friday comes
    out in March": March) when another follows."""
    if not _to_anchor(fact):
        return None
    expressions = find_time_expressions(fact.text, fact.mentioned_at, date_order=date_order)
    telling = [e for e in expressions if not _describes_a_noun(fact.text, e)]
    if len(telling) > 1 and (verb := subject_clause_end(fact.text)) is not None:
        telling = [e for e in telling if e.span[0] >= verb] or telling
    if len(telling) > 1:
        telling = [e for e in telling if not _in_a_plan_given_up(fact.text, e)] or telling
    return (telling or expressions or [None])[0]


# A plan that did not hold, up to the date: "The wedding was supposed to be in June but it's
# now in September" (the wedding is in September).
_PLAN_GIVEN_UP = re.compile(
    r"\b(?:was|were)\s+(?:supposed|meant|going|scheduled|planned|set)\s+to\b"
    r"|\bhad\s+(?:planned|hoped|meant)\s+to\b",
    re.IGNORECASE,
)
_CLAUSE_BREAK = re.compile(r"[;,]|\bbut\b|\bthen\b", re.IGNORECASE)


def _in_a_plan_given_up(text: str, found: ParsedTime) -> bool:
    """Whether ``found`` dates a plan said not to have held, in its clause before it."""
    start = found.span[0]
    breaks = [m.end() for m in _CLAUSE_BREAK.finditer(text, 0, start)]
    return _PLAN_GIVEN_UP.search(text, breaks[-1] if breaks else 0, start) is not None


# "the Q3 roadmap", "our 2024 budget": a determiner, the expression, then a noun.
_DETERMINER_BEFORE = re.compile(r"\b(?:the|my|our|your|his|her|their|this|that)\s+$", re.I)
_NOUN_AFTER = re.compile(
    r"\s+(?!(?:and|or|but|to|in|on|at|for|with|from|by|is|was|are|were|will|would|we|i|you"
    r"|he|she|they|it|when|then)\b)[a-z]{3,}\b"
)


def _describes_a_noun(text: str, found: ParsedTime) -> bool:
    start, end = found.span
    return (
        _DETERMINER_BEFORE.search(text, max(0, start - 8), start) is not None
        and _NOUN_AFTER.match(text, end) is not None
    )


def _anchored(fact: ExtractedFact, first: ParsedTime | None) -> ExtractedFact:
    """The fact dated by its first time expression, on the side of when it was said that its
    clause speaks of: a period that holds that moment is cut there ("I started a new job this
    year", said in March, happened between January and then; "I'll go to the gym this week"
    from then to Sunday), as what was done cannot be later, nor what is to be done earlier;
    "later" or "earlier" before the period says the side whatever the tense ("Later this year
    we're renovating"). A present tense alone does not cut it: "my birthday is on March 10",
    said that morning, is the whole day."""
    if first is None:
        return fact
    start, end = first.start, first.end
    if _holds_when_said(fact, first):
        side = _side_named(fact.text, first.span[0])
        direction = side or clause_direction(fact.text, *first.span)
        if direction == "past":
            end = fact.mentioned_at
        elif direction == "forward" and (side or says_it_is_to_come(fact.text, *first.span)):
            start = fact.mentioned_at
    return replace(fact, occurred_start=start, occurred_end=end - _INCLUSIVE)


def _side_named(text: str, start: int) -> Direction | None:
    """The side of the moment said that the word right before the period at
    ``text[start:]`` names: "forward" for "later" ("later this month"), "past" for "earlier"
    ("earlier this week"); else None."""
    found = _SIDE_BEFORE.search(text, max(0, start - 20), start)
    if found is None:
        return None
    return "forward" if found["side"].lower() == "later" else "past"


def _holds_when_said(fact: ExtractedFact, found: ParsedTime) -> bool:
    return found.start < fact.mentioned_at < found.end


def _told_from(fact: ExtractedFact, previous: ExtractedFact) -> ExtractedFact:
    """``fact`` dated from ``previous`` when its text tells its time from there."""
    if previous.occurred_start is None or previous.occurred_end is None:
        return fact
    found = follow_on(fact.text, previous.occurred_start, previous.occurred_end + _INCLUSIVE)
    if found is None:
        return fact
    return replace(fact, occurred_start=found[0], occurred_end=found[1] - _INCLUSIVE)


# The longest period a told episode goes on in ("Last summer we drove to Santa Fe. We
# stayed ..."): a day, a week, a month, a season; a year or a birth dates no episode.
_EPISODE = timedelta(days=93)
_BIRTH = re.compile(r"\bborn\b", re.IGNORECASE)


def _told_on(fact: ExtractedFact, previous: ExtractedFact) -> ExtractedFact:
    """``fact``, which names no time, in the period of ``previous``, the dated fact right
    before it in its message, when it goes on telling that episode: past events after a past
    period, "will" after a coming one (see :func:`~agentmem.temporal.tense.narrates`)."""
    start, end = previous.occurred_start, previous.occurred_end
    if (
        start is None
        or end is None
        or end - start > _EPISODE
        or _BIRTH.search(previous.text)
        or not may_narrate(fact.text)
    ):
        return fact
    direction = narrates(fact.text)
    if (direction == "past" and end <= fact.mentioned_at) or (
        direction == "forward" and start >= fact.mentioned_at
    ):
        return replace(fact, occurred_start=start, occurred_end=end)
    return fact


def _to_anchor(fact: ExtractedFact) -> bool:
    """Whether the fact's occurrence is read from its text: not given, and not a part (a
    part's time is its whole's)."""
    return fact.occurred_start is None and fact.part_of is None
