"""Time end to end: occurrence resolved at retain, temporal and timeline recall."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest

import agentmem
from agentmem.config import RecallConfig
from agentmem.recall.context import StrategyContext
from agentmem.recall.query_time import parse_query_time
from agentmem.recall.temporal import EXPANSION_DECAY, _expand
from agentmem.types import TimeRange

JAN_15 = "2025-01-15T10:00:00Z"
JAN_20 = "2025-01-20T09:00:00Z"


def say(bank, name, contents, *, at):
    """Retain one chat session: ``name`` says each of ``contents`` in turn, at ``at``."""
    messages = [{"role": "user", "name": name, "content": c} for c in contents]
    return bank.retain(messages, mentioned_at=at)


@pytest.fixture
def diary(mem):
    bank = mem.bank("diary")
    bank.retain("Alice got married last June.", mentioned_at=JAN_15)
    bank.retain("Bob started a new job in March.", mentioned_at="2024-12-01T10:00:00Z")
    bank.retain("Alice prefers coffee over tea.", mentioned_at="2024-11-20T10:00:00Z")
    bank.retain("Alice visited her grandmother in Porto in June 2023.", mentioned_at="2024-11-20")
    return bank


def test_relative_dates_resolve_against_when_they_were_said(mem):
    bank = mem.bank("support")
    memory = bank.retain(
        [
            {
                "role": "user",
                "name": "Caroline",
                "content": "I went to the LGBTQ support group yesterday and it was so powerful.",
            }
        ],
        mentioned_at="2023-05-08T13:56:00Z",
    ).memories[0]
    assert memory.occurred_start == datetime(2023, 5, 7, tzinfo=UTC)
    assert memory.occurred_end.date() == datetime(2023, 5, 7).date()
    timeless = bank.retain("Caroline prefers coffee.", mentioned_at="2023-05-08").memories[0]
    assert timeless.occurred_start is None and timeless.occurred_end is None


def test_explicit_occurrence_wins_over_the_text(mem):
    bank = mem.bank("explicit")
    when = datetime(2020, 2, 2, tzinfo=UTC)
    memory = bank.retain("We met yesterday.", mentioned_at=JAN_15, occurred_at=when).memories[0]
    assert (memory.occurred_start, memory.occurred_end) == (when, when)


def test_seed_example_june_2024(diary):
    result = diary.recall("What happened to Alice in June 2024?", now=JAN_20)
    assert result.hits[0].text == "Alice got married last June."
    assert result.query_time_range == agentmem.TimeRange(
        datetime(2024, 6, 1, tzinfo=UTC), datetime(2024, 7, 1, tzinfo=UTC)
    )
    assert result.hits[0].strategy_details["temporal"]["rank"] == 1


def test_seed_example_recently_matches_on_mention_time(diary):
    result = diary.recall("What did we discuss recently?", now=JAN_20)
    assert "Alice got married last June." in [h.text for h in result]
    details = next(h for h in result if h.text == "Alice got married last June.").strategy_details
    assert details["temporal"]["rank"] == 1
    assert result.query_time_range.start <= datetime(2025, 1, 15, tzinfo=UTC)


def test_mention_queries_use_when_it_was_said_not_when_it_happened(diary):
    result = diary.recall("What did we talk about on 20 November 2024?", now=JAN_20)
    found = {h.text for h in result if "temporal" in h.strategy_details}
    assert found == {
        "Alice prefers coffee over tea.",
        "Alice visited her grandmother in Porto in June 2023.",
    }


def test_historical_queries_are_not_punished_for_old_mentions(diary):
    hit = diary.recall("Where did Alice go in June 2023?", now=JAN_20).hits[0]
    assert hit.text == "Alice visited her grandmother in Porto in June 2023."
    assert hit.strategy_details["scoring"]["recency"] == 1.0


def test_no_time_words_means_no_range(diary):
    assert diary.recall("What does Alice drink?", now=JAN_20).query_time_range is None


def test_temporal_links_connect_facts_close_in_time(mem):
    bank = mem.bank("links")
    a = bank.retain("The product launch happened on 3 March 2025.", mentioned_at=JAN_15).memories[0]
    b = bank.retain("The press release went out on 4 March 2025.", mentioned_at=JAN_15).memories[0]
    c = bank.retain("The office moved on 9 September 2025.", mentioned_at=JAN_15).memories[0]
    bank.retain("Everyone likes the new logo.", mentioned_at=JAN_15)
    edges = {
        (u, v): d["weight"] for u, v, d in bank.graph().edges(data=True) if d["kind"] == "temporal"
    }
    assert set(edges) == {(b.id, a.id)}
    assert edges[(b.id, a.id)] == pytest.approx(2.718281828 ** (-1 / 14), rel=1e-3)
    assert c.id not in {n for pair in edges for n in pair}


def temporal_links_by_text(bank) -> set[tuple[str, str, float]]:
    text = {m.id: m.text for m in bank.memories()}
    return {
        (text[u], text[v], round(d["weight"], 9))
        for u, v, d in bank.graph().edges(data=True)
        if d["kind"] == "temporal"
    }


def test_the_same_conversation_retained_twice_gets_the_same_temporal_links(mem):
    """A session's turns share its day, so they tie in time; the tie goes to the turn retained
    nearest before, never to whichever random id sorts first: two banks that retain the same
    sessions hold the same links, and a turn's neighbours are the turns just before it."""
    sessions = [
        ("2025-03-03", [f"On 3 March 2025 Dana fixed bug {n} in the parser." for n in range(9)]),
        ("2025-03-04", [f"On 4 March 2025 Dana reviewed change {n} of Eli." for n in range(9)]),
    ]
    banks = [mem.bank("first"), mem.bank("second")]
    for bank in banks:
        for day, contents in sessions:
            say(bank, "Dana", contents, at=f"{day}T18:00:00Z")
    first, second = (temporal_links_by_text(bank) for bank in banks)
    assert first == second
    linked = {(src, dst) for src, dst, _ in first}
    last = "Dana: On 3 March 2025 Dana fixed bug 8 in the parser."
    assert {dst for src, dst in linked if src == last} == {
        f"Dana: On 3 March 2025 Dana fixed bug {n} in the parser." for n in range(3, 8)
    }
    assert mem.check_integrity().ok


def test_temporal_sigma_is_a_persisted_bank_setting(store_path):
    with agentmem.AgentMemory(store_path) as mem:
        bank = mem.bank("sigma")
        assert bank.config.temporal_sigma_days == 14
        bank.configure(temporal_sigma_days=400)
        with pytest.raises(agentmem.InvalidInputError):
            bank.configure(temporal_sigma_days=-1)
        with pytest.raises(agentmem.InvalidInputError):
            bank.configure(no_such_setting=1)
    with agentmem.AgentMemory(store_path) as mem:
        bank = mem.bank("sigma")
        assert bank.config.temporal_sigma_days == 400
        bank.retain("Kickoff on 3 March 2025.", mentioned_at=JAN_15)
        bank.retain("Retro on 9 September 2025.", mentioned_at=JAN_15)
        kinds = [d["kind"] for _, _, d in bank.graph().edges(data=True)]
        assert kinds.count("temporal") == 1  # 190 days apart: linked only with a wide sigma


def test_timeline_lists_an_entity_in_time_order(mem):
    bank = mem.bank("timeline")
    bank.retain("Alice joined Acme in 2019.", mentioned_at=JAN_15)
    bank.retain("Alice Chen was promoted to manager in 2022.", mentioned_at=JAN_15)
    bank.retain("Bob joined Acme in 2020.", mentioned_at=JAN_15)
    bank.retain("Alice left Acme in 2024.", mentioned_at=JAN_15)
    newest_first = bank.recall("Alice", strategies=["timeline"], entity="Alice")
    assert [h.text for h in newest_first] == [
        "Alice left Acme in 2024.",
        "Alice Chen was promoted to manager in 2022.",
        "Alice joined Acme in 2019.",
    ]
    window = bank.recall(
        "Alice",
        strategies=["timeline"],
        entity="alice chen",
        order="asc",
        start="2020-01-01",
        end="2023-01-01",
    )
    assert [h.text for h in window] == ["Alice Chen was promoted to manager in 2022."]
    assert bank.recall("x", strategies=["timeline"], entity="Nobody").hits == []


def test_timeline_works_with_explicit_entity_ids(mem):
    bank = mem.bank("hebbs")
    bank.retain("DPA signed.", mentioned_at="2025-01-02", entity_id="meridian")
    bank.retain("Subprocessor changed.", mentioned_at="2025-02-02", entity_id="meridian")
    bank.retain("Unrelated note.", mentioned_at="2025-03-02")
    result = bank.recall(
        "what happened with Meridian?", strategies=["timeline"], entity="meridian", order="asc"
    )
    assert [h.text for h in result] == ["DPA signed.", "Subprocessor changed."]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"strategies": ["timeline"]},
        {"strategies": ["timeline"], "entity": ""},
        {"strategies": ["timeline"], "entity": "Alice", "order": "sideways"},
        {"strategies": ["timeline"], "entity": "Alice", "start": "not a date"},
        {"entity": "Alice"},
    ],
)
def test_timeline_bad_arguments(diary, kwargs):
    with pytest.raises(agentmem.InvalidInputError):
        diary.recall("Alice", **kwargs)


def test_when_questions_prefer_facts_anchored_in_time(mem):
    bank = mem.bank("when")
    say(
        bank,
        "Jon",
        ["I love talking about mentors.", "A business mentor coached me yesterday."],
        at="2023-06-16T10:00:00Z",
    )
    result = bank.recall("When did Jon get coaching from a mentor?", now="2023-07-01")
    top = result.hits[0]
    assert top.text == "Jon: A business mentor coached me yesterday."
    assert "temporal" in top.strategy_details
    assert result.query_time_range is None
    assert all(h.memory.occurred_start for h in result if "temporal" in h.strategy_details)


def test_before_and_after_a_date_are_open_ended(diary):
    before = diary.recall("What did Alice do before 2024?", now=JAN_20)
    assert before.query_time_range.end == datetime(2024, 1, 1, tzinfo=UTC)
    assert before.query_time_range.start < datetime(1900, 1, 1, tzinfo=UTC)
    in_period = {h.text for h in before if "temporal" in h.strategy_details}
    assert "Alice visited her grandmother in Porto in June 2023." in in_period
    assert "Alice got married last June." not in in_period  # June 2024
    after = diary.recall("What did Alice do after 2023?", now=JAN_20)
    assert after.query_time_range.start == datetime(2024, 1, 1, tzinfo=UTC)
    in_period = {h.text for h in after if "temporal" in h.strategy_details}
    assert "Alice got married last June." in in_period
    assert "Alice visited her grandmother in Porto in June 2023." not in in_period


def test_as_of_a_date_runs_up_to_its_end(diary):
    result = diary.recall("Where had Alice travelled as of June 2023?", now=JAN_20)
    assert result.query_time_range.end == datetime(2023, 7, 1, tzinfo=UTC)
    assert result.query_time_range.start < datetime(1900, 1, 1, tzinfo=UTC)
    in_period = {h.text for h in result if "temporal" in h.strategy_details}
    assert "Alice visited her grandmother in Porto in June 2023." in in_period


def test_more_recently_compares_and_names_no_period(diary):
    result = diary.recall("Who married more recently, Alice or Bob?", now=JAN_20)
    assert result.query_time_range is None


def test_a_fact_dated_in_the_period_by_its_own_words_is_marked_in_period(mem):
    bank = mem.bank("dated")
    # Both were said on 20 November 2024; only the first says when it happened.
    say(
        bank,
        "Ana",
        ["I ran a half marathon last weekend.", "Running keeps me sane."],
        at="2024-11-20T10:00:00Z",
    )
    result = bank.recall("What did Ana do in November 2024?", now="2024-12-01")
    details = {h.text: h.strategy_details.get("temporal", {}) for h in result}
    assert details["Ana: I ran a half marathon last weekend."]["in_period"] == 1.0
    assert details["Ana: Running keeps me sane."].get("in_period", 0.0) == 0.0
    assert result.hits[0].text == "Ana: I ran a half marathon last weekend."


def test_a_fact_dated_only_by_when_it_was_said_is_not_marked_in_period(mem):
    """ "just" and "earlier today" date a fact in the day it was said, up to then: true, and
    stored, but it says nothing of the period the mention does not; "yesterday" does."""
    bank = mem.bank("said-then")
    say(
        bank,
        "Ana",
        [
            "I just ran a half marathon.",
            "I swam a mile earlier today.",
            "I cycled to Brighton yesterday.",
        ],
        at="2024-11-20T10:00:00Z",
    )
    assert all(m.occurred_start is not None for m in bank.memories())
    result = bank.recall("What did Ana do in November 2024?", now="2024-12-01")
    details = {h.text: h.strategy_details.get("temporal", {}) for h in result}
    assert details["Ana: I just ran a half marathon."].get("in_period", 0.0) == 0.0
    assert details["Ana: I swam a mile earlier today."].get("in_period", 0.0) == 0.0
    assert details["Ana: I cycled to Brighton yesterday."]["in_period"] == 1.0
    # Asked when, the fact dated by "just" is a dated fact like any other.
    when = bank.recall("When did Ana run a half marathon?", now="2024-12-01")
    assert when.hits[0].text == "Ana: I just ran a half marathon."
    assert "temporal" in when.hits[0].strategy_details


def test_the_temporal_arm_expands_one_hop_to_linked_facts_inside_the_period(mem):
    bank = mem.bank("wedding")
    seed, inside, outside, unlinked = (
        bank.retain(text, mentioned_at=when).memories[0].id
        for text, when in [
            ("Alice got married on 14 June 2024.", "2024-06-20T10:00:00Z"),
            ("The cake was lemon and elderflower.", "2024-06-21T10:00:00Z"),
            ("The honeymoon in Lisbon was lovely.", "2024-09-02T10:00:00Z"),
            ("Bob bought a red bicycle.", "2024-06-22T10:00:00Z"),
        ]
    )
    bank.link(seed, inside, "related", 0.5)
    bank.link(outside, seed, "caused_by", 1.0)  # either direction is one hop
    ctx = StrategyContext(mem._engine, bank.id, bank._collection, RecallConfig.build("q"))
    june = TimeRange(datetime(2024, 6, 1, tzinfo=UTC), datetime(2024, 7, 1, tzinfo=UTC))
    weights = mem._engine.db.fetchall(
        "SELECT max(weight) FROM links WHERE (src_id, dst_id) IN (($a, $b), ($b, $a))",
        {"a": seed, "b": inside},
    )[0][0]
    reached = _expand(ctx, {seed: 0.9}, june)
    assert reached == {inside: pytest.approx(0.9 * weights * EXPANSION_DECAY)}
    assert unlinked not in reached and outside not in reached


def test_facts_just_outside_the_period_count_less_and_far_ones_not_at_all(mem):
    bank = mem.bank("weekend")
    for text in [
        "Dave repainted the garage on 7 October 2023.",
        "Dave went to the car show on 6 October 2023.",
        "Dave sold his old bike on 20 September 2023.",
    ]:
        bank.retain(text, mentioned_at="2023-10-10T10:00:00Z")
    result = bank.recall(
        "What did Dave do in the first weekend of October 2023?",
        strategies=["temporal"],
        now="2023-11-01",
    )
    assert result.query_time_range == TimeRange(
        datetime(2023, 10, 7, tzinfo=UTC), datetime(2023, 10, 9, tzinfo=UTC)
    )
    scores = {h.text: h.strategy_details["temporal"]["score"] for h in result}
    inside = scores["Dave repainted the garage on 7 October 2023."]
    near = scores["Dave went to the car show on 6 October 2023."]
    assert inside > near > 0
    assert "Dave sold his old bike on 20 September 2023." not in scores


@pytest.mark.parametrize(
    ("query", "days"),
    [
        ("What did Ana do in June 2024?", 7.5),  # a quarter of the month
        ("Where was James on July 12, 2022?", 1.0),  # at least a day
        ("How many pets did Andrew have as of September 2023?", 7.5),  # open, month named
        ("What happened between March and May 2024?", 23.0),  # 92 days
    ],
)
def test_how_near_a_period_a_fact_still_counts(query, days):
    parsed = parse_query_time(query, datetime(2025, 1, 20, tzinfo=UTC), None)
    assert parsed.near == timedelta(days=days)


def test_turns_retained_by_racing_threads_link_as_if_retained_one_after_another(mem):
    """Two threads retaining same-day turns into one bank: each turn's temporal links are those
    it would get had the turns been retained one by one in the order the store took them."""
    raced = mem.bank("raced")
    turns = {
        "Dana": [f"On 3 March 2025 Dana fixed bug {n} in the parser." for n in range(8)],
        "Eli": [f"On 3 March 2025 Eli reviewed change {n} of the lexer." for n in range(8)],
    }
    start = threading.Barrier(2)

    def speak(name: str) -> None:
        start.wait(30)
        for content in turns[name]:
            say(raced, name, [content], at="2025-03-03T18:00:00Z")

    threads = [threading.Thread(target=speak, args=(name,)) for name in turns]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    taken = [
        text
        for (text,) in mem._engine.db.fetchall(
            "SELECT text FROM memories WHERE bank_id = 'raced' ORDER BY seq"
        )
    ]
    assert len(taken) == 16
    replayed = mem.bank("replayed")
    for text in taken:
        name, content = text.split(": ", 1)
        say(replayed, name, [content], at="2025-03-03T18:00:00Z")
    assert temporal_links_by_text(raced) == temporal_links_by_text(replayed)
    assert mem.check_integrity().ok


def test_dates_at_the_edges_of_time_are_stored_as_said_and_survive_export(mem, tmp_path):
    """A date past the times agentmem holds dates nothing (never the same day this year); one
    inside them is stored as itself, and the bank exports and imports whole."""
    bank = mem.bank("edges")
    for text in (
        "Tigran flew to Yerevan on 31 December 9999.",
        "The vault opens on 29 December 9999.",
        "The capsule opens in June 3021.",
        "The abbey was finished on 2 January 0001.",
    ):
        bank.retain(text, mentioned_at="2026-11-20T10:00:00Z")
    stored = {
        m.text: (m.occurred_start and m.occurred_start.date().isoformat()) for m in bank.memories()
    }
    assert stored == {
        "Tigran flew to Yerevan on 31 December 9999.": None,
        "The vault opens on 29 December 9999.": "9999-12-29",
        "The capsule opens in June 3021.": "3021-06-01",
        "The abbey was finished on 2 January 0001.": "0001-01-02",
    }
    bank.export(tmp_path / "edges.jsonl")
    copy = mem.import_(tmp_path / "edges.jsonl", bank_id="edges-copy")
    assert sorted((m.text, m.occurred_start, m.occurred_end) for m in copy.memories()) == sorted(
        (m.text, m.occurred_start, m.occurred_end) for m in bank.memories()
    )
    assert mem.check_integrity().ok
