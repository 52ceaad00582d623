"""``agentmem bench rerank`` on a tiny LoCoMo-shaped file, with the real engine and HashEmbedder."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from agentmem.bench.rerank import format_report, run_rerank
from agentmem.cli import main
from agentmem.recall.candidates import Candidate
from agentmem.testing import HashEmbedder
from tests.unit.test_locomo_bench import SYNTHETIC_LOCOMO


@pytest.fixture()
def locomo_file(tmp_path: Path) -> Path:
    path = tmp_path / "locomo_synthetic.json"
    path.write_text(json.dumps(SYNTHETIC_LOCOMO), encoding="utf-8")
    return path


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


class _ReverseReranker:
    """Scores candidates by their fused position reversed (any order-free scores would do)."""

    name = "reverse"

    def rerank(self, query: str, candidates: Sequence[Candidate]) -> list[float]:
        n = len(candidates)
        return [(i + 1) / n for i in range(n)]


def test_report_has_a_row_without_reranking_and_one_per_top_n(
    locomo_file: Path, tmp_path: Path
) -> None:
    steps: list[tuple[int, int]] = []
    out_path = tmp_path / "reports" / "rerank.json"
    report = run_rerank(
        locomo_file,
        out_path=out_path,
        conversations=2,
        top_ns=(50, 20, 100),
        embedder=HashEmbedder(),
        progress=lambda _description, done, total: steps.append((done, total)),
    )

    assert list(report["results"]) == ["none", "calibrated@20", "calibrated@50", "calibrated@100"]
    assert report["config"]["conversations"] == ["conv-a", "conv-b"]
    assert report["config"]["top_ns"] == [20, 50, 100]
    assert report["counts"]["questions"] == 4
    assert report["counts"]["memories_created"] > 0
    # 3 sessions retained once, then 4 questions per row.
    assert steps[-1] == (3 + 4 * 4, 3 + 4 * 4)
    for key, row in report["results"].items():
        assert row["questions"] == 4
        for figures in (row["latency_ms"], row["rerank_ms"]):
            assert set(figures) == {"p50", "p95", "mean"}
            assert all(_is_number(figures[name]) and figures[name] >= 0 for name in figures)
            assert figures["p50"] <= figures["p95"]
        assert all(0.0 <= row[f"r@{k}"] <= 1.0 for k in (5, 10, 20))
        # The synthetic conversations are tiny: every candidate fits in any top-n.
        assert 0 < row["mean_candidates_scored"] <= 7, key
    assert report["results"]["none"]["reranker"] == "none"
    assert report["results"]["calibrated@20"]["rerank_top_n"] == 20
    assert json.loads(out_path.read_text(encoding="utf-8"))["results"] == report["results"]

    text = format_report(report)
    assert "calibrated@100" in text and "none" in text and "R@10" in text
    assert "4 questions per row" in text


def test_rerank_top_n_bounds_the_candidates_scored_and_kept(
    locomo_file: Path, tmp_path: Path
) -> None:
    report = run_rerank(
        locomo_file,
        out_path=tmp_path / "r.json",
        conversations=1,
        top_ns=(1, 50),
        rerankers={"reverse": _ReverseReranker()},
        embedder=HashEmbedder(),
    )
    results = report["results"]
    assert list(results) == ["none", "reverse@1", "reverse@50"]
    assert results["reverse@1"]["mean_candidates_scored"] == 1
    assert results["reverse@50"]["mean_candidates_scored"] > 1
    # Recall keeps only scored candidates: at top-n 1 a two-turn question loses a turn.
    assert results["reverse@1"]["r@5"] < results["reverse@50"]["r@5"] == 1.0


def test_cross_encoder_rows_when_a_model_folder_is_given(locomo_file: Path, tmp_path: Path) -> None:
    pytest.importorskip("onnx")
    from tests.unit.test_cross_encoder import build_cross_encoder

    model_dir = build_cross_encoder(tmp_path / "cross-encoder")
    report = run_rerank(
        locomo_file,
        out_path=tmp_path / "r.json",
        conversations=1,
        top_ns=(20,),
        cross_encoder_dir=model_dir,
        embedder=HashEmbedder(),
    )
    assert list(report["results"]) == ["none", "calibrated@20", "cross-encoder@20"]
    row = report["results"]["cross-encoder@20"]
    assert _is_number(row["rerank_ms"]["mean"]) and _is_number(row["r@10"])
    assert row["reranker"] == "cross-encoder"
    assert row["mean_candidates_scored"] > 0


def test_invalid_arguments_are_refused(locomo_file: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        run_rerank(locomo_file, out_path=tmp_path / "r.json", conversations=0)
    with pytest.raises(ValueError):
        run_rerank(locomo_file, out_path=tmp_path / "r.json", top_ns=(0, 20))


def test_cli_reports_missing_data_without_a_traceback(tmp_path: Path, capsys) -> None:
    code = main(["bench", "rerank", "--data", str(tmp_path / "nope.json")])
    assert code == 2
    err = capsys.readouterr().err
    assert "no LoCoMo data" in err and "Traceback" not in err
