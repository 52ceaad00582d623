"""Entities and the user's corrections of entity resolution, through the public API."""

from __future__ import annotations

import pytest

import agentmem
from tests.conftest import T0, T1


def say(name: str, text: str) -> dict[str, str]:
    return {"role": "user", "name": name, "content": text}


@pytest.fixture
def team(mem: agentmem.AgentMemory) -> agentmem.MemoryBank:
    bank = mem.bank("team")
    bank.retain(
        [
            say("Maria", "Robert Chen reviewed the budget with me."),
            say("Maria", "Kenji said the demo is on Friday."),
        ],
        mentioned_at=T0,
    )
    return bank


def test_entities_have_kinds_aliases_and_memories(team):
    people = {e.name: e for e in team.entities(kind="person")}
    assert {"Maria", "Robert Chen", "Kenji"} <= set(people)  # no context joins Kenji to Robert yet
    assert len(people["Maria"].memory_ids) == 2
    assert team.entity("robert chen") == people["Robert Chen"]
    assert all(e.kind == "person" for e in team.entities(kind="person"))
    assert team.entities(kind="galaxy") == []


def test_add_alias_merges_and_overrides_the_resolver_after_reopen(store_path):
    with agentmem.AgentMemory(store_path) as mem:
        bank = mem.bank("team")
        bank.retain(
            [say("Maria", "Robert Chen reviewed the budget."), say("Maria", "Kenji is in Oslo.")],
            mentioned_at=T0,
        )
        robert = bank.add_alias("Robert Chen", "Kenji")
        assert robert.name == "Robert Chen" and "Kenji" in robert.aliases
        assert len(robert.memory_ids) == 2
        with pytest.raises(agentmem.NotFoundError):
            bank.entity("Nobody")
        assert bank.entity("Kenji") == robert
        assert "Kenji" not in bank.graph()  # the mirror follows the merge
    with agentmem.AgentMemory(store_path) as mem:
        bank = mem.bank("team")
        later = bank.retain([say("Maria", "Kenji booked the flights.")], mentioned_at=T1)
        assert "Robert Chen" in later.memories[0].entities
        assert len(bank.entity("Robert Chen").memory_ids) == 3


def test_split_alias_moves_the_memories_and_keeps_them_apart(mem):
    bank = mem.bank("split")
    bank.retain(
        [
            say("Maria", "Robert Chen reviewed the budget."),
            say("Maria", "Robert Chen and Kenji had lunch."),
        ],
        mentioned_at=T0,
    )
    bank.add_alias("Robert Chen", "Kenji")
    bank.retain([say("Maria", "Kenji called about the invoice.")], mentioned_at=T0)
    assert len(bank.entity("Robert Chen").memory_ids) == 3

    bob = bank.split_alias("Robert Chen", "Kenji")
    assert bob is not None and bob.name == "Kenji"
    assert len(bob.memory_ids) == 1  # the lunch memory also names Robert Chen and stays
    assert "Kenji" not in bank.entity("Robert Chen").aliases
    later = bank.retain([say("Maria", "Kenji sent the slides.")], mentioned_at=T1)
    assert "Robert Chen" not in later.memories[0].entities
    assert "Kenji" in later.memories[0].entities


@pytest.mark.parametrize(
    ("call", "args", "error"),
    [
        ("add_alias", ("Nobody", "Kenji"), agentmem.NotFoundError),
        ("add_alias", ("Robert Chen", ""), agentmem.InvalidInputError),
        ("add_alias", ("Robert Chen", None), agentmem.InvalidInputError),
        ("split_alias", ("Robert Chen", "Robert Chen"), agentmem.InvalidInputError),
        ("split_alias", ("Nobody", "Kenji"), agentmem.NotFoundError),
        ("entity", ("   ",), agentmem.InvalidInputError),
    ],
)
def test_bad_corrections_raise_and_change_nothing(team, call, args, error):
    before = team.entities()
    with pytest.raises(error):
        getattr(team, call)(*args)
    assert team.entities() == before
