"""``agentmem serve`` as a user starts it: a subprocess on a free loopback port."""

from __future__ import annotations

import logging
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

import agentmem
from agentmem.cli import main

from .conftest import SLOW_MACHINE

SRC = str(Path(agentmem.__file__).resolve().parents[1])
LISTENING = re.compile(r"running on (http://127\.0\.0\.1:\d+)")
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")])}
ENV.pop("AGENTMEM_TOKEN", None)


@contextmanager
def running(
    *arguments: str, env: dict[str, str] = ENV
) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``agentmem ARGUMENTS --port 0`` as a subprocess, and the URL it says it listens on."""
    command = [sys.executable, "-m", "agentmem.cli", *arguments, "--port", "0"]
    with subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True) as server:
        try:
            for line in server.stderr:  # uvicorn logs the port it bound, then serves
                match = LISTENING.search(line)
                if match:
                    yield server, match.group(1)
                    break
            else:
                raise AssertionError("the server never said where it listens")
        finally:
            if server.poll() is None:
                server.kill()
                server.wait()


async def _retain_over_rest(url: str) -> tuple[str, str]:
    body = {"content": "Bob's desk is in room 42.", "mentioned_at": "2025-01-01"}
    response = httpx.post(f"{url}/banks/office/retain", json=body, timeout=SLOW_MACHINE)
    assert response.status_code == 201
    return "office", body["content"]


async def _retain_over_mcp(url: str) -> tuple[str, str]:
    async with (
        httpx2.AsyncClient(timeout=SLOW_MACHINE) as http,
        Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client,
    ):
        await client.call_tool("retain_memory", {"content": "Alice drinks green tea."})
    return "b", "Alice drinks green tea."


SERVERS = {
    "serve": (["serve"], _retain_over_rest),
    "mcp": (["mcp", "--bank", "b", "--transport", "streamable-http"], _retain_over_mcp),
}


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
@pytest.mark.parametrize("command", sorted(SERVERS))
async def test_servers_close_the_store_on_a_signal(tmp_path, caplog, command, signum):
    arguments, retain = SERVERS[command]
    with running(*arguments, "--path", str(tmp_path / "s")) as (server, url):
        bank, text = await retain(url)
        server.send_signal(signum)
        assert server.wait(timeout=SLOW_MACHINE) == 0
        said = server.stderr.read()
    assert f"stopped by {signum.name}; the store is closed" in said and "Traceback" not in said
    caplog.clear()
    with caplog.at_level(logging.WARNING), agentmem.AgentMemory(tmp_path / "s") as mem:
        assert "did not close cleanly" not in caplog.text
        assert [m.text for m in mem.bank(bank).memories()] == [text]
        assert mem.check_integrity().ok


def test_serve_requires_the_token_from_the_environment(tmp_path):
    env = {**ENV, "AGENTMEM_TOKEN": "env-token"}
    with running("serve", "--path", str(tmp_path / "s"), env=env) as (server, url):
        assert httpx.get(f"{url}/health", timeout=SLOW_MACHINE).status_code == 401
        headers = {"Authorization": "Bearer env-token"}
        with httpx.Client(base_url=url, headers=headers, timeout=SLOW_MACHINE) as client:
            assert client.get("/health").json()["status"] == "ok"
            body = {"content": "Bob's desk is in room 42.", "mentioned_at": "2025-01-01"}
            assert client.post("/banks/office/retain", json=body).status_code == 201
            hits = client.post("/banks/office/recall", json={"query": "room 42"}).json()
            assert hits["hits"][0]["memory"]["text"] == "Bob's desk is in room 42."
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
