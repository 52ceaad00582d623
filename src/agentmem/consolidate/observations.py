"""Observations: durable statements synthesised from facts, created or refined by an LLM.

An observation is a memory of fact_type "observation", recallable like any fact. Its
metadata holds ``source_memory_ids`` (the supporting facts), ``proof_count`` (how many there
are) and ``history`` (earlier texts, with when they were replaced). Consolidation never
deletes a fact: a fact an observation shows to be wrong gets ``contradicted_by`` (the
observation ids) in its metadata and stays recallable.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

import numpy as np
from pydantic import BaseModel, Field

from agentmem._time import utc_now
from agentmem.config import BankConfig, RecallConfig
from agentmem.engine import Engine
from agentmem.errors import NotAvailableError
from agentmem.llm.prompts import consolidation_messages
from agentmem.recall.pipeline import recall
from agentmem.retain.facts import EntityMention, ExtractedFact
from agentmem.retain.pipeline import embed_texts, store_facts, write_vectors, write_vectors_in
from agentmem.store.changes import record_change
from agentmem.store.records import (
    MemoryRow,
    load_memories,
    memory_from_row,
    select_memories,
    sql_strings,
    to_db_time,
)
from agentmem.types import Memory

OBSERVATION = "observation"
_EVIDENCE_TYPES = ("world", "experience")
_RELATED_OBSERVATIONS = 10


class ObservationAction(BaseModel):
    """Create an observation, or refine the existing one with ``observation_id``."""

    action: Literal["create", "refine"]
    observation_id: str | None = None
    text: str
    supporting_fact_ids: list[str] = Field(default_factory=list)
    contradicted_fact_ids: list[str] = Field(default_factory=list)


class ConsolidationOut(BaseModel):
    """How the new facts change the bank's observations."""

    actions: list[ObservationAction] = Field(default_factory=list)


def consolidate(
    engine: Engine, bank_id: str, collection: str, config: BankConfig, memory_ids: Sequence[str]
) -> list[Memory]:
    """Compare new facts with related observations; create or refine observations.

    Returns:
        The observations created or refined.

    Raises:
        LLMError: The LLM call failed (the facts stay stored; nothing is changed).
    """
    if engine.llm is None:
        raise NotAvailableError("consolidation needs AgentMemory(llm=...)")
    found = load_memories(engine.db, bank_id, list(memory_ids))
    facts = [found[i] for i in memory_ids if i in found and found[i].fact_type in _EVIDENCE_TYPES]
    if not facts:
        return []
    related = _related_observations(engine, bank_id, collection, facts)
    reply = engine.llm.structured(
        ConsolidationOut, consolidation_messages(facts, related), purpose="consolidate"
    )
    # The LLM ran without the bank held (it may take seconds); what it decided is written
    # with the bank held, and only if none of its facts was forgotten meanwhile.
    with engine.bank_held(bank_id):
        live = set(load_memories(engine.db, bank_id, [f.id for f in facts]))
        if len(live) == len(facts):
            return _apply(engine, bank_id, collection, config, reply.value, facts, related)
    # The reply may restate what was forgotten: consolidate what is left instead.
    return consolidate(engine, bank_id, collection, config, [f.id for f in facts if f.id in live])


def _apply(
    engine: Engine,
    bank_id: str,
    collection: str,
    config: BankConfig,
    reply: ConsolidationOut,
    facts: Sequence[Memory],
    related: Sequence[Memory],
) -> list[Memory]:
    """Carry out the LLM's actions: create, refine, flag contradicted facts."""
    fact_ids = {f.id for f in facts}
    by_id = {o.id: o for o in related}
    changed: list[Memory] = []
    for action in reply.actions:
        supporting = [i for i in dict.fromkeys(action.supporting_fact_ids) if i in fact_ids]
        text = " ".join(action.text.split())
        if not text:
            continue
        target = by_id.get(action.observation_id or "")
        observation = None
        if action.action == "refine" and target is not None:
            observation = refine_observation(engine, bank_id, collection, target, text, supporting)
        if observation is None:  # a new one, or the one to refine was forgotten meanwhile
            observation = create_observation(engine, bank_id, collection, config, text, supporting)
        by_id[observation.id] = observation
        changed.append(observation)
        contradicted = [i for i in action.contradicted_fact_ids if i in fact_ids]
        mark_contradicted(engine, bank_id, contradicted, observation.id)
    return changed


def _related_observations(
    engine: Engine, bank_id: str, collection: str, facts: Sequence[Memory]
) -> list[Memory]:
    query = " ".join(f.text for f in facts)[:2000]
    config = RecallConfig.build(
        query, top_k=_RELATED_OBSERVATIONS, fact_types=OBSERVATION, reinforce=False
    )
    return recall(engine, bank_id, collection, config).memories


def create_observation(
    engine: Engine,
    bank_id: str,
    collection: str,
    config: BankConfig,
    text: str,
    supporting: Sequence[str],
    *,
    fact_type: str = OBSERVATION,
    extra: dict | None = None,
    entities: Sequence[EntityMention] | None = None,
) -> Memory:
    """Store a new observation (or, with ``fact_type``, an opinion) backed by ``supporting``.

    It carries the supporting facts' entities (or ``entities``), so it joins their part of
    the graph.
    """
    found = load_memories(engine.db, bank_id, list(supporting))
    when = max((m.mentioned_at for m in found.values()), default=utc_now())
    fact = ExtractedFact(
        text=text,
        fact_type=fact_type,
        mentioned_at=when,
        message_index=0,
        entities=tuple(_entities_of(engine, supporting) if entities is None else entities),
        importance=max((m.importance for m in found.values()), default=0.5),
        metadata={
            "source_memory_ids": list(supporting),
            "proof_count": len(supporting),
            "history": [],
            **(extra or {}),
        },
    )
    return store_facts(engine, bank_id, collection, config, [fact], episode=None).memories[0]


def refine_observation(
    engine: Engine,
    bank_id: str,
    collection: str,
    observation: Memory,
    text: str,
    supporting: Sequence[str],
) -> Memory | None:
    """Rewrite an observation in place (same id), adding evidence and keeping its history.

    Returns None when the observation was forgotten meanwhile.
    """

    def refined(current: Memory, now: datetime) -> dict:
        metadata = dict(current.metadata)
        sources = list(dict.fromkeys([*metadata.get("source_memory_ids", []), *supporting]))
        history = [*metadata.get("history", []), {"text": current.text, "until": now.isoformat()}]
        metadata.update(source_memory_ids=sources, proof_count=len(sources), history=history)
        return metadata

    return rewrite_observation(engine, bank_id, collection, observation.id, text, refined)


def rewrite_observation(
    engine: Engine,
    bank_id: str,
    collection: str,
    observation_id: str,
    text: str,
    metadata_of: Callable[[Memory, datetime], dict],
    mentioned_at: datetime | None = None,
) -> Memory | None:
    """Give an observation a new text and metadata in place (same id), re-indexed and
    re-embedded; ``metadata_of(current, now)`` makes the metadata from the stored one, and
    ``mentioned_at`` (when given) replaces its mention time. Returns None when the
    observation was forgotten meanwhile. See :func:`rewrite_observations`."""
    rewrite = Rewrite(observation_id, text, metadata_of, mentioned_at)
    return rewrite_observations(engine, bank_id, collection, [rewrite]).get(observation_id)


@dataclass(frozen=True, slots=True)
class Rewrite:
    """What :func:`rewrite_observations` does to one observation: its new text, its metadata
    made by ``metadata_of(current, now)`` from the stored one, its new mention time (None:
    kept)."""

    observation_id: str
    text: str
    metadata_of: Callable[[Memory, datetime], dict]
    mentioned_at: datetime | None = None


def rewrite_observations(
    engine: Engine, bank_id: str, collection: str, rewrites: Sequence[Rewrite]
) -> dict[str, Memory]:
    """Rewrite observations in place (same ids), re-indexed and re-embedded, in one
    transaction: several profiles one retain changes cost one write, not one each.

    Holds the write lock from reading the observations through the vector write, like every
    writer, so a concurrent forget or refinement cannot slip in between. Each gets a new
    ``seq``, in the order given. Returns the rewritten ones by id; one forgotten meanwhile is
    skipped.
    """
    vectors = embed_texts(engine, [r.text for r in rewrites])  # outside the lock: the slow part
    with engine.db.write_lock:
        found = load_memories(engine.db, bank_id, [r.observation_id for r in rewrites])
        todo = [(r, v) for r, v in zip(rewrites, vectors, strict=True) if r.observation_id in found]
        if not todo:
            return {}
        ids = [r.observation_id for r, _ in todo]
        now = utc_now()
        with engine.db.transaction() as cur:
            engine.begin_write(cur, bank_id)
            old_seqs = cur.execute(
                f"SELECT seq FROM memories WHERE id IN ({sql_strings(ids)})"
            ).fetchall()
            engine.keyword.remove_rows(cur, [seq for (seq,) in old_seqs])
            seqs = []
            for rewrite, _ in todo:
                current = found[rewrite.observation_id]
                (seq,) = cur.execute("SELECT nextval('memory_seq')").fetchone()
                seqs.append(seq)
                # A new seq puts the new text in the pending postings; the old one is ignored.
                cur.execute(
                    "UPDATE memories SET text = ?, search_text = ?, seq = ?, metadata = ?, "
                    "mentioned_at = ? WHERE id = ?",
                    [
                        rewrite.text,
                        f"{rewrite.text} {' '.join(current.entities)}".strip(),
                        seq,
                        json.dumps(rewrite.metadata_of(current, now), ensure_ascii=False),
                        to_db_time(rewrite.mentioned_at or current.mentioned_at),
                        current.id,
                    ],
                )
            for first, last in _runs(seqs):  # a run of seqs is indexed by one statement
                engine.keyword.add_pending(cur, first, last)
            rewritten = load_memories(engine.db, bank_id, ids)
            rows = [
                MemoryRow(
                    memory=rewritten[r.observation_id],
                    seq=seq,
                    search_text=r.text,
                    context_text="",
                    created_at=now,
                )
                for (r, _), seq in zip(todo, seqs, strict=True)
            ]
            written = np.stack([v for _, v in todo])
            write_vectors_in(engine, cur, bank_id, collection, rows, written)
            version = record_change(engine.db, cur, bank_id, "observe", ids)
        engine.bank_changed(bank_id, version)
        write_vectors(engine, bank_id, collection, rows, written)
    return {i: rewritten[i] for i in ids}


def _runs(values: Sequence[int]) -> list[tuple[int, int]]:
    """``values`` (ascending) as ``(first, last)`` runs of consecutive integers."""
    runs: list[tuple[int, int]] = []
    for value in values:
        if runs and runs[-1][1] == value - 1:
            runs[-1] = (runs[-1][0], value)
        else:
            runs.append((value, value))
    return runs


def mark_contradicted(
    engine: Engine, bank_id: str, fact_ids: Iterable[str], observation_id: str
) -> None:
    """Flag facts as contradicted by an observation (``metadata["contradicted_by"]``).

    Reads the facts inside the write: a concurrent flag or forget is never overwritten."""
    ids = list(fact_ids)
    if not ids:
        return
    version = None
    with engine.db.transaction() as cur:
        engine.begin_write(cur, bank_id)
        found = load_memories(engine.db, bank_id, ids)
        for memory in found.values():
            metadata = dict(memory.metadata)
            metadata["contradicted_by"] = list(
                dict.fromkeys([*metadata.get("contradicted_by", []), observation_id])
            )
            cur.execute(
                "UPDATE memories SET metadata = ? WHERE id = ?",
                [json.dumps(metadata, ensure_ascii=False), memory.id],
            )
        if found:
            version = record_change(engine.db, cur, bank_id, "observe", list(found))
    engine.bank_changed(bank_id, version)


def _entities_of(engine: Engine, memory_ids: Sequence[str]) -> list[EntityMention]:
    rows = engine.db.fetchall(
        "SELECT DISTINCT e.name, e.kind FROM memory_entities AS me "
        "JOIN entities AS e ON e.id = me.entity_id WHERE list_contains($ids, me.memory_id) "
        "ORDER BY 1",
        {"ids": list(memory_ids)},
    )
    # An observation restates its sources: its mentions link but cast no new kind vote.
    return [EntityMention(name, kind, confidence=0.0) for name, kind in rows]


def list_observations(engine: Engine, bank_id: str) -> list[Memory]:
    """The bank's observations, most supported first, then newest."""
    rows = engine.db.fetchall(
        select_memories("m.bank_id = ? AND m.fact_type = ?", order="m.seq DESC"),
        [bank_id, OBSERVATION],
    )
    observations = [memory_from_row(row) for row in rows]
    return sorted(observations, key=lambda o: -int(o.metadata.get("proof_count", 0)))
