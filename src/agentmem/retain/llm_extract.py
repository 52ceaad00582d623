"""LLM extraction: one Instructor call per chunk of content, never one per message.

Messages are packed into chunks of about ``BankConfig.llm_chunk_chars`` characters (a message
is never split), each shown to the model as ``[index] Speaker (role, said at time): text`` so
facts can point back to their message, take its metadata and resolve relative dates against
the time it was said. Causal relations may only point to earlier facts of the same chunk.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from agentmem._time import optional_utc
from agentmem.config import BankConfig
from agentmem.errors import AgentMemError
from agentmem.llm.prompts import extraction_messages
from agentmem.protocols import LanguageModel
from agentmem.retain.facts import EntityMention, ExtractedFact, Message, RetainInput
from agentmem.retain.labels import LABEL_KIND, assign_labels

log = logging.getLogger("agentmem")

ENTITY_KINDS = ("person", "org", "place", "product", "event", "concept")


class EntityOut(BaseModel):
    """A named thing the fact mentions."""

    name: str
    kind: Literal["person", "org", "place", "product", "event", "concept"] = "concept"


class LabelOut(BaseModel):
    """A label of the bank's vocabulary: group key and value."""

    key: str
    value: str


class FactOut(BaseModel):
    """One narrative fact."""

    text: str = Field(description="Self-contained narrative: who, what, when, where, why, how")
    fact_type: Literal["world", "experience"] = "world"
    message_index: int = Field(0, description="[index] of the message the fact comes from")
    occurred_start: str | None = Field(None, description="ISO date/time it started, or null")
    occurred_end: str | None = Field(None, description="ISO date/time it ended, or null")
    entities: list[EntityOut] = Field(default_factory=list)
    labels: list[LabelOut] = Field(default_factory=list)
    caused_by: list[int] = Field(default_factory=list, description="Indexes of earlier facts")
    importance: float | None = Field(None, ge=0, le=1)


class ExtractionOut(BaseModel):
    """The memories of one chunk."""

    facts: list[FactOut] = Field(default_factory=list)


@dataclass(frozen=True, slots=True)
class LLMExtraction:
    """The facts of one retain call and what extracting them cost."""

    facts: list[ExtractedFact]
    calls: int
    prompt_tokens: int
    completion_tokens: int


def chunk_messages(messages: tuple[Message, ...], chunk_chars: int) -> list[list[int]]:
    """Indexes of the messages in each chunk; a message longer than a chunk gets its own."""
    chunks: list[list[int]] = []
    size = 0
    for index, message in enumerate(messages):
        length = len(message.content) + len(message.name or "") + 40
        if chunks and size + length <= chunk_chars:
            chunks[-1].append(index)
            size += length
        else:
            chunks.append([index])
            size = length
    return chunks


def _transcript(content: RetainInput, indexes: list[int]) -> str:
    lines = []
    for index in indexes:
        message = content.messages[index]
        speaker = message.name or message.role
        lines.append(
            f"[{index}] {speaker} ({message.role}, said at {message.mentioned_at.isoformat()}): "
            f"{message.content}"
        )
    if content.context:
        lines.insert(0, f"Context: {content.context}")
    return "\n".join(lines)


def extract_with_llm(llm: LanguageModel, content: RetainInput, config: BankConfig) -> LLMExtraction:
    """Facts of one retain call, one structured LLM call per chunk.

    Raises:
        LLMError: A call failed or its output stayed invalid (the caller falls back).
    """
    facts: list[ExtractedFact] = []
    calls = prompt_tokens = completion_tokens = 0
    for indexes in chunk_messages(content.messages, config.llm_chunk_chars):
        messages = extraction_messages(config, _transcript(content, indexes))
        reply = llm.structured(ExtractionOut, messages, purpose="extract")
        calls += reply.calls
        prompt_tokens += reply.prompt_tokens
        completion_tokens += reply.completion_tokens
        offset = len(facts)
        chunk_facts = reply.value.facts if isinstance(reply.value, ExtractionOut) else []
        for position, out in enumerate(chunk_facts):
            fact = _to_fact(out, position, offset, content, indexes, config)
            if fact is not None:
                facts.append(fact)
    return LLMExtraction(facts, calls, prompt_tokens, completion_tokens)


def _to_fact(
    out: FactOut,
    position: int,
    offset: int,
    content: RetainInput,
    indexes: list[int],
    config: BankConfig,
) -> ExtractedFact | None:
    text = " ".join(out.text.split())
    if not text:
        return None
    index = out.message_index if out.message_index in indexes else indexes[-1]
    message = content.messages[index]
    entities: list[EntityMention] = []
    if config.entities_allow_free_form:
        entities = [EntityMention(" ".join(e.name.split()), e.kind) for e in out.entities]
        entities = [e for e in entities if e.name]
    labels = assign_labels(config.entity_labels, ((lab.key, lab.value) for lab in out.labels))
    entities += [EntityMention(f"{group.key}:{value}", LABEL_KIND) for group, value in labels]
    start, end = _occurrence(out, content)
    return ExtractedFact(
        text=text,
        fact_type=out.fact_type,
        mentioned_at=message.mentioned_at,
        message_index=index,
        entities=tuple(dict.fromkeys(entities)),
        importance=0.5 if out.importance is None else out.importance,
        occurred_start=start,
        occurred_end=end,
        metadata=dict(message.metadata),
        # Only earlier facts of this chunk: a cause cannot come after its effect.
        caused_by=tuple(sorted({offset + c for c in out.caused_by if 0 <= c < position})),
        tags=tuple(f"{group.key}:{value}" for group, value in labels if group.tag),
    )


def _occurrence(out: FactOut, content: RetainInput) -> tuple[datetime | None, datetime | None]:
    if content.occurred_start is not None:  # the caller's occurred_at wins
        return content.occurred_start, content.occurred_end
    try:
        start = optional_utc(out.occurred_start, field="occurred_start")
        end = optional_utc(out.occurred_end, field="occurred_end") or start
    except AgentMemError:
        log.debug("dropping an unparseable occurrence from the LLM: %r", out.occurred_start)
        return None, None
    if start is None or end is None or end < start:
        return None, None
    return start, end
