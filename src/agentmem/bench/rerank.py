"""What reranking costs per recall, and what it buys: latency and R@10 with and without it.

The first ``conversations`` LoCoMo conversations are retained once (BENCH.md's protocol, one
bank each) into a store in a temporary directory. The store is then reopened once per row,
because ``rerank_top_n`` is an engine setting (:class:`~agentmem.config.EngineConfig`), and
every question is recalled as in ``agentmem bench locomo`` with relevance-only weights, so
R@10 is the ranking the reranker produced.

Rows:

* ``none``: no reranker, the fused (RRF) order (relevance = the candidate's RRF score over
  the query's best). ``recall(rerank=False)`` still runs the offline default, so this row
  uses a pass-through reranker of the bench's own; it is the floor of a recall's cost.
* ``calibrated`` at each top-n: the offline default
  (:class:`~agentmem.recall.calibrated.CalibratedReranker`).
* ``cross-encoder`` at each top-n, when a model folder is given
  (:class:`~agentmem.models.cross_encoder.CrossEncoderReranker`).

Each row reports the wall time of ``recall`` (p50/p95/mean ms), the time spent inside the
reranker alone and how many candidates it scored, beside R@5/10/20. One recall per row is
made before timing starts (model sessions, caches), and is not counted.

Usage::

    agentmem bench rerank --data ../shared/data/locomo10.json --conversations 2
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentmem.bench.locomo import (
    MAX_TOKENS,
    RELEVANCE_ONLY_WEIGHTS,
    TOP_K,
    Conversation,
    ProgressCallback,
    QuestionScore,
    bank_turn_ids,
    bench_environment,
    file_sha256,
    load_locomo,
    percentile,
    recall_figures,
    retain_conversation,
    score_question,
    step_counter,
    text_table,
)
from agentmem.config import EngineConfig
from agentmem.protocols import Embedder, Reranker
from agentmem.recall.calibrated import CalibratedReranker
from agentmem.recall.candidates import Candidate

TOP_NS: tuple[int, ...] = (20, 50, 100)
NO_RERANK = "none"


class FusionOrderReranker:
    """No reranking: relevance is the candidate's RRF score over the best in the query.

    With relevance-only weights recall then returns the fused order, as if no reranker ran.
    """

    name = NO_RERANK

    def rerank(self, query: str, candidates: Sequence[Candidate]) -> list[float]:
        """The RRF scores scaled so the query's best candidate has 1."""
        best = max((c.rrf for c in candidates), default=0.0) or 1.0
        return [c.rrf / best for c in candidates]


@dataclass
class _TimedReranker:
    """Wraps a reranker and records, per call, its wall time and how many candidates it saw."""

    inner: Reranker
    seconds: list[float] = field(default_factory=list)
    scored: list[int] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.inner.name

    def rerank(self, query: str, candidates: Sequence[Candidate]) -> list[float]:
        started = time.perf_counter()
        scores = self.inner.rerank(query, candidates)
        self.seconds.append(time.perf_counter() - started)
        self.scored.append(len(candidates))
        return scores

    def reset(self) -> None:
        self.seconds.clear()
        self.scored.clear()


@dataclass(frozen=True, slots=True)
class _Row:
    key: str
    reranker: str
    top_n: int | None


def _ms_figures(seconds: Sequence[float]) -> dict[str, float | None]:
    if not seconds:
        return {"p50": None, "p95": None, "mean": None}
    ms = [value * 1000 for value in seconds]
    return {
        "p50": round(percentile(ms, 50), 2),
        "p95": round(percentile(ms, 95), 2),
        "mean": round(statistics.fmean(ms), 2),
    }


def _rows(reranker_names: Sequence[str], top_ns: Sequence[int]) -> list[_Row]:
    # The no-rerank row needs every candidate RRF kept: the largest top-n.
    rows = [_Row(NO_RERANK, NO_RERANK, max(top_ns))]
    rows += [_Row(f"{name}@{n}", name, n) for name in reranker_names for n in top_ns]
    return rows


def run_rerank(
    data_path: str | os.PathLike[str],
    *,
    out_path: str | os.PathLike[str],
    conversations: int = 2,
    top_ns: Sequence[int] = TOP_NS,
    cross_encoder_dir: str | os.PathLike[str] | None = None,
    rerankers: Mapping[str, Reranker] | None = None,
    embedder: Embedder | None = None,
    progress: ProgressCallback | None = None,
) -> dict[str, Any]:
    """Measure recall latency and evidence recall without reranking and per reranker × top-n.

    Args:
        data_path: Path to ``locomo10.json``.
        out_path: Where to write the JSON report (parent directories are created).
        conversations: Use the first N conversations.
        top_ns: The ``rerank_top_n`` values to measure.
        cross_encoder_dir: A folder with an ONNX cross-encoder; adds its rows.
        rerankers: The rerankers to measure, by name (default: the offline ``calibrated``
            one, plus ``cross-encoder`` when ``cross_encoder_dir`` is given).
        embedder: The embedder of the store (default: the bundled MiniLM).
        progress: Called as ``progress(description, completed, total)`` after every retained
            session and every recall.

    Returns:
        The report written to ``out_path``.

    Raises:
        ValueError: If ``conversations`` or a top-n is below 1, or the data is not
            LoCoMo-shaped.
    """
    if conversations < 1:
        raise ValueError(f"conversations must be >= 1, got {conversations}")
    if not top_ns or any(n < 1 for n in top_ns):
        raise ValueError(f"top_ns must be one or more values >= 1, got {list(top_ns)}")
    top_ns = sorted(set(top_ns))
    if rerankers is None:
        defaults: dict[str, Reranker] = {"calibrated": CalibratedReranker(EngineConfig().fusion)}
        if cross_encoder_dir is not None:
            from agentmem.models.cross_encoder import CrossEncoderReranker

            defaults["cross-encoder"] = CrossEncoderReranker(cross_encoder_dir)
        rerankers = defaults
    if NO_RERANK in rerankers:
        raise ValueError(f"{NO_RERANK!r} names the row without reranking")

    data_file = Path(data_path)
    chosen = load_locomo(data_file)[:conversations]
    rows = _rows(list(rerankers), top_ns)
    questions = sum(len(conv.questions) for conv in chosen)
    total_steps = sum(len(conv.sessions) for conv in chosen) + questions * len(rows)
    step = step_counter(total_steps, progress)

    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="agentmem-rerank-") as directory:
        retain_seconds, memories_created = _retain(directory, chosen, embedder, step)
        for row in rows:
            inner = FusionOrderReranker() if row.reranker == NO_RERANK else rerankers[row.reranker]
            timed = _TimedReranker(inner)
            scores, latencies = _recall_all(directory, chosen, embedder, timed, row, step)
            results[row.key] = {
                "reranker": row.reranker,
                "rerank_top_n": row.top_n,
                **recall_figures(scores),
                "latency_ms": _ms_figures(latencies),
                "rerank_ms": _ms_figures(timed.seconds),
                "mean_candidates_scored": round(statistics.fmean(timed.scored), 2)
                if timed.scored
                else 0.0,
            }

    report: dict[str, Any] = {
        "benchmark": "rerank-cost",
        "config": {
            "data_path": str(data_file),
            "data_sha256": file_sha256(data_file),
            "conversations": [conv.id for conv in chosen],
            "rerankers": {name: reranker.name for name, reranker in rerankers.items()},
            "cross_encoder_dir": None if cross_encoder_dir is None else str(cross_encoder_dir),
            "top_ns": list(top_ns),
            "embedder": "MiniLM (bundled)" if embedder is None else embedder.name,
            "top_k": TOP_K,
            "max_tokens": MAX_TOKENS,
            "scoring_weights": RELEVANCE_ONLY_WEIGHTS,
            "reinforce": False,
            "warmup_recalls_per_row": 1,
        },
        "counts": {
            "conversations": len(chosen),
            "sessions": sum(len(conv.sessions) for conv in chosen),
            "turns": sum(conv.turn_count for conv in chosen),
            "questions": questions,
            "memories_created": memories_created,
            "retain_seconds": round(retain_seconds, 3),
        },
        "results": results,
        "environment": bench_environment(),
    }
    out_file = Path(out_path)
    out_file.parent.mkdir(parents=True, exist_ok=True)
    out_file.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return report


def _open(
    directory: str, embedder: Embedder | None, reranker: Reranker | None, top_n: int | None
) -> Any:
    import agentmem

    config = EngineConfig() if top_n is None else EngineConfig(rerank_top_n=top_n)
    return agentmem.AgentMemory(directory, embedder=embedder, reranker=reranker, config=config)


def _retain(
    directory: str,
    conversations: Sequence[Conversation],
    embedder: Embedder | None,
    step: Callable[[str], None],
) -> tuple[float, int]:
    seconds = 0.0
    created = 0
    with _open(directory, embedder, None, None) as memory:
        for conversation in conversations:
            spent, made = retain_conversation(memory.bank(conversation.id), conversation, step)
            seconds += spent
            created += made
    return seconds, created


def _recall(bank: Any, question: str, now: Any) -> Any:
    return bank.recall(
        question,
        top_k=TOP_K,
        max_tokens=MAX_TOKENS,
        now=now,
        scoring_weights=dict(RELEVANCE_ONLY_WEIGHTS),
        reinforce=False,
    )


def _recall_all(
    directory: str,
    conversations: Sequence[Conversation],
    embedder: Embedder | None,
    reranker: _TimedReranker,
    row: _Row,
    step: Callable[[str], None],
) -> tuple[list[QuestionScore], list[float]]:
    scores: list[QuestionScore] = []
    latencies: list[float] = []
    with _open(directory, embedder, reranker, row.top_n) as memory:
        warm = next((conv for conv in conversations if conv.questions), None)
        if warm is not None:
            _recall(memory.bank(warm.id), warm.questions[0].question, warm.last_session_date)
        reranker.reset()
        for conversation in conversations:
            bank = memory.bank(conversation.id)
            now = conversation.last_session_date
            cited = bank_turn_ids(bank)
            for question in conversation.questions:
                started = time.perf_counter()
                result = _recall(bank, question.question, now)
                seconds = time.perf_counter() - started
                latencies.append(seconds)
                hits = list(result.hits)[:TOP_K]
                score = score_question(conversation.id, question, hits, seconds * 1000, cited)
                scores.append(score)
                step(f"{conversation.id}: recall ({row.key})")
    return scores, latencies


def _cell(value: float | None, digits: int) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def format_report(report: Mapping[str, Any]) -> str:
    """Render a rerank report as a plain-text table: one line per row.

    Args:
        report: A report returned by :func:`run_rerank` (or loaded from its JSON).

    Returns:
        The table and a line of counts, ready to print.
    """
    headers = [
        "row",
        "top_n",
        "scored",
        "p50 ms",
        "p95 ms",
        "mean ms",
        "rerank p50",
        "rerank mean",
        "R@5",
        "R@10",
        "R@20",
    ]
    lines: list[list[str]] = []
    for key, result in report.get("results", {}).items():
        latency = result.get("latency_ms", {})
        rerank = result.get("rerank_ms", {})
        lines.append(
            [
                key,
                str(result.get("rerank_top_n")),
                _cell(result.get("mean_candidates_scored"), 1),
                _cell(latency.get("p50"), 1),
                _cell(latency.get("p95"), 1),
                _cell(latency.get("mean"), 1),
                _cell(rerank.get("p50"), 2),
                _cell(rerank.get("mean"), 2),
                _cell(result.get("r@5"), 3),
                _cell(result.get("r@10"), 3),
                _cell(result.get("r@20"), 3),
            ]
        )
    counts = report.get("counts", {})
    conversations = ", ".join(report.get("config", {}).get("conversations", ()))
    return "\n".join(
        [
            "Reranking cost per recall (LoCoMo, relevance-only weights; ms are wall time)",
            *text_table(headers, lines),
            "",
            f"{counts.get('conversations', 0)} conversations ({conversations}), "
            f"{counts.get('questions', 0)} questions per row, "
            f"{counts.get('memories_created', 0)} memories; 'scored' is the mean number of "
            "candidates the reranker saw.",
        ]
    )
