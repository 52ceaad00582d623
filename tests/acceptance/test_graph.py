"""The memory graph through the public API: links, graph(), the graph / causal / analogical
strategies, and the mirror staying right across forget, reopen and delete_bank."""

from __future__ import annotations

import networkx as nx
import pytest

import agentmem
from agentmem.recall.analogical import MIN_STRUCTURE
from agentmem.recall.candidates import cosine_relevance
from agentmem.store.graph import bank_graph
from tests.conftest import T0, T1

STORY = (
    "Alice Chen joined Acme Corp in 2021. "
    "The vendor shipped the parts three weeks late. "
    "The Atlas launch failed because the vendor shipped the parts late. "
    "As a result, Alice quit Acme."
)


def edges(graph: nx.MultiDiGraph, kind: str) -> set[tuple[str, str]]:
    return {(u, v) for u, v, k in graph.edges(data="kind") if k == kind}


def retain_each(bank: agentmem.MemoryBank, *texts: str) -> list[agentmem.Memory]:
    """One retain call per text (each a single fact); the facts in order."""
    return [bank.retain(text, mentioned_at=T0).memories[0] for text in texts]


@pytest.fixture
def story(mem: agentmem.AgentMemory) -> tuple[agentmem.MemoryBank, list[agentmem.Memory]]:
    bank = mem.bank("launch")
    return bank, bank.retain(STORY, mentioned_at=T0).memories


def test_retain_builds_entity_order_semantic_and_causal_links(story):
    bank, (joined, late, failed, quit_) = story
    graph = bank.graph()
    assert graph.nodes["Alice Chen"]["type"] == "entity"
    assert graph.nodes["Alice Chen"]["kind"] == "person"
    assert graph.nodes[joined.id]["text"] == joined.text
    assert (joined.id, "Alice Chen") in edges(graph, "entity")
    assert (quit_.id, "Alice Chen") in edges(graph, "entity")  # "Alice" resolved to her
    assert edges(graph, "followed_by") == {
        (joined.id, late.id),
        (late.id, failed.id),
        (failed.id, quit_.id),
    }
    causes = edges(graph, "caused_by")
    assert (quit_.id, failed.id) in causes  # "As a result, ..." follows from the fact before
    assert (failed.id, late.id) in causes  # "... because the vendor shipped the parts late"
    assert all(0 < w <= 1 for _, _, w in graph.edges(data="weight"))
    again = bank.retain("The vendor delivered the parts three weeks late.", mentioned_at=T1)
    similar = {
        v: w
        for u, v, k, w in bank.graph().edges(keys=True, data="weight")
        if k == "semantic" and u == again.memories[0].id
    }
    assert late.id in similar and similar[late.id] >= 0.7  # its nearest earlier memory


def test_graph_is_a_copy(story):
    bank, memories = story
    graph = bank.graph()
    graph.remove_node(memories[0].id)
    assert memories[0].id in bank.graph()


def test_causal_recall_walks_to_causes_by_distance(story):
    bank, (joined, late, failed, quit_) = story
    result = bank.recall(
        "why?", strategies="causal", seed_memory_id=quit_.id, edge_types=["CausedBy"]
    )
    assert [h.memory.id for h in result] == [failed.id, late.id]
    assert [h.strategy_details["causal"]["distance"] for h in result] == [1, 2]
    assert {h.strategy_details["causal"]["relation"] for h in result} == {"cause"}

    effects = bank.recall(
        "what followed?", strategies="causal", seed_memory_id=late.id, direction="effects"
    )
    assert [h.memory.id for h in effects] == [failed.id, quit_.id]
    near = bank.recall("x", strategies="causal", seed_memory_id=late.id, max_depth=1)
    assert {h.memory.id for h in near} == {joined.id, failed.id}


def test_causal_recall_without_a_seed_starts_from_the_closest_memory(story):
    bank, (_, _, failed, quit_) = story
    result = bank.recall("Why did Alice quit Acme?", strategies="causal", edge_types="caused_by")
    assert result[0].memory.id == quit_.id
    assert result[0].strategy_details["causal"]["relation"] == "seed"
    assert result[1].memory.id == failed.id


def test_explicit_links_are_walked_at_once_and_reweighted_not_duplicated(story):
    bank, (joined, late, failed, quit_) = story
    bank.link(joined.id, quit_.id, "related", 0.4)
    bank.link(joined.id, quit_.id, "related", 0.9)
    related = [
        d["weight"]
        for u, v, d in bank.graph().edges(data=True)
        if (u, v) == (joined.id, quit_.id) and d["kind"] == "related"
    ]
    assert related == [0.9]
    result = bank.recall("x", strategies="causal", seed_memory_id=joined.id, edge_types="related")
    assert [h.memory.id for h in result] == [quit_.id]

    later = bank.retain(
        "Acme hired a new lead engineer.", mentioned_at=T1, links=[("caused_by", quit_.id, 0.7)]
    ).memories[0]
    assert (later.id, quit_.id) in edges(bank.graph(), "caused_by")
    chain = bank.recall("x", strategies="causal", seed_memory_id=later.id, edge_types="caused_by")
    assert [h.memory.id for h in chain] == [quit_.id, failed.id, late.id]


def test_graph_arm_reaches_memories_through_entities(mem):
    bank = mem.bank("pets")
    adopted, loves, _ = bank.retain(
        [
            {"role": "user", "name": "Zorblax", "content": "I adopted a cat named Mittens."},
            {"role": "user", "name": "Quinn", "content": "Mittens loves tuna more than anything."},
            {"role": "user", "name": "Quinn", "content": "The weather is grey today."},
        ],
        mentioned_at=T0,
    ).memories
    result = bank.recall("What food does Zorblax's pet like?", now=T1, reinforce=False)
    details = {h.memory.id: h.strategy_details for h in result}
    assert "graph" in details[adopted.id] and "graph" in details[loves.id]
    # Zorblax → the adoption → Mittens → tuna: one hop further, less activation.
    assert details[loves.id]["graph"]["score"] < details[adopted.id]["graph"]["score"]
    assert result.strategies == ("semantic", "keyword", "graph", "temporal")
    only_graph = bank.recall("Zorblax", strategies="graph", reinforce=False)
    assert [h.memory.id for h in only_graph][:2] == [adopted.id, loves.id]
    without_entities = bank.recall(
        "Zorblax", strategies="graph", edge_types=["caused_by"], reinforce=False
    )
    assert [h.memory.id for h in without_entities] == [adopted.id]  # the entry point alone


def test_a_two_hop_answer_outranks_facts_that_only_repeat_the_name(mem):
    """Issue 20's case: the hit "Marco's sister is Giulia." carries activation through Giulia
    (in two facts) to what she does, while Marco (in 21) spreads little, and the reranker
    counts that support: twenty facts that only repeat "Marco" stay below it."""
    bank = mem.bank("family")
    (sister,) = bank.retain("Marco's sister is Giulia.").memories
    (job,) = bank.retain("Giulia is a marine biologist in Naples.").memories
    for n in range(1, 21):
        bank.retain(f"Marco reviewed pull request {n} today.")
    marco, giulia = bank.entity("Marco"), bank.entity("Giulia")
    assert len(marco.memory_ids) == 21 and set(giulia.memory_ids) == {sister.id, job.id}
    graph = bank_graph(mem._engine, "family")
    with graph.lock:
        (marco_id,) = graph.entity_ids_named("Marco")
        (giulia_id,) = graph.entity_ids_named("Giulia")
        assert graph.entity_specificity(giulia_id) > 2 * graph.entity_specificity(marco_id)

    result = bank.recall("What does Marco's sister do for a living?", reinforce=False)
    ranked = [h.memory.id for h in result]
    assert ranked[0] == sister.id and job.id in ranked[:3]
    walk = result[ranked.index(job.id)].strategy_details["graph"]
    assert walk["path"] == [{"memory": sister.id}, {"entity": "Giulia"}, {"memory": job.id}]
    assert walk["from"] == sister.id and 0 < walk["carried"] < 1


def test_spreading_activation_goes_from_alice_through_google_to_its_products(mem):
    """The seed's example: "What does Alice do?" → Alice → Google → Google's products."""
    bank = mem.bank("work")
    works, products, _, bob, windows = retain_each(
        bank,
        "Alice works at Google.",
        "Google makes Android, Chrome and the Pixel phones.",
        "Alice likes hiking on weekends.",
        "Bob works at Microsoft.",
        "Microsoft makes Windows.",
    )
    result = bank.recall("What does Alice do?", now=T1, reinforce=False)
    ranked = [h.memory.id for h in result]
    assert ranked[0] == works.id
    assert ranked.index(products.id) < min(ranked.index(bob.id), ranked.index(windows.id))
    walk = result[ranked.index(products.id)].strategy_details["graph"]
    assert walk["path"][-2:] == [{"entity": "Google"}, {"memory": products.id}]
    assert walk["from"] == works.id


def test_analogical_recall_returns_only_structural_analogues_in_alpha_order(mem):
    """Issue 20's case: the oven is near nothing in structure and must not come back."""
    bank = mem.bank("lessons")
    atlas, mobile, party, oven = retain_each(
        bank,
        "The Atlas product launch failed because the team cut testing to hit the date.",
        "Our mobile app launch flopped because QA testing was skipped.",
        "The party started late because the DJ was late.",
        "The bakery's new oven works great.",
    )
    query = "our product launch failed because we rushed testing"
    for alpha in (0.0, 0.5, 1.0):
        hits = bank.recall(query, strategies="analogical", analogical_alpha=alpha).hits
        found = [h.memory.id for h in hits]
        assert oven.id not in found and {atlas.id, mobile.id} <= set(found[:2]), alpha
        details = [h.strategy_details["analogical"] for h in hits]
        assert all(d["structure"] >= MIN_STRUCTURE for d in details)
        blend = [
            alpha * cosine_relevance(d["cosine"]) + (1 - alpha) * d["structure"] for d in details
        ]
        assert blend == sorted(blend, reverse=True)  # the result keeps the strategy's order
        assert [d["rank"] for d in details] == list(range(1, len(hits) + 1))
    stored = {m.id for m in bank.memories()}
    assert {atlas.id, mobile.id, party.id, oven.id} <= stored  # recall changed nothing


def test_analogical_recall_finds_the_same_failure_in_another_project(mem):
    bank = mem.bank("projects")
    analogue, *_ = bank.retain(
        "The Phoenix release slipped because the supplier missed the delivery deadline. "
        "The team celebrated the Phoenix release with a dinner in Lisbon. "
        "Our Lisbon office has a rooftop garden.",
        mentioned_at=T0,
    ).memories
    query = "The Atlas launch was delayed because the vendor shipped parts late."
    by_structure = bank.recall(query, strategies="analogical", analogical_alpha=0.0)
    assert by_structure[0].memory.id == analogue.id
    assert by_structure[0].strategy_details["analogical"]["structure"] > 0.3
    by_embedding = bank.recall(query, strategies="analogical", analogical_alpha=1.0)
    semantic = bank.recall(query, strategies="semantic")
    assert by_embedding[0].memory.id == semantic[0].memory.id


def test_mirror_follows_forget_reopen_and_delete_bank(store_path):
    with agentmem.AgentMemory(store_path) as mem:
        bank = mem.bank("launch")
        joined, late, failed, quit_ = bank.retain(STORY, mentioned_at=T0).memories
        bank.link(joined.id, quit_.id, "related")
        before = bank.graph()
        engine_graph = mem._engine.graphs["launch"]
        bank.recall("Alice", reinforce=False)
        assert mem._engine.graphs["launch"] is engine_graph  # kept, not rebuilt per query
    with agentmem.AgentMemory(store_path) as mem:
        bank = mem.bank("launch")
        after = bank.graph()
        assert set(after.nodes) == set(before.nodes)
        assert sorted(after.edges(data="kind")) == sorted(before.edges(data="kind"))
        bank.forget(failed.id)
        graph = bank.graph()
        assert failed.id not in graph and "Atlas" not in graph  # its only entity went too
        assert (quit_.id, failed.id) not in edges(graph, "caused_by")
        result = bank.recall("x", strategies="causal", seed_memory_id=quit_.id)
        assert failed.id not in [h.memory.id for h in result]
        mem.delete_bank("launch")
        assert mem.bank("launch").graph().number_of_nodes() == 0
    with agentmem.AgentMemory(store_path) as mem:
        assert mem.bank("launch").graph().number_of_nodes() == 0


@pytest.mark.parametrize(
    "kwargs",
    [
        {"seed_memory_id": "x"},  # causal is not in use
        {"strategies": "causal", "max_depth": 0},
        {"strategies": "causal", "max_depth": "3"},
        {"strategies": "causal", "direction": "sideways"},
        {"strategies": "causal", "edge_types": ["telepathy"]},
        {"strategies": "causal", "edge_types": []},
        {"strategies": "causal", "seed_memory_id": 42},
        {"strategies": "graph", "analogical_alpha": 0.5},
        {"strategies": "analogical", "analogical_alpha": 1.5},
        {"strategies": "analogical", "analogical_alpha": True},
    ],
)
def test_bad_graph_recall_arguments_raise_invalid_input(story, kwargs):
    bank, _ = story
    with pytest.raises(agentmem.InvalidInputError):
        bank.recall("x", **kwargs)


def test_max_depth_is_capped_at_ten_and_unknown_seeds_are_not_found(story):
    bank, (joined, *_) = story
    assert bank.recall("x", strategies="causal", seed_memory_id=joined.id, max_depth=50).hits
    with pytest.raises(agentmem.NotFoundError):
        bank.recall("x", strategies="causal", seed_memory_id="no-such-memory")


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (("a", "b", "telepathy"), agentmem.InvalidInputError),
        (("a", "b", "entity"), agentmem.InvalidInputError),
        (("a", "a", "related"), agentmem.InvalidInputError),
        (("a", "b", "related", 1.5), agentmem.InvalidInputError),
        (("a", "missing", "related"), agentmem.NotFoundError),
    ],
)
def test_bad_links_are_refused_and_change_nothing(story, args, error):
    bank, memories = story
    ids = {"a": memories[0].id, "b": memories[1].id}
    before = sorted(bank.graph().edges(data="kind"))
    with pytest.raises(error):
        bank.link(ids.get(args[0], args[0]), ids.get(args[1], args[1]), *args[2:])
    assert sorted(bank.graph().edges(data="kind")) == before


@pytest.mark.parametrize(
    ("links", "error"),
    [
        ("caused_by", agentmem.InvalidInputError),
        ([("caused_by",)], agentmem.InvalidInputError),
        ([("telepathy", "x")], agentmem.InvalidInputError),
        ([("caused_by", "no-such-memory")], agentmem.NotFoundError),
        ([("caused_by", "x') OR 1=1 --")], agentmem.NotFoundError),
        ([("caused_by", "it's\x00; DROP TABLE memories")], agentmem.NotFoundError),
    ],
)
def test_bad_retain_links_write_nothing(story, links, error):
    bank, memories = story
    with pytest.raises(error):
        bank.retain("Something new happened.", mentioned_at=T1, links=links)
    assert len(bank.memories()) == len(memories)


def test_a_link_to_another_banks_memory_is_not_found(mem, story):
    bank, memories = story
    elsewhere = mem.bank("elsewhere").retain("A memory of another bank.", mentioned_at=T0)
    with pytest.raises(agentmem.NotFoundError):
        bank.retain(
            "Linked across banks.", mentioned_at=T1, links=[("related", elsewhere.memories[0].id)]
        )
    assert len(bank.memories()) == len(memories)
    later = bank.retain(
        "Linked inside the bank.", mentioned_at=T1, links=[("related", memories[0].id)]
    )
    assert (later.memories[0].id, memories[0].id) in edges(bank.graph(), "related")


def test_graph_command_draws_the_entities(store_path, tmp_path, capsys):
    from agentmem.cli import main

    with agentmem.AgentMemory(store_path) as mem:
        mem.bank("launch").retain(STORY, mentioned_at=T0)
    out = tmp_path / "pictures" / "graph.html"
    assert main(["graph", "launch", "--path", str(store_path), "--out", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page
    assert "Alice Chen" in page and "Atlas" in page and "Alice quit Acme" in page
    assert "http" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert main(["graph", "nope", "--path", str(store_path), "--out", str(out)]) == 2
    assert main(["graph", "launch", "--path", str(store_path), "--out", str(tmp_path / "g.png")])
    assert "html" in capsys.readouterr().err


def test_graph_hits_that_tie_come_in_a_fixed_order(mem):
    # One session: the turns share their mention time, and each is reached from "Zorblat"
    # alone, so their activations tie; they come back newest retained first, the same in every
    # process and in every store that retained them (whatever their random ids).
    bank = mem.bank("ties")
    filler = "the weather was grey and the trains were late again this morning"
    turns = [
        {"role": "user", "name": "Ana", "content": f"Zorblat {i}: {filler}."} for i in range(6)
    ]
    bank.retain(turns, mentioned_at=T0)
    hits = bank.recall("Zorblat", strategies=["graph"], top_k=6).hits
    ranked = sorted(
        (h.strategy_details["graph"]["rank"], h.strategy_details["graph"]["score"], h.text)
        for h in hits
    )
    scores = [score for _, score, _ in ranked]
    most = max(scores, key=scores.count)
    tied = [int(text.split()[2].rstrip(":")) for _, score, text in ranked if score == most]
    assert len(tied) >= 3, ranked
    assert tied == sorted(tied, reverse=True)


def test_graph_arm_enters_at_turns_moderately_close_to_the_query(mem):
    """MiniLM puts a question and the turn answering it at a cosine of 0.3-0.5; such a turn is
    an entry point of the walk (the seed's 0.5 left 40 % of LoCoMo questions without one)."""
    bank = mem.bank("hobbies")
    pottery, bus = bank.retain(
        [
            {"role": "user", "name": "Ines", "content": "I started a pottery class last month."},
            {"role": "user", "name": "Ines", "content": "The bus was late again this morning."},
        ],
        mentioned_at=T0,
    ).memories
    # Without entity, followed_by or semantic edges, the walk returns its entry points alone.
    entries = bank.recall(
        "Which hobbies keep Ines busy?", strategies="graph", edge_types=["caused_by"], now=T1
    )
    scores = {h.memory.id: h.strategy_details["graph"]["score"] for h in entries}
    assert 0.3 <= scores[pottery.id] < 0.5  # entered at its cosine
    assert bus.id not in scores  # unrelated (cosine ~0.2)
