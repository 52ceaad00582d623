"""Anchor each fact in time: when it happened, resolved from its text.

A fact said at ``mentioned_at`` that holds a time expression ("I went to the support group
yesterday", said at 1:56 pm on 8 May 2023) happened in that expression's interval, resolved
against ``mentioned_at`` — never against the time of processing, which is how competitors end
up with wrong dates. An explicit ``occurred_at`` on the retain call wins; facts with no time
expression ("Alice prefers coffee") keep a null occurrence.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from agentmem.retain.facts import ExtractedFact
from agentmem.temporal import find_time_expressions

# Stored occurrence intervals are inclusive; parsed ones are half-open.
_INCLUSIVE = timedelta(microseconds=1)


def anchor_in_time(fact: ExtractedFact) -> ExtractedFact:
    """The fact with its occurrence resolved from its text, unless it already has one.

    The first time expression of the fact wins: in "I moved in June and started work last
    week", the fact is about the move.
    """
    if fact.occurred_start is not None:
        return fact
    expressions = find_time_expressions(fact.text, fact.mentioned_at)
    if not expressions:
        return fact
    first = expressions[0]
    return replace(fact, occurred_start=first.start, occurred_end=first.end - _INCLUSIVE)
