"""The recall stages on their own: fusion, reranking, scoring."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from agentmem import AgentMemory
from agentmem.config import EngineConfig, RecallConfig, ScoringWeights
from agentmem.errors import InvalidInputError
from agentmem.recall.candidates import Candidate, StrategyHit
from agentmem.recall.fusion import reciprocal_rank_fusion
from agentmem.recall.pipeline import _fuse
from agentmem.recall.rerank import ScoreFusionReranker
from agentmem.recall.scoring import recency, reinforcement
from agentmem.testing import HashEmbedder
from agentmem.types import Memory, RecallHit

NOW = datetime(2025, 1, 31, tzinfo=UTC)


def hit(memory_id: str, rank: int, normalized: float = 0.5) -> StrategyHit:
    return StrategyHit(memory_id, rank, score=normalized * 10, normalized=normalized)


def memory(memory_id: str) -> Memory:
    return Memory(memory_id, "b", memory_id, "world", None, None, NOW)


def test_rrf_rewards_agreement_between_lists():
    fused = dict(
        reciprocal_rank_fusion(
            {"keyword": [hit("a", 1), hit("b", 2)], "semantic": [hit("b", 1), hit("c", 2)]}, k=60
        )
    )
    assert fused["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert fused["a"] == pytest.approx(1 / 61)
    assert max(fused, key=fused.get) == "b"


def test_score_fusion_reranker_weights_arms_and_counts_missing_arms_as_zero():
    reranker = ScoreFusionReranker({"keyword": 1.0, "semantic": 0.5})
    both = Candidate(
        memory("both"), {"keyword": hit("both", 1, 1.0), "semantic": hit("both", 1, 0.6)}
    )
    kw_only = Candidate(memory("kw"), {"keyword": hit("kw", 2, 0.9)})
    sem_only = Candidate(memory("sem"), {"semantic": hit("sem", 2, 0.9)})
    scores = reranker.rerank("q", [both, kw_only, sem_only])
    assert scores == pytest.approx([(1.0 + 0.3) / 1.5, 0.9 / 1.5, 0.45 / 1.5])
    assert all(0 <= s <= 1 for s in scores)


def test_recency_and_reinforcement_follow_the_documented_formulas():
    assert recency(NOW, NOW, 30) == 1.0
    assert recency(NOW - timedelta(days=15), NOW, 30) == pytest.approx(0.5)
    assert recency(NOW - timedelta(days=45), NOW, 30) == 0.0
    assert recency(NOW + timedelta(days=3), NOW, 30) == 1.0
    assert reinforcement(0, 100) == 0.0
    assert reinforcement(100, 100) == pytest.approx(1.0)
    assert reinforcement(10_000, 100) == 1.0


def test_scoring_weights_are_validated_and_partial_overrides_keep_defaults():
    weights = ScoringWeights.from_mapping({"w_relevance": 1})
    assert (weights.w_relevance, weights.w_recency, weights.total) == (1.0, 0.2, 1.5)
    for bad in ({"w_x": 1}, {"w_recency": -1}, {"w_recency": float("inf")}, {"w_recency": "1"}):
        with pytest.raises(InvalidInputError):
            ScoringWeights.from_mapping(bad)


def test_recall_config_normalises_strategies_and_filters():
    config = RecallConfig.build(
        "q",
        strategies=["similarity", "keyword", "semantic"],
        tags=["b", "a", "a"],
        fact_types="world",
        now="2025-01-31",
    )
    assert config.strategies == ("semantic", "keyword")
    assert config.tags == ("a", "b") and config.fact_types == ("world",)
    assert config.now == NOW and config.has_filters
    assert RecallConfig.build(
        "q", strategies=["causal"], strategy_params={"max_depth": 50}
    ).strategy_params == {"max_depth": 10}
    with pytest.raises(InvalidInputError):
        RecallConfig.build("q", top_k=True)


def test_calibrated_reranker_scores_a_weak_best_match_low_and_a_full_match_high():
    from agentmem.recall.calibrated import CalibratedReranker, content_words

    assert content_words("What did Caroline paint?") == {"carol", "paint"}
    reranker = CalibratedReranker()
    full = Candidate(
        Memory("full", "b", "Caroline painted a sunset.", "world", None, None, NOW),
        {
            "keyword": StrategyHit("full", 1, 9.0, 1.0),
            "semantic": StrategyHit("full", 1, 0.7, 1.0),
        },
    )
    full.cosine = 0.7
    weak = Candidate(
        Memory("weak", "b", "Melanie went hiking.", "world", None, None, NOW),
        {"keyword": StrategyHit("weak", 1, 0.4, 1.0)},  # the best keyword match, but weak
        cosine=0.1,
    )
    strong, poor = reranker.rerank("What did Caroline paint?", [full, weak])
    # Relative BM25 1.0 alone is not relevance 1.0; 0.5 is the odds of an average candidate.
    assert strong > 0.5 > 0.05 > poor
    # an arm without calibrated coefficients adds by its fusion weight
    graph = Candidate(weak.memory, {**weak.hits, "graph": StrategyHit("weak", 1, 1.0, 1.0)})
    assert reranker.rerank("What did Caroline paint?", [graph])[0] > poor


def test_calibrated_reranker_prefers_first_person_statements_to_replies():
    from agentmem.recall.calibrated import CalibratedReranker, first_person

    assert first_person("Melanie: I signed up for a pottery class, my kids love it.")
    assert not first_person("Melanie: You'd be a great counselor! I think your empathy helps.")
    assert not first_person("Pottery classes start in June.")  # neither: no bonus
    own = Memory("own", "b", "Caroline: I went to a pottery class.", "world", None, None, NOW)
    reply = Memory("reply", "b", "Caroline: You went to a pottery class?", "world", None, None, NOW)
    hits = {"semantic": StrategyHit("x", 1, 0.5, 0.7), "keyword": StrategyHit("x", 1, 2.0, 1.0)}
    said, asked = CalibratedReranker().rerank(
        "pottery class", [Candidate(own, hits), Candidate(reply, hits)]
    )
    assert said > asked


def test_calibrated_reranker_counts_support_from_the_same_session():
    from agentmem.recall.calibrated import CalibratedReranker

    def memory(memory_id, document_id, episode_id):
        return Memory(
            memory_id,
            "b",
            "Caroline: I went to a pottery class.",
            "world",
            None,
            None,
            NOW,
            document_id=document_id,
            episode_id=episode_id,
        )

    strong = {"semantic": StrategyHit("x", 1, 0.7, 1.0), "keyword": StrategyHit("x", 1, 5.0, 1.0)}
    weak = {"semantic": StrategyHit("x", 2, 0.3, 0.4), "keyword": StrategyHit("x", 2, 1.0, 0.3)}
    candidates = [
        Candidate(memory("anchor", "s1", "e1"), strong),
        Candidate(memory("beside", "s1", "e2"), weak),  # same document, other retain call
        Candidate(memory("apart", "s2", "e3"), weak),
        Candidate(memory("call", None, "e4"), strong),
        Candidate(memory("same-call", None, "e4"), weak),  # no document: the retain call counts
    ]
    relevance = CalibratedReranker().rerank("pottery", candidates)
    scores = dict(zip([c.memory.id for c in candidates], relevance, strict=True))
    assert scores["beside"] > scores["apart"]
    assert scores["same-call"] > scores["apart"]
    alone = CalibratedReranker().rerank("pottery", candidates[2:3])[0]
    assert scores["apart"] == pytest.approx(alone)  # nothing beside it: no support


def test_calibrated_reranker_prefers_what_the_person_asked_about_said():
    from agentmem.recall.calibrated import CalibratedReranker, speaker_named

    said = Memory(
        "said",
        "b",
        "Melanie: I run to clear my head.",
        "world",
        None,
        None,
        NOW,
        entities=("Melanie",),
    )
    replied = Memory(
        "replied",
        "b",
        "Caroline: Melanie, you run a lot!",
        "world",
        None,
        None,
        NOW,
        entities=("Caroline", "Melanie"),
    )
    plain = Memory("plain", "b", "Melanie: runs daily", "world", None, None, NOW)
    words = frozenset({"what", "does", "melanie", "do", "to", "destress"})
    assert speaker_named(words, said) and not speaker_named(words, replied)
    assert not speaker_named(words, plain)  # "Melanie" is not one of its entities
    hits = {"semantic": StrategyHit("x", 1, 0.5, 0.7), "keyword": StrategyHit("x", 1, 2.0, 1.0)}
    first, second = CalibratedReranker().rerank(
        "What does Melanie do to destress?", [Candidate(said, hits), Candidate(replied, hits)]
    )
    assert first > second


def test_calibrated_reranker_without_a_keyword_arm_keeps_the_semantic_order():
    from agentmem.recall.calibrated import CalibratedReranker

    near, far = (
        Candidate(
            Memory(i, "b", text, "world", None, None, NOW),
            {"semantic": StrategyHit(i, rank, cosine, normalized)},
        )
        for i, text, rank, cosine, normalized in (
            ("near", "Alice: I prefer green tea.", 1, 0.8, 1.0),
            ("far", "Alice: My manager is Bob.", 2, 0.2, 0.17),
        )
    )
    # The model alone rates both "unlikely" (no keyword evidence): the arm's own scores decide.
    high, low = CalibratedReranker().rerank("green tea in the morning", [near, far])
    assert high == 1.0 and low < 0.2


def test_reliability_table_counts_gold_per_relevance_band():
    from agentmem.bench.locomo import reliability_table

    table = reliability_table([(0.05, False), (0.85, True), (0.82, False), (1.0, True)])
    assert table[0] == {"relevance": "0.0-0.1", "hits": 1, "gold_rate": 0.0}
    assert table[8] == {"relevance": "0.8-0.9", "hits": 2, "gold_rate": 0.5}
    assert table[9]["hits"] == 1 and table[5]["gold_rate"] is None


@pytest.mark.parametrize("tags", [None, ["home"]])
def test_fusion_keeps_the_first_rerank_top_n_candidates_that_load(tmp_path, tags):
    """Candidates gone since an arm saw them, or dropped by a hard filter, are skipped, and
    later ones loaded in their place, whether in one load or in rounds."""
    with AgentMemory(tmp_path, embedder=HashEmbedder(), config=EngineConfig(rerank_top_n=2)) as mem:
        bank = mem.bank("b")
        work = bank.retain("The office printer is broken.", tags=["work"]).memories[0].id
        first, second = (
            bank.retain(text, tags=["home"]).memories[0].id
            for text in ("I painted the fence.", "I fixed the bike.")
        )
        ranked = {"semantic": [hit(i, r) for r, i in enumerate([work, "gone", first, second], 1)]}
        config = RecallConfig.build("q", tags=tags)
        fused = _fuse(mem._engine, "b", config, ranked)
    expected = [first, second] if tags else [work, first]
    assert [c.memory.id for c in fused] == expected
    assert all(set(c.hits) == {"semantic"} for c in fused)


def test_candidates_beyond_the_semantic_pool_get_their_measured_cosine(tmp_path):
    """The reranker reads a cosine for every candidate: the semantic arm's score when it
    returned the memory, else one measured on the stored vector (not an assumed "unrelated")."""
    from agentmem.recall.context import StrategyContext
    from agentmem.recall.pipeline import _measure_cosines

    embedder = HashEmbedder()
    with AgentMemory(tmp_path, embedder=embedder) as mem:
        bank = mem.bank("b")
        texts = ["The zebra crossing is near the bakery.", "I bought rye bread at the bakery."]
        near, far = (bank.retain(text).memories[0] for text in texts)
        engine = mem._engine
        query = "bakery zebra"
        config = RecallConfig.build(query, strategies=["semantic", "keyword"])
        ctx = StrategyContext(engine, "b", bank._collection, config)
        candidates = [
            Candidate(near, {"semantic": StrategyHit(near.id, 1, 0.42, 0.5)}),
            Candidate(far, {"keyword": StrategyHit(far.id, 1, 3.0, 1.0)}),
        ]
        _measure_cosines(ctx, candidates)
        q, v = (embedder.embed([text])[0] for text in (query, far.text))
        expected = float(q @ v / (np.linalg.norm(q) * np.linalg.norm(v)))
        assert candidates[0].cosine == 0.42  # the arm's own score is kept
        assert candidates[1].cosine == pytest.approx(expected, abs=1e-5)
        assert 0.1 < candidates[1].cosine < 0.9

        keyword_only = RecallConfig.build(query, strategies=["keyword"])
        ctx = StrategyContext(engine, "b", bank._collection, keyword_only)
        bare = [Candidate(far, {"keyword": StrategyHit(far.id, 1, 3.0, 1.0)})]
        _measure_cosines(ctx, bare)
        assert bare[0].cosine is None  # no semantic arm, no cosine

        hit = bank.recall(query, top_k=2).hits[0]
        assert hit.strategy_details["rerank"]["cosine"] == pytest.approx(
            hit.strategy_details["semantic"]["score"]
        )


def test_calibrated_reranker_reads_the_candidates_cosine():
    from agentmem.recall.calibrated import CalibratedReranker

    def candidate(memory_id: str, cosine: float | None) -> Candidate:
        text = Memory(memory_id, "b", "Caroline painted a sunset.", "world", None, None, NOW)
        return Candidate(text, {"keyword": StrategyHit(memory_id, 3, 4.0, 0.6)}, cosine=cosine)

    other = Candidate(
        Memory("o", "b", "Melanie went hiking.", "world", None, None, NOW),
        {"semantic": StrategyHit("o", 1, 0.3, 0.3)},
    )
    reranker = CalibratedReranker()  # the model needs both arms among the candidates
    unmeasured, close, other_score = reranker.rerank(
        "What did Caroline paint?", [candidate("u", None), candidate("c", 0.7), other]
    )
    assert close > unmeasured


@pytest.mark.parametrize(
    ("question", "kinds"),
    [
        ("Which cities has John been to?", {"place"}),
        ("Where did Maria go hiking?", {"place"}),
        ("What books has Tim read?", {"product"}),
        ("What are the names of Andrew's dogs?", {"person", "org"}),
        ("Which company does Alice work for?", {"org"}),
        ("What festivals did Dave attend?", {"event"}),
        ("What does Melanie do to destress?", set()),
        ("Did the cityscape showed anything?", set()),  # whole words only
    ],
)
def test_a_question_asks_for_the_entity_kinds_its_wording_names(question, kinds):
    from agentmem.recall.calibrated import answer_kinds

    assert answer_kinds(question) == kinds


def test_calibrated_reranker_prefers_a_memory_naming_what_the_question_asks_for():
    from agentmem.recall.calibrated import CalibratedReranker, answer_entity, answer_kinds

    def candidate(
        memory_id: str, text: str, kinds: tuple[tuple[str, str], ...], cosine: float = 0.5
    ) -> Candidate:
        names = tuple(name for name, _ in kinds)
        hits = {
            "semantic": StrategyHit(memory_id, 1, cosine, 0.7),
            "keyword": StrategyHit(memory_id, 1, 2.0, 1.0),
        }
        return Candidate(
            Memory(memory_id, "b", text, "world", None, None, NOW, entities=names),
            hits,
            cosine=cosine,
            entity_kinds=kinds,
        )

    lisbon = candidate(
        "l", "John: I loved my week in Lisbon.", (("John", "person"), ("Lisbon", "place"))
    )
    home = candidate("h", "John: I loved my week at home.", (("John", "person"),))
    question = "Which cities has John been to?"
    words = frozenset(question.lower().replace("?", "").split())
    kinds = answer_kinds(question)
    assert answer_entity(kinds, words, lisbon) == ("Lisbon", "place")
    assert answer_entity(kinds, words, home) is None  # the speaker is not the answer
    # Nor is a place the question names itself.
    assert answer_entity(kinds, words | {"lisbon"}, lisbon) is None
    first, second = CalibratedReranker().rerank(question, [lisbon, home])
    assert first > second
    assert lisbon.reasons == [
        "said by the person the query names",
        "a first-person statement",
        "names the place asked for: Lisbon",
    ]
    assert home.reasons == ["said by the person the query names", "a first-person statement"]
    same, same_too = CalibratedReranker().rerank("What did John love?", [lisbon, home])
    assert same == pytest.approx(same_too)  # no kind asked for: the place counts for nothing
    # A turn unrelated to the question (MiniLM's unrelated cosine) answers no "Which cities".
    unrelated = candidate("u", lisbon.memory.text, lisbon.entity_kinds, cosine=0.08)
    CalibratedReranker().rerank(question, [unrelated, home])
    assert not any("asked for" in reason for reason in unrelated.reasons)


@pytest.mark.parametrize("signal", ["answer kind", "in period"])
def test_a_yes_no_signal_counts_by_how_few_of_the_query_candidates_it_holds_for(signal):
    """Issue 21, failure class 3: a signal that holds for most candidates (most turns name some
    place; most are dated inside "last year") says little about which one answers, so a closer
    match in meaning then outranks the memory it holds for; held by one candidate, it wins."""
    from agentmem.recall.calibrated import CalibratedReranker, selectivity

    assert selectivity([True] + [False] * 9) == pytest.approx(0.9)
    assert selectivity([True] * 10) == 0.0 and selectivity([]) == 0.0
    question = "Which cities has Ana been to last year?"

    def candidate(index: int, fires: bool) -> Candidate:
        memory_id = f"m{index}"
        place = (("Oslo", "place"),) if fires and signal == "answer kind" else ()
        hits = {
            "semantic": StrategyHit(memory_id, 1, 0.4, 0.7),
            "keyword": StrategyHit(memory_id, 1, 2.0, 1.0),
            "temporal": StrategyHit(
                memory_id, 1, 0.5, 0.5, {"in_period": 1.0 if fires and signal == "in period" else 0}
            ),
        }
        text = f"Ana: we talked about thing {index}."
        names = tuple(name for name, _ in place)
        return Candidate(
            Memory(memory_id, "b", text, "world", None, None, NOW, entities=names),
            hits,
            cosine=0.4,
            entity_kinds=place,
        )

    def ranking(firing: int) -> list[str]:
        candidates = [candidate(i, fires=i != 1 and i < firing + 1) for i in range(10)]
        candidates[1].cosine = 0.5  # closer in meaning; the signal does not hold for it
        relevance = CalibratedReranker().rerank(question, candidates)
        order = sorted(range(10), key=lambda i: relevance[i], reverse=True)
        return [candidates[i].memory.id for i in order]

    assert ranking(firing=1)[0] == "m0"  # the one candidate the signal holds for
    assert ranking(firing=9)[0] == "m1"  # it holds for nine of ten: meaning decides


@pytest.mark.parametrize("tags", [None, ["trip"]])
def test_fused_candidates_carry_their_entities_kinds(tmp_path, tags):
    """Both ways of loading candidates (literal ids, and bound ids with hard filters) give the
    kinds the reranker matches against the question."""
    with AgentMemory(tmp_path, embedder=HashEmbedder()) as mem:
        bank = mem.bank("b")
        message = {"role": "user", "name": "Alice", "content": "I flew to Paris to work at Google."}
        memory = bank.retain([message], tags=["trip"]).memories[0]
        config = RecallConfig.build("q", tags=tags)
        (fused,) = _fuse(mem._engine, "b", config, {"semantic": [hit(memory.id, 1)]})
    assert dict(fused.entity_kinds) == {"Alice": "person", "Paris": "place", "Google": "org"}
    assert fused.memory.entities == tuple(sorted(("Alice", "Paris", "Google")))


def test_recall_raises_the_relevance_of_a_memory_naming_what_is_asked_for(tmp_path, monkeypatch):
    """Through the public API: the candidates' entity kinds reach the reranker."""
    import agentmem.recall.calibrated as calibrated

    def recall(bank) -> dict[str, RecallHit]:  # noqa: ANN001
        hits = bank.recall("Which cities has Alice been to?", now=NOW).hits
        return {h.memory.text: h for h in hits}

    def relevance(bank) -> dict[str, float]:  # noqa: ANN001
        return {text: h.strategy_details["rerank"]["score"] for text, h in recall(bank).items()}

    def log_odds(p: float) -> float:
        return math.log(p / (1 - p))

    with AgentMemory(tmp_path, embedder=HashEmbedder()) as mem:
        bank = mem.bank("b")
        texts = ("Big cities are too loud for me, I stay home.", "I had a lovely week in Lisbon.")
        bank.retain(
            [{"role": "user", "name": "Alice", "content": t} for t in texts], mentioned_at=NOW
        )
        # Without session support, which carries part of a memory's likelihood to the other.
        monkeypatch.setattr(calibrated, "W_SESSION", 0.0)
        with_kind = relevance(bank)
        hits = recall(bank)
        monkeypatch.setattr(calibrated, "W_ANSWER_KIND", 0.0)
        without = relevance(bank)
    lisbon, home = (f"Alice: {t}" for t in reversed(texts))
    # Compared in log-odds: a strong match's relevance sits near 1 either way.
    assert log_odds(with_kind[lisbon]) > log_odds(without[lisbon]) + 1.0
    assert "names the place asked for: Lisbon" in hits[lisbon].strategy_details["rerank"]["reasons"]
    assert "names the place asked for: Lisbon" in hits[lisbon].why
    # It names no place: its relevance does not move.
    assert with_kind[home] == pytest.approx(without[home], abs=1e-3)


@pytest.mark.parametrize(
    ("question", "asks"),
    [
        ("Why was the launch delayed?", True),
        ("How come Ana moved to Lisbon?", True),
        ("What led to the outage?", True),
        ("What was the reason for the delay?", True),
        ("When was the launch delayed?", False),
        ("Whyte Avenue is where?", False),  # whole words only
    ],
)
def test_a_question_asks_for_a_cause_by_its_wording(question, asks):
    from agentmem.recall.calibrated import asks_for_cause

    assert asks_for_cause(question) is asks


def test_calibrated_reranker_prefers_a_memory_stating_a_cause_for_a_why_question():
    from agentmem.recall.calibrated import CalibratedReranker, stated_cause

    def candidate(memory_id: str, text: str) -> Candidate:
        hits = {
            "semantic": StrategyHit(memory_id, 1, 0.4, 0.7),
            "keyword": StrategyHit(memory_id, 1, 2.0, 1.0),
        }
        return Candidate(Memory(memory_id, "b", text, "world", None, None, NOW), hits, cosine=0.4)

    cause = candidate("c", "Ana: The launch moved because the vendor's API was down.")
    others = [
        candidate(f"o{i}", f"Ana: The launch moved {when}.")
        for i, when in enumerate(["to May", "again", "twice", "at last"])
    ]
    assert stated_cause(cause.memory.text) == "the vendor's API was down"
    assert stated_cause(others[0].memory.text) is None
    first, *rest = CalibratedReranker().rerank("Why did the launch move?", [cause, *others])
    assert first > max(rest)
    assert "states the cause asked for: the vendor's API was down" in cause.reasons
    # A cause answers only a question asking for one.
    first, *rest = CalibratedReranker().rerank("When did the launch move?", [cause, *others])
    assert first == pytest.approx(max(rest))
