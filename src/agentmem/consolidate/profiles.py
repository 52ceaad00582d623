"""Entity profiles: observations that gather what one person said about one side of their life.

"What are Melanie's hobbies?" is answered by a dozen turns spread over months, each of which
alone matches the question weakly. A profile groups them without an LLM: every first-person
statement of a speaker ("Melanie: I just signed up for a pottery class") and every plain
sentence opening with a person's name ("Alice visited Lisbon in May.") is read for the cue
words of a few aspects (activities, places, likes, family, pets, plans, work, works read or
watched); the clause holding the cue becomes an item of that person's profile of that aspect.
A profile is an observation (fact_type "observation", recallable like any memory) whose text
lists its items ("Melanie's activities and hobbies: signed up for a pottery class; ...") and
whose metadata cites the facts they come from (``source_memory_ids``) and names its subject
and aspect (``profile``).

Profiles are rebuilt from the facts themselves whenever a person's facts change: after a
retain for the people it mentions, after a forget for the profiles that cited what went. So a
profile never holds forgotten content, and keeps no history of earlier texts.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from agentmem.config import BankConfig
from agentmem.consolidate.observations import (
    OBSERVATION,
    Rewrite,
    create_observation,
    rewrite_observations,
)
from agentmem.engine import Engine
from agentmem.recall.calibrated import STOPWORDS, content_tokens
from agentmem.retain.facts import EntityMention
from agentmem.retain.repeats import normalize_text
from agentmem.store.database import Database
from agentmem.store.forget import forget_memories
from agentmem.store.records import MEMORY_SELECT, load_memories, memories_by_id, memory_from_row
from agentmem.types import Memory

#: A profile needs this many facts: one fact is no aggregation, and recall already has it.
MIN_ITEMS = 2
#: At most this many items (the newest) per profile: a list read at a glance (its words count
#: like any memory's wherever recall is budgeted by tokens).
MAX_ITEMS = 16
#: Words of an item at most: the clause from its cue on, not the whole turn.
ITEM_WORDS = 8
#: Content words an item needs besides its cue ("love it" says nothing).
ITEM_CONTENT_WORDS = 2
_EVIDENCE_TYPES = ("world", "experience")


@dataclass(frozen=True, slots=True)
class Aspect:
    """One side of a person's life a profile gathers: its key, its title and its cue words."""

    key: str
    title: str  # "{name}" is the subject
    cue: re.Pattern[str]


def _cue(words: str) -> re.Pattern[str]:
    return re.compile(rf"\b(?:{words})\b", re.IGNORECASE)


ASPECTS: tuple[Aspect, ...] = (
    Aspect(
        "activities",
        "{name}'s activities and hobbies",
        _cue(
            r"hobb(?:y|ies)|signed up|sign up|took up|taking up|joined|practi[cs]\w*|class(?:es)?"
            r"|lessons?|(?:go|goes|went|going) \w+ing|play|plays|played|playing"
        ),
    ),
    Aspect(
        "places",
        "Places {name} has been to or plans to visit",
        _cue(
            r"visit\w*|trips?|travel\w*|went to|been to|flew|vacation|road ?trip|holidays?"
            r"|moved (?:to|from)|tour\w*"
        ),
    ),
    Aspect(
        "likes",
        "What {name} loves and enjoys",
        _cue(r"loves?|enjoy\w*|favou?rite|fan of|passionate|passion|obsessed"),
    ),
    Aspect(
        "family",
        "{name}'s family",
        _cue(
            r"(?:my|his|her|our) (?:kids?|son|daughter|husband|wife|partner|mom|mother|dad"
            r"|father|brother|sister|family|children|parents|grandma|grandpa|grandmother"
            r"|grandfather)"
        ),
    ),
    Aspect(
        "pets",
        "{name}'s pets",
        _cue(r"dogs?|cats?|pupp(?:y|ies)|pets?|turtles?|kittens?|hamsters?|parrots?|horses?"),
    ),
    Aspect(
        "plans",
        "{name}'s plans",
        _cue(r"plan\w*|going to|gonna|hope to|hoping to|looking forward|want to|can't wait"),
    ),
    Aspect(
        "work",
        "{name}'s work",
        _cue(r"jobs?|career|business|company|studio|boss|colleagues?|promot\w+|hired|office"),
    ),
    Aspect(
        "media",
        "Books, films, shows and games {name} mentioned",
        _cue(
            r"books?|reading|read (?:a|the|this|that)|novels?|movies?|films?|tv series|tv shows?"
            r"|video games?|songs?|albums?|concerts?"
        ),
    ),
)

_ASPECTS_BY_KEY = {aspect.key: aspect for aspect in ASPECTS}
_SPEAKER = re.compile(r"^(?P<name>[^:\n]{1,80}):\s+(?P<said>.*)$", re.DOTALL)
_CLAUSES = re.compile(r"[^.!?;:,\n]+?(?=[.!?;:,\n]|\s[-–—]\s|$)")
_FIRST_PERSON = _cue(r"i|i'm|i've|i'd|i'll|me|my|mine|we|we're|we've|us|our")
_FILLER = re.compile(
    r"^(?:(?:and|but|so|also|just|really|yeah|yes|yep|oh|well|actually|i|i'm|i've|i'd|i'll"
    r"|we|we're|we've|we'd|we'll|am|have|had|was|were|been|it's|that's)\s+)+",
    re.IGNORECASE,
)
_EDGES = " ,-–—'\"()"
_SHARED_IMAGE = re.compile(r"\s*\[shared an image:[^\]]*\]")


@dataclass(frozen=True, slots=True)
class ProfileItem:
    """One item of a profile: the clause of a fact that holds an aspect's cue."""

    memory_id: str
    text: str
    mentioned_at: datetime


def statement_of(memory: Memory) -> tuple[str, str, bool] | None:
    """(subject, what is said of them, said in the first person) of a fact, or None.

    A chat turn ("Melanie: I ...") is its speaker's statement; a plain sentence opening with
    the name of an entity it mentions ("Alice visited Lisbon.") is about that entity.
    """
    return _statement(memory.text, tuple(memory.entities))


def _statement(text: str, entities: tuple[str, ...]) -> tuple[str, str, bool] | None:
    match = _SPEAKER.match(text)
    if match and match.group("name") in entities:
        return match.group("name"), match.group("said"), True
    for name in entities:
        if text.startswith(name + " "):
            return name, text[len(name) + 1 :], False
    return None


def items_of(memory: Memory) -> list[tuple[str, str, str]]:
    """The ``(subject, aspect key, item text)`` a fact contributes, one per aspect at most."""
    if memory.fact_type not in _EVIDENCE_TYPES:
        return []
    return list(_items(memory.text, tuple(memory.entities)))


@functools.lru_cache(maxsize=8192)
def _items(text: str, entities: tuple[str, ...]) -> tuple[tuple[str, str, str], ...]:
    """:func:`items_of` a fact's text and entities; kept, as every retain that adds to a
    profile reads its sources again."""
    statement = _statement(text, entities)
    if statement is None:
        return ()
    subject, said, spoken = statement
    clauses = _CLAUSES.findall(_SHARED_IMAGE.sub("", said))
    found: list[tuple[str, str, str]] = []
    for aspect in ASPECTS:
        for clause in clauses:
            cue = aspect.cue.search(clause)
            if cue is None or (spoken and not _FIRST_PERSON.search(clause)):
                continue
            item = _item_text(clause, cue.start(), cue.end())
            if item:
                found.append((subject, aspect.key, item))
                break
    return tuple(found)


def _item_text(clause: str, cue_at: int, cue_end: int) -> str:
    """The clause from the word before its cue on, at most :data:`ITEM_WORDS` words, without
    leading filler or trailing function words; empty when it holds too little besides the cue."""
    words = clause[:cue_at].split()[-1:] + clause[cue_at:].split()
    words = _FILLER.sub("", " ".join(words).strip(_EDGES)).split()[:ITEM_WORDS]
    while words and words[-1].lower().strip(_EDGES) in STOPWORDS:
        words.pop()
    text = " ".join(words).strip(_EDGES)
    rest = text.replace(clause[cue_at:cue_end], " ")
    return text if len(content_tokens(rest)) >= ITEM_CONTENT_WORDS else ""


def profile_text(subject: str, aspect_key: str, items: Sequence[str]) -> str:
    """The text of a profile: its title, then its items separated by semicolons."""
    title = _ASPECTS_BY_KEY[aspect_key].title.format(name=subject)
    return f"{title}: {'; '.join(items)}."


def planned_profiles(
    memories: Iterable[Memory],
    subjects: Iterable[str] | None = None,
    *,
    min_items: int = MIN_ITEMS,
) -> dict[tuple[str, str], list[ProfileItem]]:
    """The profiles the facts call for: ``(subject, aspect key)`` → items, newest first.

    Only profiles with at least ``min_items`` items, each cut to :data:`MAX_ITEMS`;
    ``subjects`` limits the result to those people.
    """
    wanted = None if subjects is None else set(subjects)
    grouped: dict[tuple[str, str], list[ProfileItem]] = {}
    unique = {m.id: m for m in memories}  # a repeated retain hands back stored facts
    found = [(s, k, t, m) for m in unique.values() for s, k, t in items_of(m)]
    for subject, key, text, memory in found:
        if wanted is None or subject in wanted:
            item = ProfileItem(memory.id, text, memory.mentioned_at)
            grouped.setdefault((subject, key), []).append(item)
    planned = {}
    for group, items in grouped.items():
        items.reverse()  # the facts come in the order they were stored
        items.sort(key=lambda item: item.mentioned_at, reverse=True)
        # The same words said again are one item, cited by their newest statement.
        said = {normalize_text(item.text): item for item in reversed(items)}
        items = [item for item in items if said[normalize_text(item.text)] is item]
        if len(items) >= min_items:
            planned[group] = items[:MAX_ITEMS]
    return planned


def profile_sources(db: Database, bank_id: str) -> dict[str, tuple[tuple[str, str], list[str]]]:
    """The bank's profiles, oldest first, each with its ``(subject, aspect)`` and the ids of
    the facts it cites: read from their metadata alone (no text, no entities)."""
    rows = db.fetchall(
        "SELECT id, metadata FROM memories WHERE bank_id = ? AND fact_type = ? ORDER BY seq",
        [bank_id, OBSERVATION],
    )
    found = {}
    for memory_id, metadata in rows:
        meta = json.loads(metadata) if metadata else {}
        profile = meta.get("profile")
        if isinstance(profile, dict):
            key = (str(profile.get("subject")), str(profile.get("aspect")))
            found[memory_id] = key, list(meta.get("source_memory_ids", []))
    return found


def _profiles_of(engine: Engine, bank_id: str, subjects: set[str]) -> dict[tuple[str, str], Memory]:
    """The profiles of ``subjects`` by ``(subject, aspect)``: only those are loaded whole."""
    keys = {i: key for i, (key, _) in profile_sources(engine.db, bank_id).items()}
    wanted = [i for i, key in keys.items() if key[0] in subjects]
    found = load_memories(engine.db, bank_id, wanted)
    return {keys[i]: found[i] for i in wanted if i in found}


def _key(profile: Memory) -> tuple[str, str]:
    meta = profile.metadata["profile"]
    return str(meta.get("subject")), str(meta.get("aspect"))


def _subject_facts(engine: Engine, bank_id: str, subjects: Iterable[str]) -> list[Memory]:
    """The bank's facts that mention any of ``subjects`` (by canonical name)."""
    names = sorted(set(subjects))
    if not names:
        return []
    rows = engine.db.fetchall(
        MEMORY_SELECT + "WHERE m.bank_id = $bank AND list_contains($types, m.fact_type) "
        "AND m.id IN (SELECT me.memory_id FROM memory_entities AS me "
        "JOIN entities AS e ON e.id = me.entity_id "
        "WHERE e.bank_id = $bank AND list_contains($names, e.name)) ORDER BY m.seq",
        {"bank": bank_id, "names": names, "types": list(_EVIDENCE_TYPES)},
    )
    return [memory_from_row(row) for row in rows]


def refresh_profiles(
    engine: Engine,
    bank_id: str,
    collection: str,
    config: BankConfig,
    subjects: Iterable[str],
    new_facts: Sequence[Memory] | None = None,
) -> list[Memory]:
    """Bring the profiles of ``subjects`` up to date with their facts.

    Without ``new_facts`` every profile of the subjects is rebuilt from all their facts (after
    a forget); one the facts no longer call for is deleted. With ``new_facts`` (after a
    retain) only the profiles those facts add items to change: an existing profile merges
    them with the items of the facts it cites, so a retain reads no more than a profile's
    own sources; a profile that does not exist yet is planned from all the subject's facts.
    A profile whose items changed is rewritten in place (same id). Only people get profiles.
    Returns the profiles created or rewritten.
    """
    subjects = set(subjects)
    if not subjects:
        return []
    people = _people(engine, bank_id, subjects)
    existing = _profiles_of(engine, bank_id, subjects)
    if new_facts is None:
        planned = planned_profiles(_subject_facts(engine, bank_id, people), people)
        stale = [p.id for key, p in existing.items() if key not in planned]
        if stale:
            forget_memories(engine, bank_id, collection, stale, None, None)
    else:
        planned = _merged_profiles(engine, bank_id, existing, new_facts, people)
    changed: list[Memory] = []
    rewrites: list[Rewrite] = []
    for (subject, key), items in planned.items():
        text = profile_text(subject, key, [item.text for item in items])
        sources = [item.memory_id for item in items]
        current = existing.get((subject, key))
        if current is None:
            # The rewrites planned before it are written first: each profile gets the seq
            # it had if written one by one.
            changed += _rewritten(engine, bank_id, collection, rewrites)
            rewrites = []
            changed.append(
                _create(engine, bank_id, collection, config, subject, key, items, text, sources)
            )
        elif current.text != text or current.metadata.get("source_memory_ids") != sources:
            rewrites.append(_rewrite(current, items, text, sources))
    return changed + _rewritten(engine, bank_id, collection, rewrites)


def _people(engine: Engine, bank_id: str, names: Iterable[str]) -> set[str]:
    """Those of ``names`` that are people in the bank: a profile is a person's (a company
    opening a sentence has no hobbies)."""
    names = sorted(set(names))
    if not names:
        return set()
    rows = engine.db.fetchall(
        "SELECT name FROM entities WHERE bank_id = $bank AND kind = 'person' "
        "AND list_contains($names, name)",
        {"bank": bank_id, "names": names},
    )
    return {name for (name,) in rows}


def _merged_profiles(
    engine: Engine,
    bank_id: str,
    existing: dict[tuple[str, str], Memory],
    new_facts: Sequence[Memory],
    subjects: set[str],
) -> dict[tuple[str, str], list[ProfileItem]]:
    """The profiles new facts change: existing ones merged with the new items, new ones
    planned from all the subject's facts."""
    touched = list(planned_profiles(new_facts, subjects, min_items=1))  # in the facts' order
    unknown = {subject for subject, key in touched if (subject, key) not in existing}
    planned = {}
    if unknown:
        everything = planned_profiles(_subject_facts(engine, bank_id, unknown), unknown)
        planned.update({key: items for key, items in everything.items() if key in touched})
    known = [key for key in touched if key[0] not in unknown]
    # A profile cites newest first, later-stored first among equals: reversed, its sources
    # come in the order they were stored, as the new facts after them (ties keep that order).
    cited = {key: existing[key].metadata.get("source_memory_ids", [])[::-1] for key in known}
    wanted = [i for ids in cited.values() for i in ids]
    found = load_memories(engine.db, bank_id, wanted) if wanted else {}
    for key, ids in cited.items():
        sources = [found[i] for i in ids if i in found]
        merged = planned_profiles([*sources, *new_facts], {key[0]})
        if key in merged:
            planned[key] = merged[key]
    return planned


def _create(
    engine: Engine,
    bank_id: str,
    collection: str,
    config: BankConfig,
    subject: str,
    key: str,
    items: Sequence[ProfileItem],
    text: str,
    sources: list[str],
) -> Memory:
    """A new profile of ``items`` (``text`` and ``sources`` are theirs)."""
    return create_observation(
        engine,
        bank_id,
        collection,
        config,
        text,
        sources,
        extra=_profile_metadata(subject, key),
        # About its subject, not about everyone its sources name; no new kind vote.
        entities=[EntityMention(subject, "person", confidence=0.0)],
    )


def _rewrite(
    profile: Memory, items: Sequence[ProfileItem], text: str, sources: list[str]
) -> Rewrite:
    """A profile's new text and sources (those of ``items``), in place; no history (it would
    keep what the bank has forgotten)."""
    subject, key = _key(profile)
    metadata = {
        **_profile_metadata(subject, key),
        "source_memory_ids": sources,
        "proof_count": len(sources),
        "history": [],
    }
    newest = max(item.mentioned_at for item in items)
    return Rewrite(profile.id, text, lambda current, now: metadata, newest)


def _rewritten(
    engine: Engine, bank_id: str, collection: str, rewrites: Sequence[Rewrite]
) -> list[Memory]:
    """The profiles rewritten, all in one write (one forgotten meanwhile is left out)."""
    if not rewrites:
        return []
    return list(rewrite_observations(engine, bank_id, collection, rewrites).values())


def keep_profiles_current(
    engine: Engine,
    bank_id: str,
    collection: str,
    config: BankConfig,
    new_facts: Iterable[Memory] = (),
    *,
    check_stale: bool = False,
) -> list[Memory]:
    """After a write: rebuild the profiles of the people new facts are about and, with
    ``check_stale``, those that cite a fact the bank no longer holds. When the bank keeps no
    profiles, the stale ones are deleted instead. Returns the profiles created or rewritten.

    Facts leave a bank only by a forget or a document's replacement, so only those writes pass
    ``check_stale``: a retain that removed nothing reads no other profile. A process killed
    between a forget's commit and this refresh (the embedded store commits them apart) leaves
    stale profiles: ``check_integrity`` reports them; the next open of the store (its session
    did not close), ``repair`` and the bank's next forget or replaced document rebuild them.

    The whole refresh holds the bank against other writers (``Engine.bank_held``): it reads
    the bank's profiles and facts and writes what they call for, so two writers of one bank
    at once (two ``AgentMemory`` on one store, two replicas of one database) never both
    create a profile, and a fact forgotten meanwhile is cited by none.
    """
    new_facts = list(new_facts)
    with engine.bank_held(bank_id):
        stale = stale_profiles(engine.db, bank_id) if check_stale else {}
        if not config.profiles:
            if stale:
                forget_memories(engine, bank_id, collection, list(stale), None, None)
            return []
        rebuilt = set(stale.values())
        changed = refresh_profiles(engine, bank_id, collection, config, rebuilt)
        # Those rebuilt read all their facts, new ones too; facts forgotten since their retain
        # committed give no items.
        new_facts = [m for m in new_facts if subjects_of([m]) - rebuilt and items_of(m)]
        ids = [m.id for m in new_facts]
        held = {row[0] for row in memories_by_id(engine.db, bank_id, ids, "m.id")} if ids else ()
        new_facts = [m for m in new_facts if m.id in held]
        return changed + refresh_profiles(
            engine, bank_id, collection, config, subjects_of(new_facts), new_facts
        )


def stale_profiles(db: Database, bank_id: str) -> dict[str, str]:
    """The bank's profiles that cite a fact it no longer holds, each with its subject."""
    sources = profile_sources(db, bank_id)
    cited = sorted({i for _, ids in sources.values() for i in ids})
    held = {row[0] for row in memories_by_id(db, bank_id, cited, "m.id")} if cited else set()
    return {
        profile_id: key[0]
        for profile_id, (key, ids) in sources.items()
        if any(i not in held for i in ids)
    }


def subjects_of(memories: Iterable[Memory]) -> set[str]:
    """The people new facts make statements about (whose profiles may change)."""
    return {statement[0] for m in memories if (statement := statement_of(m)) is not None}


def _profile_metadata(subject: str, key: str) -> dict:
    return {"profile": {"subject": subject, "aspect": key}}
