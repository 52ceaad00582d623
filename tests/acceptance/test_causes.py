"""Causes inside one sentence become caused_by links, and the causal strategy says how each hit
relates to its seed by the real direction of the links on its path."""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import pytest

import agentmem
from tests.conftest import T0, T1


def caused_by(bank: agentmem.MemoryBank) -> set[tuple[str, str]]:
    graph: nx.MultiDiGraph = bank.graph()
    return {(u, v) for u, v, k in graph.edges(data="kind") if k == "caused_by"}


def link_rows(mem: agentmem.AgentMemory, bank_id: str) -> set[tuple[str, str]]:
    rows = mem._engine.db.fetchall(
        "SELECT src_id, dst_id FROM links WHERE bank_id = ? AND kind = 'caused_by'", [bank_id]
    )
    return {(src, dst) for src, dst in rows}


def test_a_sentence_that_states_its_cause_links_effect_to_cause(store_path: Path) -> None:
    with agentmem.AgentMemory(store_path) as mem:
        bank = mem.bank("launch")
        effect, cause = bank.retain(
            "Because the supplier missed its deadline, the product launch was delayed.",
            mentioned_at=T0,
        ).memories
        assert cause.text == "The supplier missed its deadline."
        assert effect.text.startswith("Because the supplier missed its deadline")
        assert link_rows(mem, "launch") == {(effect.id, cause.id)}  # effect → its cause
        assert caused_by(bank) == {(effect.id, cause.id)}
    with agentmem.AgentMemory(store_path) as mem:  # stored, not only mirrored
        bank = mem.bank("launch")
        assert caused_by(bank) == {(effect.id, cause.id)}
        why = bank.recall("why?", strategies="causal", seed_memory_id=effect.id)
        assert [(h.memory.id, h.strategy_details["causal"]["relation"]) for h in why][:1] == [
            (cause.id, "cause")
        ]
        assert bank.check_integrity().problems == ()


def test_the_demo_sentence_as_text_links_effect_to_cause(mem: agentmem.AgentMemory) -> None:
    bank = mem.bank("text")
    effect, cause = bank.retain(
        "The launch slipped because the vendor's API was down", mentioned_at=T0
    ).memories
    assert cause.text == "The vendor's API was down."
    assert link_rows(mem, "text") == {(effect.id, cause.id)}


def test_a_chat_turn_is_also_caused_by_the_memory_that_states_its_cause(
    mem: agentmem.AgentMemory,
) -> None:
    bank = mem.bank("demo")
    said = bank.retain(
        [{"role": "user", "name": "Maya", "content": "The vendor's API was down all morning."}],
        mentioned_at=T0,
    ).memories[0]
    turn = {
        "role": "user",
        "name": "Maya",
        "content": "Bad news. The launch slipped because the vendor's API was down.",
    }
    effect, clause = bank.retain([turn], mentioned_at=T1).memories
    assert effect.text == f"Maya: {turn['content']}"
    assert clause.text == "Maya: The vendor's API was down."
    assert link_rows(mem, "demo") == {(effect.id, said.id), (effect.id, clause.id)}


def edges(bank: agentmem.MemoryBank, kind: str) -> set[tuple[str, str]]:
    graph: nx.MultiDiGraph = bank.graph()
    return {(u, v) for u, v, k in graph.edges(data="kind") if k == kind}


def test_a_chat_turn_that_states_its_cause_is_caused_by_its_clause_a_part_recall_skips(
    store_path: Path,
) -> None:
    launch = "The launch slipped yesterday because the vendor's API was down."
    turns = [
        {"role": "user", "name": "Maya", "content": launch},
        {"role": "user", "name": "Tom", "content": "That is annoying, what happens now?"},
    ]
    with agentmem.AgentMemory(store_path) as mem:
        bank = mem.bank("chat")
        stored = bank.retain(turns, mentioned_at=T0).memories
        # A later memory that says the same gets no link to the part, only to the turn.
        again = bank.retain("The vendor's API was down.", mentioned_at=T1).memories[0]
    with agentmem.AgentMemory(store_path) as mem:  # what is stored, read back
        bank = mem.bank("chat")
        effect, clause, reply, _ = bank.memories()
        assert [m.id for m in stored] == [effect.id, clause.id, reply.id]
        assert effect.text == f"Maya: {launch}"
        assert clause.text == "Maya: The vendor's API was down."
        assert clause.metadata == effect.metadata and clause.mentioned_at == effect.mentioned_at
        # A part carries only its text: its entities, time and other links are its whole's.
        assert effect.occurred_start is not None and "Maya" in effect.entities
        assert clause.occurred_start is None and clause.entities == ()
        graph = bank.graph()
        assert [k for _, _, k in graph.out_edges(clause.id, data="kind")] == ["part_of"]
        assert [k for _, _, k in graph.in_edges(clause.id, data="kind")] == ["caused_by"]
        assert edges(bank, "caused_by") >= {(effect.id, clause.id)}
        assert edges(bank, "part_of") == {(clause.id, effect.id)}
        assert edges(bank, "followed_by") == {(effect.id, reply.id)}  # turns in order, no part
        assert all(clause.id not in pair for pair in edges(bank, "semantic"))
        for query in ("vendor API down", "the vendor's API was down", "Why did the launch slip?"):
            hits = [h.memory.id for h in bank.recall(query)]
            assert effect.id in hits and clause.id not in hits and again.id in hits
        why = bank.recall("why?", strategies="causal", seed_memory_id=effect.id)
        assert (clause.id, "cause") in [
            (h.memory.id, h.strategy_details["causal"]["relation"]) for h in why
        ]
        assert bank.check_integrity().problems == ()


@pytest.mark.parametrize(
    ("content", "cause"),
    [
        (
            "Since the trains were on strike, I worked from home all week.",
            "The trains were on strike.",
        ),
        (
            "The roof leaked all night, so we moved the books upstairs.",
            "The roof leaked all night.",
        ),
        # "because" as chats write it.
        ("I'm so tired cuz the baby cried all night.", "The baby cried all night."),
        ("I skipped the gym bc my knee hurt.", "My knee hurt."),
        (
            "The roads flooded overnight, so school was cancelled.",
            "The roads flooded overnight.",
        ),
        (
            "The heating broke down and as a result the office closed early.",
            "The heating broke down.",
        ),
        (
            "The old server kept crashing, which is why we moved to the cloud.",
            "The old server kept crashing.",
        ),
        (
            "A burst pipe in the basement led to a week without hot water.",
            "A burst pipe in the basement.",
        ),
        (
            "I missed the early bus. That's why I was late for the interview.",
            "I missed the early bus.",
        ),
        (
            "The printer jammed because the paper was damp, and I gave up on it.",
            "The paper was damp.",
        ),
        # ... nor what came next with its own subject ("and then Ana called").
        ("We stayed in because it was raining, and then Ana called.", "It was raining."),
        (
            "We left because the band played badly and then stopped.",
            "The band played badly and then stopped.",
        ),
        # One word says enough when it is what someone was or did, or what the weather did.
        ("Since it was raining, we stayed in.", "It was raining."),
        ("I was exhausted, so I went to bed early.", "I was exhausted."),
        ("Because she was ill, the meeting was cancelled.", "She was ill."),
        ("I missed the bus because I overslept.", "I overslept."),
        ("I got the job because I practised a lot.", "I practised a lot."),
        # ... or what ails someone (no cause before).
        ("Mark couldn't come to the party since he had the flu.", "He had the flu."),
        ("I stayed home because I had a cold.", "I had a cold."),
        # "as" before how someone or something was, or what they had (no cause before).
        ("We missed the train as the taxi was late.", "The taxi was late."),
        ("As we had no car, we took the bus to Leeds.", "We had no car."),
        ("The match was cancelled as the pitch was flooded.", "The pitch was flooded."),
        # "now that" + what has come about; a dash after it starts a clause of its own.
        ("We can finally relax now that the exams are over.", "The exams are over."),
        (
            "It has all paid off now that I'm a manager- it's a stepping stone.",
            "I'm a manager.",
        ),
    ],
)
def test_each_causal_cue_in_a_chat_turn_stores_its_cause(
    mem: agentmem.AgentMemory, content: str, cause: str
) -> None:
    bank = mem.bank("cues")
    effect, part = bank.retain(
        [{"role": "user", "name": "Ana", "content": content}], mentioned_at=T0
    ).memories
    assert part.text == f"Ana: {cause}"
    assert edges(bank, "caused_by") == {(effect.id, part.id)}
    assert edges(bank, "part_of") == {(part.id, effect.id)}


def test_a_chat_turn_without_a_cause_stays_one_memory(mem: agentmem.AgentMemory) -> None:
    bank = mem.bank("plain-chat")
    turns = [
        {"role": "user", "name": "Ana", "content": "I have lived in Oslo since 2019."},
        {"role": "user", "name": "Ana", "content": "I was so happy to see you!"},
        {"role": "user", "name": "Ana", "content": "I love painting because it relaxes me."},
    ]
    assert len(bank.retain(turns, mentioned_at=T0).memories) == 3
    assert edges(bank, "caused_by") == edges(bank, "part_of") == set()


TAXI = {
    "role": "user",
    "name": "Li",
    "content": "We missed the flight because the taxi never came.",
}


def test_forgetting_a_turn_forgets_its_clause_and_parts_cannot_be_linked_by_hand(
    mem: agentmem.AgentMemory,
) -> None:
    bank = mem.bank("forget")
    effect, clause = bank.retain([TAXI], mentioned_at=T0).memories
    other = bank.retain("The hotel was by the sea.", mentioned_at=T1).memories[0]
    with pytest.raises(agentmem.InvalidInputError):
        bank.link(other.id, effect.id, "part_of")
    assert bank.forget(effect.id) == 2
    assert [m.id for m in bank.memories()] == [other.id]
    assert bank.graph().number_of_edges() == sum(1 for _ in bank.graph().edges(other.id))
    assert bank.check_integrity().problems == ()


def test_a_session_retained_again_keeps_its_clause_once(mem: agentmem.AgentMemory) -> None:
    bank = mem.bank("again")
    first = bank.retain([TAXI], mentioned_at=T0, document_id="s1").memories
    bank.retain([TAXI], mentioned_at=T0, document_id="s1")
    assert [m.id for m in bank.memories()] == [m.id for m in first]
    assert len(edges(bank, "part_of")) == 1


def test_parts_survive_export_and_import(mem: agentmem.AgentMemory, tmp_path: Path) -> None:
    bank = mem.bank("move")
    effect, clause = bank.retain([TAXI], mentioned_at=T0).memories
    bank.export(tmp_path / "bank.jsonl")
    moved = mem.import_(tmp_path / "bank.jsonl", bank_id="moved")  # into the same store: new ids
    texts = {m.id: m.text for m in moved.memories()}
    assert {(texts[a], texts[b]) for a, b in edges(moved, "part_of")} == {
        (clause.text, effect.text)
    }
    assert [h.memory.text for h in moved.recall("taxi never came")] == [effect.text]
    assert moved.check_integrity().problems == ()


def test_a_cause_already_said_is_linked_not_repeated(mem: agentmem.AgentMemory) -> None:
    bank = mem.bank("story")
    late, failed = bank.retain(
        "The vendor shipped the parts three weeks late. "
        "The Atlas launch failed because the vendor shipped the parts late.",
        mentioned_at=T0,
    ).memories
    assert len(bank.memories()) == 2
    assert (failed.id, late.id) in caused_by(bank)


@pytest.mark.parametrize(
    "text",
    [
        "I have lived in Oslo since 2019.",
        "We have been friends since we were kids.",
        "I was so happy to see you!",
        # One word that needs what "it" stands for, a modal left alone, what someone did
        # after "since" (when), an event of a life after "since".
        "I bought it because it was cheap.",
        "We did it because we could.",
        "It's been a busy week since we talked.",
        "Since she was born, we moved three times.",
        "I have lived here since I had a baby.",
        # Thanks given, and a feeling whose "that" says what caused it.
        "Thanks to everyone who came!",
        "I was so happy that you came.",
        # "as" of what was going on then, of a role, a list or a comparison.
        "As I was leaving, the phone rang.",
        "I got there as the shop was closing.",
        "I work as a teacher in Leeds.",
        "We bought snacks such as chips and nuts.",
        "She is just as good at chess as her father was.",
        "I'm as passionate about it as you are with watercolor painting.",
        # "now that" of the talk itself, or after a verb whose "that" opens what is known.
        "Now that I think about it, you're right.",
        "I know now that she was right about him.",
    ],
)
def test_since_of_time_and_so_of_degree_make_no_cause(mem: agentmem.AgentMemory, text: str) -> None:
    bank = mem.bank("plain")
    assert len(bank.retain(text, mentioned_at=T0).memories) == 1
    assert caused_by(bank) == set()


def test_causal_relations_follow_the_direction_of_every_hop(mem: agentmem.AgentMemory) -> None:
    bank = mem.bank("chain")
    root, slip, refund, memo = bank.retain(
        [
            {"role": "user", "name": "Ann", "content": "The payments vendor had an outage."},
            {"role": "user", "name": "Ann", "content": "The release slipped a week."},
            {"role": "user", "name": "Ann", "content": "Customers asked for refunds."},
            {"role": "user", "name": "Ann", "content": "I wrote the incident memo."},
        ],
        mentioned_at=T0,
    ).memories
    bank.link(slip.id, root.id, "caused_by")  # the outage caused the slip ...
    bank.link(refund.id, root.id, "caused_by")  # ... and the refunds: siblings
    bank.link(memo.id, refund.id, "caused_by")

    def relations(seed: str, **params: object) -> dict[str, tuple[int, str]]:
        hits = bank.recall("x", strategies="causal", seed_memory_id=seed, **params)
        return {
            h.memory.id: (
                h.strategy_details["causal"]["distance"],
                h.strategy_details["causal"]["relation"],
            )
            for h in hits
        }

    from_slip = relations(slip.id, edge_types="caused_by")
    assert from_slip[root.id] == (1, "cause")
    assert from_slip[refund.id] == (2, "related")  # a sibling effect is not a cause
    assert from_slip[memo.id] == (3, "related")
    from_root = relations(root.id, edge_types="caused_by")
    assert from_root == {slip.id: (1, "effect"), refund.id: (1, "effect"), memo.id: (2, "effect")}
    assert relations(memo.id, edge_types="caused_by", direction="causes") == {
        refund.id: (1, "cause"),
        root.id: (2, "cause"),
    }
    ordered = relations(refund.id, edge_types="followed_by")
    assert ordered[slip.id] == (1, "earlier")
    assert ordered[memo.id] == (1, "later")
    assert ordered[root.id] == (2, "earlier")
    hits = bank.recall("x", strategies="causal", seed_memory_id=memo.id, edge_types="caused_by")
    paths = {h.memory.id: h.strategy_details["causal"]["path"] for h in hits}
    assert paths[slip.id] == [memo.id, refund.id, root.id, slip.id]


def test_a_second_retain_keeps_old_cause_links(mem: agentmem.AgentMemory) -> None:
    bank = mem.bank("two")
    first = bank.retain("Because the road was closed, we took the train.", mentioned_at=T0)
    second = bank.retain("The train was late because a signal failed.", mentioned_at=T1)
    links = caused_by(bank)
    assert (first.memories[0].id, first.memories[1].id) in links
    assert (second.memories[0].id, second.memories[1].id) in links


def test_a_result_that_follows_a_split_sentence_is_caused_by_the_sentence(
    mem: agentmem.AgentMemory,
) -> None:
    bank = mem.bank("order")
    sentence, clause, result = bank.retain(
        "Because the road was closed, we took the slow train. As a result, we missed the talk.",
        mentioned_at=T0,
    ).memories
    assert clause.text == "The road was closed."
    links = caused_by(bank)
    assert (sentence.id, clause.id) in links
    assert (result.id, sentence.id) in links
    assert (result.id, clause.id) not in links


def test_a_sentence_opening_with_an_effect_marker_is_caused_by_the_sentence_before(
    mem: agentmem.AgentMemory,
) -> None:
    bank = mem.bank("result")
    # A sentence this short is one fact with the next: its clause is split off as the cause.
    whole, cause = bank.retain(
        "The road was icy. As a result, the bus crashed.", mentioned_at=T0
    ).memories
    assert whole.text == "The road was icy. As a result, the bus crashed."
    assert cause.text == "The road was icy."
    assert caused_by(bank) == {(whole.id, cause.id)}
    # A clause after ", and I ..." is no part of the cause: nothing says it caused anything.
    other = mem.bank("and")
    other.retain("I stayed home because my flight was cancelled, and I watched Dune.")
    texts = [m.text for m in other.memories()]
    assert "My flight was cancelled." in texts
    assert not any("Dune" in t for t in texts[1:])
    assert bank.check_integrity().ok and other.check_integrity().ok


@pytest.mark.parametrize(
    ("text", "cause"),
    [
        ("The concert got postponed due to heavy rain.", "Heavy rain."),
        ("Because of the strike, we drove to Leeds.", "The strike."),
        ("Thanks to the rain, the garden looks great.", "The rain."),
        ("He got the job thanks to his sister.", "His sister."),
        # How someone or something was, and what it made happen.
        ("I was so tired that I fell asleep on the train.", "I was tired."),
        ("The film was so long that we left early.", "The film was long."),
        # A passive names its cause after "by" ("The outage on Tuesday was." before).
        ("The outage on Tuesday was caused by a bad config push.", "A bad config push."),
        ("The fire was probably caused by faulty wiring.", "Faulty wiring."),
        # What a happening was due to caused it (no cause before).
        ("The delay was due to heavy rain.", "Heavy rain."),
        ("Most of the outages were mainly due to one bad disk.", "One bad disk."),
        # As a noun phrase before "caused" is (guard: stored before too).
        ("Heavy rain caused the concert to be postponed.", "Heavy rain."),
        # What someone was rewarded or punished for, what a pain is from (no cause before).
        ("He got promoted for fixing the outage.", "Fixing the outage."),
        ("My knee hurts from running.", "Running."),
        # What a thing meant, a clause after it (no cause before).
        ("The power cut meant we lost all the food in the freezer.", "The power cut."),
        ("The delay meant my sister missed her connection.", "The delay."),
    ],
)
def test_a_cause_named_by_a_noun_phrase_is_stored_and_linked(
    store_path: Path, text: str, cause: str
) -> None:
    with agentmem.AgentMemory(store_path) as mem:
        mem.bank("named").retain(text, mentioned_at=T0)
    with agentmem.AgentMemory(store_path) as mem:
        bank = mem.bank("named")
        texts = {m.id: m.text for m in bank.memories()}
        assert sorted(texts.values()) == sorted([text, cause])
        assert {(texts[u], texts[v]) for u, v in caused_by(bank)} == {(text, cause)}
        assert bank.check_integrity().problems == ()


def test_what_is_due_to_someone_or_due_to_happen_has_no_cause(
    mem: agentmem.AgentMemory,
) -> None:
    bank = mem.bank("owed")
    bank.retain("The rent is due to the landlord on Friday.", mentioned_at=T0)
    bank.retain("Her baby is due to arrive in May.", mentioned_at=T0)
    bank.retain("The report was due to the board last week.", mentioned_at=T0)
    assert len(bank.memories()) == 3
    assert caused_by(bank) == set()
