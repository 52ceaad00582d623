"""``AgentMemMemoryBlock``: agentmem as a long-term block of LlamaIndex's ``Memory``.

``Memory`` hands its blocks only the messages that overflow the short-term queue
(``aput(..., from_short_term_memory=True)``), so a block that retained only those would miss
every conversation that stays short. But ``Memory.aget`` also hands each block the whole
current chat history; this block retains every user and assistant turn the bank does not hold
yet, there and on flush, so each turn is kept once, whatever the queue does. What is held is
asked of the bank (``MemoryBank.find_retained``, persisted content hashes), so a restarted
process with a restored chat history retains nothing twice.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime
from typing import Any

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.memory import BaseMemoryBlock
from pydantic import Field

# A turn, as far as retained-or-not goes: its session, role, text and timestamp (if it has one).
Fingerprint = tuple[str | None, str, str, Any]


def _text(message: ChatMessage) -> str:
    return (message.content or "").strip()


class AgentMemMemoryBlock(BaseMemoryBlock[str]):
    """Long-term memory for ``llama_index.core.memory.Memory``: retains turns, injects recall.

    Args:
        bank: The :class:`agentmem.MemoryBank` to retain into and recall from.
        name: The block's name in the memory template.
        top_k: At most this many recalled memories are injected.
        max_tokens: Token budget of the injected memories.
        roles: Roles of the turns to retain (system prompts and tool output are not facts).
        recall_kwargs: Further arguments of ``bank.recall`` (``tags``, ``fact_types``, ...).
        retain_tags: Tags given to every retained turn.

    Example:
        >>> memory = Memory.from_defaults(
        ...     session_id="chat-1", memory_blocks=[AgentMemMemoryBlock(bank=bank)]
        ... )
        >>> engine = SimpleChatEngine.from_defaults(llm=llm, memory=memory)
    """

    name: str = Field(default="agentmem", description="The block's name.")
    bank: Any = Field(description="The agentmem MemoryBank.")
    top_k: int = Field(default=5, ge=1)
    max_tokens: int = Field(default=1000, ge=1)
    roles: tuple[str, ...] = ("user", "assistant")
    recall_kwargs: dict[str, Any] = Field(default_factory=dict)
    retain_tags: list[str] = Field(default_factory=list)

    def _session(self, message: ChatMessage, session_id: str | None) -> str | None:
        return message.additional_kwargs.get("session_id", session_id)

    def _turn(self, message: ChatMessage, session_id: str | None) -> dict[str, Any]:
        """The turn as agentmem retains it: speaker, text and, when known, when it was said."""
        extra = message.additional_kwargs
        return {
            "role": str(message.role.value),
            "content": _text(message),
            "metadata": {"session_id": self._session(message, session_id)},
            **({"name": extra["name"]} if extra.get("name") else {}),
            **({"timestamp": extra["timestamp"]} if extra.get("timestamp") is not None else {}),
        }

    async def _retain_unseen(self, messages: list[ChatMessage], session_id: str | None) -> set[str]:
        """Retain the turns of ``messages`` that the bank does not hold yet; returns the ids of
        the memories of every turn of ``messages``.

        A turn repeated word for word counts once per repetition: the bank's earlier turns of
        the session match the oldest repetitions, the newest are the unseen ones. A flushed
        batch (no session given) matches turns of any session.
        """
        wanted = [m for m in messages if str(m.role.value) in self.roles and _text(m)]
        if not wanted:
            return set()
        turns = [self._turn(m, session_id) for m in wanted]
        held = await self.bank.afind_retained(
            [{k: v for k, v in t.items() if k != "metadata"} for t in turns]
        )
        groups: dict[Fingerprint, list[int]] = defaultdict(list)
        for index, turn in enumerate(turns):
            session = turn["metadata"]["session_id"]
            key = (session, turn["role"], turn["content"], turn.get("timestamp"))
            groups[key].append(index)
        in_window: set[str] = set()
        pending: list[int] = []
        for (session, *_), indexes in groups.items():
            said = _occurrences(held[indexes[0]], session)
            for ids in said[: len(indexes)]:
                in_window.update(ids)
            pending += indexes[len(said) :]
        if not pending:
            return in_window
        pending.sort()
        batch = [
            {**turns[i], "metadata": {**turns[i]["metadata"], "turn": n}}
            for n, i in enumerate(pending)
        ]
        result = await self.bank.aretain(
            batch, mentioned_at=datetime.now(UTC), tags=self.retain_tags
        )
        in_window.update(m.id for m in result)
        return in_window

    async def _aget(self, messages: list[ChatMessage] | None = None, **block_kwargs: Any) -> str:
        """Retain the unseen turns of the chat history, then recall for the last user turn."""
        messages = messages or []
        # Memories of turns still in the chat window would repeat what the LLM already sees.
        in_window = await self._retain_unseen(messages, block_kwargs.get("session_id"))
        query = next(
            (_text(m) for m in reversed(messages) if m.role.value == "user" and _text(m)), ""
        )
        if not query:
            return ""
        result = await self.bank.arecall(
            query,
            **{
                **self.recall_kwargs,
                "top_k": self.top_k + len(in_window),
                "max_tokens": self.max_tokens,
            },
        )
        lines = [
            f"- {hit.memory.text} (said {hit.memory.mentioned_at:%Y-%m-%d})"
            for hit in result
            if hit.memory.id not in in_window
        ]
        return "\n".join(lines[: self.top_k])

    async def _aput(self, messages: list[ChatMessage]) -> None:
        """Retain flushed turns that the bank does not hold yet."""
        await self._retain_unseen(messages, None)

    async def atruncate(self, content: str, tokens_to_truncate: int) -> str | None:
        """Drop the least relevant memories (the last lines) until about enough tokens go."""
        lines = content.splitlines()
        removed = 0
        while lines and removed < tokens_to_truncate:
            removed += max(1, len(lines.pop()) // 4)  # ~4 characters per token
        return "\n".join(lines) or None


def _occurrences(memories: list[Any], session: str | None) -> list[list[str]]:
    """The earlier turns of ``session`` (any, if None) that ``memories`` came from, oldest
    first, each as the ids of its memories (one turn may give several)."""
    turns: dict[tuple[str | None, Any], list[str]] = {}
    for memory in memories:
        if session is not None and memory.metadata.get("session_id") != session:
            continue
        turns.setdefault((memory.episode_id, memory.metadata.get("turn")), []).append(memory.id)
    return list(turns.values())
