"""Recall's fast paths (composite scores inline, the semantic arm's hits in one pass, score
fusion arm by arm, hits built rather than replaced, metadata copied as JSON) return exactly
what the code they replaced returned: the same hits, scores, order and details."""

from __future__ import annotations

from copy import deepcopy
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentmem.recall.budget as budget
import agentmem.recall.pipeline as pipeline
from agentmem import AgentMemory
from agentmem.config import ScoringWeights
from agentmem.models.tokens import count_tokens
from agentmem.recall.candidates import Candidate, StrategyHit, cosine_relevance
from agentmem.recall.context import StrategyContext, ranked
from agentmem.recall.rerank import ScoreFusionReranker
from agentmem.recall.scoring import composite_scores, signals
from agentmem.testing import HashEmbedder
from agentmem.types import Memory

NOW = datetime(2025, 1, 31, tzinfo=UTC)
_UNIT = st.floats(0.0, 1.0)
_MEMORY = st.builds(
    lambda n, days, importance, count: Memory(
        id=f"m{n}",
        bank_id="b",
        text="t",
        fact_type="world",
        occurred_start=None,
        occurred_end=None,
        mentioned_at=NOW - timedelta(days=days),
        importance=importance,
        access_count=count,
    ),
    st.integers(0, 50),
    st.floats(-40.0, 400.0),
    _UNIT,
    st.integers(-1, 300),
)


@given(
    scored=st.lists(st.tuples(_MEMORY, st.floats(-0.5, 1.5)), max_size=60),
    weights=st.tuples(_UNIT, _UNIT, _UNIT, _UNIT).filter(lambda w: sum(w) > 0),
    window=st.floats(1.0, 400.0),
    cap=st.integers(1, 1000),
)
def test_composite_scores_are_the_signals_composites(scored, weights, window, cap):
    w = ScoringWeights(*weights)
    expected = [signals(m, r, NOW, window, cap).composite(w) for m, r in scored]
    assert composite_scores(scored, w, NOW, window, cap) == expected


def _fused_by_arm(weights, candidates):
    """Score fusion as written before: one generator per candidate over the arms."""
    arms = sorted({name for c in candidates for name in c.hits})
    per_arm = {arm: weights.get(arm, 0.5) for arm in arms}
    total = sum(per_arm.values()) or 1.0
    return [
        sum(w * (c.hits[arm].normalized if arm in c.hits else 0.0) for arm, w in per_arm.items())
        / total
        for c in candidates
    ]


_ARMS = ["semantic", "keyword", "graph", "temporal", "causal"]


@given(
    found=st.lists(st.dictionaries(st.sampled_from(_ARMS), _UNIT, max_size=5), max_size=30),
    weights=st.dictionaries(st.sampled_from(_ARMS), st.floats(0.0, 3.0)),
)
def test_score_fusion_is_the_mean_it_was(found, weights, tmp_path_factory):
    memory = Memory("m", "b", "t", "world", None, None, NOW)
    candidates = [
        Candidate(memory, {arm: StrategyHit("m", 1, 0.0, x) for arm, x in hits.items()})
        for hits in found
    ]
    got = ScoreFusionReranker(weights).rerank("q", candidates)
    assert got == _fused_by_arm(weights, candidates)


def _fitted_by_replace(hits, max_tokens):
    """The budget as written before, for the hits that fit: ``replace`` of each."""
    kept, total = [], 0
    for hit in hits:
        tokens = count_tokens(hit.memory.text)
        if total + tokens <= max_tokens:
            kept.append(replace(hit, tokens=tokens))
            total += tokens
    return kept


class _ScaledHashEmbedder(HashEmbedder):
    """A hash embedder whose cosines are mapped onto MiniLM's scale (not the identity)."""

    cosine_levels = (0.3, 0.7)


@pytest.fixture(scope="module", params=[HashEmbedder, _ScaledHashEmbedder])
def memory(request, tmp_path_factory):
    with AgentMemory(tmp_path_factory.mktemp("fast"), embedder=request.param()) as mem:
        bank = mem.bank("b")
        for n in range(40):
            bank.retain(
                [
                    {
                        "role": "user",
                        "name": ["Ana", "Bo"][n % 2],
                        "content": f"I painted fence {n % 7} in {['Oslo', 'Lyon'][n % 3 % 2]}.",
                        "metadata": {"turn": n, "tags": [n % 3, {"deep": [n]}]} if n % 4 else {},
                    }
                ],
                mentioned_at=datetime(2024, 12, 1 + n % 28, tzinfo=UTC),
            )
        for _ in range(3):  # reinforced: access counts differ
            bank.recall("fence 3", top_k=5, now=NOW)
        yield mem


def _recalled(bank, query, strategies, top_k, max_tokens):
    result = bank.recall(
        query, top_k=top_k, max_tokens=max_tokens, strategies=strategies, reinforce=False, now=NOW
    )
    return (
        [(h.memory, repr(h.score), repr(h.strategy_details), h.tokens, h.why) for h in result],
        result.total_tokens,
        result.dropped,
    )


def _as_written_before(monkeypatch):
    """Put back what the fast paths replaced (their results, by the code kept in the tests)."""

    def semantic_hits(self):
        if self._semantic is None:
            scored = self.engine.vectors.query(self.collection, self.query_vector, self.pool)
            scale = self.engine.cosine_scale
            self._semantic = ranked([(i, scale(c)) for i, c in scored], cosine_relevance)
        return self._semantic

    def score(engine, reranker, config, candidates, reference):
        return [
            replace(h, memory=_own_by_deepcopy(h.memory))
            for h in _all_scored(engine, reranker, config, candidates, reference)
        ]

    def fit(hits, max_tokens):
        kept, total, dropped = fit_to_budget(hits, max_tokens)
        fitted = {id(h.memory): h for h in _fitted_by_replace(hits, max_tokens)}
        return [fitted.get(id(h.memory), h) for h in kept], total, dropped

    fit_to_budget = budget.fit_to_budget
    monkeypatch.setattr(StrategyContext, "semantic_hits", semantic_hits)
    monkeypatch.setattr(
        ScoreFusionReranker, "rerank", lambda self, q, c: _fused_by_arm(self._weights, c)
    )
    monkeypatch.setattr(pipeline, "_score", score)
    monkeypatch.setattr(pipeline, "fit_to_budget", fit)


def _own_by_deepcopy(memory):
    return replace(memory, metadata=deepcopy(memory.metadata) if memory.metadata else {})


def _all_scored(engine, reranker, config, candidates, reference):
    """Scoring as written before: every candidate's signals, sorted, cut."""
    scored = []
    for fusion_rank, candidate in enumerate(candidates, start=1):
        s = signals(
            candidate.memory,
            candidate.relevance,
            reference,
            engine.config.recency_window_days,
            engine.config.reinforcement_cap,
        )
        scored.append((s.composite(config.weights), fusion_rank, candidate, s))
    if config.ordered_strategy is not None:
        scored.sort(key=lambda item: item[2].hits[config.ordered_strategy].rank)
    else:
        scored.sort(key=lambda item: (item[0], item[2].rrf), reverse=True)
    return [
        pipeline.RecallHit(c.memory, score, pipeline._details(reranker, c, rank, s))
        for score, rank, c, s in scored[: config.top_k]
    ]


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    query=st.sampled_from(
        ["What did Ana paint?", "fence 3", "Oslo", "Who painted in Lyon last week?", "zebra"]
    ),
    strategies=st.sampled_from([["semantic"], None, ["semantic", "keyword"], ["keyword"]]),
    top_k=st.sampled_from([1, 10, 60]),
    max_tokens=st.sampled_from([4096, 40]),
)
def test_recall_returns_what_the_replaced_code_returned(
    memory, monkeypatch, query, strategies, top_k, max_tokens
):
    bank = memory.bank("b")
    fast = _recalled(bank, query, strategies, top_k, max_tokens)
    with monkeypatch.context() as patched:
        _as_written_before(patched)
        before = _recalled(bank, query, strategies, top_k, max_tokens)
    assert fast == before
    returned = bank.recall(query, strategies=strategies, reinforce=False, now=NOW)
    for hit in returned:  # each hit's metadata is its own
        hit.memory.metadata["changed"] = True
    again = bank.recall(query, strategies=strategies, reinforce=False, now=NOW)
    assert all("changed" not in h.memory.metadata for h in again)
