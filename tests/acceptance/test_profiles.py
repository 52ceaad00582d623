"""Entity profiles (issue 21, failure class 4): offline observations that gather what a person
said about one side of their life, kept current as facts arrive or are forgotten."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import agentmem.bank
from agentmem import AgentMemory, MemoryBank
from agentmem.testing import HashEmbedder

T0 = datetime(2024, 3, 1, tzinfo=UTC)

SESSION_1 = [
    ("Bob", "I just signed up for a pottery class at the community centre."),
    ("Carol", "That sounds lovely, tell me how it goes!"),
    ("Bob", "Thanks! I also play the clarinet in a local jazz band."),
]
SESSION_2 = [
    ("Carol", "How was your weekend?"),
    ("Bob", "Great, I joined a climbing gym near the river last Saturday."),
]


def _on(bank: MemoryBank) -> MemoryBank:
    """The bank with profiles kept (the default, said explicitly)."""
    bank.configure(profiles=True)
    return bank


def _messages(turns: list[tuple[str, str]]) -> list[dict[str, str]]:
    return [{"role": "user", "name": name, "content": text} for name, text in turns]


def _profile(bank: MemoryBank, subject: str, aspect: str):  # noqa: ANN202
    found = [
        o
        for o in bank.observations()
        if o.metadata.get("profile") == {"subject": subject, "aspect": aspect}
    ]
    assert len(found) <= 1
    return found[0] if found else None


def _facts(bank: MemoryBank, word: str) -> list:  # noqa: ANN202
    return [m for m in bank.memories() if m.fact_type != "observation" and word in m.text]


def test_a_profile_gathers_a_speakers_statements_across_sessions(store_path: Path) -> None:
    with AgentMemory(store_path) as mem:
        bank = _on(mem.bank("friends"))
        bank.retain(_messages(SESSION_1), mentioned_at=T0, document_id="s1")
        first = _profile(bank, "Bob", "activities")
        assert first is not None
        assert first.text == (
            "Bob's activities and hobbies: play the clarinet in a local jazz band; "
            "signed up for a pottery class."
        )
        bank.retain(_messages(SESSION_2), mentioned_at=T0 + timedelta(days=30), document_id="s2")
        profile = _profile(bank, "Bob", "activities")
        memories = bank.memories()
        assert bank.check_integrity().ok

    assert profile is not None and profile.id == first.id  # rewritten in place
    assert profile.text.startswith("Bob's activities and hobbies: joined a climbing gym")
    assert "pottery class" in profile.text and "clarinet" in profile.text
    sources = profile.metadata["source_memory_ids"]
    cited = {m.id: m for m in memories if m.id in sources}
    assert len(cited) == 3 == profile.metadata["proof_count"]
    assert all(m.text.startswith("Bob: ") for m in cited.values())  # not Carol's replies
    assert profile.metadata["history"] == []
    assert profile.entities == ("Bob",)
    assert profile.mentioned_at == T0 + timedelta(days=30)  # its newest source


def test_the_same_words_said_again_are_one_item_of_a_profile(store_path: Path) -> None:
    with AgentMemory(store_path) as mem:
        bank = _on(mem.bank("friends"))
        for month in range(3):  # said three times, a month apart
            bank.retain(_messages(SESSION_1[:1]), mentioned_at=T0 + timedelta(days=30 * month))
        assert _profile(bank, "Bob", "activities") is None  # one item is no profile
        bank.retain(_messages(SESSION_1[2:]), mentioned_at=T0 + timedelta(days=10))
        profile = _profile(bank, "Bob", "activities")
        assert profile is not None
        assert profile.text == (
            "Bob's activities and hobbies: signed up for a pottery class; "
            "play the clarinet in a local jazz band."
        )
        [newest] = [m for m in _facts(bank, "pottery") if m.mentioned_at == T0 + timedelta(60)]
        assert newest.id in profile.metadata["source_memory_ids"]
        assert profile.metadata["proof_count"] == 2
        assert bank.check_integrity().ok


def test_a_profile_is_recalled_for_an_aggregation_question(store_path: Path) -> None:
    with AgentMemory(store_path) as mem:
        bank = _on(mem.bank("friends"))
        bank.retain(_messages(SESSION_1), mentioned_at=T0, document_id="s1")
        bank.retain(_messages(SESSION_2), mentioned_at=T0 + timedelta(days=30), document_id="s2")
        hits = bank.recall("What are Bob's hobbies?", top_k=3).hits
        assert "Bob's activities and hobbies" in [h.memory.text.partition(":")[0] for h in hits]
        only_facts = bank.recall("What are Bob's hobbies?", fact_types=["experience", "world"])
        assert all(h.memory.fact_type != "observation" for h in only_facts.hits)


def test_plain_sentences_profile_the_person_they_open_with(store_path: Path) -> None:
    with AgentMemory(store_path) as mem:
        bank = _on(mem.bank("notes"))
        bank.retain(
            "Alice went to Rome for a conference trip. Alice visited the Louvre museum in "
            "Paris. Alice loves hiking in the Alps. The weather was mild.",
            mentioned_at=T0,
        )
        places = _profile(bank, "Alice", "places")
        assert places is not None
        assert places.text == (
            "Places Alice has been to or plans to visit: visited the Louvre museum in Paris; "
            "went to Rome for a conference trip."
        )
        assert _profile(bank, "Alice", "likes") is None  # one fact is no aggregation
        bank.retain(
            "Acme Corp plans to open an office in Berlin next spring. Acme Corp is planning "
            "to hire fifty engineers in Madrid.",
            mentioned_at=T0,
        )
        assert bank.entity("Acme Corp").kind == "org"
        assert [o.metadata["profile"]["subject"] for o in bank.observations()] == ["Alice"]


def test_profiles_survive_reopening_and_keep_updating(store_path: Path) -> None:
    with AgentMemory(store_path) as mem:
        _on(mem.bank("friends")).retain(_messages(SESSION_1), mentioned_at=T0, document_id="s1")
        before = _profile(_on(mem.bank("friends")), "Bob", "activities")
    with AgentMemory(store_path) as mem:
        bank = _on(mem.bank("friends"))
        assert _profile(bank, "Bob", "activities") == before
        bank.retain(_messages(SESSION_2), mentioned_at=T0 + timedelta(days=30), document_id="s2")
        after = _profile(bank, "Bob", "activities")
        assert after is not None and after.id == before.id
        assert after.metadata["proof_count"] == 3
        # The same session again changes nothing: no item twice.
        bank.retain(_messages(SESSION_2), mentioned_at=T0 + timedelta(days=30), document_id="s2")
        assert _profile(bank, "Bob", "activities") == after
        assert len(bank.observations()) == 1
        assert bank.check_integrity().ok


def test_forgetting_a_cited_fact_takes_it_out_of_the_profile(store_path: Path) -> None:
    with AgentMemory(store_path) as mem:
        bank = _on(mem.bank("friends"))
        bank.retain(_messages(SESSION_1), mentioned_at=T0, document_id="s1")
        bank.retain(_messages(SESSION_2), mentioned_at=T0 + timedelta(days=30), document_id="s2")
        (pottery,) = _facts(bank, "pottery")
        assert bank.forget([pottery.id]) == 1
        profile = _profile(bank, "Bob", "activities")
        assert profile is not None
        assert "pottery" not in profile.text
        assert "pottery" not in str(profile.metadata)
        assert pottery.id not in profile.metadata["source_memory_ids"]
        assert profile.metadata["proof_count"] == 2
        # Below two facts there is nothing to gather: the profile goes.
        bank.forget(document_id="s2")
        assert _profile(bank, "Bob", "activities") is None
        assert bank.check_integrity().ok
    with AgentMemory(store_path) as mem:  # and stays gone
        assert _profile(_on(mem.bank("friends")), "Bob", "activities") is None
        hits = _on(mem.bank("friends")).recall("pottery class").hits
        assert all("pottery" not in h.memory.text for h in hits)


def test_a_document_retained_again_refreshes_the_profiles_citing_it(store_path: Path) -> None:
    with AgentMemory(store_path) as mem:
        bank = _on(mem.bank("friends"))
        bank.retain(_messages(SESSION_1), mentioned_at=T0, document_id="s1")
        bank.retain(_messages(SESSION_2), mentioned_at=T0 + timedelta(days=30), document_id="s2")
        corrected = [("Bob", "Oops, I meant that I joined a swimming club by the lake.")]
        bank.retain(_messages(corrected), mentioned_at=T0 + timedelta(days=31), document_id="s2")
        profile = _profile(bank, "Bob", "activities")
        assert profile is not None
        assert "climbing" not in profile.text and "swimming club" in profile.text
        held = {m.id for m in bank.memories()}
        assert set(profile.metadata["source_memory_ids"]) <= held


def test_profiles_stay_in_their_bank(store_path: Path) -> None:
    with AgentMemory(store_path) as mem:
        mine = _on(mem.bank("friends"))
        mine.retain(_messages(SESSION_1), mentioned_at=T0, document_id="s1")
        other = _on(mem.bank("strangers"))
        other.retain([{"role": "user", "name": "Bob", "content": "Hello there."}], mentioned_at=T0)
        assert other.observations() == []
        assert all(h.memory.bank_id == "strangers" for h in other.recall("Bob's hobbies").hits)
        other.forget(other.memories()[0].id)  # a forget elsewhere leaves this bank's alone
        assert _profile(mine, "Bob", "activities") is not None


def test_a_bank_can_keep_no_profiles(store_path: Path) -> None:
    with AgentMemory(store_path) as mem:
        bank = _on(mem.bank("friends"))
        bank.retain(_messages(SESSION_1), mentioned_at=T0, document_id="s1")
        assert _profile(bank, "Bob", "activities") is not None
        bank.configure(profiles=False)
        bank.retain(_messages(SESSION_2), mentioned_at=T0 + timedelta(days=30), document_id="s2")
        kept = _profile(bank, "Bob", "activities")
        assert kept is not None and "climbing" not in kept.text  # no longer maintained
        (pottery,) = _facts(bank, "pottery")
        bank.forget([pottery.id])
        assert _profile(bank, "Bob", "activities") is None  # never kept past a forget
        quiet = mem.bank("quiet")
        quiet.configure(profiles=False)
        quiet.retain(_messages(SESSION_1), mentioned_at=T0)
        assert quiet.observations() == []
        fresh = mem.bank("fresh")  # profiles are kept by default
        fresh.retain(_messages(SESSION_1), mentioned_at=T0)
        assert _profile(fresh, "Bob", "activities") is not None


def test_a_profile_built_retain_by_retain_is_the_one_built_at_once(store_path: Path) -> None:
    """Retains update a profile from its own sources; the result is what all facts give."""
    turns = [("Bob", f"I joined the chess club number {n} downtown.") for n in range(20)]
    when = [T0 + timedelta(days=n // 3) for n in range(20)]  # three turns a day: ties
    with AgentMemory(store_path) as mem:
        stepwise = _on(mem.bank("stepwise"))
        for turn, at in zip(turns, when, strict=True):
            stepwise.retain(_messages([turn]), mentioned_at=at)
        at_once = _on(mem.bank("at-once"))
        messages = [
            {**message, "timestamp": at.isoformat()}
            for message, at in zip(_messages(turns), when, strict=True)
        ]
        at_once.retain(messages, mentioned_at=when[-1])
        one, other = _profile(stepwise, "Bob", "activities"), _profile(at_once, "Bob", "activities")
        assert one is not None and other is not None
        assert one.text == other.text
        assert one.text.count(";") == 15  # sixteen items, the newest
        assert "number 19" in one.text and "number 3 " not in one.text
        assert one.metadata["source_memory_ids"] != other.metadata["source_memory_ids"]


def _interrupted(bank: MemoryBank) -> str:
    """Bob's pottery class, forgotten as by a process killed between the forget's commit and
    the refresh of the profiles citing it (the embedded store commits the two apart)."""
    bank.retain(_messages(SESSION_1), mentioned_at=T0, document_id="s1")
    bank.retain(_messages(SESSION_2), mentioned_at=T0 + timedelta(days=30), document_id="s2")
    (pottery,) = _facts(bank, "pottery")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(agentmem.bank, "keep_profiles_current", lambda *args, **kwargs: [])
        assert bank.forget([pottery.id]) == 1
    return pottery.id


def _current(bank: MemoryBank, forgotten: str) -> None:
    profile = _profile(bank, "Bob", "activities")
    assert profile is not None
    assert forgotten not in profile.metadata["source_memory_ids"]
    assert "pottery" not in profile.text and profile.metadata["proof_count"] == 2
    assert bank.check_integrity().ok


def test_an_interrupted_forget_is_reported_and_repaired(store_path: Path) -> None:
    with AgentMemory(store_path) as mem:
        bank = _on(mem.bank("friends"))
        pottery = _interrupted(bank)
        (problem,) = bank.check_integrity().problems
        stale = _profile(bank, "Bob", "activities")
        assert stale is not None and pottery in stale.metadata["source_memory_ids"]
        assert "1 × profile citing a missing fact: " + stale.id in problem
        mem.repair()
        _current(bank, pottery)
        assert _profile(bank, "Bob", "activities").id == stale.id  # rebuilt in place
    with AgentMemory(store_path) as mem:
        _current(mem.bank("friends"), pottery)


def test_a_forget_after_an_interrupted_one_also_repairs_its_profiles(store_path: Path) -> None:
    with AgentMemory(store_path) as mem:
        bank = _on(mem.bank("friends"))
        pottery = _interrupted(bank)
        bank.retain(_messages([("Carol", "I baked rye bread this morning.")]), mentioned_at=T0)
        bank.forget(_facts(bank, "rye bread")[0].id)
        _current(bank, pottery)


# Retains two sessions, then forgets Bob's pottery class and is killed before the profiles
# citing it are refreshed; prints the forgotten fact's id first.
_KILLED_IN_FORGET = textwrap.dedent(
    """
    import os, signal, sys
    import agentmem, agentmem.bank
    from agentmem.testing import HashEmbedder

    mem = agentmem.AgentMemory(sys.argv[1], embedder=HashEmbedder())
    bank = mem.bank("friends")
    for n, turns in enumerate(({session_1!r}, {session_2!r})):
        messages = [{{"role": "user", "name": a, "content": b}} for a, b in turns]
        bank.retain(messages, mentioned_at=f"2024-03-0{{n + 1}}", document_id=f"s{{n}}")
    (pottery,) = [m.id for m in bank.memories() if "pottery" in m.text and ":" in m.text[:5]]
    print(pottery, flush=True)
    agentmem.bank.keep_profiles_current = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)
    bank.forget([pottery])
    """
)


@pytest.mark.duckdb_only("a forget and its profile refresh commit apart on the embedded store")
def test_a_store_killed_inside_a_forget_repairs_its_profiles_on_open(store_path: Path) -> None:
    script = _KILLED_IN_FORGET.format(session_1=SESSION_1, session_2=SESSION_2)
    run = subprocess.run(
        [sys.executable, "-c", script, str(store_path)], capture_output=True, text=True
    )
    assert run.returncode == -signal.SIGKILL, run.stderr
    pottery = run.stdout.split()[0]
    with AgentMemory(store_path, embedder=HashEmbedder()) as mem:
        bank = mem.bank("friends")
        assert pottery not in {m.id for m in bank.memories()}
        _current(bank, pottery)


def test_profiles_sharing_a_fact_are_updated_as_if_built_at_once(store_path: Path) -> None:
    """A retain that adds to two profiles citing one fact merges each with its own sources:
    among facts of one time, the later stored comes first, whatever the other profile holds."""
    first = [
        ("Bob", "I love the old wooden boards at the club."),
        ("Bob", "I joined the chess club, and I love the friendly people there."),
        ("Bob", "I joined a choir at church."),
    ]
    later = [("Bob", "I joined a pottery class, and I love the soft wet clay.")]
    with AgentMemory(store_path) as mem:
        stepwise = _on(mem.bank("stepwise"))
        stepwise.retain(_messages(first), mentioned_at=T0)
        stepwise.retain(_messages(later), mentioned_at=T0 + timedelta(days=1))
        at_once = _on(mem.bank("at-once"))
        timed = [
            {**message, "timestamp": (T0 + timedelta(days=n // 3)).isoformat()}
            for n, message in enumerate(_messages(first + later))
        ]
        at_once.retain(timed, mentioned_at=T0 + timedelta(days=1))
        for aspect in ("likes", "activities"):
            one, other = _profile(stepwise, "Bob", aspect), _profile(at_once, "Bob", aspect)
            assert one is not None and other is not None
            assert one.text == other.text
        assert _profile(stepwise, "Bob", "likes").text == (
            "What Bob loves and enjoys: love the soft wet clay; love the friendly people; "
            "love the old wooden boards at the club."
        )


def test_a_bank_imported_under_new_ids_has_its_profiles_cite_its_own_facts(
    store_path: Path, tmp_path: Path
) -> None:
    with AgentMemory(store_path) as mem:
        bank = _on(mem.bank("friends"))
        bank.retain(_messages(SESSION_1), mentioned_at=T0, document_id="s1")
        bank.export(tmp_path / "friends.jsonl")
        copy = mem.import_(tmp_path / "friends.jsonl", bank_id="copy")  # its ids are taken
        profile = _profile(copy, "Bob", "activities")
        assert profile is not None and profile.text == _profile(bank, "Bob", "activities").text
        held = {m.id for m in copy.memories()}
        assert set(profile.metadata["source_memory_ids"]) <= held
        assert mem.check_integrity().ok
