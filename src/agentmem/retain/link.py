"""Resolve each fact's entity mentions to the bank's canonical entities, and link facts.

Entity links are the memory–entity edges themselves (``memory_entities``): two facts that
share an entity are two hops apart in the graph, which avoids storing a quadratic number of
fact–fact edges for an entity mentioned a thousand times. ``followed_by`` links keep the order
of facts within an episode.
"""

from __future__ import annotations

import json
import math
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

from agentmem.engine import Engine
from agentmem.links import PART_OF
from agentmem.retain.entity_cache import load_entities, load_resolver
from agentmem.retain.facts import ExtractedFact
from agentmem.retain.resolve import EntityIndex, EntityResolver, KnownEntity
from agentmem.store.dated_facts import DatedFacts, midpoint
from agentmem.store.dialect import json_rows
from agentmem.store.records import insert_rows, kind_votes_to_json, to_db_time
from agentmem.types import Memory


def bank_entity_index(engine: Engine, cur: Any, bank_id: str) -> EntityIndex:
    """The bank's entity index: loaded from the store on first use in this process, then
    kept at the bank's version (``Engine.begin_write`` catches it up)."""
    index = engine.mirror("entity_indexes", bank_id, cur)
    if index is None:
        version = engine.bank_version(bank_id)
        index = EntityIndex(load_entities(cur, bank_id))
        engine.keep_mirror("entity_indexes", bank_id, index, version)
    assert isinstance(index, EntityIndex)
    return index


def bank_resolver(
    engine: Engine, cur: Any, bank_id: str, default: EntityResolver
) -> EntityResolver:
    """The bank's resolver: ``default`` plus the bank's entity corrections
    (``retain/corrections.py``), cached per bank."""
    resolver = engine.mirror("resolvers", bank_id, cur)
    if resolver is None:
        version = engine.bank_version(bank_id)
        resolver = load_resolver(cur, bank_id, default)
        engine.keep_mirror("resolvers", bank_id, resolver, version)
    return resolver


@dataclass(frozen=True, slots=True)
class LinkedEntities:
    """What :func:`link_entities` did: each fact's canonical entity names, and the ids of the
    entities created or mentioned."""

    names: list[tuple[str, ...]]
    entity_ids: tuple[str, ...]


def link_entities(
    engine: Engine,
    cur: Any,
    bank_id: str,
    memory_ids: list[str],
    facts: list[ExtractedFact],
    resolver: EntityResolver,
) -> LinkedEntities:
    """Resolve and store the entities of new facts.

    Every mention votes on its entity's kind with its confidence, so the kind follows the
    evidence of all mentions (the votes are stored with the entity). A tentative mention
    (``EntityMention.tentative``) joins an entity the bank knows and never creates one.

    Runs inside the retain transaction. The caller drops the bank's cached index if the
    transaction fails, so the cache never holds entities the store does not.
    """
    resolver = bank_resolver(engine, cur, bank_id, resolver)
    index = bank_entity_index(engine, cur, bank_id)
    touched: dict[str, KnownEntity] = {}
    # The names (canonical, then aliases) of the stored entities this call mentions, as
    # stored; an entity not in here is new. Only those whose names changed are written back.
    stored: dict[str, tuple[str, ...]] = {}
    fact_entity_ids: list[list[str]] = []
    for fact in facts:
        names = [m.name.casefold() for m in fact.entities]
        ids: list[str] = []
        for mention in fact.entities:
            context = [n for n in names if n != mention.name.casefold()]
            match = resolver.resolve(mention, index, context)
            if match is None and mention.tentative:
                continue
            canonical = resolver.canonical_name(mention, match)
            vote = None if mention.tentative else (mention.kind, mention.confidence)
            if match is None:
                entity = KnownEntity(
                    id=uuid.uuid4().hex, name=canonical, kind=mention.kind, aliases=()
                )
                entity = entity.with_mention(
                    mention.name, canonical=canonical, neighbors=context, vote=vote
                )
                index.add(entity)
            else:
                if match.id not in touched:
                    stored[match.id] = (match.names, match.kind, match.kind_votes)
                entity = match.with_mention(
                    mention.name, canonical=canonical, neighbors=context, vote=vote
                )
                index.update(entity)
            touched[entity.id] = entity
            if entity.id not in ids:
                ids.append(entity.id)
        fact_entity_ids.append(ids)

    new = [e for e in touched.values() if e.id not in stored]
    changed = [
        e
        for e in touched.values()
        if e.id in stored and stored[e.id] != (e.names, e.kind, e.kind_votes)
    ]
    if new:
        created = datetime.now(UTC).replace(tzinfo=None)
        insert_rows(
            cur,
            "entities",
            [
                (
                    e.id,
                    bank_id,
                    e.name,
                    e.kind,
                    list(e.aliases),
                    created,
                    kind_votes_to_json(e.kind_votes),
                )
                for e in new
            ],
        )
    # Most mentions only add a kind vote: those rows get their votes alone (an UPDATE of one
    # scalar column costs DuckDB less than one that rewrites the alias lists too).
    renamed = [e for e in changed if stored[e.id][:2] != (e.names, e.kind)]
    revoted = [e for e in changed if stored[e.id][:2] == (e.names, e.kind)]
    for entities, columns in (
        (renamed, "name, aliases, kind, kind_votes"),
        (revoted, "kind_votes"),
    ):
        if entities:
            _update_entities(cur, entities, columns)
    insert_rows(
        cur,
        "memory_entities",
        [
            (memory_id, entity_id, bank_id, to_db_time(fact.occurred_start or fact.mentioned_at))
            for memory_id, fact, ids in zip(memory_ids, facts, fact_entity_ids, strict=True)
            for entity_id in ids
        ],
    )
    return LinkedEntities(
        [tuple(sorted(touched[i].name for i in ids)) for ids in fact_entity_ids], tuple(touched)
    )


def _update_entities(cur: Any, entities: list[KnownEntity], columns: str) -> None:  # noqa: ANN401
    """Write ``columns`` (of name, aliases, kind, kind_votes) of stored entities."""
    rows = [
        {
            "id": e.id,
            "name": e.name,
            "aliases": list(e.aliases),
            "kind": e.kind,
            "kind_votes": kind_votes_to_json(e.kind_votes),
        }
        for e in entities
    ]
    assignments = ", ".join(f"{c} = u.{c}" for c in columns.split(", "))
    cur.execute(
        f"UPDATE entities SET {assignments} FROM {json_rows(cur, 'entities')} AS u "
        "WHERE entities.id = u.id",
        {"rows": json.dumps(rows, ensure_ascii=False)},
    )


def followed_by_links(memory_ids: list[str]) -> list[tuple[str, str, str, float]]:
    """(src, dst, kind, weight) edges that keep the order of facts within one episode."""
    return [(a, b, "followed_by", 1.0) for a, b in zip(memory_ids, memory_ids[1:], strict=False)]


def part_of_links(
    memory_ids: list[str], wholes: list[int | None]
) -> list[tuple[str, str, str, float]]:
    """(part, whole, "part_of", 1.0) edges from each clause to the fact it was split from."""
    return [
        (memory_ids[part], memory_ids[whole], PART_OF, 1.0)
        for part, whole in enumerate(wholes)
        if whole is not None and 0 <= whole < len(memory_ids) and whole != part
    ]


def caused_by_links(
    memory_ids: list[str], causes: list[tuple[int, ...]]
) -> list[tuple[str, str, str, float]]:
    """(effect, cause, "caused_by", 1.0) edges from each fact's causes within its batch."""
    return [
        (memory_ids[effect], memory_ids[cause], "caused_by", 1.0)
        for effect, indexes in enumerate(causes)
        for cause in indexes
        if 0 <= cause < len(memory_ids) and cause != effect
    ]


# New facts with an occurrence link to their nearest facts in time (at most
# TEMPORAL_NEIGHBOURS each, within 3σ): the bank's and this call's earlier ones, so a pair is
# linked once. The bank's dated facts inside the window come from its in-memory time order
# (store/dated_facts.py) and the nearest are picked in numpy. Facts of the same day tie in
# time (a session's turns share its date); the tie goes to the fact retained nearest before
# (the conversation's neighbouring turns), so the same conversation retained twice gets the
# same links, whatever its ids.
TEMPORAL_NEIGHBOURS = 5


def temporal_links(
    dated: DatedFacts, memories: list[Memory], seqs: list[int], sigma_days: float
) -> list[tuple[str, str, str, float]]:
    """(src, dst, "temporal", exp(-Δt/σ)) edges from new dated facts to the facts nearest in
    time retained before them: the bank's (``dated``, which does not hold the new facts yet)
    and this call's (``memories`` in the order of their ``seqs``).

    Undated facts get no temporal links: "Alice prefers coffee" is not near anything in time.
    """
    new = [
        (m.id, mid, seq)
        for m, seq in zip(memories, seqs, strict=True)
        if (mid := midpoint(m)) is not None
    ]
    if not new:
        return []
    sigma = sigma_days * 86_400.0
    reach = 3 * sigma
    times_of_new = [mid for _, mid, _ in new]
    stored, stored_times, stored_seqs = dated.within(
        min(times_of_new) - reach, max(times_of_new) + reach
    )
    ids = np.array([*stored, *(memory_id for memory_id, _, _ in new)])
    times = np.concatenate([stored_times, np.array(times_of_new, dtype=np.float64)])
    order = np.concatenate([stored_seqs, np.array([seq for _, _, seq in new], dtype=np.int64)])
    links = []
    for src, mid, seq in new:
        gaps = np.abs(times - mid)
        keep = (gaps <= reach) & (order < seq)
        nearest = np.lexsort((seq - order[keep], gaps[keep]))[:TEMPORAL_NEIGHBOURS]
        for dst, gap in zip(ids[keep][nearest], gaps[keep][nearest], strict=True):
            links.append((src, str(dst), "temporal", math.exp(-gap / sigma)))
    return links
