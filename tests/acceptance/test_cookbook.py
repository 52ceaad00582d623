"""Every cookbook script runs offline, as a user runs it, on a temporary store."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COOKBOOK = ROOT / "cookbook"
# What each script must print: the memory made the round trip through the integration.
EXPECTED = {
    "openai_tool_loop.py": ["assistant: From memory: Bob prefers to be contacted by email."],
    "langchain_agent.py": ["agent: From memory: Dana leads the payments team."],
    "langgraph_store.py": ["bot:  You told me: I am allergic to peanuts."],
    "llamaindex_chat.py": ["- User: My budget for the hotel is 150 euros a night."],
    "rest_client.py": ["without the token: 401", "recalled", "forgot: {'deleted': 2}"],
    "mcp_client.py": ["recalled", "Carol's birthday is on May 12.", "tool error: True"],
}


def test_every_script_is_covered():
    assert sorted(p.name for p in COOKBOOK.glob("*.py")) == sorted(EXPECTED)


@pytest.mark.parametrize("script", sorted(EXPECTED))
def test_cookbook_script_runs(script, tmp_path):
    paths = [
        ROOT / "src",
        ROOT / "integrations" / "langchain",
        ROOT / "integrations" / "llama_index",
    ]
    pythonpath = os.pathsep.join([*map(str, paths), os.environ.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, str(COOKBOOK / script), "--path", str(tmp_path / "store")],
        env={**os.environ, "PYTHONPATH": pythonpath},
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    for line in EXPECTED[script]:
        assert line in done.stdout, done.stdout
    assert (tmp_path / "store").is_dir()  # the script used the store it was given
