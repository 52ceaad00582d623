"""Retain and recall through the public API, as a user sees them."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest

import agentmem
from tests.conftest import CONVERSATION, T0, T1

RELEVANCE_ONLY = {"w_relevance": 1, "w_recency": 0, "w_importance": 0, "w_reinforcement": 0}


def texts(result: agentmem.RecallResult) -> list[str]:
    return [hit.memory.text for hit in result]


def test_retain_returns_one_fact_per_turn_with_speaker_time_and_metadata(mem):
    bank = mem.bank("alice")
    result = bank.retain(CONVERSATION, mentioned_at=T0, document_id="session-1", tags=["crm"])
    assert [m.text for m in result.memories] == [
        "Alice: I moved to Berlin last June.",
        "Assistant: How do you like the new job at Acme Corp?",
        "Alice: My office is room 42 and my manager is Bob.",
        "Alice: Invoice INV-20931 from Quixotrix is still unpaid.",
        "Alice: I prefer green tea over coffee in the morning.",
    ]
    first, second = result.memories[0], result.memories[1]
    assert first.mentioned_at == datetime(2025, 3, 4, 9, 0, tzinfo=UTC)
    assert first.metadata == {"turn": 1} and second.metadata == {"turn": 2}
    assert first.fact_type == "world" and second.fact_type == "experience"
    assert "Alice" in first.entities and "Berlin" in first.entities
    assert all(m.tags == ("crm",) and m.document_id == "session-1" for m in result.memories)
    assert not result.warnings


def test_recall_finds_the_answer_first_and_says_why(bank):
    result = bank.recall("Which city does Alice live in now?", now=T1)
    top = result.hits[0]
    assert top.memory.text == "Alice: I moved to Berlin last June."
    assert 0 <= top.score <= 1
    assert top.strategy_details["semantic"]["rank"] == 1
    assert top.strategy_details["semantic"]["score"] > 0.3  # a raw cosine
    assert set(result.strategies) == {"semantic", "keyword", "graph", "temporal"}
    assert result.total_tokens == sum(hit.tokens for hit in result)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("INV-20931", "Alice: Invoice INV-20931 from Quixotrix is still unpaid."),
        ("room 42", "Alice: My office is room 42 and my manager is Bob."),
        ("Quixotrix", "Alice: Invoice INV-20931 from Quixotrix is still unpaid."),
    ],
)
def test_keyword_search_matches_codes_numbers_and_names_as_soon_as_retain_returns(
    bank, query, expected
):
    result = bank.recall(query, strategies=["keyword"], now=T1)
    assert texts(result)[0] == expected
    assert result.hits[0].strategy_details["keyword"]["rank"] == 1


def test_keyword_scores_do_not_change_when_pending_rows_are_folded_into_the_index(mem, bank):
    before = bank.recall("tea coffee morning", strategies=["keyword"], reinforce=False, now=T1)
    mem.rebuild_keyword_index()
    after = bank.recall("tea coffee morning", strategies=["keyword"], reinforce=False, now=T1)
    assert [h.memory.id for h in before] == [h.memory.id for h in after]
    for b, a in zip(before, after, strict=True):
        assert b.strategy_details["keyword"]["score"] == pytest.approx(
            a.strategy_details["keyword"]["score"]
        )


@pytest.mark.parametrize(
    "query",
    [
        '"unbalanced quote',
        "tea OR coffee AND NOT *",
        "'; DROP TABLE memories; --",
        "(((",
        "*",
        "room:42 ^ ~tea",
        "\\",
        "NEAR(tea coffee)",
    ],
)
def test_query_text_is_data_never_syntax(bank, query):
    result = bank.recall(query, now=T1)
    assert isinstance(result, agentmem.RecallResult)
    assert len(bank.memories()) == len(CONVERSATION)  # nothing was dropped or damaged


def test_similarity_is_an_alias_of_semantic(bank):
    a = bank.recall("green tea", strategies=["similarity"], reinforce=False, now=T1)
    b = bank.recall("green tea", strategies=["semantic"], reinforce=False, now=T1)
    assert [h.memory.id for h in a] == [h.memory.id for h in b]


def test_plain_text_is_split_into_sentence_facts(mem):
    bank = mem.bank("notes")
    result = bank.retain(
        "Alice Chen joined Google in 2021. She leads the search quality team. "
        "Her favourite language is Python.",
        mentioned_at=T0,
    )
    assert [m.text for m in result] == [
        "Alice Chen joined Google in 2021.",
        "She leads the search quality team.",
        "Her favourite language is Python.",
    ]
    assert result.memories[0].entities == ("Alice Chen", "Google")


def test_a_fragment_ending_plain_text_stays_with_the_sentence_before_it(mem):
    bank = mem.bank("notes")
    texts = [
        m.text
        for m in bank.retain(
            "We moved to Lisbon in 2019. Then Jake proposed last night!!! 💍 🎉", mentioned_at=T0
        )
    ]
    # Each fact says something: the emoji is no memory of its own.
    assert texts == ["We moved to Lisbon in 2019.", "Then Jake proposed last night!!! 💍 🎉"]
    assert [m.text for m in bank.memories()] == texts


def test_missing_mention_time_defaults_to_now_with_a_warning(mem, caplog):
    bank = mem.bank("undated")
    with caplog.at_level("WARNING", logger="agentmem"):
        result = bank.retain("Bob likes sailing.")
    assert result.warnings and "mentioned_at" in result.warnings[0]
    assert "without mentioned_at" in caplog.text
    age = datetime.now(UTC) - result.memories[0].mentioned_at
    assert age.total_seconds() < 60


def test_message_timestamp_overrides_the_call_time(mem):
    bank = mem.bank("timed")
    result = bank.retain(
        [
            {
                "role": "user",
                "content": "Lunch with Carol.",
                "timestamp": "2024-12-24T12:00:00+02:00",
            }
        ],
        mentioned_at=T0,
    )
    assert result.memories[0].mentioned_at == datetime(2024, 12, 24, 10, 0, tzinfo=UTC)


def test_explicit_occurrence_and_importance_are_kept(mem):
    bank = mem.bank("events")
    start, end = datetime(2024, 6, 1, tzinfo=UTC), datetime(2024, 6, 30, tzinfo=UTC)
    memory = bank.retain(
        "Alice got married.", mentioned_at=T0, occurred_at=(start, end), importance=0.9
    ).memories[0]
    assert (memory.occurred_start, memory.occurred_end, memory.importance) == (start, end, 0.9)
    assert bank.get(memory.id) == memory


def test_extracted_importance_is_low_for_chit_chat_and_defaults_around_half(mem):
    bank = mem.bank("chat")
    result = bank.retain(
        [
            {"role": "user", "content": "thanks!"},
            {"role": "user", "content": "My flight to Lisbon on 12 May is TP 1234 at 7:05."},
        ],
        mentioned_at=T0,
    )
    chit_chat, fact = result.memories
    assert chit_chat.importance < 0.5 < fact.importance <= 0.8


def test_async_twins_run_the_same_implementation(mem):
    import asyncio

    bank = mem.bank("async")

    async def scenario() -> tuple[agentmem.RecallResult, agentmem.RecallResult]:
        await bank.aretain(CONVERSATION, mentioned_at=T0)
        a = await bank.arecall("Where is Alice's office?", reinforce=False, now=T1)
        b = bank.recall("Where is Alice's office?", reinforce=False, now=T1)
        return a, b

    a, b = asyncio.run(scenario())
    assert [(h.memory.id, h.score) for h in a] == [(h.memory.id, h.score) for h in b]
    assert texts(a)[0] == "Alice: My office is room 42 and my manager is Bob."


def test_async_with_warms_up_closes_and_the_store_reopens_cleanly(tmp_path, caplog):
    async def scenario() -> agentmem.AgentMemory:
        async with agentmem.AgentMemory(tmp_path / "store") as mem:
            await mem.awarm_up()
            bank = mem.bank("async")
            await bank.aretain(CONVERSATION, mentioned_at=T0)
            hits = await bank.arecall("Where is Alice's office?", reinforce=False, now=T1)
            assert texts(hits)[0] == "Alice: My office is room 42 and my manager is Bob."
        return mem

    closed = asyncio.run(scenario())
    with pytest.raises(agentmem.StorageError, match="closed"):
        closed.banks()
    with caplog.at_level("WARNING"), agentmem.AgentMemory(tmp_path / "store") as again:
        assert again.bank("async").stats()["memories"] == len(CONVERSATION)
        assert again.check_integrity().ok
    assert "did not close cleanly" not in caplog.text
