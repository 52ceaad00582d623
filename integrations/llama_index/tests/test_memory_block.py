"""llama_index.memory.agentmem: every turn is retained; recalled memories are injected."""

from __future__ import annotations

from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.llms import ChatMessage, MockLLM
from llama_index.core.memory import Memory
from llama_index.core.storage.chat_store.sql import MessageStatus

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
    assert {m.document_id for m in bank.memories()} == {"s1"}
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
