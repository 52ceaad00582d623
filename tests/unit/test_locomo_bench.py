"""LoCoMo benchmark harness: loading, metrics and the runner, on tiny synthetic data.

No LoCoMo data here (CC BY-NC): every conversation below is made up. The engine is never
called; the runner is driven by a fake memory that records what it was asked.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from agentmem.bench.locomo import (
    RELEVANCE_ONLY_WEIGHTS,
    Question,
    covered_turn_ids,
    distinct_sessions,
    evidence_recall,
    evidence_recall_within_words,
    format_report,
    gold_session_share,
    load_locomo,
    memories_within_words,
    memory_turn_ids,
    parse_session_date,
    percentile,
    run_locomo,
    score_question,
    split_evidence,
)

SYNTHETIC_LOCOMO: list[dict[str, Any]] = [
    {
        "sample_id": "conv-a",
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "session_1_date_time": "9:05 am on 3 June, 2021",
            "session_1": [
                {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a cat named Pixel."},
                {
                    "speaker": "Ben",
                    "dia_id": "D1:2",
                    "text": "Look at this.",
                    "img_url": ["https://example.invalid/x.jpg"],
                    "blip_caption": "a photo of a red kite on a beach",
                },
                {"speaker": "Ana", "dia_id": "D1:3", "text": "Nice kite!", "blip_caption": None},
            ],
            "session_2_date_time": "12:06 am on 11 November, 2021",
            "session_2": [
                {"speaker": "Ben", "dia_id": "D2:1", "text": "I moved to Oslo last week."},
                {"speaker": "Ana", "dia_id": "D2:2", "text": "How is the weather in Oslo?"},
            ],
            # A date with no session: some LoCoMo conversations list more dates than sessions.
            "session_3_date_time": "4:00 pm on 1 December, 2021",
        },
        "qa": [
            {
                "question": "What is Ana's cat called?",
                "answer": "Pixel",
                "evidence": ["D1:1"],
                "category": 4,
            },
            {"question": "When did Ben move?", "answer": 2021, "evidence": ["D2:1"], "category": 2},
            {
                "question": "Pet and city?",
                "answer": "Pixel, Oslo",
                "evidence": ["D1:1; D2:1"],
                "category": 1,
            },
            {"question": "Would Ana like kites?", "answer": "yes", "evidence": [], "category": 3},
            {
                "question": "Where did Ana move?",
                "adversarial_answer": "Oslo",
                "evidence": ["D2:1"],
                "category": 5,
            },
        ],
    },
    {
        "sample_id": "conv-b",
        "conversation": {
            "speaker_a": "Cy",
            "speaker_b": "Dee",
            "session_1_date_time": "12:30 pm on 2 January, 2022",
            "session_1": [
                {"speaker": "Cy", "dia_id": "D1:1", "text": "My favourite tea is oolong."},
                {"speaker": "Dee", "dia_id": "D1:2", "text": "Mine is mint tea."},
            ],
        },
        "qa": [
            {
                "question": "Which teas do they like?",
                "answer": "oolong, mint",
                "evidence": ["D1:1 D1:2"],
                "category": 3,
            },
        ],
    },
]


@pytest.fixture()
def locomo_file(tmp_path: Path) -> Path:
    path = tmp_path / "locomo_synthetic.json"
    path.write_text(json.dumps(SYNTHETIC_LOCOMO), encoding="utf-8")
    return path


# ------------------------------------------------------------------ parsing


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1:56 pm on 8 May, 2023", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
        ("9:05 am on 3 June, 2021", datetime(2021, 6, 3, 9, 5, tzinfo=UTC)),
        ("12:06 am on 11 November, 2022", datetime(2022, 11, 11, 0, 6, tzinfo=UTC)),
        ("12:30 pm on 2 January, 2022", datetime(2022, 1, 2, 12, 30, tzinfo=UTC)),
        ("10:17 AM on 20 Sept, 2023", datetime(2023, 9, 20, 10, 17, tzinfo=UTC)),
    ],
)
def test_parse_session_date_gives_aware_utc(text: str, expected: datetime) -> None:
    parsed = parse_session_date(text)
    assert parsed == expected
    assert parsed.utcoffset() is not None and parsed.utcoffset().total_seconds() == 0


@pytest.mark.parametrize(
    "text", ["8 May 2023", "13:56 pm on 8 May, 2023", "1:56 pm on 8 Maytember, 2023", ""]
)
def test_parse_session_date_rejects_other_formats(text: str) -> None:
    with pytest.raises(ValueError):
        parse_session_date(text)


@pytest.mark.parametrize(
    ("entries", "expected"),
    [
        (["D8:6; D9:17"], ("D8:6", "D9:17")),
        (["D9:1 D4:4 D4:6"], ("D9:1", "D4:4", "D4:6")),
        (["D1:3", "D2:5,D2:6"], ("D1:3", "D2:5", "D2:6")),
        (["D4:5", "D4:5", "D5:5"], ("D4:5", "D5:5")),
        (["", " ; "], ()),
        ([], ()),
        # Malformed ids are kept as written (they then match no turn), as the baselines did.
        (["D:11:26"], ("D:11:26",)),
    ],
)
def test_split_evidence(entries: list[str], expected: tuple[str, ...]) -> None:
    assert split_evidence(entries) == expected


def test_load_locomo_sessions_turns_and_captions(locomo_file: Path) -> None:
    conversations = load_locomo(locomo_file)

    assert [conv.id for conv in conversations] == ["conv-a", "conv-b"]
    conv = conversations[0]
    assert conv.speakers == ("Ana", "Ben")
    # session_3 has a date but no turns: not a session.
    assert [session.number for session in conv.sessions] == [1, 2]
    assert [session.document_id for session in conv.sessions] == ["session_1", "session_2"]
    assert conv.sessions[1].date == datetime(2021, 11, 11, 0, 6, tzinfo=UTC)
    assert conv.last_session_date == datetime(2021, 11, 11, 0, 6, tzinfo=UTC)
    assert conv.turn_count == 5

    turns = conv.sessions[0].turns
    assert [turn.dia_id for turn in turns] == ["D1:1", "D1:2", "D1:3"]
    assert turns[1].speaker == "Ben"
    assert turns[1].text == "Look at this. [shared an image: a photo of a red kite on a beach]"
    assert turns[1].image_caption == "a photo of a red kite on a beach"
    # A null caption adds nothing.
    assert turns[2].text == "Nice kite!"
    assert turns[2].image_caption is None


def test_load_locomo_keeps_categories_1_to_4_with_evidence(locomo_file: Path) -> None:
    conversations = load_locomo(locomo_file)

    questions = conversations[0].questions
    # Category 3 with empty evidence and category 5 are dropped.
    assert [(q.index, q.category) for q in questions] == [(0, 4), (1, 2), (2, 1)]
    assert questions[2].evidence == ("D1:1", "D2:1")
    assert questions[1].answer == "2021"
    assert [q.evidence for q in conversations[1].questions] == [("D1:1", "D1:2")]


def test_load_locomo_rejects_other_json(tmp_path: Path) -> None:
    path = tmp_path / "not_locomo.json"
    path.write_text(json.dumps({"sessions": []}), encoding="utf-8")
    with pytest.raises(ValueError):
        load_locomo(path)


# ------------------------------------------------------------------ metrics


@pytest.mark.parametrize(
    ("metadata", "expected"),
    [
        ({"dia_id": "D1:3"}, {"D1:3"}),
        ({"dia_ids": ["D1:3", "D1:4"]}, {"D1:3", "D1:4"}),
        ({"dia_id": ["D2:1", "D2:2"]}, {"D2:1", "D2:2"}),
        ({"dia_id": "D1:1", "dia_ids": ["D1:2"]}, {"D1:1", "D1:2"}),
        ({"source": "summary"}, set()),
        ({}, set()),
        (None, set()),
    ],
)
def test_covered_turn_ids(metadata: dict[str, Any] | None, expected: set[str]) -> None:
    assert covered_turn_ids(metadata) == expected


def test_memory_turn_ids_counts_the_turns_an_observation_cites() -> None:
    cited = {"f1": frozenset({"D1:3"}), "f2": frozenset({"D4:1", "D4:2"})}
    profile = {"source_memory_ids": ["f1", "f2", "gone"], "profile": {"subject": "Mel"}}
    assert memory_turn_ids(profile, cited) == {"D1:3", "D4:1", "D4:2"}
    assert memory_turn_ids({"dia_id": "D2:2"}, cited) == {"D2:2"}
    assert memory_turn_ids({"source_memory_ids": "f1"}, cited) == set()  # not a list
    assert memory_turn_ids(None, cited) == set()


def test_score_question_counts_an_observation_by_its_cited_turns_and_its_words() -> None:
    question = Question(
        index=0, question="What does Mel do?", category=1, evidence=("D1:3", "D4:1")
    )
    turn = SimpleNamespace(text="Mel: I paint.", metadata={"dia_id": "D9:9"})
    profile = SimpleNamespace(
        text=" ".join(["word"] * 300), metadata={"source_memory_ids": ["f1", "f2"]}
    )
    cited = {"f1": frozenset({"D1:3"}), "f2": frozenset({"D4:1"})}
    hits = [SimpleNamespace(memory=turn), SimpleNamespace(memory=profile)]
    score = score_question("conv", question, hits, 1.0, cited)
    assert score.recall_at[10] == 1.0
    assert score.hits_without_turn_ids == 0
    # Its 300 words do not fit in the 250-word budget after the first hit.
    assert score.recall_within_words == 0.0
    assert score.words_top10 == [3, 300]
    assert score_question("conv", question, hits, 1.0).recall_at[10] == 0.0


def test_evidence_recall_by_k() -> None:
    gold = ["D1:1", "D2:2", "D3:3", "D4:4"]
    ranked = [{"D9:9"}, {"D1:1"}, set(), {"D2:2", "D3:3"}, {"D1:1"}]

    assert evidence_recall(gold, ranked, 0) == 0.0
    assert evidence_recall(gold, ranked, 1) == 0.0
    assert evidence_recall(gold, ranked, 2) == 0.25
    # A memory that came from several messages covers all of them.
    assert evidence_recall(gold, ranked, 4) == 0.75
    # k beyond the hits returned is the recall of all hits; a repeated turn counts once.
    assert evidence_recall(gold, ranked, 20) == 0.75


def test_evidence_recall_counts_duplicate_gold_once() -> None:
    assert evidence_recall(["D4:5", "D4:5", "D5:5"], [{"D4:5"}], 1) == 0.5


def test_evidence_recall_rejects_empty_gold_and_negative_k() -> None:
    with pytest.raises(ValueError):
        evidence_recall([], [{"D1:1"}], 5)
    with pytest.raises(ValueError):
        evidence_recall(["D1:1"], [{"D1:1"}], -1)


def test_gold_session_share_and_distinct_sessions() -> None:
    gold = ["D1:1", "D1:4", "D3:2", "D5:5"]  # sessions D1, D3, D5
    # A memory reaches its session with any turn, gold or not; D2 holds no gold.
    ranked = [{"D1:2"}, {"D2:1"}, {"D3:2", "D3:3"}, set()]

    assert gold_session_share(gold, ranked) == pytest.approx(2 / 3)
    assert gold_session_share(gold, []) == 0.0
    assert distinct_sessions(ranked) == 3
    assert distinct_sessions([set(), set()]) == 0
    with pytest.raises(ValueError):
        gold_session_share([], ranked)


def test_memories_within_words() -> None:
    assert memories_within_words([100, 100, 50, 1], 250) == 3
    assert memories_within_words([100, 151, 1], 250) == 1
    # The first memory always counts, even when it alone exceeds the budget.
    assert memories_within_words([300, 10], 250) == 1
    # The count stops at the first memory that does not fit (a prefix of the text).
    assert memories_within_words([200, 100, 10], 250) == 1
    assert memories_within_words([], 250) == 0


def test_evidence_recall_within_words() -> None:
    gold = ["D1:1", "D1:2"]
    ranked = [{"D1:1"}, {"D1:2"}]

    assert evidence_recall_within_words(gold, ranked, [120, 130], 250) == 1.0
    assert evidence_recall_within_words(gold, ranked, [120, 131], 250) == 0.5
    # First memory always counts, even at 400 words.
    assert evidence_recall_within_words(gold, ranked, [400, 5], 250) == 0.5
    # Multi-turn coverage inside the budget.
    assert evidence_recall_within_words(gold, [{"D1:1", "D1:2"}], [40], 250) == 1.0
    with pytest.raises(ValueError):
        evidence_recall_within_words(gold, ranked, [10], 250)


def test_percentile_linear_interpolation() -> None:
    assert percentile([4.0, 1.0, 3.0, 2.0], 50) == 2.5
    assert percentile([1.0, 2.0, 3.0, 4.0], 95) == pytest.approx(3.85)
    assert percentile([1.0, 2.0, 3.0, 4.0], 0) == 1.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 100) == 4.0
    assert percentile([7.0], 95) == 7.0
    with pytest.raises(ValueError):
        percentile([], 50)
    with pytest.raises(ValueError):
        percentile([1.0], 101)


# ------------------------------------------------------------------- runner


class _FakeBank:
    """Keeps one memory per message; recall ranks them by words shared with the query."""

    def __init__(self, log: list[tuple[str, Any, dict[str, Any]]]) -> None:
        self.log = log
        self.stored: list[SimpleNamespace] = []

    def retain(self, content: Any, **kwargs: Any) -> SimpleNamespace:
        self.log.append(("retain", content, kwargs))
        created = [
            SimpleNamespace(
                id=f"m{len(self.stored) + i}",
                text=f"{m['name']}: {m['content']}",
                metadata=dict(m["metadata"]),
            )
            for i, m in enumerate(content)
        ]
        self.stored.extend(created)
        return SimpleNamespace(memories=created)

    def memories(self) -> list[SimpleNamespace]:
        return list(self.stored)

    def recall(self, query: str, **kwargs: Any) -> SimpleNamespace:
        self.log.append(("recall", query, kwargs))
        words = set(query.lower().strip("?").split())

        def overlap(memory: SimpleNamespace) -> int:
            return len(words & set(memory.text.lower().replace(".", "").split()))

        ranked = sorted(self.stored, key=overlap, reverse=True)[: kwargs["top_k"]]
        return SimpleNamespace(hits=[SimpleNamespace(memory=m, score=0.5) for m in ranked])


class _FakeMemory:
    def __init__(self, log: list[tuple[str, Any, dict[str, Any]]]) -> None:
        self.log = log
        self.banks: list[str] = []
        self.closed = False

    def bank(self, bank_id: str) -> _FakeBank:
        self.banks.append(bank_id)
        return _FakeBank(self.log)

    def close(self) -> None:
        self.closed = True


def test_run_locomo_follows_the_protocol(locomo_file: Path, tmp_path: Path) -> None:
    log: list[tuple[str, Any, dict[str, Any]]] = []
    memories: list[_FakeMemory] = []
    steps: list[tuple[int, int]] = []

    def factory() -> _FakeMemory:
        memories.append(_FakeMemory(log))
        return memories[-1]

    out_path = tmp_path / "nested" / "dir" / "report.json"
    report = run_locomo(
        locomo_file,
        out_path=out_path,
        memory_factory=factory,
        progress=lambda _description, done, total: steps.append((done, total)),
    )

    # One fresh memory with a bank per conversation, closed afterwards.
    assert [m.banks for m in memories] == [["conv-a", "conv-b"]]
    assert all(m.closed for m in memories)

    retains = [entry for entry in log if entry[0] == "retain"]
    assert len(retains) == 3
    # Every conversation is retained before the first question is asked.
    assert [entry[0] for entry in log] == ["retain"] * 3 + ["recall"] * 8
    _, messages, kwargs = retains[0]
    assert messages[1] == {
        "role": "user",
        "name": "Ben",
        "content": "Look at this. [shared an image: a photo of a red kite on a beach]",
        "metadata": {"dia_id": "D1:2"},
    }
    assert kwargs == {
        "mentioned_at": datetime(2021, 6, 3, 9, 5, tzinfo=UTC),
        "document_id": "session_1",
    }

    recalls = [entry for entry in log if entry[0] == "recall"]
    # 3 + 1 questions, each with relevance-only and default weights.
    assert len(recalls) == 8
    first_kwargs = recalls[0][2]
    assert first_kwargs == {
        "top_k": 20,
        "max_tokens": 100000,
        "now": datetime(2021, 11, 11, 0, 6, tzinfo=UTC),
        "scoring_weights": RELEVANCE_ONLY_WEIGHTS,
        "reinforce": False,
    }
    assert [entry[2]["scoring_weights"] for entry in recalls[:6]] == [
        RELEVANCE_ONLY_WEIGHTS
    ] * 3 + [None] * 3

    assert steps[-1] == (11, 11)
    assert [done for done, _ in steps] == list(range(1, 12))

    assert report["counts"] == {
        "conversations": 2,
        "sessions": 3,
        "turns": 7,
        "questions": 4,
        "questions_by_category": {"1": 1, "2": 1, "3": 1, "4": 1},
        "gold_turn_ids_not_in_conversation": 0,
        "memories_created": 7,
    }
    relevance = report["results"]["relevance"]
    # conv-b's only question covers both turns at k=2, so every question reaches 1.0 at R@20.
    assert relevance["r@20"] == 1.0
    # Every question reaches each session holding its gold within the top 10.
    assert relevance["gold_session_share_top10"] == 1.0
    assert relevance["mean_sessions_top10"] >= 1.0
    assert relevance["by_category"]["3"]["questions"] == 1
    assert relevance["mean_hits"] == 4.25
    assert set(report["results"]) == {"relevance", "default"}
    assert report["environment"]["cpu_count"] is not None
    assert {b["short"] for b in report["baselines"]} >= {"BM25", "naive RRF"}
    assert json.loads(out_path.read_text(encoding="utf-8"))["counts"] == report["counts"]


def test_run_locomo_limit_and_single_row(locomo_file: Path, tmp_path: Path) -> None:
    log: list[tuple[str, Any, dict[str, Any]]] = []
    report = run_locomo(
        locomo_file,
        out_path=tmp_path / "r.json",
        limit_conversations=1,
        memory_factory=lambda: _FakeMemory(log),
        weights="default",
    )
    assert report["counts"]["conversations"] == 1
    assert list(report["results"]) == ["default"]
    assert all(entry[2]["scoring_weights"] is None for entry in log if entry[0] == "recall")

    with pytest.raises(ValueError):
        run_locomo(locomo_file, out_path=tmp_path / "x.json", weights="recency")  # type: ignore[arg-type]


def test_run_locomo_reports_the_fit_and_holdout_halves(
    locomo_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentmem.bench import locomo

    monkeypatch.setattr(locomo, "FIT_CONVERSATIONS", 1)  # the fixture has two conversations
    report = run_locomo(
        locomo_file,
        out_path=tmp_path / "r.json",
        memory_factory=lambda: _FakeMemory([]),
        weights="relevance",
    )
    assert report["halves"] == {"fit": ["conv-a"], "holdout": ["conv-b"]}
    assert [c["half"] for c in report["per_conversation"]] == ["fit", "holdout"]
    relevance = report["results"]["relevance"]
    fit, holdout = relevance["fit"], relevance["holdout"]
    assert (fit["questions"], holdout["questions"]) == (3, 1)
    assert fit["questions"] + holdout["questions"] == relevance["questions"]
    assert holdout["by_category"]["3"]["questions"] == 1  # conv-b's question is open-domain
    assert holdout["r@20"] == 1.0
    lines = format_report(report).splitlines()
    assert any(line.startswith("  fit (1 conversations)") for line in lines)
    assert any(line.startswith("  holdout (1 conversations)") for line in lines)


def test_format_report_lists_rows_and_baselines(locomo_file: Path, tmp_path: Path) -> None:
    report = run_locomo(
        locomo_file, out_path=tmp_path / "r.json", memory_factory=lambda: _FakeMemory([])
    )
    text = format_report(report)

    lines = text.splitlines()
    assert any(line.startswith("agentmem relevance-only") for line in lines)
    assert any(line.startswith("agentmem default weights") for line in lines)
    best_peer = next(line for line in lines if "LlamaIndex" in line)
    assert ".592" in best_peer
    assert any(line.startswith("baseline: BM25") and ".589" in line for line in lines)
    assert "4 questions" in text


# ------------------------------------------------------- bundled demo data


def test_sample_conversation_is_well_formed() -> None:
    raw = resources.files("agentmem.data").joinpath("sample_conversation.json").read_text("utf-8")
    sample = json.loads(raw)

    sessions = sample["sessions"]
    assert 5 <= len(sessions) <= 6
    dates = [datetime.fromisoformat(s["date"].replace("Z", "+00:00")) for s in sessions]
    assert dates == sorted(dates) and all(d.year == 2025 for d in dates)
    assert [s["id"] for s in sessions] == [f"session_{n}" for n in range(1, len(sessions) + 1)]
    messages = [m for s in sessions for m in s["messages"]]
    assert 40 <= len(messages) <= 60
    assert {(m["role"], m["name"]) for m in messages} == {
        ("user", "Maya"),
        ("assistant", "assistant"),
    }
    text = " ".join(m["content"] for m in messages)
    for needle in ("INV-20931", "room 42", "Dr. Okafor", "Ngozi Okafor", "Robert Chen", "Bob"):
        assert needle in text
    assert 6 <= len(sample["questions"]) <= 8
    assert all(q["question"].strip() and q["why"].strip() for q in sample["questions"])


def test_ablation_rows_pass_strategies_and_edge_types(locomo_file: Path, tmp_path: Path) -> None:
    log: list[tuple[str, Any, dict[str, Any]]] = []
    report = run_locomo(
        locomo_file,
        out_path=tmp_path / "r.json",
        limit_conversations=1,
        memory_factory=lambda: _FakeMemory(log),
        weights="relevance",
        ablations=["graph", "semantic-links"],
    )
    assert list(report["results"]) == ["relevance", "graph", "semantic-links"]
    assert report["results"]["graph"]["label"] == "relevance-only, no graph arm"
    recalls = [entry[2] for entry in log if entry[0] == "recall"]
    assert "graph" not in recalls[3]["strategies"] and "keyword" in recalls[3]["strategies"]
    assert "semantic" not in recalls[6]["edge_types"] and "entity" in recalls[6]["edge_types"]
    assert all(r["scoring_weights"] == RELEVANCE_ONLY_WEIGHTS for r in recalls)
    with pytest.raises(ValueError, match="unknown ablation"):
        run_locomo(locomo_file, out_path=tmp_path / "x.json", ablations=["nope"])
