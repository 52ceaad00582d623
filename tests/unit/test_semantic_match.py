"""An answer in other words than its question: the semantic arm's best match reaches the top."""

from __future__ import annotations

from datetime import UTC, datetime

from agentmem import AgentMemory
from agentmem.recall.calibrated import content_words

NOW = datetime(2025, 1, 31, tzinfo=UTC)
RELEVANCE_ONLY = {"w_relevance": 1.0, "w_recency": 0.0, "w_importance": 0.0, "w_reinforcement": 0.0}
ANSWER = "The drive to the office takes me forty minutes each way."
# Turns that share the question's one common word ("long") and nothing of its sense.
LONG = [
    "It has been a long week at work, I am exhausted.",
    "How long have you had your dog?",
    "I have had him for a long time, almost six years.",
    "My sister is visiting next month for a long weekend.",
    "That long movie last night was boring.",
    "I read a long novel about sailors on the weekend.",
    "The queue at the bakery was so long this morning.",
    "We had a long talk about our plans.",
    "My hair is getting too long, I need a cut.",
    "It was a long flight to see my grandparents.",
    "The meeting went on for too long.",
    "I have been waiting a long time for this concert.",
    "Long walks on the beach relax me.",
    "The winter feels long this year.",
]


def test_a_strong_semantic_match_without_shared_words_reaches_the_top_ten(tmp_path):
    texts = [*LONG, ANSWER, "I cooked pasta with mushrooms for dinner."]
    with AgentMemory(tmp_path) as mem:  # the real embedder: the match is one of meaning
        bank = mem.bank("b")
        bank.retain(
            [
                {"role": "user", "name": "Dana" if i % 2 else "Sam", "content": text}
                for i, text in enumerate(texts)
            ],
            mentioned_at=NOW,
            document_id="s1",
        )
        assert len(bank.memories()) == len(texts)
        hits = bank.recall(
            "How long is your commute?", now=NOW, top_k=20, scoring_weights=RELEVANCE_ONLY
        ).hits
        ranked = [h.memory.text.partition(": ")[2] for h in hits]
        answer = hits[ranked.index(ANSWER)]
        # It is the semantic arm's best match, and shares no content word with the question.
        assert answer.strategy_details["semantic"]["rank"] == 1
        assert not content_words(ANSWER) & content_words("How long is your commute?")
        assert ranked.index(ANSWER) < 10, ranked
