"""Bad input gets a clear AgentMemError subclass and never damages the bank."""

from __future__ import annotations

import math
from datetime import datetime

import pytest

import agentmem
from tests.conftest import CONVERSATION, T0


@pytest.fixture
def snapshot(bank):
    return [m.id for m in bank.memories()]


@pytest.mark.parametrize(
    ("content", "kwargs"),
    [
        ("", {}),
        ("   \n\t ", {}),
        ([], {}),
        ([{"role": "user", "content": "   "}], {}),
        ([{"content": "no role"}], {}),
        ([{"role": "user"}], {}),
        ([{"role": "user", "content": 42}], {}),
        (["just a string in a list"], {}),
        ([{"role": "user", "content": "ok", "metadata": "not a dict"}], {}),
        ([{"role": "user", "content": "ok", "timestamp": "yesterday-ish"}], {}),
        (b"bytes", {}),
        (None, {}),
        ("fine", {"importance": 2.0}),
        ("fine", {"importance": -0.1}),
        ("fine", {"importance": math.nan}),
        ("fine", {"importance": math.inf}),
        ("fine", {"importance": True}),
        ("fine", {"mentioned_at": "not a date"}),
        ("fine", {"mentioned_at": math.nan}),
        ("fine", {"mentioned_at": 1e20}),
        ("fine", {"occurred_at": ("2025-02-01", "2025-01-01")}),
        ("fine", {"metadata": {"x": math.nan}}),
        ("fine", {"metadata": {"x": object()}}),
        ("fine", {"tags": ["ok", ""]}),
        ("fine", {"tags": [None]}),
        ("fine", {"document_id": ""}),
        ("x" * 1_000_001, {}),
    ],
)
def test_bad_retain_input_raises_invalid_input_and_changes_nothing(bank, snapshot, content, kwargs):
    with pytest.raises(agentmem.InvalidInputError):
        bank.retain(content, **kwargs)
    assert [m.id for m in bank.memories()] == snapshot
    assert bank.stats()["episodes"] == 1


@pytest.mark.parametrize(
    "kwargs",
    [
        {"query": ""},
        {"query": "   "},
        {"query": None},
        {"query": "x", "strategies": ["psychic"]},
        {"query": "x", "strategies": []},
        {"query": "x", "top_k": 0},
        {"query": "x", "top_k": -3},
        {"query": "x", "top_k": 10**20},
        {"query": "x", "max_tokens": 2**70},
        {"query": "x", "max_tokens": 0},
        {"query": "x", "tags_match": "some"},
        {"query": "x", "fact_types": ["gossip"]},
        {"query": "x", "scoring_weights": {"w_relevance": -1}},
        {"query": "x", "scoring_weights": {"w_relevance": math.nan}},
        {"query": "x", "scoring_weights": {"w_magic": 1}},
        {
            "query": "x",
            "scoring_weights": {
                "w_relevance": 0,
                "w_recency": 0,
                "w_importance": 0,
                "w_reinforcement": 0,
            },
        },
        {"query": "x", "time_range": ("2025-02-01", "2025-01-01")},
        {"query": "x", "now": "soon"},
        {"query": "x", "no_such_param": 1},
    ],
)
def test_bad_recall_input_raises_invalid_input(bank, kwargs):
    kwargs = dict(kwargs)  # parametrised values are shared by the runs on each backend
    query = kwargs.pop("query")
    with pytest.raises(agentmem.InvalidInputError):
        bank.recall(query, **kwargs)


@pytest.mark.parametrize(
    "strategy", ["semantic", "similarity", "keyword", "graph", "temporal", "causal", "analogical"]
)
def test_every_strategy_of_the_contract_runs(bank, strategy):
    moved = bank.retain(
        "Alice moved to Berlin because of a new job.", mentioned_at="2025-01-15"
    ).memories[0]
    result = bank.recall(
        "Why did Alice move to Berlin last month?", strategies=[strategy], now="2025-02-10"
    )
    assert result.strategies == ("semantic" if strategy == "similarity" else strategy,)
    assert moved.id in [hit.memory.id for hit in result]


@pytest.mark.parametrize(
    "bank_id", ["", "../escape", "a/b", "a\\b", ".hidden", "x" * 129, "sp ace", None, 7, "a..b"]
)
def test_bad_bank_ids_are_refused(mem, bank_id):
    with pytest.raises(agentmem.InvalidInputError):
        mem.bank(bank_id)
    assert mem.banks() == []


def test_unusual_but_valid_text_is_stored_safely(bank, snapshot):
    weird = [
        "lone surrogate \ud800 inside",
        "control\x00chars\x07here",
        "emoji 🧠 and RTL עברית and CJK 记忆",
        'SQL-ish \'; DROP TABLE memories; -- and "quotes"',
    ]
    stored = [bank.retain(text, mentioned_at=T0).memories[0] for text in weird]
    assert stored[0].text == "lone surrogate \ufffd inside"
    assert stored[1].text == "controlcharshere"
    assert stored[2].text == weird[2]
    assert bank.recall("记忆", strategies=["keyword"]).hits
    assert len(bank.memories()) == len(snapshot) + len(weird)


def test_very_long_text_is_retained_and_recallable(mem):
    bank = mem.bank("long")
    text = " ".join(f"Sentence {i} talks about topic number {i}." for i in range(3000))
    result = bank.retain(text, mentioned_at=T0)
    assert len(result) > 100
    assert bank.recall("topic number 2999", strategies=["keyword"]).hits[0].text == (
        "Sentence 2999 talks about topic number 2999."
    )


def test_get_and_entity_of_unknown_names_raise_not_found(bank):
    with pytest.raises(agentmem.NotFoundError):
        bank.get("nope")
    with pytest.raises(KeyError):  # NotFoundError is also a KeyError
        bank.entity("Nobody")
    assert bank.entity("alice").name == "Alice"


def test_every_library_error_is_an_agentmem_error():
    for name in agentmem.__all__:
        obj = getattr(agentmem, name)
        if isinstance(obj, type) and issubclass(obj, Exception):
            assert issubclass(obj, agentmem.AgentMemError)
    assert issubclass(agentmem.InvalidInputError, ValueError)
    assert issubclass(agentmem.NotFoundError, KeyError)


def test_conversation_is_left_intact(bank):
    assert len(bank.memories()) == len(CONVERSATION)


# Values of the wrong shape for a parameter that takes one string or a list of strings.
WRONG_SHAPES = [
    42,
    1.5,
    math.nan,
    True,
    b"bytes",
    {"a": "b"},
    datetime(9999, 12, 31),
    object(),
    [1],
    ["ok", None],
    [["nested"]],
]


def _every_entry_taking_strings(bank, mem, tmp_path, value):
    """(name, call) of every public entry whose parameter takes one or many strings."""
    stored = bank.memories()[0].id
    return [
        ("retain tags", lambda: bank.retain("fine", tags=value)),
        ("recall tags", lambda: bank.recall("x", tags=value)),
        ("recall tags_match", lambda: bank.recall("x", tags=["a"], tags_match=value)),
        ("recall strategies", lambda: bank.recall("x", strategies=value)),
        ("recall fact_types", lambda: bank.recall("x", fact_types=value)),
        ("causal direction", lambda: bank.recall("x", strategies="causal", direction=value)),
        ("causal seeds", lambda: bank.recall("x", strategies="causal", seed_memory_id=value)),
        ("forget ids", lambda: bank.forget(value)),
        ("forget tags", lambda: bank.forget(tags=value)),
        ("memories tags", lambda: bank.memories(tags=value)),
        (
            "reflect cited_ids",
            lambda: bank.reflect_commit("x", observations=["o"], cited_ids=value),
        ),
        ("reflect observations", lambda: bank.reflect_commit("x", observations=value)),
        ("reflect cited, one good", lambda: bank.reflect_commit("x", cited_ids=[stored, value])),
        ("export path", lambda: bank.export(value)),
        ("import path", lambda: mem.import_(value)),
        ("store path", lambda: agentmem.AgentMemory(value)),
    ]


@pytest.mark.parametrize("value", WRONG_SHAPES, ids=repr)
def test_a_value_of_the_wrong_shape_is_refused_at_every_entry(bank, mem, tmp_path, value):
    before = ([m.id for m in bank.memories()], mem.banks())
    for name, call in _every_entry_taking_strings(bank, mem, tmp_path, value):
        if name in ("reflect cited, one good",) and isinstance(value, list):
            continue  # a list inside the list is the case above it
        if name in ("export path", "import path", "store path") and isinstance(value, list):
            continue  # not a path either way; the scalar shapes cover the check
        try:
            result = call()
        except agentmem.InvalidInputError:
            continue
        except Exception as exc:  # noqa: BLE001 - the point: nothing but AgentMemError
            pytest.fail(f"{name} with {value!r}: {type(exc).__name__}: {exc}")
        if isinstance(result, agentmem.AgentMemory):
            result.close()
        pytest.fail(f"{name} accepted {value!r}")
    assert ([m.id for m in bank.memories()], mem.banks()) == before
    assert not mem.check_integrity().problems
