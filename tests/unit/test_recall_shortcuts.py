"""Recall's shortcuts compute what the straightforward code computes: the per-text caches of
the reranker's words and the budget's token counts, and scoring that writes the details of
the returned hits only."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

import agentmem.recall.pipeline as pipeline
from agentmem import AgentMemory
from agentmem.models.tokens import count_tokens, load_encoding
from agentmem.recall.calibrated import content_words, first_person
from agentmem.recall.scoring import signals
from agentmem.testing import HashEmbedder
from agentmem.types import RecallHit

NOW = datetime(2025, 1, 31, tzinfo=UTC)
_TEXT = st.lists(
    st.sampled_from(
        ["I", "we", "you", "Your", "my", "paint", "painted", "the", "Ana:", "í", ",", "\n"]
    ),
    max_size=12,
).map(" ".join)


@settings(deadline=None)  # the first example loads the encoding
@given(texts=st.lists(_TEXT, max_size=6))
def test_cached_words_and_token_counts_equal_the_computation(texts):
    for text in texts * 2:  # the second round reads the caches
        assert content_words(text) == content_words.__wrapped__(text)
        assert first_person(text) == first_person.__wrapped__(text)
        assert count_tokens(text) == len(load_encoding().encode_ordinary(text))


def _all_scored(engine, reranker, config, candidates, reference) -> list[RecallHit]:
    """Scoring as written before: every candidate's hit with its details, sorted, cut."""
    scored = []
    for fusion_rank, candidate in enumerate(candidates, start=1):
        s = signals(
            candidate.memory,
            candidate.relevance,
            reference,
            engine.config.recency_window_days,
            engine.config.reinforcement_cap,
        )
        details = pipeline._details(reranker, candidate, fusion_rank, s)
        hit = RecallHit(candidate.memory, s.composite(config.weights), details)
        scored.append((hit.score, candidate.rrf, hit))
    if config.ordered_strategy is not None:
        ordered = config.ordered_strategy
        return [
            h for _, _, h in sorted(scored, key=lambda i: i[2].strategy_details[ordered]["rank"])
        ][: config.top_k]
    scored.sort(key=lambda item: (item[0], item[1]), reverse=True)
    return [h for _, _, h in scored][: config.top_k]


def test_scoring_returns_the_hits_scoring_every_candidate_would(tmp_path, monkeypatch):
    compared = []
    score = pipeline._score

    def checked(engine, reranker, config, candidates, reference):
        hits = score(engine, reranker, config, candidates, reference)
        assert hits == _all_scored(engine, reranker, config, candidates, reference)
        compared.append(len(candidates))
        return hits

    monkeypatch.setattr(pipeline, "_score", checked)
    with AgentMemory(tmp_path, embedder=HashEmbedder()) as mem:
        bank = mem.bank("b")
        for n in range(12):
            bank.retain(
                [{"role": "user", "name": "Ana", "content": f"I painted fence {n % 4} today."}],
                mentioned_at=datetime(2025, 1, 1 + n, tzinfo=UTC),
            )
        for query in ("What did Ana paint?", "fence", "When did Ana paint the fence?"):
            for top_k in (1, 3, 20):
                for strategies in (None, ["semantic"], ["keyword"]):
                    bank.recall(query, top_k=top_k, strategies=strategies, now=NOW)
            bank.recall(query, strategies=["timeline"], entity="Ana", now=NOW)
    assert len(compared) == 30 and max(compared) > 3
