"""The scale benchmark's generator and report (figures are printed, never asserted)."""

from __future__ import annotations

import json

from agentmem.bench.scale import format_report, run_scale
from agentmem.bench.synthetic import ConversationGenerator
from agentmem.cli import main


def test_generator_is_deterministic_and_probes_name_real_messages():
    first = list(ConversationGenerator(3).sessions(105))
    again = list(ConversationGenerator(3).sessions(105))
    assert first == again
    assert sum(len(s.messages) for s in first) == 105
    assert len(first[-1].messages) == 5  # the last session is cut to the size asked for
    texts = {f"Sam: {m['content']}" for s in first for m in s.messages if m["role"] == "user"}
    probes = [p for s in first for p in s.probes]
    assert probes and all(p.answer in texts for p in probes)
    # Codes are unique, so a keyword probe has exactly one right answer.
    codes = [p.query.split()[-1] for p in probes if p.query.startswith(("invoice", "status"))]
    assert len(codes) == len(set(codes))
    assert len({s.mentioned_at for s in first}) == len(first)


def test_a_small_run_measures_every_figure_and_reuses_its_store(tmp_path):
    out = tmp_path / "scale.json"
    report = run_scale(
        [60], tmp_path / "work", out_path=out, queries=5, singles=4, imports=30, max_call_chars=3000
    )
    (size,) = report["sizes"]
    assert size["memories_in_bank"] == 64  # 60 in bulk + 4 one at a time, before the import
    assert size["bulk_retain"]["memories"] == 60
    assert size["import_retain"]["memories"] == 30 and size["import_retain"]["calls"] == 1
    assert size["ratios"]["import_retain_over_raw_embedder"] > 0
    assert set(size["recall"]) == {"semantic", "keyword", "tempr"}
    assert size["keyword_index"]["pending_rows"] > 0
    assert size["ratios"]["bulk_retain_over_raw_embedder"] > 0
    assert size["model_only_per_s"] > 0 and size["ratios"]["bulk_retain_over_model_only"] > 0
    # The models are also timed during the build, on the first of its three sessions: the
    # ratio is against that rate, and the one before the build is reported beside it.
    bulk = size["bulk_retain"]
    assert bulk["model_only_in_turn_texts"] == 20 and bulk["model_only_in_turn_per_s"] > 0
    assert size["ratios"]["bulk_retain_over_model_only"] == round(
        bulk["memories_per_s"] / bulk["model_only_in_turn_per_s"], 3
    )
    assert size["ratios"]["bulk_retain_over_model_only_before_build"] > 0
    assert set(size["cold_start"]) == {"graph", "keyword", "rows", "vectors"}
    # A new process retains the conversation's next session into the store just built.
    reopened = size["retain_after_reopen"]
    assert reopened["calls"] == 1 and reopened["memories"] == 20
    assert reopened["memories_per_s"] > 0
    assert size["ratios"]["tempr_p50_over_chroma_and_embedding"] > 0
    # The parts timed in turn with the recalls, and each in a loop of itself beside them.
    assert size["bare_chroma"]["query_embedding"]["p50_ms"] > 0
    assert size["bare_chroma"]["back_to_back"]["query_embedding"]["p50_ms"] > 0
    assert size["ratios"]["semantic_p50_over_parts_back_to_back"] > 0
    assert json.loads(out.read_text())["sizes"][0]["size"] == 60
    table = format_report(report)
    assert "TEMPR p50 / Chroma p50" in table and "60" in table
    assert "bulk retain / model only in turn (before the build)" in table
    assert "in turn with the bulk build" in table
    assert "over the parts timed back to back" in table
    assert "first retains after reopening" in table
    call = report["max_call"]
    assert call["chars"] == 3000 and call["facts"] > 10
    assert report["max_call_peak_rss_mb"] == call["peak_rss_mib"] >= call["baseline_peak_rss_mib"]
    assert "maximum-size retain (3,000 characters" in table

    again = run_scale([60], tmp_path / "work", queries=3, singles=2, imports=0, max_call=False)
    again = again["sizes"][0]
    assert again["bulk_retain"]["reused_store"] is True
    assert again["retain_after_reopen"] is None  # its next sessions are in the store already
    assert again["memories_in_bank"] == 116  # and the first run's import and reopened retain
    assert again["import_retain"] is None and "None" in format_report({"sizes": [again]})


def test_the_cli_can_skip_the_maximum_size_call(tmp_path, capsys):
    out = tmp_path / "scale.json"
    argv = ["bench", "scale", "--sizes", "40", "--workdir", str(tmp_path / "work")]
    argv += ["--out", str(out), "--queries", "3", "--singles", "2", "--imports", "0"]
    assert main([*argv, "--no-max-call"]) == 0
    report = json.loads(out.read_text())
    assert report["sizes"][0]["bulk_retain"]["memories"] == 40
    assert "max_call" not in report and "maximum-size retain" not in capsys.readouterr().out
