"""People a query names the way the bank does not: resolved to the bank's canonical names.

A question may spell a person differently from the way the bank knows them ("Mohammed" for
the speaker "Muhamed") or use a short form ("Jo" for "Joanna"). Every signal that reads
names — the keyword arm, the graph arm's seed entities, the semantic arm's people cut, the
reranker's "said by the person the query names" — then misses. :func:`canonical_query`
rewrites such names before any arm runs, conservatively, so a wrong rewrite is rare:

1. a word that already is a name or alias of any entity of the bank, or a part of a name the
   query holds whole, is kept (exact first: "Ann" stays "Ann" when the bank knows both Ann
   and Anna; "Harry" in "Harry Potter" is not read alone);
2. else the retain resolver's own person rules decide (nicknames, a first name for a full
   name: :meth:`~agentmem.retain.resolve.EntityResolver.resolve`);
3. else one person whose name part is a close spelling (rapidfuzz ratio at least
   :data:`MIN_SIMILARITY`, names of :data:`MIN_FUZZY_CHARS` letters or more);
4. else one person whose first name starts with the word (a short form, two letters or more).

A step that finds more than one person, or a tie, rewrites nothing. Only capitalised words
that are not stopwords are read, and only people are matched (the names that differ in
spelling are speakers' and friends'; places and works are matched by the keyword arm).
"""

from __future__ import annotations

import re
from weakref import WeakKeyDictionary

from rapidfuzz import fuzz

from agentmem.recall.calibrated import STOPWORDS
from agentmem.recall.people import entities_named_in
from agentmem.retain.facts import EntityMention
from agentmem.retain.resolve import EntityIndex, EntityResolver, KnownEntity
from agentmem.store.graph import MemoryGraph

#: rapidfuzz ratio (0-100) a misspelt name needs against a known one ("mohammed" ↔
#: "muhamed" 80, "melanie" ↔ "melany" 77; "john" ↔ "joan" is too short to be read).
MIN_SIMILARITY = 75.0
#: Shorter words are matched exactly, by nickname or as a short form, never by spelling.
MIN_FUZZY_CHARS = 5
#: The best spelling match must beat the runner-up by this much to count.
MIN_MARGIN = 5.0
_NAME_WORD = re.compile(r"\b[A-Z][^\W\d_]+\b")
_RESOLVER = EntityResolver()
#: Per graph mirror: (its names_version, its persons, their index, the words resolved).
_PEOPLE: WeakKeyDictionary[
    MemoryGraph, tuple[int, list[KnownEntity], EntityIndex, dict[str, str | None]]
] = WeakKeyDictionary()
#: Words whose resolution is kept per graph (a word and the bank's names decide it).
_WORDS_KEPT = 4096


def canonical_query(query: str, graph: MemoryGraph) -> str:
    """``query`` with each person's name the bank spells otherwise replaced by its canonical
    name (the query unchanged when no name needs it)."""
    with graph.lock:
        named = {
            part.casefold()
            for entity_id in entities_named_in(query, graph)
            for name in (graph.entity_info(entity_id)[0], *graph.entity_info(entity_id)[2])
            for part in name.split()
        }
        words = {
            word
            for word in _NAME_WORD.findall(query)
            if word.casefold() not in STOPWORDS | named and not graph.entity_ids_named(word)
        }
        if not words:
            return query
        people, index, resolved = _people_index(graph)
    if not people:
        return query
    replacements = {}
    for word in words:
        try:
            name = resolved[word]
        except KeyError:
            if len(resolved) >= _WORDS_KEPT:
                resolved.clear()
            name = resolved[word] = _resolve(word, people, index)
        if name:
            replacements[word] = name
    if not replacements:
        return query
    return _NAME_WORD.sub(lambda m: replacements.get(m.group(0), m.group(0)), query)


def _people_index(
    graph: MemoryGraph,
) -> tuple[list[KnownEntity], EntityIndex, dict[str, str | None]]:
    """The bank's persons, the resolver's index of them and the words resolved against them
    (word → the person's canonical name, None for none), kept per version of the graph's names
    (call with ``graph.lock`` held)."""
    cached = _PEOPLE.get(graph)
    if cached is None or cached[0] != graph.names_version:
        people = _people(graph)
        cached = _PEOPLE[graph] = (graph.names_version, people, EntityIndex(people), {})
    return cached[1], cached[2], cached[3]


def _people(graph: MemoryGraph) -> list[KnownEntity]:
    """The bank's persons as the resolver sees them (call with ``graph.lock`` held)."""
    ids = {entity_id for key in graph.name_keys() for entity_id in graph.entity_ids_named(key)}
    people = []
    for entity_id in sorted(ids):
        name, kind, aliases = graph.entity_info(entity_id)
        if kind == "person":
            people.append(KnownEntity(id=entity_id, name=name, kind=kind, aliases=aliases))
    return people


def _resolve(word: str, people: list[KnownEntity], index: EntityIndex) -> str | None:
    """The canonical name of the one person ``word`` names, by the rules of the module
    (``index`` holds ``people``)."""
    match = _RESOLVER.resolve(EntityMention(word, "person"), index)
    if match is not None:
        return match.name
    lowered = word.casefold()
    if len(lowered) >= MIN_FUZZY_CHARS:
        scores = sorted((_similarity(lowered, person), person.name) for person in people)
        best, name = scores[-1]
        runner_up = scores[-2][0] if len(scores) > 1 else 0.0
        if best >= MIN_SIMILARITY and best - runner_up >= MIN_MARGIN:
            return name
    starting = {
        person.name
        for person in people
        for name in person.names
        if name.split() and name.split()[0].casefold().startswith(lowered)
    }
    return starting.pop() if len(starting) == 1 else None


def _similarity(word: str, person: KnownEntity) -> float:
    """The best rapidfuzz ratio of ``word`` with a part of the person's names long enough to
    be compared by spelling."""
    parts = [
        part
        for name in person.names
        for part in name.casefold().split()
        if len(part) >= MIN_FUZZY_CHARS
    ]
    return max((fuzz.ratio(word, part) for part in parts), default=0.0)
