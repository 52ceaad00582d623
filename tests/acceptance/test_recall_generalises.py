"""Recall failures seen on real chats (issue 21), each as a small conversation of its own.

Each test retains a made-up conversation through the public API and asserts where the answer
ranks, with the real embedder (these are failures of meaning, which hash embeddings lack).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from agentmem import AgentMemory

NOW = datetime(2025, 3, 1, tzinfo=UTC)
RELEVANCE_ONLY = {"w_relevance": 1.0, "w_recency": 0.0, "w_importance": 0.0, "w_reinforcement": 0.0}
FLOOR_REASON = "the closest in meaning, where no shared word is telling"

# Class 2: the answer shares no word with the question; many turns share its one common word.
FLAT = "The flat has three bedrooms and a small balcony."
BIG = [
    "That was a big game last night!",
    "My brother has big plans for the summer.",
    "It is a big day for my daughter tomorrow.",
    "The dog next door is really big now.",
    "We had a big lunch with the whole family.",
    "Big thanks for helping me move the piano.",
    "I made a big mistake at work today.",
    "The concert was a big success.",
    "Our team won by a big margin.",
    "She gave me a big hug at the airport.",
    "There is a big storm coming this weekend.",
    "I bought a big bag of oranges.",
    "He is a big fan of old westerns.",
    "The big news is that I got the job.",
]


def _texts(hits) -> list[str]:  # noqa: ANN001
    return [h.memory.text.partition(": ")[2] for h in hits]


def _retain_chat(bank, turns: list[str], names: tuple[str, str] = ("Omar", "Lena")) -> None:  # noqa: ANN001
    bank.retain(
        [{"role": "user", "name": names[i % 2], "content": text} for i, text in enumerate(turns)],
        mentioned_at=NOW,
        document_id="s1",
    )


def test_a_semantic_match_sharing_no_word_reaches_the_top_ten_and_stays_after_reopen(tmp_path):
    turns = [*BIG, FLAT, "I walked along the river after dinner."]
    question = "How big is your apartment?"
    with AgentMemory(tmp_path) as mem:
        bank = mem.bank("b")
        _retain_chat(bank, turns)
        assert sorted(m.text.partition(": ")[2] for m in bank.memories()) == sorted(turns)
        hits = bank.recall(question, now=NOW, top_k=20, scoring_weights=RELEVANCE_ONLY).hits
        ranked = _texts(hits)
        answer = hits[ranked.index(FLAT)]
        assert answer.strategy_details["semantic"]["rank"] == 1
        assert ranked.index(FLAT) < 10, ranked
        assert FLOOR_REASON in answer.strategy_details["rerank"]["reasons"]
    with AgentMemory(tmp_path) as mem:  # nothing of it was state: the same after reopening
        hits = mem.bank("b").recall(question, now=NOW, top_k=20, scoring_weights=RELEVANCE_ONLY)
        assert _texts(hits.hits).index(FLAT) < 10
        assert mem.check_integrity().ok


def test_no_floor_when_a_shared_word_is_telling(tmp_path):
    """ "storm" is rare in the bank: lexical evidence speaks, and the model's order stands."""
    with AgentMemory(tmp_path) as mem:
        bank = mem.bank("b")
        _retain_chat(bank, [*BIG, FLAT])
        hits = bank.recall(
            "How big is the storm?", now=NOW, top_k=20, scoring_weights=RELEVANCE_ONLY
        ).hits
        assert _texts(hits)[0] == "There is a big storm coming this weekend."
        assert not any(
            FLOOR_REASON in h.strategy_details["rerank"].get("reasons", ()) for h in hits
        )


# Class 3: most candidates name some place; the answer names a university, whose name says
# where it is.
STUDY = [
    ("Priya", "We drove to Paris for a long weekend in May."),
    ("Jonas", "My cousin just moved to Toronto."),
    ("Priya", "I flew through Dubai on the way back, the airport is huge."),
    ("Jonas", "Have you ever been to Lisbon?"),
    ("Priya", "I started my master's at the University of Melbourne in March."),
    ("Jonas", "Berlin was cold when I visited."),
    ("Priya", "My parents still live in Mumbai."),
    ("Jonas", "We are thinking of a trip to Norway."),
    ("Priya", "The library here closes at midnight, which helps during exams."),
    ("Jonas", "Rome has the best pizza."),
]


def test_a_question_for_a_country_is_answered_by_the_turn_about_studying(tmp_path):
    with AgentMemory(tmp_path) as mem:
        bank = mem.bank("b")
        bank.retain(
            [{"role": "user", "name": name, "content": text} for name, text in STUDY],
            mentioned_at=NOW,
        )
        hits = bank.recall(
            "Which country is Priya studying in?", now=NOW, scoring_weights=RELEVANCE_ONLY
        ).hits
        assert _texts(hits)[0] == STUDY[4][1]


# Class 4: an aggregation question whose answers sit one per session among other chatter.
HOBBIES = [
    "I go climbing at the gym every Saturday.",
    "I have been learning the cello for a year now.",
    "In the evenings I paint watercolours of the harbour.",
    "I brew my own beer in the garage on Sundays.",
]
CHATTER = [
    ("Work has been busy, three deadlines this week.", "My manager wants a report by Friday."),
    ("The train was late again today.", "My neighbour is renovating, so it is noisy."),
    ("I finally fixed the leaking tap.", "My sister visits next month."),
    ("The car needs new tyres.", "I need to renew my passport."),
]


def test_an_aggregation_question_reaches_every_session_holding_an_answer(tmp_path):
    with AgentMemory(tmp_path) as mem:
        bank = mem.bank("b")
        for month, (hobby, (before, after)) in enumerate(zip(HOBBIES, CHATTER, strict=True)):
            turns = [("Tom", before), ("Ada", "How was the weekend?"), ("Tom", hobby)]
            turns += [("Ada", "Nice!"), ("Tom", after)]
            bank.retain(
                [{"role": "user", "name": name, "content": text} for name, text in turns],
                mentioned_at=NOW - timedelta(days=30 * (4 - month)),
                document_id=f"session_{month + 1}",
            )
        by_text = {m.text.partition(": ")[2]: m for m in bank.memories()}
        assert {by_text[h].document_id for h in HOBBIES} == {f"session_{i}" for i in range(1, 5)}
        hits = bank.recall("What are Tom's hobbies?", now=NOW, scoring_weights=RELEVANCE_ONLY).hits
        top = _texts(hits[:10])
        assert all(hobby in top for hobby in HOBBIES), top


# A "why" question: the turn that states the cause shares few words with it, while other turns
# about the same trip share more.
TRIP = [
    "The Porto trip was going to be in May.",
    "I had booked a hotel in Porto right by the river.",
    "Porto has the best pastries, I was so looking forward to the trip.",
    "I called it all off because my mother got sick.",
    "We cancelled the dinner reservation in Porto as well.",
    "Maybe we will do the trip in the autumn instead.",
    "My brother says the Porto weather is lovely in May.",
]


def test_a_why_question_lifts_the_turn_that_states_a_cause(tmp_path):
    """Without the signal the cause turn is sixth (cosine 0.15 against 0.56 for the dinner
    reservation, which shares "cancel" and "Porto"); with it, second."""
    with AgentMemory(tmp_path) as mem:
        bank = mem.bank("b")
        bank.retain(
            [{"role": "user", "name": "Lena", "content": text} for text in TRIP], mentioned_at=NOW
        )
        hits = bank.recall(
            "Why did Lena cancel the Porto trip?", now=NOW, scoring_weights=RELEVANCE_ONLY
        ).hits
        [cause] = [h for h in hits[:2] if h.memory.text.endswith(TRIP[3])]
        assert "states the cause asked for: my mother got sick" in cause.why
        # Asked when, the cause is no answer of the kind asked for.
        when = bank.recall("When was the Porto trip?", now=NOW, scoring_weights=RELEVANCE_ONLY)
        assert not any("cause" in h.why for h in when.hits)


# Near-duplicates: the one memory holding a query's rare identifier is the keyword arm's first
# hit and no other arm's; fusion alone (RRF) ranked it below memories every arm found.
def test_the_memory_holding_a_rare_identifier_comes_first_among_near_duplicates(tmp_path):
    said = "Locker code {} is for Ann. She keeps it at home."
    with AgentMemory(tmp_path) as mem:
        bank = mem.bank("b")
        for batch in range(10):
            codes = [f"K{batch}X{j}" for j in range(10)]
            bank.retain(
                [{"role": "user", "name": "Ann", "content": said.format(c)} for c in codes],
                mentioned_at=NOW,
                document_id=f"b{batch}",
            )
    questions = {
        "What is locker code K3X2 for?": "K3X2",
        "Who is locker code K7X0 for?": "K7X0",
        "Where does Ann keep K5X5?": "K5X5",
        "Which locker code is K8X6?": "K8X6",
        "K1X9": "K1X9",
    }
    with AgentMemory(tmp_path) as mem:  # reopened: nothing of it was in-process state
        bank = mem.bank("b")
        for question, code in questions.items():
            hits = bank.recall(question, now=NOW, top_k=5, reinforce=False).hits
            assert _texts(hits)[0] == said.format(code), (question, _texts(hits))
        assert mem.check_integrity().ok
