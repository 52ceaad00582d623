"""The README is run as a user would run it: its quickstart works and its links resolve."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _python_block(after_heading: str) -> str:
    section = README.split(f"## {after_heading}\n", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


@pytest.mark.slow
def test_quickstart_runs_and_finds_the_invoice(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(_python_block("Quickstart"), "README quickstart", "exec"), {})
    lines = printed.getvalue().splitlines()
    assert lines, "the quickstart printed nothing"
    assert "INV-20931" in lines[0]
    assert "keyword #" in lines[0]


@pytest.mark.slow
def test_quickstart_why_holds_for_a_query_without_shared_words(tmp_path, monkeypatch):
    """A hit the keyword strategy did not return still explains itself (no KeyError)."""
    monkeypatch.chdir(tmp_path)
    code = _python_block("Quickstart").replace("Which invoice is unpaid?", "money owed")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, "README quickstart", "exec"), {})
    assert "semantic #" in printed.getvalue()


def test_every_relative_link_of_the_readme_exists():
    links = re.findall(r"\]\(([^)#]+)\)", README)
    relative = [link for link in links if "://" not in link]
    assert relative
    missing = [link for link in relative if not (ROOT / link).exists()]
    assert missing == []


def test_readme_stays_short():
    assert len(README.splitlines()) <= 400


def test_the_same_relative_path_in_two_directories_is_two_stores(tmp_path, monkeypatch):
    """Chroma keeps one client per path string: "./memdata" after a chdir is another store."""
    import shutil

    from agentmem import AgentMemory
    from agentmem.testing import HashEmbedder

    texts = {}
    for name in ("first", "second"):
        (tmp_path / name).mkdir()
        monkeypatch.chdir(tmp_path / name)
        with AgentMemory("./memdata", embedder=HashEmbedder()) as mem:
            mem.bank("b").retain(f"The {name} store keeps this.", mentioned_at="2025-01-01")
            hits = mem.bank("b").recall("store keeps", strategies=["semantic"])
            texts[name] = [hit.text for hit in hits]
            assert mem.check_integrity().ok
        shutil.rmtree(tmp_path / name / "memdata")  # as a test's temporary folder goes
    assert texts == {
        "first": ["The first store keeps this."],
        "second": ["The second store keeps this."],
    }
