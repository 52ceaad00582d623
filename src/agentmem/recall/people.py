"""The people and other entities a query names, looked up in the bank's graph mirror."""

from __future__ import annotations

import re

from agentmem.recall.calibrated import content_words
from agentmem.store.graph import MemoryGraph

_QUERY_WORD = re.compile(r"[^\W_]+(?:[.'’&-][^\W_]+)*")
_POSSESSIVE = re.compile(r"['’]s\Z", re.IGNORECASE)
_MAX_NAME_WORDS = 4


def entities_named_in(query: str, graph: MemoryGraph) -> set[str]:
    """Ids of the bank's entities whose name or alias appears in ``query`` (whole words).

    Looks up every run of up to four words (possessives dropped), so no NER runs per query.
    Call with ``graph.lock`` held.
    """
    words = [_POSSESSIVE.sub("", w) for w in _QUERY_WORD.findall(query)]
    found: set[str] = set()
    for n in range(1, _MAX_NAME_WORDS + 1):
        for start in range(len(words) - n + 1):
            name = " ".join(words[start : start + n])
            if len(name) > 2:
                found |= graph.entity_ids_named(name)
    return found


def without_people(query: str, graph: MemoryGraph) -> str:
    """The query with the names of people the bank knows cut out.

    What the semantic arm should match is what a question is about. In a conversation every
    turn starts with its speaker's name, so "What does Melanie do to destress?" embedded whole
    is close to all of Melanie's turns, chit-chat included; who is asked about is judged by the
    keyword arm and the reranker's speaker signal instead. The query is kept whole when nothing
    of substance would be left ("Who is Bob Chen?").
    """
    with graph.lock:
        names: set[str] = set()
        for entity_id in entities_named_in(query, graph):
            name, kind, aliases = graph.entity_info(entity_id)
            if kind == "person":
                names.update((name, *aliases))
    if not names:
        return query
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    cut = re.sub(rf"\b(?:{alternatives})(?:['’]s)?\b", " ", query, flags=re.IGNORECASE)
    cut = " ".join(cut.split())
    return cut if content_words(cut) else query
