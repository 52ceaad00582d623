"""The agentmem command as a user runs it."""

from __future__ import annotations

import json

from agentmem.cli import main


def test_demo_prints_recall_tables_with_scores_and_reasons(tmp_path, capsys):
    assert main(["demo", "--path", str(tmp_path / "demo")]) == 0
    out = capsys.readouterr().out
    assert "Q: Which invoice did Bob think was double-billed?" in out
    assert "INV-20931" in out
    assert "keyword #" in out and "semantic #" in out
    assert "memories" in out and "entities" in out


def test_retain_then_recall_json(tmp_path, capsys):
    path = str(tmp_path / "store")
    assert (
        main(
            [
                "retain",
                "--path",
                path,
                "--bank",
                "notes",
                "--json",
                "--mentioned-at",
                "2025-02-01T10:00:00Z",
                "The wifi password is hunter2.",
            ]
        )
        == 0
    )
    retained = json.loads(capsys.readouterr().out)
    assert len(retained["memories"]) == 1
    assert main(["recall", "--path", path, "--bank", "notes", "--json", "wifi password"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert hits[0]["id"] == retained["memories"][0]
    assert hits[0]["text"] == "The wifi password is hunter2."
    assert hits[0]["strategy_details"]["keyword"]["rank"] == 1


def test_errors_are_reported_without_a_traceback(tmp_path, capsys):
    code = main(["recall", "--path", str(tmp_path / "s"), "--bank", "../bad", "anything"])
    assert code == 2
    assert "invalid bank id" in capsys.readouterr().err
