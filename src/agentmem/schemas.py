"""JSON forms of agentmem's values, shared by the REST and MCP servers, the tools and the CLI.

Each model is built from the frozen value it mirrors (``MemoryOut.of(memory)``, ...), so every
surface that sends a memory over the wire sends the same fields with the same types.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field

from agentmem.types import RecallHit


class _ValueOut(BaseModel):
    """A JSON model read from the attributes of the frozen value it mirrors."""

    model_config = ConfigDict(from_attributes=True)

    @classmethod
    def of(cls, value: Any) -> Self:
        """The JSON form of ``value`` (a :class:`~agentmem.Memory`, a ``RecallResult``, ...)."""
        return cls.model_validate(value, from_attributes=True)


class MemoryOut(_ValueOut):
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


class RecallHitOut(_ValueOut):
    """One recalled memory with its composite score and why it came back."""

    model_config = ConfigDict(title="RecallHit")

    memory: MemoryOut
    score: float
    strategy_details: dict[str, dict[str, Any]] = Field(
        description="Per strategy: its rank and raw score; then fusion, rerank and scoring."
    )


class TimeRangeOut(_ValueOut):
    """A half-open time range ``[start, end)``."""

    model_config = ConfigDict(title="TimeRange")

    start: datetime
    end: datetime


class RecallOut(_ValueOut):
    """The result of a recall: hits best first, within the token budget."""

    model_config = ConfigDict(title="RecallResult")

    hits: list[RecallHitOut]
    query_time_range: TimeRangeOut | None
    total_tokens: int
    dropped: list[str]
    strategies: list[str]


class RetainOut(_ValueOut):
    """What a retain stored."""

    model_config = ConfigDict(title="RetainResult")

    episode_id: str
    memories: list[MemoryOut]
    already_stored: list[str] = Field(
        default_factory=list,
        description="Ids among memories that the bank held before this call (a repeat).",
    )
    replaced: list[str] = Field(
        default_factory=list,
        description="Ids of the document's earlier memories this call replaced (deleted).",
    )
    warnings: list[str]


class EntityOut(_ValueOut):
    """A canonical entity with its aliases and the memories that mention it."""

    model_config = ConfigDict(title="Entity")

    name: str
    kind: str
    aliases: list[str]
    memory_ids: list[str]


def brief_hit(hit: RecallHit) -> dict[str, Any]:
    """A recalled memory as an LLM should see it: text, score and times, no engine internals."""
    data = MemoryOut.of(hit.memory).model_dump(
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
