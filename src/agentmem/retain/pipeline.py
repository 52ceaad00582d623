"""retain: validate → extract → embed → store (episode, facts, entities, links) → index.

Write order, and why nothing acknowledged is lost:

1. Everything that can fail on bad input or a model error runs before the first write.
2. One DuckDB transaction stores the episode, the facts, their entities and links (followed_by,
   and the semantic / cue-phrase causal / explicit links planned in step 1 by
   ``retain/relations.py``), their pending keyword postings and a *vector journal* entry per
   fact, and updates the bank's graph mirror if it is loaded. From its commit on, the facts
   are durable, keyword-searchable and reachable by the graph strategies.
3. The vectors go to Chroma (an idempotent upsert); then the journal entries are cleared.
   A crash between 2 and 3 leaves journal entries that the next open replays
   (``store/reconcile.py``), re-embedding those facts from their stored text.
"""

from __future__ import annotations

import json
import logging
import uuid
from dataclasses import replace
from datetime import datetime

import numpy as np

from agentmem._time import optional_utc, utc_now
from agentmem.config import normalize_tags
from agentmem.engine import Engine
from agentmem.errors import AgentMemError, ExtractionError, ModelError, NotFoundError
from agentmem.retain.facts import EntityMention, ExtractedFact
from agentmem.retain.link import followed_by_links, link_entities
from agentmem.retain.messages import (
    normalize_content,
    raw_episode,
    validate_importance,
    validate_json,
    validate_optional_str,
)
from agentmem.retain.relations import plan_links, validate_explicit_links
from agentmem.store.graph import loaded_graph
from agentmem.store.records import MemoryRow, execute_many, insert_memories, to_db_time
from agentmem.types import Memory, RetainResult

log = logging.getLogger("agentmem")


def retain(
    engine: Engine,
    bank_id: str,
    collection: str,
    content: object,
    *,
    mentioned_at: object = None,
    occurred_at: object = None,
    tags: object = (),
    importance: object = None,
    context: object = None,
    document_id: object = None,
    entity_id: object = None,
    metadata: object = None,
    links: object = None,
) -> RetainResult:
    """Store content in a bank; see ``MemoryBank.retain`` for the contract."""
    warnings: list[str] = []
    when = optional_utc(mentioned_at, field="mentioned_at")
    if when is None:
        when = utc_now()
        if not _all_messages_timed(content):
            # Competitors silently date everything "now"; relative dates then resolve wrongly.
            warnings.append("no mentioned_at given: the content is dated now")
            log.warning("retain into bank %r without mentioned_at: dated now (%s)", bank_id, when)
    request = normalize_content(
        content,
        mentioned_at=when,
        occurred_at=occurred_at,
        context=validate_optional_str(context, field="context", max_len=10_000),
    )
    chosen_importance = validate_importance(importance)
    tag_values = normalize_tags(tags)  # type: ignore[arg-type]
    call_metadata = validate_json(metadata, field="metadata")
    doc_id = validate_optional_str(document_id, field="document_id", max_len=512)
    explicit_entity = validate_optional_str(entity_id, field="entity_id", max_len=256)
    explicit_links = validate_explicit_links(links)
    _check_targets_exist(engine, bank_id, explicit_links)

    facts = _extract(engine, request)
    facts = [
        _apply_call_fields(f, chosen_importance, call_metadata, explicit_entity) for f in facts
    ]
    vectors = _embed(engine, [f.text for f in facts])
    plan = plan_links(engine, collection, facts, vectors, explicit_links)

    episode_id = uuid.uuid4().hex
    created = utc_now()
    try:
        with engine.db.transaction() as cur:
            cur.execute(
                "INSERT INTO episodes VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    episode_id,
                    bank_id,
                    raw_episode(content),
                    doc_id,
                    request.context,
                    to_db_time(when),
                    json.dumps(call_metadata, ensure_ascii=False),
                    to_db_time(created),
                ],
            )
            rows = _memory_rows(
                cur, bank_id, episode_id, facts, tag_values, doc_id, request.context, created
            )
            insert_memories(cur, rows)
            entity_names = link_entities(
                engine, cur, bank_id, [r.memory.id for r in rows], facts, engine.resolver
            )
            memory_ids = [r.memory.id for r in rows]
            alive = _alive(cur, bank_id, plan.existing_targets())
            execute_many(
                cur,
                "INSERT INTO links VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (bank_id, src, dst, kind, weight, to_db_time(created))
                    for src, dst, kind, weight in followed_by_links(memory_ids)
                    + plan.rows(memory_ids, alive)
                ],
            )
            if rows:
                engine.keyword.add_pending(cur, rows[0].seq, rows[-1].seq)
                execute_many(
                    cur,
                    "INSERT INTO vector_journal VALUES (?, ?, 'add')",
                    [(r.memory.id, bank_id) for r in rows],
                )
            graph = loaded_graph(engine, bank_id)
            if graph is not None:
                graph.sync_memories(cur, bank_id, memory_ids)
    except BaseException:
        engine.entity_indexes.pop(bank_id, None)  # the cache may hold entities that rolled back
        engine.graphs.pop(bank_id, None)  # and the graph mirror edges that rolled back
        raise
    _write_vectors(engine, bank_id, collection, rows, vectors)
    engine.keyword.maybe_rebuild()
    memories = [
        replace(r.memory, entities=names) for r, names in zip(rows, entity_names, strict=True)
    ]
    return RetainResult(memories=memories, episode_id=episode_id, warnings=tuple(warnings))


def _check_targets_exist(engine: Engine, bank_id: str, links: list[tuple[str, str, float]]) -> None:
    targets = sorted({target for _, target, _ in links})
    missing = set(targets) - _alive(engine.db.cursor(), bank_id, set(targets))
    if missing:
        raise NotFoundError(f"no memory {sorted(missing)[0]!r} in bank {bank_id!r} to link to")


def _alive(cur, bank_id: str, ids: set[str]) -> set[str]:  # noqa: ANN001
    """Which of ``ids`` are memories of the bank (a planned link target may have been forgotten
    since it was found)."""
    if not ids:
        return set()
    rows = cur.execute(
        "SELECT id FROM memories WHERE bank_id = $bank AND list_contains($ids, id)",
        {"bank": bank_id, "ids": sorted(ids)},
    ).fetchall()
    return {r[0] for r in rows}


def _all_messages_timed(content: object) -> bool:
    return (
        isinstance(content, list)
        and bool(content)
        and all(isinstance(m, dict) and m.get("timestamp") is not None for m in content)
    )


def _extract(engine: Engine, request) -> list[ExtractedFact]:  # noqa: ANN001
    try:
        return list(engine.extractor.extract(request))
    except AgentMemError:
        raise
    except Exception as exc:  # a user-supplied extractor may raise anything
        raise ExtractionError(f"the extractor failed: {exc}") from exc


def _embed(engine: Engine, texts: list[str]) -> np.ndarray:
    if not texts:
        return np.zeros((0, engine.embedder.dimension), dtype=np.float32)
    try:
        vectors = np.asarray(engine.embedder.embed(texts), dtype=np.float32)
    except AgentMemError:
        raise
    except Exception as exc:
        raise ModelError(f"the embedder failed: {exc}") from exc
    if vectors.shape != (len(texts), engine.embedder.dimension) or not np.isfinite(vectors).all():
        raise ModelError(
            f"the embedder returned shape {vectors.shape} (or non-finite values); "
            f"expected ({len(texts)}, {engine.embedder.dimension})"
        )
    return vectors


def _apply_call_fields(
    fact: ExtractedFact,
    importance: float | None,
    metadata: dict,
    explicit_entity: str | None,
) -> ExtractedFact:
    entities = fact.entities
    if explicit_entity and all(e.name != explicit_entity for e in entities):
        entities = (*entities, EntityMention(explicit_entity, "concept"))
    return replace(
        fact,
        importance=fact.importance if importance is None else importance,
        metadata={**metadata, **fact.metadata},
        entities=entities,
    )


def _memory_rows(
    cur,  # noqa: ANN001
    bank_id: str,
    episode_id: str,
    facts: list[ExtractedFact],
    tags: tuple[str, ...],
    document_id: str | None,
    context: str | None,
    created: datetime,
) -> list[MemoryRow]:
    if not facts:
        return []
    seqs = [
        s
        for (s,) in cur.execute(
            "SELECT nextval('memory_seq') FROM range(?)", [len(facts)]
        ).fetchall()
    ]
    return [
        MemoryRow(
            memory=Memory(
                id=uuid.uuid4().hex,
                bank_id=bank_id,
                text=fact.text,
                fact_type=fact.fact_type,
                occurred_start=fact.occurred_start,
                occurred_end=fact.occurred_end,
                mentioned_at=fact.mentioned_at,
                tags=tags,
                importance=fact.importance,
                document_id=document_id,
                context=context,
                metadata=fact.metadata,
                episode_id=episode_id,
            ),
            seq=seq,
            search_text=" ".join([fact.text, *(e.name for e in fact.entities)]),
            context_text=fact.keyword_context,
            created_at=created,
        )
        for seq, fact in zip(sorted(seqs), facts, strict=True)
    ]


def _write_vectors(
    engine: Engine, bank_id: str, collection: str, rows: list[MemoryRow], vectors: np.ndarray
) -> None:
    if not rows:
        return
    engine.vectors.upsert(
        collection,
        [r.memory.id for r in rows],
        vectors,
        [{"fact_type": r.memory.fact_type} for r in rows],
    )
    engine.db.execute(
        "DELETE FROM vector_journal WHERE bank_id = $bank AND list_contains($ids, memory_id)",
        {"bank": bank_id, "ids": [r.memory.id for r in rows]},
    )
