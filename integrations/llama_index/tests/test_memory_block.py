"""llama_index.memory.agentmem: every turn is retained; recalled memories are injected."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.llms import ChatMessage, MockLLM
from llama_index.core.memory import Memory
from llama_index.core.storage.chat_store.sql import MessageStatus

import agentmem
from agentmem.testing import HashEmbedder
from llama_index.memory.agentmem import AgentMemMemoryBlock


def _memory(bank, session_id: str, **kwargs) -> Memory:
    return Memory.from_defaults(
        session_id=session_id, memory_blocks=[AgentMemMemoryBlock(bank=bank)], **kwargs
    )


def _texts(bank) -> list[str]:
    return [m.text for m in bank.memories()]


def test_every_turn_is_retained_once_even_when_the_queue_never_flushes(bank):
    memory = _memory(bank, "s1")  # the default queue holds far more than these turns
    memory.put(ChatMessage(role="user", content="My cat is called Quixotrix."))
    memory.get()
    memory.put(ChatMessage(role="assistant", content="Lovely name!"))
    memory.put(ChatMessage(role="user", content="She is three years old."))
    memory.get()
    memory.get()
    assert _texts(bank) == [
        "User: My cat is called Quixotrix.",
        "Assistant: Lovely name!",
        "User: She is three years old.",
    ]
    assert all(m.metadata["session_id"] == "s1" for m in bank.memories())


def test_repeated_turns_are_retained_each_time_they_are_said(bank):
    memory = _memory(bank, "s1")
    for _ in range(2):
        memory.put(ChatMessage(role="user", content="Remind me to water the plants."))
        memory.put(ChatMessage(role="assistant", content="Noted."))
    memory.get()
    memory.get()
    assert _texts(bank).count("User: Remind me to water the plants.") == 2


def test_turns_flushed_out_of_a_small_queue_are_retained_once(bank):
    memory = _memory(bank, "s1", token_limit=40, chat_history_token_ratio=0.5, token_flush_size=10)
    said = [f"Fact number {n}: the code word for day {n} is {w}." for n, w in enumerate("ABCDE")]
    for text in said:
        memory.put(ChatMessage(role="user", content=text))
    assert memory.get_all(status=MessageStatus.ARCHIVED)  # some turns were flushed to blocks
    memory.get()
    assert sorted(_texts(bank)) == sorted(f"User: {t}" for t in said)


def test_recalled_memories_are_injected_into_a_new_session(bank):
    first = _memory(bank, "monday")
    first.put(ChatMessage(role="user", content="Invoice INV-20931 from Quixotrix is unpaid."))
    first.get()

    second = _memory(bank, "tuesday")
    second.put(ChatMessage(role="user", content="What about invoice INV-20931?"))
    messages = second.get()
    system = messages[0]
    assert system.role == "system"
    assert "- User: Invoice INV-20931 from Quixotrix is unpaid. (said " in system.content
    # The current turn is in the chat window already; it is not injected again.
    assert "What about invoice" not in system.content


def test_a_chat_engine_with_the_block_remembers_across_sessions(bank):
    monday = SimpleChatEngine.from_defaults(llm=MockLLM(), memory=_memory(bank, "monday"))
    monday.chat("My cat is called Quixotrix.")
    tuesday = SimpleChatEngine.from_defaults(llm=MockLLM(), memory=_memory(bank, "tuesday"))
    answer = str(tuesday.chat("What is my cat called?"))
    # MockLLM replies with the prompt it got: the memory reached the LLM.
    assert "My cat is called Quixotrix." in answer
    assert "User: What is my cat called?" in _texts(bank)


async def test_truncation_drops_the_least_relevant_memories_first(bank):
    block = AgentMemMemoryBlock(bank=bank)
    content = "- first memory, most relevant\n- second memory\n- third memory, least relevant"
    assert await block.atruncate(content, 5) == "- first memory, most relevant\n- second memory"
    assert await block.atruncate(content, 1000) is None


_CHAT = [
    ("user", "My cat is called Quixotrix."),
    ("assistant", "Lovely name!"),
    ("user", "Remind me to water the plants."),
    ("user", "Remind me to water the plants."),
]


def _restored_chat(bank, session_id: str, timestamps: bool) -> Memory:
    """A memory whose chat history holds _CHAT, as a persisted chat store restores it."""
    memory = _memory(bank, session_id)
    for n, (role, text) in enumerate(_CHAT):
        kwargs = {"timestamp": datetime(2025, 2, 20, 9, n, tzinfo=UTC)} if timestamps else {}
        memory.put(ChatMessage(role=role, content=text, additional_kwargs=kwargs))
    return memory


@pytest.mark.parametrize("timestamps", [False, True])
def test_a_restarted_process_with_a_restored_history_retains_nothing_twice(tmp_path, timestamps):
    with agentmem.AgentMemory(tmp_path / "store", embedder=HashEmbedder()) as mem:
        _restored_chat(mem.bank("assistant"), "s1", timestamps).get()
        first = mem.bank("assistant").memories()
    assert len(first) == 4
    # A new process: the block's state is gone, the chat store hands back the same history.
    with agentmem.AgentMemory(tmp_path / "store", embedder=HashEmbedder()) as mem:
        bank = mem.bank("assistant")
        memory = _restored_chat(bank, "s1", timestamps)
        memory.get()
        memory.put(ChatMessage(role="user", content="She is three years old."))
        injected = [m.content for m in memory.get() if m.role == "system"]
        after = bank.memories()
    assert [m.id for m in after[:4]] == [m.id for m in first]
    assert [m.text for m in after[4:]] == ["User: She is three years old."]
    # What the chat window shows is not injected again, even after the restart.
    assert not any("- User: My cat" in str(text) for text in injected)


def test_turns_are_dated_by_their_message_timestamps(bank):
    _restored_chat(bank, "s1", timestamps=True).get()
    assert [m.mentioned_at for m in bank.memories()] == [
        datetime(2025, 2, 20, 9, n, tzinfo=UTC) for n in range(4)
    ]
