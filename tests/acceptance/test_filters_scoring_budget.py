"""Hard filters, composite scoring, reinforcement and the token budget."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tests.conftest import T0

NOW = datetime(2025, 3, 31, tzinfo=UTC)


def ONLY(name: str) -> dict[str, float]:  # noqa: N802 - reads like a constant in calls
    """Weights that keep one signal of the composite score."""
    weights = dict.fromkeys(("w_relevance", "w_recency", "w_importance", "w_reinforcement"), 0.0)
    return {**weights, name: 1.0}


@pytest.fixture
def tagged(mem):
    bank = mem.bank("tagged")
    for text, tags in [
        ("The deploy runbook lives in the ops wiki.", ["ops"]),
        ("The deploy needs approval from the security team.", ["ops", "security"]),
        ("Deploy freeze starts on Friday.", ["security"]),
        ("Deploy notes are public.", []),
    ]:
        bank.retain(text, mentioned_at=T0, tags=tags)
    return bank


def tag_sets(result) -> set[tuple[str, ...]]:
    return {hit.memory.tags for hit in result}


@pytest.mark.parametrize(
    ("tags", "match", "expected"),
    [
        (["ops"], "any", {("ops",), ("ops", "security")}),
        (["ops", "security"], "any", {("ops",), ("ops", "security"), ("security",)}),
        (["ops", "security"], "all", {("ops", "security")}),
        (["security", "ops"], "exact", {("ops", "security")}),
        (["ops"], "exact", {("ops",)}),
        ([], "exact", {()}),
    ],
)
def test_tags_match_semantics_are_exact(tagged, tags, match, expected):
    result = tagged.recall("deploy", tags=tags, tags_match=match, now=NOW)
    assert tag_sets(result) == expected


def test_fact_type_filter(bank):
    result = bank.recall("new job", fact_types=["experience"], now=NOW)
    assert result.hits and all(h.memory.fact_type == "experience" for h in result)
    result = bank.recall("new job", fact_types="world", now=NOW)
    assert result.hits and all(h.memory.fact_type == "world" for h in result)


def test_time_range_filter_uses_occurrence_then_mention_time(mem):
    bank = mem.bank("times")
    bank.retain(
        "Team offsite in Porto.",
        mentioned_at="2025-03-01",
        occurred_at=datetime(2024, 9, 10, tzinfo=UTC),
    )
    bank.retain("Team offsite planning call.", mentioned_at="2025-03-01")
    sept = (datetime(2024, 9, 1, tzinfo=UTC), datetime(2024, 10, 1, tzinfo=UTC))
    march = (datetime(2025, 3, 1, tzinfo=UTC), datetime(2025, 4, 1, tzinfo=UTC))
    assert [h.text for h in bank.recall("team offsite", time_range=sept, now=NOW)] == [
        "Team offsite in Porto."
    ]
    assert [h.text for h in bank.recall("team offsite", time_range=march, now=NOW)] == [
        "Team offsite planning call."
    ]


def test_recency_weight_orders_by_mention_time(mem):
    bank = mem.bank("recency")
    for days in (20, 2, 10):
        bank.retain(f"Standup note number {days}.", mentioned_at=NOW - timedelta(days=days))
    result = bank.recall("standup note", scoring_weights=ONLY("w_recency"), now=NOW)
    assert [h.text for h in result] == [
        "Standup note number 2.",
        "Standup note number 10.",
        "Standup note number 20.",
    ]
    assert result.hits[0].score == pytest.approx(1 - 2 / 30)
    assert result.hits[0].strategy_details["scoring"]["recency"] == pytest.approx(1 - 2 / 30)


def test_importance_weight_orders_by_importance(mem):
    bank = mem.bank("importance")
    for importance in (0.3, 0.9, 0.6):
        bank.retain(f"Budget item rated {importance}.", mentioned_at=T0, importance=importance)
    result = bank.recall("budget item", scoring_weights=ONLY("w_importance"), now=NOW)
    assert [h.memory.importance for h in result] == [0.9, 0.6, 0.3]


def test_default_score_is_the_documented_weighted_mean(bank):
    hit = bank.recall("green tea in the morning", now=NOW).hits[0]
    s = hit.strategy_details["scoring"]
    expected = (
        0.5 * s["relevance"] + 0.2 * s["recency"] + 0.2 * s["importance"] + 0.1 * s["reinforcement"]
    )
    assert hit.score == pytest.approx(expected)
    assert s["relevance"] == hit.strategy_details["rerank"]["score"]


def test_recall_reinforces_returned_memories_unless_told_not_to(bank):
    first = bank.recall("green tea", top_k=1, now=NOW).hits[0]
    assert first.memory.access_count == 0
    assert bank.get(first.memory.id).access_count == 1
    bank.recall("green tea", top_k=1, now=NOW, reinforce=False)
    assert bank.get(first.memory.id).access_count == 1
    again = bank.recall("green tea", top_k=1, now=NOW).hits[0]
    assert again.strategy_details["scoring"]["reinforcement"] > 0


def test_token_budget_skips_misfits_and_keeps_shorter_later_hits(mem):
    bank = mem.bank("budget")
    long_text = "Quarterly report: " + "revenue grew in every region " * 40
    bank.retain(
        [
            {"role": "user", "content": "Quarterly report summary: revenue grew."},
            {"role": "user", "content": long_text},
            {"role": "user", "content": "Quarterly report was sent to the board."},
        ],
        mentioned_at=T0,
    )
    full = bank.recall("quarterly report revenue grew", reinforce=False, now=NOW)
    assert len(full) == 3
    budget = full.hits[0].tokens + 12
    result = bank.recall(
        "quarterly report revenue grew", max_tokens=budget, reinforce=False, now=NOW
    )
    kept = [h.text for h in result]
    assert long_text.strip() not in kept  # too long to fit: skipped ...
    assert len(kept) == 2  # ... and the next short one still got in
    assert result.total_tokens <= budget
    assert len(result.dropped) == 1


def test_top_hit_is_always_returned_truncated_when_it_alone_exceeds_the_budget(mem):
    bank = mem.bank("tiny-budget")
    bank.retain(
        "Zebra migration notes: " + "the herd crossed the river again " * 30, mentioned_at=T0
    )
    result = bank.recall("zebra migration", max_tokens=5, now=NOW)
    assert len(result) == 1
    hit = result.hits[0]
    assert hit.tokens <= 5 and result.total_tokens <= 5
    assert hit.text.startswith("Zebra")
    assert hit.strategy_details["budget"] == {"truncated": True}


def test_top_k_limits_hits(bank):
    assert len(bank.recall("Alice", top_k=2, now=NOW)) == 2
