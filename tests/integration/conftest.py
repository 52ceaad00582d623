"""Real servers on 127.0.0.1: uvicorn in a thread, on a socket the test binds itself."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import pytest
import uvicorn

import agentmem
from agentmem.testing import HashEmbedder

TOKEN = "test-token-4f1c"
STARTUP_POLLS = 2400  # x 25 ms: a bounded wait for the server, not a timed assertion
# Client timeout: the first retain loads the models, slow on a loaded 2-core machine.
SLOW_MACHINE = 120.0


@contextmanager
def _serve(app: Any) -> Iterator[str]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))  # the kernel picks a free port; no race with other tests
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        for _ in range(STARTUP_POLLS):
            if server.started or not thread.is_alive():
                break
            time.sleep(0.025)
        if not server.started:
            raise RuntimeError("the test server did not start")
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join()
        sock.close()


@pytest.fixture
def serve() -> Callable[[Any], AbstractContextManager[str]]:
    """``with serve(app) as base_url:`` runs ``app`` on a free loopback port."""
    return _serve


@pytest.fixture
def memory(tmp_path) -> Iterator[agentmem.AgentMemory]:
    """A fresh store with the deterministic test embedder."""
    with agentmem.AgentMemory(tmp_path / "store", embedder=HashEmbedder()) as mem:
        yield mem
