"""The LLM path through the real openai client + Instructor (fake HTTP transport) and FakeLLM."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

import agentmem
from agentmem.llm.client import LLMSettings
from agentmem.testing import FakeLLM, FakeOpenAIServer, HashEmbedder

T0 = "2025-01-15T10:00:00Z"
LABELS = [
    {
        "key": "engagement",
        "description": "Student engagement level",
        "type": "value",
        "values": [
            {"value": "active", "description": "Participates"},
            {"value": "passive", "description": "Listens"},
        ],
    },
    {
        "key": "pedagogy",
        "type": "multi-values",
        "tag": True,
        "values": [{"value": "scaffolding"}, {"value": "socratic_questioning"}],
    },
]


def chat(n: int) -> list[dict]:
    return [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "name": "Alice" if i % 2 == 0 else None,
            "content": f"Message {i}: Alice talks about her trip to Lisbon and the tram ride {i}.",
            "metadata": {"turn": i},
        }
        for i in range(n)
    ]


def fact(text: str, index: int = 0, **fields) -> dict:
    return {"text": text, "message_index": index, **fields}


@pytest.fixture
def open_memory(tmp_path):
    opened: list[agentmem.AgentMemory] = []

    def open_(llm) -> agentmem.AgentMemory:
        memory = agentmem.AgentMemory(tmp_path / str(len(opened)), embedder=HashEmbedder(), llm=llm)
        opened.append(memory)
        return memory

    yield open_
    for memory in opened:
        memory.close()


def test_one_instructor_call_per_chunk_of_many_messages(open_memory):
    replies = [
        {
            "facts": [
                fact(
                    "Alice took a tram in Lisbon last June and loved the view of the river.",
                    0,
                    entities=[
                        {"name": "Alice", "kind": "person"},
                        {"name": "Lisbon", "kind": "place"},
                    ],
                    occurred_start="2024-06-01",
                    occurred_end="2024-06-30",
                ),
                fact(
                    "Alice was delighted, so she planned a second trip to Lisbon.",
                    1,
                    caused_by=[0],
                    entities=[{"name": "Alice", "kind": "person"}],
                ),
            ]
        },
        {"facts": [fact("The assistant recommended the Belem tower.", 3, fact_type="experience")]},
        {"facts": []},
    ]
    server = FakeOpenAIServer({"extract": replies})
    memory = open_memory(server.client())
    bank = memory.bank("trips")
    bank.configure(llm_chunk_chars=300, consolidate=False)

    result = bank.retain(chat(6), mentioned_at=T0)

    assert len(server.requests) == 3  # six messages of ~100 characters, chunks of 300
    assert result.llm_calls == 3 and result.extraction == "llm"
    assert result.prompt_tokens > 0 and result.completion_tokens > 0
    assert result.llm_tokens == result.prompt_tokens + result.completion_tokens
    assert [m.fact_type for m in result] == ["world", "world", "experience"]
    first, second, third = result.memories
    assert first.occurred_start.isoformat() == "2024-06-01T00:00:00+00:00"
    assert second.metadata == {"turn": 1} and third.metadata == {"turn": 3}
    assert bank.entity("Lisbon").kind == "place"
    edges = bank.graph().get_edge_data(second.id, first.id).values()
    assert "caused_by" in {e["kind"] for e in edges}
    body = server.requests[0]
    assert body["tool_choice"]["function"]["name"] == "ExtractionOut"
    assert "[0] Alice (user, said at 2025-01-15T10:00:00+00:00)" in body["messages"][1]["content"]
    assert bank.recall("tram Lisbon", top_k=1)[0].memory.id == first.id


def test_mission_mode_and_custom_rules_reach_the_prompt(open_memory):
    llm = FakeLLM({"extract": [{"facts": []}] * 3})
    bank = open_memory(llm).bank("b")
    bank.configure(retain_mission="Keep technical decisions; ignore greetings.", consolidate=False)
    bank.retain("We chose DuckDB over SQLite for FTS.", mentioned_at=T0)
    bank.configure(extraction_mode="verbose")
    bank.retain("We chose Chroma for vectors.", mentioned_at=T0)
    bank.configure(extraction_mode="custom", extraction_rules="Only extract invoice numbers.")
    bank.retain("Invoice INV-1 is paid.", mentioned_at=T0)

    concise, verbose, custom = (call.messages[0]["content"] for call in llm.calls)
    assert "Keep technical decisions; ignore greetings." in concise
    assert "Be selective" in concise and "Be thorough" in verbose
    assert "Only extract invoice numbers." in custom and "Be selective" not in custom
    assert "Keep technical decisions" in custom
    with pytest.raises(agentmem.InvalidInputError, match="extraction_rules"):
        bank.configure(extraction_mode="custom", extraction_rules=None)
    with pytest.raises(agentmem.InvalidInputError, match="extraction_mode"):
        bank.configure(extraction_mode="chatty")


def test_labels_outside_the_enum_are_dropped_and_labels_become_entities_and_tags(open_memory):
    reply = fact(
        "The tutor broke the proof into small steps and Bob answered every question.",
        entities=[{"name": "Bob", "kind": "person"}],
        labels=[
            {"key": "engagement", "value": "Active"},
            {"key": "engagement", "value": "passive"},  # a "value" group keeps one
            {"key": "pedagogy", "value": "scaffolding"},
            {"key": "pedagogy", "value": "lecturing"},  # not in the enum
            {"key": "mood", "value": "happy"},  # not a configured group
        ],
    )
    llm = FakeLLM({"extract": [{"facts": [reply]}, {"facts": [reply]}]})
    memory = open_memory(llm)
    bank = memory.bank("tutoring")
    bank.configure(entity_labels=LABELS, consolidate=False)
    (stored,) = bank.retain("The tutor broke the proof into steps.", mentioned_at=T0).memories
    assert "- engagement (value, optional): Student engagement level" in llm.calls[0].prompt
    assert stored.entities == ("Bob", "engagement:active", "pedagogy:scaffolding")
    assert stored.tags == ("pedagogy:scaffolding",)
    assert bank.entity("pedagogy:scaffolding").kind == "label"
    hit = bank.recall("scaffolding", strategies="keyword")[0]
    assert hit.memory.id == stored.id
    assert bank.recall("tutor", tags=["pedagogy:scaffolding"])[0].memory.id == stored.id

    bank.configure(entities_allow_free_form=False)
    labels_only = bank.retain("Second session.", mentioned_at=T0).memories[0]
    assert labels_only.entities == ("engagement:active", "pedagogy:scaffolding")
    assert "labels only" in llm.calls[-1].messages[0]["content"]
    reopened = agentmem.BankConfig.from_mapping(bank.config.to_mapping())
    assert reopened == bank.config and not reopened.entities_allow_free_form


@pytest.mark.parametrize("failure", [500, "not json at all"], ids=["http-500", "invalid-output"])
def test_llm_failure_keeps_the_content_with_offline_facts(open_memory, failure):
    server = FakeOpenAIServer({"extract": [failure] * 3})
    bank = open_memory(server.client()).bank("b")
    result = bank.retain(
        [{"role": "user", "name": "Alice", "content": "I moved to Berlin in March."}],
        mentioned_at=T0,
    )
    assert result.extraction == "offline_fallback"
    assert any("LLM extraction failed" in w for w in result.warnings)
    assert [m.text for m in result] == ["Alice: I moved to Berlin in March."]
    assert len(server.requests) == (1 if failure == 500 else 3)  # Instructor re-asks twice
    assert bank.stats()["episodes"] == 1
    assert bank.recall("Berlin")[0].memory.id == result.memories[0].id
    assert bank.wait_for_consolidation(timeout=10)
    assert bank.observations() == []  # fallback facts are not consolidated


def _ids_in(messages: list[dict], section: str) -> list[str]:
    text = messages[1]["content"].split(section, 1)[1]
    return re.findall(r"\[([0-9a-f]{32})\]", text)


def create_tea_observation(messages):
    """The model's reply to a first consolidation: one observation from the new facts."""
    return {
        "actions": [
            {
                "action": "create",
                "text": "Alice prefers tea.",
                "supporting_fact_ids": _ids_in(messages, "New facts:"),
            }
        ]
    }


def test_consolidation_creates_then_refines_an_observation_and_never_deletes_facts(open_memory):
    def refine(messages):
        (observation,) = _ids_in(messages, "Existing observations:")[:1]
        new = _ids_in(messages, "New facts:")
        return {
            "actions": [
                {
                    "action": "refine",
                    "observation_id": observation,
                    "text": "Alice prefers green tea, never coffee.",
                    "supporting_fact_ids": new,
                    "contradicted_fact_ids": new[1:],
                }
            ]
        }

    llm = FakeLLM(
        {
            "extract": [
                {"facts": [fact("Alice ordered tea at the cafe.")]},
                {"facts": [fact("Alice drinks green tea."), fact("Alice drinks coffee daily.")]},
            ],
            "consolidate": [create_tea_observation, refine],
        }
    )
    bank = open_memory(llm).bank("b")
    first = bank.retain("Alice ordered tea.", mentioned_at=T0)
    assert bank.wait_for_consolidation(timeout=30)
    (observation,) = bank.observations()
    assert observation.fact_type == "observation" and observation.text == "Alice prefers tea."
    assert observation.metadata["source_memory_ids"] == [first.memories[0].id]
    assert observation.metadata["proof_count"] == 1

    second = bank.retain("Alice drinks green tea, and coffee daily.", mentioned_at=T0)
    assert bank.wait_for_consolidation(timeout=30)
    assert bank.consolidation_error is None
    (refined,) = bank.observations()
    assert refined.id == observation.id
    assert refined.text == "Alice prefers green tea, never coffee."
    assert refined.metadata["proof_count"] == 3
    assert refined.metadata["history"][0]["text"] == "Alice prefers tea."
    coffee = bank.get(second.memories[1].id)  # contradicted: flagged, not erased
    assert coffee.metadata["contradicted_by"] == [observation.id]
    assert bank.stats()["memories"] == 4
    hits = bank.recall("green tea coffee", fact_types="observation", strategies="keyword")
    assert [h.memory.id for h in hits] == [observation.id]
    assert [h.memory.text for h in bank.recall("never coffee", fact_types="observation")] == [
        refined.text
    ]
    report = bank.check_integrity()  # the rewrite moved the bank's keyword statistics too
    assert report.ok, report.problems


def test_reflect_answers_citing_memory_ids_through_the_openai_client(open_memory):
    def answer(messages):
        cited = re.findall(r"\[([0-9a-f]{32})\] \(world\) Alice drinks", messages[1]["content"])
        return {
            "answer": "Alice drinks green tea.",
            "cited_ids": [*cited, "f" * 32],  # an id outside the evidence is dropped
            "opinion": "Green tea is a safe gift for Alice.",
        }

    server = FakeOpenAIServer(
        {
            "extract": [{"facts": [fact("Alice drinks green tea every morning.")]}],
            "reflect": [answer],
        }
    )
    bank = open_memory(server.client()).bank("b")
    bank.configure(consolidate=False)
    (tea,) = bank.retain("Alice drinks green tea every morning.", mentioned_at=T0).memories

    reflection = bank.reflect("What does Alice drink?")

    assert reflection.answer == "Alice drinks green tea."
    assert reflection.cited_ids == (tea.id,)
    assert tea.id in [m.id for m in reflection.memories]
    assert reflection.opinion.fact_type == "opinion"
    assert reflection.opinion.metadata["source_memory_ids"] == [tea.id]
    assert reflection.llm_calls == 1 and reflection.prompt_tokens > 0
    assert "Answer the question from the memories" in server.calls_for("reflect")[0].prompt
    assert bank.recall("safe gift", fact_types="opinion")[0].memory.id == reflection.opinion.id


def test_reflect_offline_returns_the_evidence_and_no_answer(tmp_path):
    with agentmem.AgentMemory(tmp_path, embedder=HashEmbedder()) as memory:
        bank = memory.bank("b")
        (tea,) = bank.retain("Alice drinks green tea.", mentioned_at=T0).memories
        reflection = bank.reflect("What does Alice drink?")
        assert reflection.answer is None and reflection.observations == []
        assert [m.id for m in reflection.memories] == [tea.id]
        assert bank.wait_for_consolidation(timeout=0) is True
        again = asyncio.run(bank.areflect("What does Alice drink?"))
        assert [m.id for m in again.memories] == [tea.id]


def test_prepare_then_commit_stores_the_agents_conclusions(tmp_path):
    with agentmem.AgentMemory(tmp_path, embedder=HashEmbedder()) as memory:
        bank = memory.bank("b")
        (tea,) = bank.retain("Alice drinks green tea.", mentioned_at=T0).memories
        prompt = bank.reflect_prepare("What does Alice drink?")
        assert prompt.evidence_ids == (tea.id,)
        assert f"[{tea.id}]" in prompt.messages[1]["content"]

        stored = bank.reflect_commit(
            prompt.query,
            observations=["Alice likes tea."],
            opinions=["Tea is a good gift for Alice."],
            cited_ids=[tea.id],
        )
        assert [m.fact_type for m in stored] == ["observation", "opinion"]
        assert bank.observations()[0].metadata["source_memory_ids"] == [tea.id]
        assert bank.reflect_prepare("What does Alice like?").observations[0].id == stored[0].id
        with pytest.raises(agentmem.NotFoundError):
            bank.reflect_commit("q", observations=["x"], cited_ids=["nope"])
        with pytest.raises(agentmem.InvalidInputError):
            bank.reflect_commit("q")


def test_recalled_memories_fed_back_into_a_prompt_are_not_extracted_again(open_memory):
    llm = FakeLLM({"extract": [{"facts": [fact("Alice drinks green tea.")]}, {"facts": []}]})
    bank = open_memory(llm).bank("b")
    bank.configure(consolidate=False)
    (tea,) = bank.retain("Alice drinks green tea.", mentioned_at=T0).memories
    recall_output = json.dumps({"memories": [{"id": tea.id, "text": tea.text, "score": 0.9}]})

    result = bank.retain(
        [
            {"role": "system", "content": "Relevant memories:\n- alice drinks  green tea"},
            {"role": "tool", "content": recall_output},
            {"role": "user", "name": "Alice", "content": "Also, I started learning Go."},
        ],
        mentioned_at=T0,
    )

    assert result.skipped_messages == 2
    prompt = llm.calls[-1].messages[1]["content"]
    assert "learning Go" in prompt and "green tea" not in prompt
    assert bank.stats()["episodes"] == 2  # the episode still keeps everything verbatim


def test_llm_settings_are_validated_and_never_read_from_the_environment_implicitly(
    tmp_path, monkeypatch
):
    with pytest.raises(agentmem.InvalidInputError, match="llm must be"):
        agentmem.AgentMemory(tmp_path / "a", embedder=HashEmbedder(), llm=42)
    with pytest.raises(agentmem.InvalidInputError, match="unknown LLM setting"):
        agentmem.AgentMemory(tmp_path / "b", embedder=HashEmbedder(), llm={"modle": "x"})
    monkeypatch.setenv("AGENTMEM_LLM_MODEL", "llama3.1:8b")
    monkeypatch.setenv("AGENTMEM_LLM_BASE_URL", "http://localhost:11434/v1")
    settings = LLMSettings.from_env()
    assert (settings.model, settings.base_url) == ("llama3.1:8b", "http://localhost:11434/v1")
    assert LLMSettings().model == "gpt-4o-mini"
    with agentmem.AgentMemory(
        tmp_path / "c", embedder=HashEmbedder(), llm={"model": "m", "base_url": "http://x.invalid"}
    ) as memory:
        assert memory.bank("b").wait_for_consolidation(timeout=1)


def test_an_observation_forgotten_while_consolidating_is_created_anew(open_memory):
    bank = None

    def forget_then_refine(messages):
        (observation,) = _ids_in(messages, "Existing observations:")[:1]
        bank.forget(observation)  # a user forgets it while the model is thinking
        return {
            "actions": [
                {
                    "action": "refine",
                    "observation_id": observation,
                    "text": "Alice prefers green tea.",
                    "supporting_fact_ids": _ids_in(messages, "New facts:"),
                }
            ]
        }

    llm = FakeLLM(
        {
            "extract": [
                {"facts": [fact("Alice ordered tea at the cafe.")]},
                {"facts": [fact("Alice drinks green tea.")]},
            ],
            "consolidate": [create_tea_observation, forget_then_refine],
        }
    )
    bank = open_memory(llm).bank("b")
    bank.retain("Alice ordered tea.", mentioned_at=T0)
    assert bank.wait_for_consolidation(timeout=30)
    (first,) = bank.observations()
    second = bank.retain("Alice drinks green tea.", mentioned_at=T0)
    assert bank.wait_for_consolidation(timeout=30)
    assert bank.consolidation_error is None
    (observation,) = bank.observations()
    assert observation.id != first.id and observation.text == "Alice prefers green tea."
    assert observation.metadata["source_memory_ids"] == [second.memories[0].id]
    assert bank.check_integrity().ok


def test_a_fact_forgotten_while_consolidating_is_neither_cited_nor_restated(open_memory):
    bank = None

    def forget_then_create(messages):
        new = _ids_in(messages, "New facts:")
        if len(new) == 2:  # the first call: a user forgets the coffee fact meanwhile
            coffee = [i for i in new if "coffee" in bank.get(i).text]
            bank.forget(coffee)
        return {
            "actions": [
                {
                    "action": "create",
                    "text": "Alice drinks tea and coffee."
                    if len(new) == 2
                    else "Alice drinks tea.",
                    "supporting_fact_ids": new,
                }
            ]
        }

    llm = FakeLLM(
        {
            "extract": [{"facts": [fact("Alice drinks green tea."), fact("Alice drinks coffee.")]}],
            "consolidate": [forget_then_create, forget_then_create],
        }
    )
    bank = open_memory(llm).bank("b")
    retained = bank.retain("Alice drinks green tea, and coffee.", mentioned_at=T0)
    assert bank.wait_for_consolidation(timeout=30)
    assert bank.consolidation_error is None
    (observation,) = bank.observations()
    assert observation.text == "Alice drinks tea."  # consolidated again without the coffee
    tea = [m.id for m in retained.memories if "tea" in m.text]
    assert observation.metadata["source_memory_ids"] == tea
    assert [m.text for m in bank.memories() if m.fact_type != "observation"] == [
        "Alice drinks green tea."
    ]
    assert bank.check_integrity().ok
