"""Values returned by the public API. All are frozen: a result never changes under the caller."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

FactType = Literal["world", "experience", "observation", "opinion"]
FACT_TYPES: tuple[str, ...] = ("world", "experience", "observation", "opinion")


@dataclass(frozen=True, slots=True)
class TimeRange:
    """A half-open interval of aware datetimes: ``start <= t < end``."""

    start: datetime
    end: datetime

    def overlaps(self, start: datetime | None, end: datetime | None) -> bool:
        """Whether ``[start, end]`` (a memory's occurrence) intersects this range."""
        if start is None:
            return False
        return start < self.end and (end or start) >= self.start


@dataclass(frozen=True, slots=True)
class Memory:
    """One fact held by a bank.

    Attributes:
        id: Stable id of the memory.
        bank_id: The bank that owns it.
        text: The fact as stored (for a chat turn: "Speaker: what was said").
        fact_type: "world", "experience", "observation" or "opinion".
        occurred_start: When the fact started to hold/happened (None for timeless facts).
        occurred_end: When it stopped (inclusive end of the occurrence interval).
        mentioned_at: When the agent learned it.
        entities: Canonical names of the entities the fact mentions.
        tags: Visibility scopes.
        importance: In [0, 1].
        access_count: How often recall returned it (reinforcement).
        document_id: The document (session, file, ...) it came from, if any.
        context: Free text the caller gave about where the content came from.
        metadata: Free JSON, returned unchanged (chat messages' metadata is kept per fact).
        episode_id: The raw episode the fact was extracted from.
    """

    id: str
    bank_id: str
    text: str
    fact_type: str
    occurred_start: datetime | None
    occurred_end: datetime | None
    mentioned_at: datetime
    entities: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    importance: float = 0.5
    access_count: int = 0
    document_id: str | None = None
    context: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    episode_id: str | None = None


@dataclass(frozen=True, slots=True)
class Entity:
    """A canonical entity of a bank with the names it was mentioned by."""

    name: str
    kind: str
    aliases: tuple[str, ...]
    memory_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RetainResult:
    """What one ``retain`` call stored.

    Retain is idempotent: what the bank holds already is returned, not stored again.

    Attributes:
        memories: The facts of the content, in its order: those this call created and those
            the bank held already (their ids are in ``already_stored``).
        episode_id: Id of the raw episode (content kept verbatim); for a call that changed
            nothing, the episode that holds the content.
        already_stored: Ids among ``memories`` that were stored before this call: all of them
            when the call's ``document_id`` holds this content already, or when every message
            is an exact repeat (same speaker, normalised text and mention time); the facts a
            changed document kept unchanged (same id); the memories of repeated messages.
        replaced: Ids of the document's earlier memories this call deleted (its
            ``document_id`` held other content).
        warnings: Things the caller should know (e.g. no mention time was given).
        extraction: How facts were extracted: "offline", "llm", or "offline_fallback" (the
            LLM failed, the raw episode was kept and the offline extractor ran instead);
            "none" when the bank held all of it and nothing was written.
        llm_calls: LLM requests made (one per chunk, plus retries).
        prompt_tokens: Prompt tokens the provider reported for those requests.
        completion_tokens: Completion tokens the provider reported.
        skipped_messages: Messages not extracted because they repeat memories of the bank
            (recalled memories fed back into a prompt); the episode still keeps them.
    """

    memories: list[Memory]
    episode_id: str
    warnings: tuple[str, ...] = ()
    extraction: str = "offline"
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    skipped_messages: int = 0
    already_stored: tuple[str, ...] = ()
    replaced: tuple[str, ...] = ()

    @property
    def unchanged(self) -> bool:
        """True when the call wrote nothing: the bank held all of its content already."""
        return self.extraction == "none"

    @property
    def created(self) -> list[Memory]:
        """The memories this call created (``memories`` minus ``already_stored``)."""
        old = set(self.already_stored)
        return [m for m in self.memories if m.id not in old]

    @property
    def llm_tokens(self) -> int:
        """Prompt plus completion tokens used by this retain."""
        return self.prompt_tokens + self.completion_tokens

    def __len__(self) -> int:
        return len(self.memories)

    def __iter__(self) -> Iterator[Memory]:
        return iter(self.memories)


@dataclass(frozen=True, slots=True)
class RecallHit:
    """One recalled memory, its composite score and why it came back.

    ``strategy_details`` maps each strategy that found the memory to its ``rank`` (1-based) and
    raw ``score`` (cosine, BM25, ...); "fusion", "rerank" and "scoring" record the later stages.
    """

    memory: Memory
    score: float
    strategy_details: dict[str, dict[str, Any]]
    tokens: int = 0

    @property
    def text(self) -> str:
        """The memory's text (shortcut for ``hit.memory.text``)."""
        return self.memory.text

    @property
    def why(self) -> str:
        """Why the memory came back, in words: each strategy's rank and raw score, then what
        the reranker saw in it ("keyword #1 (bm25 4.97) + semantic #2 (cosine 0.59)")."""
        labels = {"semantic": "cosine", "keyword": "bm25"}
        parts = [
            f"{name} #{detail['rank']} ({labels.get(name, 'score')} {detail['score']:.2f})"
            for name, detail in self.strategy_details.items()
            if "rank" in detail and "score" in detail and name != "fusion"
        ]
        parts += self.strategy_details.get("rerank", {}).get("reasons", [])
        if self.strategy_details.get("budget", {}).get("truncated"):
            parts.append("truncated to fit the budget")
        return " + ".join(parts)


@dataclass(frozen=True, slots=True)
class RecallResult:
    """The hits of one ``recall`` call, best first, within the token budget.

    Attributes:
        hits: Recalled memories, best first.
        query_time_range: The time range parsed from the query, when it held one.
        total_tokens: cl100k_base tokens of the returned texts.
        dropped: Ids of hits that ranked within ``top_k`` but did not fit the budget.
        strategies: The strategies that ran.
    """

    hits: list[RecallHit]
    query_time_range: TimeRange | None = None
    total_tokens: int = 0
    dropped: tuple[str, ...] = ()
    strategies: tuple[str, ...] = ()

    def __iter__(self) -> Iterator[RecallHit]:
        return iter(self.hits)

    def __len__(self) -> int:
        return len(self.hits)

    def __getitem__(self, index: int) -> RecallHit:
        return self.hits[index]

    @property
    def memories(self) -> list[Memory]:
        """The recalled memories, best first."""
        return [hit.memory for hit in self.hits]


@dataclass(frozen=True, slots=True)
class Reflection:
    """The result of ``reflect``: an answer grounded in the bank's memories.

    Attributes:
        answer: The LLM's answer, or None when no LLM is configured (offline).
        observations: Consolidated observations recalled for the question, best first.
        memories: Facts (world, experience, opinion) recalled for the question, best first.
        cited_ids: Ids of the memories the answer cites (all of them among the evidence).
        opinion: The "opinion" memory the reflection stored, if it formed one.
        llm_calls: LLM requests made.
        prompt_tokens: Prompt tokens the provider reported.
        completion_tokens: Completion tokens the provider reported.
    """

    answer: str | None
    observations: list[Memory]
    memories: list[Memory]
    cited_ids: tuple[str, ...] = ()
    opinion: Memory | None = None
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass(frozen=True, slots=True)
class ReflectPrompt:
    """What ``reflect_prepare`` returns: the evidence and a ready prompt for your own LLM.

    Attributes:
        query: The question.
        messages: Chat messages (system + user) that ask for an answer citing memory ids.
        observations: Recalled observations, best first.
        memories: Recalled facts, best first.
    """

    query: str
    messages: list[dict[str, str]]
    observations: list[Memory]
    memories: list[Memory]

    @property
    def evidence_ids(self) -> tuple[str, ...]:
        """Ids of every memory in the evidence."""
        return tuple(m.id for m in (*self.observations, *self.memories))
