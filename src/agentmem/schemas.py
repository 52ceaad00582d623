"""JSON forms of agentmem's values, shared by the REST and MCP servers, the tools and the CLI.

Each model is built from the frozen value it mirrors (:meth:`MemoryOut.of`, ...), so every
surface that sends a memory over the wire sends the same fields with the same types.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agentmem.types import Entity, Memory, RecallHit, RecallResult, RetainResult


class MemoryOut(BaseModel):
    """A memory as JSON (the fields of :class:`agentmem.Memory`)."""

    model_config = ConfigDict(title="Memory")

    id: str
    bank_id: str
    text: str
    fact_type: str
    occurred_start: datetime | None
    occurred_end: datetime | None
    mentioned_at: datetime
    entities: list[str]
    tags: list[str]
    importance: float
    access_count: int
    document_id: str | None
    context: str | None
    metadata: dict[str, Any]
    episode_id: str | None

    @classmethod
    def of(cls, memory: Memory) -> MemoryOut:
        """The JSON form of ``memory``."""
        return cls(
            id=memory.id,
            bank_id=memory.bank_id,
            text=memory.text,
            fact_type=memory.fact_type,
            occurred_start=memory.occurred_start,
            occurred_end=memory.occurred_end,
            mentioned_at=memory.mentioned_at,
            entities=list(memory.entities),
            tags=list(memory.tags),
            importance=memory.importance,
            access_count=memory.access_count,
            document_id=memory.document_id,
            context=memory.context,
            metadata=memory.metadata,
            episode_id=memory.episode_id,
        )


class RecallHitOut(BaseModel):
    """One recalled memory with its composite score and why it came back."""

    model_config = ConfigDict(title="RecallHit")

    memory: MemoryOut
    score: float
    strategy_details: dict[str, dict[str, Any]] = Field(
        description="Per strategy: its rank and raw score; then fusion, rerank and scoring."
    )

    @classmethod
    def of(cls, hit: RecallHit) -> RecallHitOut:
        """The JSON form of ``hit``."""
        return cls(
            memory=MemoryOut.of(hit.memory), score=hit.score, strategy_details=hit.strategy_details
        )


class TimeRangeOut(BaseModel):
    """A half-open time range ``[start, end)``."""

    model_config = ConfigDict(title="TimeRange")

    start: datetime
    end: datetime


class RecallOut(BaseModel):
    """The result of a recall: hits best first, within the token budget."""

    model_config = ConfigDict(title="RecallResult")

    hits: list[RecallHitOut]
    query_time_range: TimeRangeOut | None
    total_tokens: int
    dropped: list[str]
    strategies: list[str]

    @classmethod
    def of(cls, result: RecallResult) -> RecallOut:
        """The JSON form of ``result``."""
        span = result.query_time_range
        return cls(
            hits=[RecallHitOut.of(hit) for hit in result],
            query_time_range=None if span is None else TimeRangeOut(start=span.start, end=span.end),
            total_tokens=result.total_tokens,
            dropped=list(result.dropped),
            strategies=list(result.strategies),
        )


class RetainOut(BaseModel):
    """What a retain stored."""

    model_config = ConfigDict(title="RetainResult")

    episode_id: str
    memories: list[MemoryOut]
    warnings: list[str]

    @classmethod
    def of(cls, result: RetainResult) -> RetainOut:
        """The JSON form of ``result``."""
        return cls(
            episode_id=result.episode_id,
            memories=[MemoryOut.of(m) for m in result],
            warnings=list(result.warnings),
        )


class EntityOut(BaseModel):
    """A canonical entity with its aliases and the memories that mention it."""

    model_config = ConfigDict(title="Entity")

    name: str
    kind: str
    aliases: list[str]
    memory_ids: list[str]

    @classmethod
    def of(cls, entity: Entity) -> EntityOut:
        """The JSON form of ``entity``."""
        return cls(
            name=entity.name,
            kind=entity.kind,
            aliases=list(entity.aliases),
            memory_ids=list(entity.memory_ids),
        )


def brief_hit(hit: RecallHit) -> dict[str, Any]:
    """A recalled memory as an LLM should see it: text, score and times, no engine internals."""
    data = RecallHitOut.of(hit).memory.model_dump(
        mode="json",
        include={
            "id",
            "text",
            "fact_type",
            "mentioned_at",
            "occurred_start",
            "occurred_end",
            "entities",
            "tags",
        },
    )
    data["score"] = round(hit.score, 4)
    return data
