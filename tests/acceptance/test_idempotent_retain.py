"""Retaining the same thing twice does not duplicate it (issue 19 §4).

A document re-retained with the same content is a no-op; with other content it replaces the
document's memories, keeping the ids of unchanged facts; without a document an exact repeat
(speaker, normalised text, mention time) is skipped. All of it survives a reopen, an export
and import, an upgrade of an older store, and two threads retaining at once.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentmem
from agentmem.cli import main
from agentmem.errors import StorageError
from agentmem.store.database import SCHEMA_VERSION
from agentmem.testing import HashEmbedder
from tests.conftest import downgrade_store

T0 = datetime(2025, 1, 10, 9, tzinfo=UTC)
SESSION = [
    {"role": "user", "name": "Ana", "content": "I adopted a greyhound called Pixel."},
    {"role": "user", "name": "Bo", "content": "I work at Quixotrix as a welder."},
    {"role": "user", "name": "Ana", "content": "Pixel sleeps on the sofa all day."},
]


def _open(path):
    return agentmem.AgentMemory(path, embedder=HashEmbedder())


def _ids(memories) -> list[str]:
    return [m.id for m in memories]


def test_an_unchanged_document_is_a_no_op_that_returns_its_memories(tmp_path):
    with _open(tmp_path / "s") as mem:
        bank = mem.bank("b")
        first = bank.retain(SESSION, mentioned_at=T0, document_id="s1")
        again = bank.retain(SESSION, mentioned_at=T0, document_id="s1")
        assert not first.already_stored and not first.unchanged
        assert again.unchanged and again.extraction == "none"
        assert _ids(again) == _ids(first) and again.already_stored == tuple(_ids(first))
        assert again.created == [] and again.episode_id == first.episode_id
        assert _ids(bank.memories()) == _ids(first)
    with _open(tmp_path / "s") as mem:  # the hash is persisted
        bank = mem.bank("b")
        assert bank.retain(SESSION, mentioned_at=T0, document_id="s1").unchanged
        assert len(bank.memories()) == 3
        assert bank.check_integrity().problems == ()


def test_a_changed_document_replaces_its_memories_keeping_unchanged_ids(tmp_path):
    with _open(tmp_path / "s") as mem:
        bank = mem.bank("b")
        first = bank.retain(SESSION, mentioned_at=T0, document_id="s1")
        other = bank.retain("Carla likes tea.", mentioned_at=T0, document_id="s2")
        bank.recall("greyhound")  # access counts are kept on the memories that stay
        edited = [
            SESSION[0],
            {"role": "user", "name": "Bo", "content": "I work at Zentrix as a welder now."},
            SESSION[2],
        ]
        second = bank.retain(edited, mentioned_at=T0, document_id="s1")
        kept = {first.memories[0].id, first.memories[2].id}
        assert set(second.already_stored) == kept
        assert second.replaced == (first.memories[1].id,)
        assert [m.text for m in second] == [
            "Ana: I adopted a greyhound called Pixel.",
            "Bo: I work at Zentrix as a welder now.",
            "Ana: Pixel sleeps on the sofa all day.",
        ]
        stored = bank.memories(document_id="s1")
        assert {m.id for m in stored} == {m.id for m in second}
        assert {m.episode_id for m in stored} == {second.episode_id}
        assert _ids(bank.memories(document_id="s2")) == _ids(other)  # other documents untouched
        gone = first.memories[1].id
        with pytest.raises(agentmem.NotFoundError):
            bank.get(gone)
        assert gone not in bank.graph()
        assert all(h.memory.id != gone for h in bank.recall("Quixotrix welder", top_k=20))
        assert "Quixotrix" not in {e.name for e in bank.entities()}
        assert bank.check_integrity().problems == ()
        # The edited version is now the one held: retaining it again changes nothing.
        assert bank.retain(edited, mentioned_at=T0, document_id="s1").unchanged


def test_a_document_retained_with_other_fields_is_changed_content(tmp_path):
    with _open(tmp_path / "s") as mem:
        bank = mem.bank("b")
        first = bank.retain(SESSION, mentioned_at=T0, document_id="s1")
        tagged = bank.retain(SESSION, mentioned_at=T0, document_id="s1", tags=["pets"])
        assert not tagged.unchanged and set(tagged.replaced) == set(_ids(first))
        assert [m.tags for m in bank.memories()] == [("pets",)] * 3


def test_an_exact_repeat_without_a_document_is_skipped(tmp_path):
    with _open(tmp_path / "s") as mem:
        bank = mem.bank("b")
        first = bank.retain(SESSION, mentioned_at=T0)
        assert bank.retain(SESSION, mentioned_at=T0).unchanged
        # Normalised text: whitespace and case do not make a message new.
        shouted = [
            {**m, "content": "  " + m["content"].upper().replace(" ", "   ")} for m in SESSION
        ]
        assert bank.retain(shouted, mentioned_at=T0).already_stored == tuple(_ids(first))
        # Another mention time, speaker or text is something new.
        later = bank.retain(SESSION[:1], mentioned_at=datetime(2025, 2, 1, tzinfo=UTC))
        other_speaker = bank.retain([{**SESSION[0], "name": "Bo"}], mentioned_at=T0)
        assert not later.already_stored and not other_speaker.already_stored
        # A call mixing repeats and new messages stores only the new ones.
        mixed = bank.retain(
            [*SESSION[:2], {"role": "user", "name": "Ana", "content": "Pixel is four."}],
            mentioned_at=T0,
        )
        assert [m.text for m in mixed.created] == ["Ana: Pixel is four."]
        assert set(mixed.already_stored) == set(_ids(first)[:2])
        assert len(bank.memories()) == 3 + 2 + 1
        assert bank.retain("Quixotrix pays on Fridays.", mentioned_at=T0).memories
        assert bank.retain("quixotrix pays on fridays.", mentioned_at=T0).unchanged
        # A message's own timestamp is its mention time.
        timed = [{**SESSION[0], "timestamp": "2025-03-01T10:00:00Z"}]
        assert not bank.retain(timed, mentioned_at=T0).already_stored
        assert bank.retain(timed, mentioned_at=datetime(2026, 1, 1, tzinfo=UTC)).unchanged


def test_find_retained_tells_message_by_message(tmp_path):
    with _open(tmp_path / "s") as mem:
        bank = mem.bank("b")
        first = bank.retain(SESSION, mentioned_at=T0)
        found = bank.find_retained(
            [
                SESSION[0],
                {"role": "user", "content": "   "},
                {**SESSION[1], "timestamp": T0},
                {**SESSION[2], "timestamp": "2030-01-01"},
                {"role": "user", "name": "Ana", "content": "Never said."},
            ]
        )
        assert [_ids(f) for f in found] == [
            [first.memories[0].id],
            [],
            [first.memories[1].id],
            [],
            [],
        ]
        with pytest.raises(agentmem.InvalidInputError):
            bank.find_retained([{"role": "user"}])


def test_repeats_survive_export_and_import(tmp_path):
    with _open(tmp_path / "a") as mem:
        bank = mem.bank("b")
        first = bank.retain(SESSION, mentioned_at=T0, document_id="s1")
        bank.retain("Carla likes tea.", mentioned_at=T0)
        bank.export(tmp_path / "b.jsonl")
    with _open(tmp_path / "c") as mem:
        mem.import_(tmp_path / "b.jsonl")
        bank = mem.bank("b")
        assert bank.retain(SESSION, mentioned_at=T0, document_id="s1").already_stored == tuple(
            _ids(first)
        )
        assert bank.retain("Carla likes tea.", mentioned_at=T0).unchanged
        assert len(bank.memories()) == 4


def _downgrade_to_v1(path) -> None:
    """Make a store look as agentmem's schema version 1 left it (no content hashes, no
    piece vectors, no statements' slots)."""
    downgrade_store(
        path,
        "1",
        [
            ("memories", "statement_slots"),
            ("memories", "piece_vectors"),
            ("memories", "content_hash"),
            ("episodes", "content_hash"),
        ],
    )


def test_a_store_of_schema_1_is_upgraded_and_its_documents_deduplicated(tmp_path):
    with _open(tmp_path / "s") as mem:
        bank = mem.bank("b")
        first = bank.retain(SESSION, mentioned_at=T0, document_id="s1")
        loose = bank.retain("Carla likes tea.", mentioned_at=T0)
    _downgrade_to_v1(tmp_path / "s")
    with _open(tmp_path / "s") as mem:
        assert mem._engine.db.get_meta("schema_version") == SCHEMA_VERSION
        bank = mem.bank("b")
        assert _ids(bank.memories()) == [*_ids(first), *_ids(loose)]
        # No hash stored yet: the document is replaced once, its unchanged facts keep their ids.
        again = bank.retain(SESSION, mentioned_at=T0, document_id="s1")
        assert not again.unchanged and again.already_stored == tuple(_ids(first))
        assert bank.retain(SESSION, mentioned_at=T0, document_id="s1").unchanged
        assert len(bank.memories()) == 4
        assert bank.check_integrity().problems == ()


def test_a_store_of_a_newer_schema_is_refused_untouched(tmp_path):
    with _open(tmp_path / "s") as mem:
        mem.bank("b").retain("Carla likes tea.", mentioned_at=T0)
    con = duckdb.connect(str(tmp_path / "s" / "agentmem.duckdb"))
    con.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    con.close()
    with pytest.raises(StorageError, match="schema version 99"):
        _open(tmp_path / "s")
    con = duckdb.connect(str(tmp_path / "s" / "agentmem.duckdb"))
    assert con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("99",)
    con.close()


@pytest.mark.parametrize("document_id", ["s1", None])
def test_two_threads_retaining_the_same_content_store_it_once(tmp_path, document_id):
    with _open(tmp_path / "s") as mem:
        bank = mem.bank("b")
        barrier = threading.Barrier(4)
        results = []

        def retain() -> None:
            barrier.wait()
            results.append(bank.retain(SESSION, mentioned_at=T0, document_id=document_id))

        threads = [threading.Thread(target=retain) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(bank.memories()) == 3
        assert sum(not r.already_stored for r in results) == 1
        assert {frozenset(_ids(r)) for r in results} == {frozenset(_ids(bank.memories()))}
        assert bank.check_integrity().problems == ()


def test_the_demo_run_twice_does_not_double_the_memories(tmp_path, capsys):
    assert main(["demo", "--path", str(tmp_path / "demo")]) == 0
    with agentmem.AgentMemory(tmp_path / "demo") as mem:  # the demo's own embedder
        before = [(m.id, m.text) for m in mem.bank("demo").memories()]
    assert main(["demo", "--path", str(tmp_path / "demo")]) == 0
    with agentmem.AgentMemory(tmp_path / "demo") as mem:
        assert [(m.id, m.text) for m in mem.bank("demo").memories()] == before
    assert len(before) > 20
    capsys.readouterr()


_WORDS = st.sampled_from(["tea", "Tea", "coffee", "  tea ", "Berlin", "berlin", "Lisbon"])
_MESSAGES = st.lists(
    st.fixed_dictionaries(
        {
            "role": st.sampled_from(["user", "assistant"]),
            "content": st.lists(_WORDS, min_size=1, max_size=3).map(" ".join),
        }
    ),
    min_size=1,
    max_size=4,
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(calls=st.lists(_MESSAGES, min_size=1, max_size=4), document=st.booleans())
def test_retaining_any_earlier_call_again_stores_nothing(tmp_path_factory, calls, document):
    with _open(tmp_path_factory.mktemp("p")) as mem:
        bank = mem.bank("b")
        for n, messages in enumerate(calls):
            bank.retain(messages, mentioned_at=T0, document_id=f"d{n}" if document else None)
        held = _ids(bank.memories())
        last = len(calls) - 1
        again = bank.retain(
            calls[last], mentioned_at=T0, document_id=f"d{last}" if document else None
        )
        assert again.unchanged
        assert _ids(bank.memories()) == held
        assert set(again.already_stored) <= set(held)


def test_find_retained_keeps_the_retain_limits_and_refuses_a_deleted_bank(tmp_path):
    limits = agentmem.Limits(retain_chars=100, retain_messages=3)
    config = agentmem.EngineConfig(limits=limits)
    with agentmem.AgentMemory(tmp_path / "s", embedder=HashEmbedder(), config=config) as mem:
        bank = mem.bank("b")
        with pytest.raises(agentmem.InvalidInputError, match="limit"):
            bank.find_retained("x" * 101)
        with pytest.raises(agentmem.InvalidInputError, match="limit"):
            bank.find_retained([{"role": "user", "content": "hi"}] * 4)
        mem.delete_bank("b")
        with pytest.raises(agentmem.NotFoundError):
            bank.find_retained("hello")


CHAT = [
    {"role": "user", "name": "Ana", "content": "I moved to Berlin last June."},
    {"role": "assistant", "content": "Nice! How do you like it?"},
    {"role": "user", "name": "Ana", "content": "Love it, but I miss Lisbon."},
    {"role": "assistant", "content": "Lisbon is lovely in the spring."},
    {"role": "user", "name": "Ana", "content": "My sister Giulia still lives there."},
]


def _texts(bank) -> list[str]:
    return [m.text for m in bank.memories() if m.fact_type != "observation"]


def test_an_agent_sending_the_whole_untimed_history_at_every_turn_stores_each_turn_once(
    store_path,
):
    """The common agent loop: ``retain(history)`` after every turn, with no times given (on
    each backend)."""
    with _open(store_path) as mem:
        bank = mem.bank("b")
        for turn in range(1, len(CHAT) + 1):
            result = bank.retain(CHAT[:turn])
            assert len(result.created) == 1  # only the new turn
            assert len(result.already_stored) == turn - 1
        assert _texts(bank) == [
            "Ana: I moved to Berlin last June.",
            "Assistant: Nice! How do you like it?",
            "Ana: Love it, but I miss Lisbon.",
            "Assistant: Lisbon is lovely in the spring.",
            "Ana: My sister Giulia still lives there.",
        ]
        # Every call's raw episode is kept whole, the repeated turns with it.
        assert mem.check_integrity().ok
    with _open(store_path) as mem:  # after a reopen, the next turn continues as well
        bank = mem.bank("b")
        bank.retain([*CHAT, {"role": "assistant", "content": "Say hi to Giulia!"}])
        assert len(_texts(bank)) == len(CHAT) + 1
        assert mem.check_integrity().ok


def test_the_same_untimed_history_sent_twice_or_at_once_stores_each_turn_once(store_path):
    """An agent's second call before a new turn, a retry, or the same history sent by several
    threads at once: each turn is stored once (on each backend)."""
    with _open(store_path) as mem:
        bank = mem.bank("b")
        bank.retain(CHAT[:3])
        again = bank.retain(CHAT[:3])
        assert again.unchanged and len(again.already_stored) == 3
        results = []
        threads = [
            threading.Thread(target=lambda: results.append(bank.retain(CHAT))) for _ in range(4)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        assert len(results) == 4
        stored = _texts(bank)
        assert [t.split(": ", 1)[1] for t in stored] == [m["content"] for m in CHAT]
        assert sum(len(r.created) for r in results) == len(CHAT) - 3
        assert mem.check_integrity().ok


def test_a_window_of_the_last_turns_continues_too_and_other_calls_are_left_alone(tmp_path):
    with _open(tmp_path / "s") as mem:
        bank = mem.bank("b")
        for start in range(len(CHAT) - 1):  # the last two turns at each call
            bank.retain(CHAT[start : start + 2])
        assert len(_texts(bank)) == len(CHAT)
        # Another bank's history is not this bank's.
        other = mem.bank("other")
        assert len(other.retain(CHAT[3:]).created) == 2
        # The last two turns sent again with nothing new: a resend, nothing stored.
        again = bank.retain(CHAT[3:])
        assert again.unchanged and len(again.already_stored) == 2
        # One message said again may be the same words said again: it is stored.
        assert len(bank.retain(CHAT[4:]).created) == 1
        # Leading turns that are not the bank's last messages are new, as are timed ones.
        assert len(bank.retain(CHAT[:2]).created) == 2
        timed = [{**m, "timestamp": "2025-03-01T10:00:00Z"} for m in CHAT[:2]]
        assert len(bank.retain([*timed, CHAT[2]]).created) == 3
        # A call that says when, before the turns it repeats were stored, is a new mention.
        said = bank.retain([*CHAT[1:3], CHAT[3]], mentioned_at=T0)
        assert len(said.created) == 3
        assert mem.check_integrity().ok


# Chats of a few turns, some said twice, sent as their last ``window`` turns at each turn.
_FEW_CHATS = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
_WINDOWED_CHATS = given(
    turns=st.lists(
        st.sampled_from(["tea", "coffee", "Berlin", "Lisbon", "ok", "thanks"]),
        min_size=1,
        max_size=6,
    ),
    window=st.integers(min_value=1, max_value=4),
)


def _chat_of(turns: list[str]) -> list[dict]:
    return [
        {"role": "user" if i % 2 == 0 else "assistant", "content": word}
        for i, word in enumerate(turns)
    ]


@_FEW_CHATS
@_WINDOWED_CHATS
def test_any_sliding_window_of_an_untimed_chat_stores_each_turn_once(
    tmp_path_factory, turns, window
):
    """A chat sent as its last ``window`` turns after each new turn stores exactly its turns,
    in order, whatever repeats the turns themselves hold."""
    chat = _chat_of(turns)
    with _open(tmp_path_factory.mktemp("w")) as mem:
        bank = mem.bank("b")
        for end in range(1, len(chat) + 1):
            bank.retain(chat[max(0, end - window) : end])
        stored = [t.split(": ", 1)[1] for t in _texts(bank)]
        assert stored == [m["content"] for m in chat]
        assert mem.check_integrity().ok


@_FEW_CHATS
@_WINDOWED_CHATS
def test_a_sliding_window_dated_at_each_call_stores_each_turn_once_at_its_first_time(
    tmp_path_factory, turns, window
):
    """An agent that sends its last ``window`` turns at each turn, dated when it sends them
    (``mentioned_at``, no ``timestamp``), stored every turn again at every call (15 memories
    of 6 turns in a window of 3); each turn is now stored once, dated by the call that first
    sent it. The same window dated before it was stored is a new mention."""
    chat = _chat_of(turns)
    with _open(tmp_path_factory.mktemp("w")) as mem:
        bank = mem.bank("b")
        for end in range(1, len(chat) + 1):
            bank.retain(chat[max(0, end - window) : end], mentioned_at=T0 + timedelta(minutes=end))
        stored = [m for m in bank.memories() if m.fact_type != "observation"]
        assert [m.text.split(": ", 1)[1] for m in stored] == [m["content"] for m in chat]
        assert [m.mentioned_at for m in stored] == [
            T0 + timedelta(minutes=end) for end in range(1, len(chat) + 1)
        ]
        earlier = bank.retain(chat[-2:], mentioned_at=T0)
        assert len(earlier.created) == len(chat[-2:])
        assert mem.check_integrity().ok


def test_a_message_said_many_times_is_a_repeat_only_at_its_own_time(store_path):
    """A short message said again and again ("ok") is an exact repeat only with the time it
    was said: the check reads the times asked, not every time the bank holds it, and pairs
    each message with its own time (a call of "ok" at one time and "sure" at another repeats
    neither when the bank holds them the other way round)."""
    times = [datetime(2025, 1, 1, 9, tzinfo=UTC).replace(day=d) for d in range(1, 29)]

    def said(text: str, when: datetime) -> dict:
        return {"role": "user", "name": "Ana", "content": text, "timestamp": when.isoformat()}

    with agentmem.AgentMemory(store_path, embedder=HashEmbedder()) as mem:
        bank = mem.bank("b")
        stored = bank.retain([said("ok", t) for t in times]).memories
        assert len(stored) == len(times)
        bank.retain([said("sure", times[4])])
        again = bank.retain([said("OK", times[6])])
        assert again.unchanged and again.already_stored == (stored[6].id,)
        assert bank.retain([said("ok", datetime(2025, 2, 1, tzinfo=UTC))]).created
        crossed = bank.retain(
            [said("ok", datetime(2025, 3, 1, tzinfo=UTC)), said("sure", times[6])]
        )
        assert len(crossed.created) == 2 and not crossed.already_stored
        everywhere = bank.find_retained([{"role": "user", "name": "Ana", "content": "ok"}])
        assert len(everywhere[0]) == len(times) + 2
    with agentmem.AgentMemory(store_path, embedder=HashEmbedder()) as mem:
        bank = mem.bank("b")
        assert bank.retain([said("ok", times[0])]).unchanged
        report = mem.check_integrity()
        assert report.ok, report.problems


def test_a_long_call_of_timed_messages_said_again_is_a_no_op(store_path):
    """Two thousand messages, each with its own time and half of them the same words: said
    again, every one is found at its own time (one bound time per message in the query)."""
    start = datetime(2025, 1, 1, tzinfo=UTC)
    messages = [
        {
            "role": "user",
            "name": "Ana",
            "content": "ok" if i % 2 else f"Note {i} about the Quixotrix invoice.",
            "timestamp": (start + timedelta(minutes=i)).isoformat(),
        }
        for i in range(2000)
    ]
    with agentmem.AgentMemory(store_path, embedder=HashEmbedder()) as mem:
        bank = mem.bank("b")
        first = bank.retain(messages)
        again = bank.retain(messages)
        assert again.unchanged
        assert set(again.already_stored) == {m.id for m in first.memories}
        assert len(bank.memories(limit=5000)) == len(first.memories)
        assert mem.check_integrity().ok
