"""The ``agentmem`` command run as a user runs it, a subprocess, on missing stores and banks,
refused values and system errors: one line on stderr, no traceback, a non-zero exit, and
nothing created by a read or a refused write."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import agentmem

SRC = str(Path(agentmem.__file__).resolve().parents[1])
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")])}
ENV.pop("AGENTMEM_TOKEN", None)


def agentmem_cli(*arguments: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "agentmem.cli", *arguments],
        env=env or ENV,
        capture_output=True,
        text=True,
        timeout=600,
    )


def assert_one_line_error(done: subprocess.CompletedProcess, code: int | None, *words: str) -> None:
    """One ``error:`` line naming ``words``, no traceback, exit ``code`` (None: any but 0)."""
    # Other lines are the library's log (a retain without mentioned_at says it dates it now).
    lines = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert done.returncode != 0 if code is None else done.returncode == code, done.stderr
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert all(word in lines[0] for word in words), lines[0]


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """A store holding bank ``notes`` (made once: the first retain loads the models)."""
    path = tmp_path_factory.mktemp("cli") / "store"
    done = agentmem_cli("retain", "--path", str(path), "--bank", "notes", "Alice likes tea.")
    assert done.returncode == 0, done.stderr
    return path


def banks_of(path: Path) -> list[str]:
    with agentmem.AgentMemory(path) as mem:
        return mem.banks()


@pytest.mark.parametrize(
    "command",
    [
        ["recall", "--bank", "notes", "tea"],
        ["memories", "--bank", "notes"],
        ["entities", "--bank", "notes"],
        ["graph", "--bank", "notes"],
        ["export", "--bank", "notes", "OUT/notes.jsonl"],
    ],
)
def test_reads_of_a_missing_store_create_nothing(tmp_path, command):
    missing = tmp_path / "nonexistent"
    arguments = [a.replace("OUT", str(tmp_path)) for a in command]
    done = agentmem_cli(*arguments, "--path", str(missing))
    assert_one_line_error(done, 2, "no agentmem store", str(missing))
    assert not missing.exists()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "command",
    [
        ["recall", "--bank", "nosuch", "tea"],
        ["memories", "--bank", "nosuch"],
        ["entities", "--bank", "nosuch", "--json"],
        ["graph", "--bank", "nosuch", "--out", "OUT/g.html"],
        ["export", "--bank", "nosuch", "OUT/nosuch.jsonl"],
    ],
)
def test_reads_of_a_missing_bank_create_nothing(store, tmp_path, command):
    arguments = [a.replace("OUT", str(tmp_path)) for a in command]
    done = agentmem_cli(*arguments, "--path", str(store))
    assert_one_line_error(done, 2, "no bank 'nosuch'")
    assert banks_of(store) == ["notes"]
    assert list(tmp_path.iterdir()) == []


def test_a_refused_write_leaves_no_store_and_no_bank(store, tmp_path):
    missing = tmp_path / "new"
    done = agentmem_cli("retain", "--path", str(missing), "--bank", "b", "   ")
    assert_one_line_error(done, 2)
    assert not missing.exists()
    done = agentmem_cli("retain", "--path", str(store), "--bank", "b", "x", "--importance", "7")
    assert_one_line_error(done, 2, "importance")
    assert banks_of(store) == ["notes"]
    done = agentmem_cli("import", "--path", str(missing), str(tmp_path / "none.jsonl"))
    assert_one_line_error(done, 2, "none.jsonl")
    assert not missing.exists()


def test_system_errors_are_one_line_too(store, tmp_path):
    # A StorageError (2) where the library wraps the OSError, the OSError itself (1) elsewhere.
    done = agentmem_cli("export", "--path", str(store), "--bank", "notes", "/proc/x/notes.jsonl")
    assert_one_line_error(done, None, "/proc/x/notes.jsonl")
    a_file = tmp_path / "file"
    a_file.write_text("not a store")
    done = agentmem_cli("retain", "--path", str(a_file / "store"), "--bank", "b", "x")
    assert_one_line_error(done, None, str(a_file))
    assert a_file.read_text() == "not a store"


def test_graph_takes_bank_and_refuses_to_overwrite(store, tmp_path):
    out = tmp_path / "graph.html"
    done = agentmem_cli("graph", "--path", str(store), "--bank", "notes", "--out", str(out))
    assert done.returncode == 0, done.stderr
    drawn = out.read_text()
    assert "<html" in drawn
    out.write_text("mine")
    done = agentmem_cli("graph", "--path", str(store), "--bank", "notes", "--out", str(out))
    assert_one_line_error(done, 2, "--force")
    assert out.read_text() == "mine"
    # The positional bank of older versions still works, with a note.
    done = agentmem_cli("graph", "notes", "--path", str(store), "--out", str(out), "--force")
    assert done.returncode == 0, done.stderr
    assert "deprecated" in done.stderr and "--bank notes" in done.stderr
    assert out.read_text() == drawn
    done = agentmem_cli("graph", "--path", str(store), "--out", str(out), "--force")
    assert_one_line_error(done, 2, "--bank")


def test_export_refuses_to_overwrite_without_force(store, tmp_path):
    out = tmp_path / "notes.jsonl"
    out.write_text("mine")
    done = agentmem_cli("export", "--path", str(store), "--bank", "notes", str(out))
    assert_one_line_error(done, 2, "--force")
    assert out.read_text() == "mine"
    done = agentmem_cli("export", "--path", str(store), "--bank", "notes", str(out), "--force")
    assert done.returncode == 0, done.stderr
    assert out.read_text().startswith('{"type": "agentmem-export"')


@pytest.mark.parametrize(
    ("arguments", "env", "words"),
    [
        (["--token", ""], {}, ["--token", "empty"]),
        ([], {"AGENTMEM_TOKEN": ""}, ["$AGENTMEM_TOKEN", "empty"]),
        (["--token", "two words"], {}, ["--token", "spaces"]),
        (["--max-body-bytes", "0"], {}, ["body limit"]),
        (["--allowed-host", "http://x/"], {}, ["allowed host"]),
    ],
)
def test_serve_refuses_bad_settings_before_opening_the_store(tmp_path, arguments, env, words):
    done = agentmem_cli("serve", "--path", str(tmp_path / "s"), *arguments, env={**ENV, **env})
    assert_one_line_error(done, 2, *words)
    assert not (tmp_path / "s").exists()


def test_help_lists_every_command_in_plain_text():
    done = agentmem_cli("--help")
    assert done.returncode == 0
    for command in ("demo", "retain", "recall", "graph", "export", "import", "serve", "mcp"):
        assert f"\n    {command} " in done.stdout, command
    assert "bench" in done.stdout and "models" in done.stdout
    assert "``" not in done.stdout and "examples:" in done.stdout
