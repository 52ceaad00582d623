"""retain: validate → skip repeats → extract → embed → store (episode, facts, entities,
links) → index.

What the bank already holds is not stored again (``retain/repeats.py``): an unchanged document
is a no-op, a changed one replaces its memories, an exact repeat of a message is skipped.

Write order, and why nothing acknowledged is lost:

1. Everything that can fail on bad input runs before the first write. The embedding model
   runs in a worker thread while the DuckDB transaction writes (the two are the largest
   costs of a retain and neither needs the other until the links are planned); the
   transaction waits for the vectors before it commits, so a model error still rolls
   everything back.
2. One DuckDB transaction stores the episode, the facts, their entities and links
   (followed_by, temporal, and the semantic / cue-phrase causal / explicit links planned by
   ``retain/relations.py`` once the vectors are there), their pending keyword postings and a
   *vector journal* entry per fact, and updates the bank's graph mirror if it is loaded. From
   its commit on, the facts are durable, keyword-searchable and reachable by the graph
   strategies.
3. The vectors are staged and go to Chroma with the next batch (an idempotent upsert, see
   ``store/staged_vectors.py``; any vector read flushes first); then the journal entries are
   cleared. A crash between 2 and 3 leaves journal entries that the next open replays
   (``store/reconcile.py``), re-embedding those facts from their stored text.
"""

from __future__ import annotations

import json
import logging
import uuid
from concurrent.futures import Future, wait
from dataclasses import dataclass, replace
from datetime import datetime
from functools import partial
from typing import Any

import numpy as np

from agentmem._time import optional_utc, utc_now
from agentmem.config import BankConfig, normalize_tags
from agentmem.engine import Engine
from agentmem.errors import AgentMemError, ExtractionError, LLMError, ModelError, NotFoundError
from agentmem.retain.extract import OfflineExtractor
from agentmem.retain.facts import EntityMention, ExtractedFact, Message, RetainInput
from agentmem.retain.feedback import skip_recalled
from agentmem.retain.labels import LABEL_KIND
from agentmem.retain.link import (
    caused_by_links,
    followed_by_links,
    link_entities,
    part_of_links,
    temporal_links,
)
from agentmem.retain.llm_extract import extract_with_llm
from agentmem.retain.messages import (
    check_retain_size,
    normalize_content,
    raw_episode,
    validate_importance,
    validate_json,
    validate_optional_str,
)
from agentmem.retain.pieces import PIECE_FACT_TYPES, Embedded, embed_with_pieces
from agentmem.retain.relations import plan_links, validate_explicit_links
from agentmem.retain.repeats import (
    RepeatCheck,
    Repeats,
    Resolution,
    find_repeats,
    message_hash,
    repeat_check,
    resolve,
    subset,
    with_wholes,
)
from agentmem.retain.slots import kept_slots
from agentmem.retain.supersession import StoredStatements, supersession_links
from agentmem.retain.timing import anchor_all_in_time
from agentmem.store.changes import is_local, record_change, settled_version
from agentmem.store.dated_facts import DatedFacts
from agentmem.store.forget import Deleted, delete_rows, delete_vectors
from agentmem.store.graph import loaded_graph, mirror_dropped_on_failure
from agentmem.store.records import (
    MemoryRow,
    insert_memories,
    insert_rows,
    memories_by_id,
    memory_selector,
    require_bank,
    sql_strings,
    to_db_time,
    write_pieces,
)
from agentmem.store.vectors import vector_metadata
from agentmem.types import Memory, RetainResult

log = logging.getLogger("agentmem")
#: Texts per call of the embedder.
EMBED_CALL = 1024


def retain(
    engine: Engine,
    bank_id: str,
    collection: str,
    bank_config: BankConfig,
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
    limits = engine.config.limits
    check_retain_size(content, max_chars=limits.retain_chars, max_messages=limits.retain_messages)
    warnings: list[str] = []
    given_when = optional_utc(mentioned_at, field="mentioned_at")
    when = utc_now() if given_when is None else given_when
    request = normalize_content(
        content,
        mentioned_at=when,
        occurred_at=occurred_at,
        context=validate_optional_str(context, field="context", max_len=10_000),
        max_depth=limits.json_depth,
    )
    chosen_importance = validate_importance(importance)
    tag_values = normalize_tags(tags)  # type: ignore[arg-type]
    call_metadata = validate_json(metadata, field="metadata", max_depth=limits.json_depth)
    doc_id = validate_optional_str(document_id, field="document_id", max_len=512)
    explicit_entity = validate_optional_str(entity_id, field="entity_id", max_len=256)
    explicit_links = validate_explicit_links(links)
    _check_targets_exist(engine, bank_id, explicit_links)
    if given_when is None and not _all_messages_timed(content):
        # Competitors silently date everything "now"; relative dates then resolve wrongly.
        warnings.append("no mentioned_at given: the content is dated now")
        log.warning("retain into bank %r without mentioned_at: dated now (%s)", bank_id, when)
    check = repeat_check(
        request,
        document_id=doc_id,
        tags=tag_values,
        importance=chosen_importance,
        metadata=call_metadata,
        entity_id=explicit_entity,
        links=explicit_links,
        time_given=given_when is not None,
    )
    # Read first: under the write lock, the same settled version means they still hold.
    seen_version = settled_version(engine.db, bank_id)
    found = find_repeats(engine.db, bank_id, check)
    if found.unchanged:
        return _already_stored(found.held, warnings)
    if found.repeated_messages:
        request = replace(
            request,
            messages=tuple(
                m for i, m in enumerate(request.messages) if i not in found.repeated_messages
            ),
        )

    early = _embed_early(engine, request, bank_config)
    try:
        extraction = _extract(engine, bank_id, bank_config, request)
        facts = anchor_all_in_time(
            [
                _apply_call_fields(f, chosen_importance, call_metadata, explicit_entity)
                for f in extraction.facts
            ],
            date_order=bank_config.date_order,
        )
        episode = Episode(
            raw_episode(content), doc_id, request.context, when, call_metadata, check.call_hash
        )
        stored = store_facts(
            engine,
            bank_id,
            collection,
            bank_config,
            facts,
            episode=episode,
            tags=tag_values,
            links=explicit_links,
            early=early,
            check=check,
            hashes=_source_hashes(extraction.source, facts),
            seen=None if seen_version is None else (seen_version, found),
        )
    except BaseException:
        if early is not None:
            wait([early.embedding])  # as in store_facts: never leave the model running
        raise
    if stored.resolution is not None and stored.resolution.unchanged:
        return _already_stored(stored.resolution.held, warnings)
    return RetainResult(
        memories=stored.memories,
        episode_id=stored.episode_id or "",
        already_stored=stored.already_stored,
        replaced=tuple(stored.resolution.replaced) if stored.resolution else (),
        warnings=(*warnings, *extraction.warnings),
        extraction=extraction.method,
        llm_calls=extraction.calls,
        prompt_tokens=extraction.prompt_tokens,
        completion_tokens=extraction.completion_tokens,
        skipped_messages=extraction.skipped,
    )


def _already_stored(held: list[Memory], warnings: list[str]) -> RetainResult:
    """The result of a call whose content the bank holds already: nothing was written."""
    return RetainResult(
        memories=held,
        episode_id=held[0].episode_id or "" if held else "",
        already_stored=tuple(m.id for m in held),
        warnings=tuple(warnings),
        extraction="none",
    )


def _source_hashes(source: tuple[Message, ...], facts: list[ExtractedFact]) -> list[str | None]:
    """The hash of the message each fact came from (None if the extractor named no message).
    Each message is hashed once: a long message gives thousands of facts."""
    hashes = [message_hash(message) for message in source]
    return [hashes[f.message_index] if 0 <= f.message_index < len(source) else None for f in facts]


@dataclass(frozen=True, slots=True)
class Episode:
    """The raw content of a retain call, kept verbatim next to the facts derived from it."""

    content: str
    document_id: str | None
    context: str | None
    mentioned_at: datetime
    metadata: dict
    content_hash: str | None = None


class _Raced(Exception):
    """Another process stored a retain's content between its repeat check and its write."""


@dataclass(frozen=True, slots=True)
class StoredFacts:
    """What :func:`store_facts` stored.

    Attributes:
        episode_id: The episode's id (None without an episode, or when nothing was written).
        memories: The facts of the call in order: new memories, and memories kept in place
            of facts stored already.
        already_stored: Ids among ``memories`` stored before the call.
        resolution: How the facts related to what the bank held (None: not checked).
    """

    episode_id: str | None
    memories: list[Memory]
    already_stored: tuple[str, ...] = ()
    resolution: Resolution | None = None


@dataclass(frozen=True, slots=True)
class EarlyEmbedding:
    """Vectors started before extraction, for the texts the extractor was expected to give."""

    texts: list[str]
    embedding: Future[Embedded]


def _embed_early(
    engine: Engine, request: RetainInput, bank_config: BankConfig
) -> EarlyEmbedding | None:
    """Start embedding while spaCy reads the messages, when the offline extractor's texts are
    known without it (chat turns that stay whole): on two cores the model and spaCy then run
    side by side instead of one after the other."""
    if engine.llm is not None or not isinstance(engine.extractor, OfflineExtractor):
        return None
    texts = engine.extractor.texts_without_parsing(request)
    if not texts:
        return None
    # Chat turns all keep their pieces; a turn's clause parts none (see _pieces_of).
    embedding = engine.embed_executor.submit(
        embed_with_pieces, partial(embed_texts, engine), texts, [bank_config.pieces] * len(texts)
    )
    return EarlyEmbedding(texts, embedding)


def store_facts(
    engine: Engine,
    bank_id: str,
    collection: str,
    bank_config: BankConfig,
    facts: list[ExtractedFact],
    *,
    episode: Episode | None,
    tags: tuple[str, ...] = (),
    links: list[tuple[str, str, float]] | None = None,
    early: EarlyEmbedding | None = None,
    check: RepeatCheck | None = None,
    hashes: list[str | None] | None = None,
    seen: tuple[int, Repeats] | None = None,
) -> StoredFacts:
    """Embed and store facts (and their episode, if any) with entities, links and indexes.

    ``links`` are explicit ``(kind, target memory id, weight)`` edges from every new fact.
    ``early`` vectors are used when they were made from exactly the facts' texts.
    ``check`` is the call's repeat check, decided again under the write lock (so concurrent
    retains of the same content store it once); ``hashes`` the facts' source message hashes;
    ``seen`` the repeats of ``check`` read before, with the bank's version then (on a store
    only this process writes: they are not read again if no write came between).
    """
    texts = [_embedding_text(f) for f in facts]
    if early is not None and early.texts == texts:
        embedding = early.embedding
    else:
        embedding = engine.embed_executor.submit(
            embed_with_pieces,
            partial(embed_texts, engine),
            texts,
            [bank_config.pieces and _has_pieces(f) for f in facts],
        )
    episode_id = uuid.uuid4().hex if episode is not None else None
    doc_id = episode.document_id if episode is not None else None
    context = episode.context if episode is not None else None
    created = utc_now()
    hashes = hashes if hashes is not None else [None] * len(facts)
    asked = (facts, hashes)  # what a retry after a race (below) stores again
    # One writer at a time from the transaction to Chroma's upsert: a concurrent forget can
    # then never delete a memory whose vector is still on its way, and the entity cache is
    # dropped before any other writer can read entities that rolled back.
    with engine.db.write_lock:
        resolution = None
        keep = list(range(len(facts)))
        if check is not None:
            planned_memories = [
                _memory(f, "", bank_id, episode_id, tags, doc_id, context) for f in facts
            ]
            still = seen[1] if seen and seen[0] == settled_version(engine.db, bank_id) else None
            resolution = resolve(
                engine.db.cursor(), bank_id, check, planned_memories, hashes, still
            )
            if resolution.unchanged:
                wait([embedding])
                return StoredFacts(None, [], resolution=resolution)
            keep = with_wholes(facts, resolution.keep)
            facts, hashes = subset(facts, keep), [hashes[i] for i in keep]

        def kept() -> Embedded:
            return embedding.result().subset(keep)

        # The link plan (the neighbour searches of semantic and causal links) reads only the
        # vectors, so it runs on the model's thread beside the inserts below (bulk retain at
        # 100k: 71 -> 68 ms a call); under the write lock no other writer changes them.
        planned = engine.embed_executor.submit(
            lambda: plan_links(engine, collection, facts, kept().vectors, links or [])
        )
        doomed: list[str] = []
        version = None
        try:
            with mirror_dropped_on_failure(engine, bank_id), engine.db.transaction() as cur:
                require_bank(cur, bank_id, collection)
                engine.begin_write(cur, bank_id)
                # Decided before the bank was locked: on a shared store another process may
                # have stored this content since (then decide again, from the start).
                if (
                    resolution is not None
                    and not is_local(engine.db)
                    and resolve(cur, bank_id, check, planned_memories, asked[1]) != resolution
                ):
                    raise _Raced
                if episode is not None:
                    insert_rows(
                        cur,
                        "episodes",
                        [
                            (
                                episode_id,
                                bank_id,
                                episode.content,
                                doc_id,
                                context,
                                to_db_time(episode.mentioned_at),
                                json.dumps(episode.metadata, ensure_ascii=False),
                                to_db_time(created),
                                episode.content_hash,
                            )
                        ],
                    )
                gone = Deleted((), ())
                if resolution is not None and doc_id is not None:
                    gone = _replace_document(
                        engine, cur, bank_id, collection, doc_id, episode_id, resolution
                    )
                doomed = list(gone.memory_ids)
                dated = _dated_facts(engine, cur, bank_id)  # before this call's facts are in
                statements = _stored_statements(engine, cur, bank_id)
                rows = _memory_rows(
                    cur, bank_id, episode_id, facts, hashes, tags, doc_id, context, created
                )
                insert_memories(cur, rows)
                ids = [r.memory.id for r in rows]
                linked = link_entities(engine, cur, bank_id, ids, facts, engine.resolver)
                known_links = [
                    # A part follows no fact: the turns' order skips their clauses.
                    *followed_by_links(
                        [i for i, f in zip(ids, facts, strict=True) if f.part_of is None]
                    ),
                    *caused_by_links(ids, [f.caused_by for f in facts]),
                    *part_of_links(ids, [f.part_of for f in facts]),
                    *temporal_links(
                        dated,
                        [r.memory for r in rows],
                        [r.seq for r in rows],
                        bank_config.temporal_sigma_days,
                    ),
                ]
                if rows:
                    engine.keyword.add_pending(cur, rows[0].seq, rows[-1].seq)
                # Everything above runs while the model embeds and the plan searches.
                embedded = kept()  # before COMMIT: a model error writes nothing
                vectors = embedded.vectors
                write_pieces(cur, _pieces_of(rows, facts, embedded.pieces))
                write_vectors_in(engine, cur, bank_id, collection, rows, vectors)
                plan = planned.result()
                targets = plan.existing_targets()
                alive, parts = _alive(cur, bank_id, targets), _parts(cur, bank_id, targets)
                newest = [(r.memory.id, r.seq, r.memory.mentioned_at, r.memory.text) for r in rows]
                # The call's links in one statement (each costs ~1 ms, whatever its rows):
                # those known from the facts, then those planned from the vectors.
                insert_rows(
                    cur,
                    "links",
                    [
                        (bank_id, src, dst, kind, weight, to_db_time(created))
                        for src, dst, kind, weight in [
                            *known_links,
                            *plan.rows(ids, alive, parts),
                            *supersession_links(cur, bank_id, newest, statements),
                        ]
                    ],
                )
                graph = loaded_graph(engine, bank_id)
                if graph is not None:
                    graph.sync_memories(cur, bank_id, ids)
                version = record_change(
                    engine.db,
                    cur,
                    bank_id,
                    "retain",
                    [*ids, *doomed, *gone.relinked],
                    [*linked.entity_ids, *gone.entity_ids],
                )
        except _Raced:
            wait([planned])
            return store_facts(
                engine,
                bank_id,
                collection,
                bank_config,
                asked[0],
                episode=episode,
                tags=tags,
                links=links,
                early=early,
                check=check,
                hashes=asked[1],
            )
        except BaseException:
            wait([embedding, planned])  # never leave work running for a call that has failed
            engine.drop_mirror("entity_indexes", bank_id)  # it may hold entities that rolled back
            # Its statements were read under this transaction's deletes, which rolled back.
            engine.drop_mirror("stored_statements", bank_id)
            raise
        dated.add((r.memory, r.seq) for r in rows)  # committed: the bank's time order has them
        engine.bank_changed(bank_id, version)
        engine.keep_mirror("dated_facts", bank_id, dated, version)
        engine.keep_mirror("stored_statements", bank_id, statements, version)
        write_vectors(engine, bank_id, collection, rows, vectors)
        if doomed:
            delete_vectors(engine, collection, doomed)
    engine.keyword.maybe_fold()
    new = [replace(r.memory, entities=names) for r, names in zip(rows, linked.names, strict=True)]
    if resolution is None:
        return StoredFacts(episode_id, new)
    return _in_call_order(episode_id, new, keep, resolution)


def _replace_document(
    engine: Engine,
    cur,  # noqa: ANN001
    bank_id: str,
    collection: str,
    document_id: str,
    episode_id: str | None,
    resolution: Resolution,
) -> Deleted:
    """In the retain transaction: delete the document's replaced memories and its earlier
    episodes; the memories it keeps move to the new episode. Returns what was deleted."""
    doomed = Deleted((), ())
    if resolution.replaced:
        doomed = delete_rows(
            engine, cur, bank_id, collection, *memory_selector(bank_id, ids=resolution.replaced)
        )
        engine.drop_mirror("entity_indexes", bank_id)  # entities may have gone with their facts
        engine.drop_mirror("dated_facts", bank_id)  # it holds the deleted facts
    kept = [m.id for m in resolution.kept_memories.values()]
    if kept:
        cur.execute(
            f"UPDATE memories SET episode_id = $episode WHERE id IN ({sql_strings(kept)})",
            {"episode": episode_id},
        )
    for memory_id, content_hash in resolution.hashes.items():
        cur.execute("UPDATE memories SET content_hash = ? WHERE id = ?", [content_hash, memory_id])
    cur.execute(
        "DELETE FROM episodes WHERE bank_id = $bank AND document_id = $doc AND id <> $episode",
        {"bank": bank_id, "doc": document_id, "episode": episode_id},
    )
    return doomed


def _in_call_order(
    episode_id: str | None, new: list[Memory], keep: list[int], resolution: Resolution
) -> StoredFacts:
    """The stored facts in the call's order: new memories and the memories kept in place of
    facts stored already (moved to the new episode), then held memories of repeated messages."""
    by_index = dict(zip(keep, new, strict=True))
    by_index.update(
        {i: replace(m, episode_id=episode_id) for i, m in resolution.kept_memories.items()}
    )
    ordered = [by_index[i] for i in sorted(by_index)]
    already = [*resolution.kept_memories.values(), *resolution.held]
    return StoredFacts(
        episode_id,
        [*ordered, *resolution.held],
        tuple(m.id for m in already),
        resolution,
    )


def _dated_facts(engine: Engine, cur, bank_id: str) -> DatedFacts:  # noqa: ANN001
    dated = engine.mirror("dated_facts", bank_id, cur)
    return dated if dated is not None else DatedFacts.load(cur, bank_id)


def _stored_statements(engine: Engine, cur, bank_id: str) -> StoredStatements:  # noqa: ANN001
    statements = engine.mirror("stored_statements", bank_id, cur)
    return statements if statements is not None else StoredStatements()


def _embedding_text(fact: ExtractedFact) -> str:
    """Labels are part of what a fact means, so they are embedded with its text."""
    labels = [e.name for e in fact.entities if e.kind == LABEL_KIND]
    return " ".join([fact.text, *labels])


@dataclass(frozen=True, slots=True)
class _Extraction:
    facts: list[ExtractedFact]
    source: tuple[Message, ...]  # the messages the facts' message_index refers to
    method: str = "offline"
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    skipped: int = 0
    warnings: tuple[str, ...] = ()


def _check_targets_exist(engine: Engine, bank_id: str, links: list[tuple[str, str, float]]) -> None:
    targets = sorted({target for _, target, _ in links})
    missing = set(targets) - _alive(engine.db.cursor(), bank_id, set(targets))
    if missing:
        raise NotFoundError(f"no memory {sorted(missing)[0]!r} in bank {bank_id!r} to link to")


def _alive(cur, bank_id: str, ids: set[str]) -> set[str]:  # noqa: ANN001
    """Which of ``ids`` are memories of the bank (a vector whose memory was forgotten can
    outlive it in Chroma until the next open if Chroma's delete failed; an explicit link may
    name anything). ~0.7 ms for 20 ids at 100k memories."""
    return {row[0] for row in memories_by_id(cur, bank_id, sorted(ids), "m.id")}


def _parts(cur, bank_id: str, ids: set[str]) -> set[str]:  # noqa: ANN001
    """Which of ``ids`` are parts of another memory ("part_of" links). The ids are written as
    literals in a CTE of their own: DuckDB then looks them up in the ``links_src`` index
    instead of testing every link of the store (at 100k memories 1.2 ms, not 2.4)."""
    if not ids:
        return set()
    rows = cur.execute(
        "WITH found AS MATERIALIZED (SELECT src_id, bank_id, kind FROM links "
        f"WHERE src_id IN ({sql_strings(sorted(ids))})) "
        "SELECT src_id FROM found WHERE bank_id = $bank AND kind = 'part_of'",
        {"bank": bank_id},
    ).fetchall()
    return {row[0] for row in rows}


def _all_messages_timed(content: object) -> bool:
    return (
        isinstance(content, list)
        and bool(content)
        and all(isinstance(m, dict) and m.get("timestamp") is not None for m in content)
    )


def _extract(
    engine: Engine, bank_id: str, bank_config: BankConfig, request: RetainInput
) -> _Extraction:
    if engine.llm is None:
        return _Extraction(_offline(engine, request), request.messages)
    kept, skipped = skip_recalled(engine, bank_id, request)
    warnings = (f"{skipped} message(s) repeat stored memories: not extracted",) if skipped else ()
    if not kept.messages:
        return _Extraction([], (), "llm", skipped=skipped, warnings=warnings)
    try:
        out = extract_with_llm(engine.llm, kept, bank_config)
    except LLMError as exc:
        # Never lose content: the episode is stored and the offline extractor runs instead.
        log.warning(
            "LLM extraction failed in bank %r, using the offline extractor: %s", bank_id, exc
        )
        return _Extraction(
            _offline(engine, kept),
            kept.messages,
            "offline_fallback",
            skipped=skipped,
            warnings=(*warnings, f"LLM extraction failed, offline facts stored: {exc}"),
        )
    return _Extraction(
        out.facts,
        kept.messages,
        "llm",
        out.calls,
        out.prompt_tokens,
        out.completion_tokens,
        skipped,
        warnings,
    )


def _offline(engine: Engine, request: RetainInput) -> list[ExtractedFact]:
    try:
        return list(engine.extractor.extract(request))
    except AgentMemError:
        raise
    except Exception as exc:  # a user-supplied extractor may raise anything
        raise ExtractionError(f"the extractor failed: {exc}") from exc


def _has_pieces(fact: ExtractedFact) -> bool:
    """Whether a fact keeps pieces: a whole fact (not a turn's clause part) of a kind that has
    them (see ``retain/pieces.py``)."""
    return fact.part_of is None and fact.fact_type in PIECE_FACT_TYPES


def _pieces_of(
    rows: list[MemoryRow], facts: list[ExtractedFact], pieces: list[str | None]
) -> dict[str, str]:
    """Memory id -> its stored pieces, for the facts that keep them."""
    return {
        row.memory.id: stored
        for row, fact, stored in zip(rows, facts, pieces, strict=True)
        if stored is not None and _has_pieces(fact)
    }


def embed_texts(engine: Engine, texts: list[str]) -> np.ndarray:
    if not texts:
        return np.zeros((0, engine.embedder.dimension), dtype=np.float32)
    try:
        # In bounded calls: the embedder tokenises all the texts it is given at once.
        vectors = np.concatenate(
            [
                np.asarray(engine.embedder.embed(texts[start : start + EMBED_CALL]), np.float32)
                for start in range(0, len(texts), EMBED_CALL)
            ]
        )
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


def _memory(
    fact: ExtractedFact,
    memory_id: str,
    bank_id: str,
    episode_id: str | None,
    tags: tuple[str, ...],
    document_id: str | None,
    context: str | None,
) -> Memory:
    """A fact as the memory it is stored as."""
    return Memory(
        id=memory_id,
        bank_id=bank_id,
        text=fact.text,
        fact_type=fact.fact_type,
        occurred_start=fact.occurred_start,
        occurred_end=fact.occurred_end,
        mentioned_at=fact.mentioned_at,
        tags=tuple(sorted({*tags, *fact.tags})),
        importance=fact.importance,
        document_id=document_id,
        context=context,
        metadata=fact.metadata,
        episode_id=episode_id,
    )


def _memory_rows(
    cur,  # noqa: ANN001
    bank_id: str,
    episode_id: str | None,
    facts: list[ExtractedFact],
    hashes: list[str | None],
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
            "SELECT nextval('memory_seq') FROM generate_series(1, ?)", [len(facts)]
        ).fetchall()
    ]
    return [
        MemoryRow(
            memory=_memory(fact, uuid.uuid4().hex, bank_id, episode_id, tags, document_id, context),
            seq=seq,
            # A tentative mention is a word of the text that may name nothing: no extra weight.
            search_text=" ".join([fact.text, *(e.name for e in fact.entities if not e.tentative)]),
            context_text=fact.keyword_context,
            created_at=created,
            content_hash=content_hash,
            statement_slots=slots,
        )
        for seq, fact, content_hash, slots in zip(
            sorted(seqs), facts, hashes, kept_slots([f.text for f in facts]), strict=True
        )
    ]


def _vector_metadatas(rows: list[MemoryRow]) -> list[dict[str, str | float | bool]]:
    return [
        vector_metadata(m.fact_type, m.occurred_start, m.occurred_end, m.mentioned_at)
        for m in (r.memory for r in rows)
    ]


def write_vectors_in(
    engine: Engine,
    cur: Any,  # noqa: ANN401
    bank_id: str,
    collection: str,
    rows: list[MemoryRow],
    vectors: np.ndarray,
) -> None:
    """In the rows' transaction: the vector store's part of writing their vectors (a
    journal entry, or the vectors themselves where they live in the same database)."""
    if rows:
        engine.vectors.write_in(
            cur, bank_id, collection, [r.memory.id for r in rows], vectors, _vector_metadatas(rows)
        )


def write_vectors(
    engine: Engine, bank_id: str, collection: str, rows: list[MemoryRow], vectors: np.ndarray
) -> None:
    """Stage the vectors of committed rows; they reach Chroma with the next batch."""
    engine.vectors.stage(
        bank_id, collection, [r.memory.id for r in rows], vectors, _vector_metadatas(rows)
    )
