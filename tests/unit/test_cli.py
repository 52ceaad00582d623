"""The agentmem command as a user runs it."""

from __future__ import annotations

import argparse
import json
import shlex

from agentmem.cli import build_parser, main


def test_demo_prints_recall_tables_with_scores_and_reasons(tmp_path, capsys):
    assert main(["demo", "--path", str(tmp_path / "demo")]) == 0
    out = capsys.readouterr().out
    assert "Q: Which invoice did Bob think was double-billed?" in out
    assert "INV-20931" in out
    assert "keyword #" in out and "semantic #" in out
    assert "memories" in out and "entities" in out
    # It says which bank to use next, with a command that works.
    assert "bank 'demo'" in out
    next_command = shlex.split(out.split("ask your own question:")[1].strip().splitlines()[0])
    assert next_command[:2] == ["agentmem", "recall"] and "--bank" in next_command
    assert main([*next_command[1:], "--json"]) == 0
    assert json.loads(capsys.readouterr().out)


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


def _parsers(parser: argparse.ArgumentParser):
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                yield from _parsers(child)


def test_every_option_has_help_and_shows_its_default(monkeypatch):
    monkeypatch.setenv("COLUMNS", "1000")  # one line per option
    for parser in _parsers(build_parser()):
        text = " ".join(parser.format_help().split())
        for action in parser._actions:
            if action.help == argparse.SUPPRESS or isinstance(action, argparse._HelpAction):
                continue
            name = f"{parser.prog} {(action.option_strings or [action.dest])[0]}"
            assert action.help, f"{name} has no help"
            if action.option_strings and action.default not in (None, False):
                assert f"(default: {action.default})" in text, name


def test_memories_and_entities_show_what_is_stored(tmp_path, capsys):
    path = str(tmp_path / "store")
    for text in (
        "Wojciech fixed our boiler on Monday.",
        "We fly to Lisbon on March 14.",
    ):
        args = ["retain", "--path", path, "--bank", "home", "--mentioned-at", "2025-03-05"]
        assert main([*args, text]) == 0
    capsys.readouterr()

    assert main(["memories", "--path", path, "--bank", "home", "--json"]) == 0
    stored = json.loads(capsys.readouterr().out)
    assert [m["text"] for m in stored] == [
        "Wojciech fixed our boiler on Monday.",
        "We fly to Lisbon on March 14.",
    ]
    assert stored[0]["occurred_start"].startswith("2025-03-03")
    assert stored[1]["occurred_start"].startswith("2025-03-14")
    assert main(["memories", "--path", path, "--bank", "home", "--limit", "1"]) == 0
    table = capsys.readouterr().out
    assert "1 memories of bank 'home'" in table and "2025-03-03" in table and "Lisbon" not in table
    # A time that is not whole days shows its hours ("2025-03-05" alone before).
    args = ["retain", "--path", path, "--bank", "day", "--mentioned-at", "2025-03-05T10:00:00Z"]
    assert main([*args, "I'm meeting Zoe for coffee at 3 pm."]) == 0
    capsys.readouterr()
    assert main(["memories", "--path", path, "--bank", "day"]) == 0
    table = capsys.readouterr().out
    assert "15:00" in table and "15:59" in table

    assert main(["entities", "--path", path, "--bank", "home", "--json"]) == 0
    entities = {e["name"]: e for e in json.loads(capsys.readouterr().out)}
    assert entities["Wojciech"]["kind"] == "person"
    assert entities["Lisbon"]["kind"] == "place"
    assert main(["entities", "--path", path, "--bank", "home", "--kind", "place"]) == 0
    table = capsys.readouterr().out
    assert "Lisbon" in table and "Wojciech" not in table


def test_listing_a_missing_bank_or_a_bad_limit_is_a_clear_error(tmp_path, capsys):
    path = str(tmp_path / "store")
    assert main(["retain", "--path", path, "--bank", "home", "Hello there."]) == 0
    capsys.readouterr()
    assert main(["memories", "--path", path, "--bank", "nobody"]) == 2
    assert "nobody" in capsys.readouterr().err
    assert main(["entities", "--path", str(tmp_path / "none"), "--bank", "home"]) == 2
    assert capsys.readouterr().err
    assert main(["memories", "--path", path, "--bank", "home", "--limit", "-1"]) == 2
    assert "limit" in capsys.readouterr().err
