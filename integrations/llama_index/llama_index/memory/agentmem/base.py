"""``AgentMemMemoryBlock``: agentmem as a long-term block of LlamaIndex's ``Memory``.

``Memory`` hands its blocks only the messages that overflow the short-term queue
(``aput(..., from_short_term_memory=True)``), so a block that retained only those would miss
every conversation that stays short. But ``Memory.aget`` also hands each block the whole
current chat history; this block retains every user and assistant turn it has not retained
yet, there and on flush, so each turn is kept once, whatever the queue does.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from typing import Any

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.memory import BaseMemoryBlock
from pydantic import Field, PrivateAttr

# A turn, as far as retained-or-not goes: its session, role and text.
Fingerprint = tuple[str | None, str, str]


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

    _retained: Counter[Fingerprint] = PrivateAttr(default_factory=Counter)
    _memory_ids: dict[Fingerprint, list[str]] = PrivateAttr(default_factory=dict)

    def _fingerprint(self, message: ChatMessage, session_id: str | None) -> Fingerprint:
        return (
            message.additional_kwargs.get("session_id", session_id),
            str(message.role.value),
            _text(message),
        )

    async def _retain_unseen(self, messages: list[ChatMessage], session_id: str | None) -> None:
        """Retain the turns of ``messages`` that this block has not retained yet.

        A turn repeated word for word in a window counts once per repetition; the newest
        repetitions are the unseen ones.
        """
        wanted = [m for m in messages if str(m.role.value) in self.roles and _text(m)]
        in_window = Counter(self._fingerprint(m, session_id) for m in wanted)
        pending: list[tuple[Fingerprint, ChatMessage]] = []
        for message in reversed(wanted):
            fp = self._fingerprint(message, session_id)
            if in_window[fp] > self._retained[fp]:
                in_window[fp] -= 1
                pending.append((fp, message))
        if not pending:
            return
        pending.reverse()
        turns = [
            {
                "role": str(message.role.value),
                "content": _text(message),
                "metadata": {"turn": index, "session_id": fp[0]},
                **(
                    {"name": message.additional_kwargs["name"]}
                    if message.additional_kwargs.get("name")
                    else {}
                ),
            }
            for index, (fp, message) in enumerate(pending)
        ]
        result = await self.bank.aretain(
            turns,
            mentioned_at=datetime.now(UTC),
            document_id=pending[0][0][0],
            tags=self.retain_tags,
        )
        for fp, _ in pending:
            self._retained[fp] += 1
        for memory in result:
            fp = pending[memory.metadata["turn"]][0]
            self._memory_ids.setdefault(fp, []).append(memory.id)

    async def _aget(self, messages: list[ChatMessage] | None = None, **block_kwargs: Any) -> str:
        """Retain the unseen turns of the chat history, then recall for the last user turn."""
        messages = messages or []
        session_id = block_kwargs.get("session_id")
        await self._retain_unseen(messages, session_id)
        query = next(
            (_text(m) for m in reversed(messages) if m.role.value == "user" and _text(m)), ""
        )
        if not query:
            return ""
        # Memories of turns still in the chat window would repeat what the LLM already sees.
        in_window = {
            memory_id
            for m in messages
            for memory_id in self._memory_ids.get(self._fingerprint(m, session_id), ())
        }
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
        """Retain flushed turns that the block has not retained yet."""
        await self._retain_unseen(messages, None)

    async def atruncate(self, content: str, tokens_to_truncate: int) -> str | None:
        """Drop the least relevant memories (the last lines) until about enough tokens go."""
        lines = content.splitlines()
        removed = 0
        while lines and removed < tokens_to_truncate:
            removed += max(1, len(lines.pop()) // 4)  # ~4 characters per token
        return "\n".join(lines) or None
