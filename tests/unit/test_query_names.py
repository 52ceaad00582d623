"""A query naming a person otherwise than the bank does is read with the bank's name."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentmem import AgentMemory
from agentmem.recall.query_names import canonical_query
from agentmem.store.graph import MemoryGraph
from agentmem.testing import HashEmbedder

NOW = datetime(2025, 1, 31, tzinfo=UTC)

CHAT = [
    ("Muhamed", "My sister just opened a bakery in the old town."),
    ("Joanna", "That's wonderful, I love fresh bread."),
    ("Joanna", "I started training for a marathon in the spring."),
    ("Muhamed", "Running that far sounds hard, how is it going?"),
    ("Joanna", "My knees hurt but I keep going."),
    ("Muhamed", "I have been learning to play the oud on weekends."),
]


def graph_of(names: dict[str, str]) -> MemoryGraph:
    """A graph of one memory naming these entities (name → kind)."""
    graph = MemoryGraph()
    graph._add_memories([("m", None, 1)])
    graph._add_entity_rows(
        ("m", f"e{i}", name, kind, []) for i, (name, kind) in enumerate(names.items())
    )
    return graph


def retain_chat(bank) -> None:  # noqa: ANN001
    bank.retain(
        [{"role": "user", "name": name, "content": text} for name, text in CHAT],
        mentioned_at=NOW,
        document_id="session-1",
    )


def top_texts(bank, query: str, k: int = 3) -> list[str]:  # noqa: ANN001
    return [h.memory.text for h in bank.recall(query, now=NOW, top_k=k).hits]


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("What instrument is Mohammed learning?", "Muhamed: I have been learning to play the oud"),
        ("What is Jo training for?", "Joanna: I started training for a marathon"),
    ],
)
def test_a_misspelt_or_short_name_finds_that_persons_answer(tmp_path, question, answer):
    with AgentMemory(tmp_path, embedder=HashEmbedder()) as mem:
        bank = mem.bank("b")
        retain_chat(bank)
        # What is stored is not touched: the speakers keep their own names.
        names = {e.name for e in bank.entities()}
        assert {"Muhamed", "Joanna"} <= names and "Mohammed" not in names
        top = top_texts(bank, question)
        assert any(text.startswith(answer) for text in top), top
        hit = next(
            h for h in bank.recall(question, now=NOW).hits if h.memory.text.startswith(answer)
        )
        assert "said by the person the query names" in hit.strategy_details["rerank"]["reasons"]
        assert mem.check_integrity().ok


def test_a_correctly_named_question_recalls_as_before(tmp_path):
    with AgentMemory(tmp_path, embedder=HashEmbedder()) as mem:
        bank = mem.bank("b")
        retain_chat(bank)
        top = top_texts(bank, "What instrument is Muhamed learning?")
        assert top[0].startswith("Muhamed: I have been learning to play the oud"), top


@pytest.mark.parametrize(
    ("names", "query", "expected"),
    [
        # A misspelling of one person is read as that person.
        ({"Muhamed": "person"}, "Where does Mohammed work?", "Where does Muhamed work?"),
        ({"Melanie": "person"}, "What did Melany paint?", "What did Melanie paint?"),
        # A short form of one person's first name.
        ({"Joanna": "person", "Nate": "person"}, "Why is Jo sad?", "Why is Joanna sad?"),
        # A nickname the resolver knows.
        ({"Timothy Lee": "person"}, "What does Tim cook?", "What does Timothy Lee cook?"),
        # Exact names win: Ann stays Ann when Anna exists too.
        ({"Ann": "person", "Anna": "person"}, "Where did Ann go?", "Where did Ann go?"),
        # Ambiguous: two people start with "Jo", two spell close to "Carolin".
        ({"Joanna": "person", "John": "person"}, "Why is Jo sad?", "Why is Jo sad?"),
        (
            {"Caroline": "person", "Carolina": "person"},
            "Where is Carolin?",
            "Where is Carolin?",
        ),
        # Only people are matched, and question words are never names.
        ({"Sweden": "place"}, "Did Swedn win?", "Did Swedn win?"),
        ({"Howard": "person"}, "How did it go?", "How did it go?"),
        # Short words are not matched by spelling ("Evan" is not "Ivan").
        ({"Ivan": "person"}, "Where is Evan?", "Where is Evan?"),
        # A part of a name the query holds whole is not read alone.
        (
            {"Harry Potter": "person", "Tim": "person"},
            "Did Tim like Harry Potter?",
            "Did Tim like Harry Potter?",
        ),
        # Unrelated names stay.
        ({"Muhamed": "person"}, "Where does Lisa work?", "Where does Lisa work?"),
    ],
)
def test_canonical_query_rewrites_only_a_clear_match(names, query, expected):
    assert canonical_query(query, graph_of(names)) == expected


NAME_WORD = re.compile(r"\b[A-Z][^\W\d_]+\b")


@given(
    st.text(alphabet=st.sampled_from("JoMuhamedLisbnacrwt '’?-,."), max_size=60)
    | st.text(max_size=40)
)
@settings(max_examples=300, deadline=None)
def test_canonical_query_only_swaps_capitalised_words_for_a_persons_name(query):
    graph = graph_of({"Muhamed": "person", "Joanna": "person", "Lisbon": "place"})
    rewritten = canonical_query(query, graph)
    # Everything but the capitalised words is kept, and a word changes only into a person.
    assert NAME_WORD.sub("#", rewritten) == NAME_WORD.sub("#", query)
    changed = set(NAME_WORD.findall(rewritten)) - set(NAME_WORD.findall(query))
    assert changed <= {"Muhamed", "Joanna"}
    assert canonical_query(rewritten, graph) == rewritten  # canonical names stay canonical


def test_the_people_a_query_is_read_against_follow_the_graphs_names():
    # The persons' index is kept between queries: a person added or removed since is seen.
    graph = graph_of({"Muhamed": "person"})
    assert canonical_query("What does Mohammed play?", graph) == "What does Muhamed play?"
    assert canonical_query("What is Jo training for?", graph) == "What is Jo training for?"
    graph._add_memories([("m2", None, 2)])
    graph._add_entity_rows([("m2", "e9", "Joanna", "person", [])])
    assert canonical_query("What is Jo training for?", graph) == "What is Joanna training for?"
    graph.remove_memories(["m2"])
    assert canonical_query("What is Jo training for?", graph) == "What is Jo training for?"
