"""``agentmem serve`` as a user starts it: a subprocess on a free loopback port."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import httpx

import agentmem
from agentmem.cli import main

from .conftest import SLOW_MACHINE

SRC = str(Path(agentmem.__file__).resolve().parents[1])
LISTENING = re.compile(r"running on (http://127\.0\.0\.1:\d+)")


def test_serve_requires_the_token_from_the_environment(tmp_path):
    env = {
        **os.environ,
        "AGENTMEM_TOKEN": "env-token",
        "PYTHONPATH": os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")]),
    }
    command = [sys.executable, "-m", "agentmem.cli", "serve", "--path", str(tmp_path / "s")]
    with subprocess.Popen(
        [*command, "--port", "0"], env=env, stderr=subprocess.PIPE, text=True
    ) as server:
        try:
            url = None
            for line in server.stderr:  # uvicorn logs the port it bound, then serves
                match = LISTENING.search(line)
                if match:
                    url = match.group(1)
                    break
            assert url, "the server never said where it listens"
            assert httpx.get(f"{url}/health", timeout=SLOW_MACHINE).status_code == 401
            headers = {"Authorization": "Bearer env-token"}
            with httpx.Client(base_url=url, headers=headers, timeout=SLOW_MACHINE) as client:
                assert client.get("/health").json()["status"] == "ok"
                body = {"content": "Bob's desk is in room 42.", "mentioned_at": "2025-01-01"}
                assert client.post("/banks/office/retain", json=body).status_code == 201
                hits = client.post("/banks/office/recall", json={"query": "room 42"}).json()
                assert hits["hits"][0]["memory"]["text"] == "Bob's desk is in room 42."
        finally:
            server.terminate()
            server.wait()
    with agentmem.AgentMemory(tmp_path / "s") as mem:  # the server closed the store cleanly
        assert mem.banks() == ["office"]


def test_serving_beyond_loopback_without_a_token_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("AGENTMEM_TOKEN", raising=False)
    code = main(["serve", "--path", str(tmp_path / "s"), "--host", "0.0.0.0"])
    assert code == 2
    assert "without a token" in capsys.readouterr().err
    mcp = ["mcp", "--path", str(tmp_path / "s"), "--bank", "b", "--transport", "streamable-http"]
    assert main([*mcp, "--host", "0.0.0.0"]) == 2
    assert "without a token" in capsys.readouterr().err
