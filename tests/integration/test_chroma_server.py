"""Server mode: vectors on a real ``chroma run`` server on 127.0.0.1, started by the test."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

import agentmem
from agentmem.testing import HashEmbedder
from tests.conftest import CONVERSATION, T0, T1

pytestmark = pytest.mark.integration

STARTUP_POLLS = 600  # x 50 ms: a bounded wait for the server to answer, not a timed assertion


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=1) as response:
            return response.status == 200
    except OSError:
        return False


@pytest.fixture(scope="module")
def chroma_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    # The chroma CLI is installed by chromadb next to this interpreter (.venv/bin/chroma).
    binary = Path(sys.executable).parent / "chroma"
    assert binary.is_file(), f"no chroma executable at {binary}"
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    data = tmp_path_factory.mktemp("chroma-server")
    proc = subprocess.Popen(
        [str(binary), "run", "--host", "127.0.0.1", "--port", str(port), "--path", str(data)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(STARTUP_POLLS):
            if _answers(url) or proc.poll() is not None:
                break
            time.sleep(0.05)
        assert _answers(url), f"chroma run did not start (exit code {proc.poll()})"
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _server_ids(url: str, collection: str) -> set[str]:
    import chromadb

    host, port = url.removeprefix("http://").split(":")
    client = chromadb.HttpClient(host=host, port=int(port))
    return set(client.get_collection(collection).get(include=[])["ids"])


def test_a_store_keeps_its_vectors_on_the_server(chroma_url, tmp_path):
    store = tmp_path / "store"
    with agentmem.AgentMemory(store, chroma_url=chroma_url) as mem:
        bank = mem.bank("alice")
        memories = bank.retain(CONVERSATION, mentioned_at=T0).memories
        # Retain stages its vectors; the first read writes them to the server.
        hit = bank.recall("Which invoice is unpaid?", strategies=["semantic"], now=T1).hits[0]
        assert "INV-20931" in hit.text
        assert _server_ids(chroma_url, bank._collection) == {m.id for m in memories}
        assert not (store / "chroma").exists()  # nothing embedded on disk
        assert bank.forget(memories[3].id) == 1
        assert memories[3].id not in _server_ids(chroma_url, bank._collection)
        assert mem.check_integrity().ok
    with agentmem.AgentMemory(store, chroma_url=chroma_url) as mem:  # reopen: still there
        bank = mem.bank("alice")
        hits = bank.recall("green tea in the morning", strategies=["semantic"], now=T1)
        assert hits[0].text == "Alice: I prefer green tea over coffee in the morning."
        report = mem.check_integrity()
        assert report.ok and report.vectors == len(CONVERSATION) - 1


def test_stores_sharing_a_server_never_see_each_others_banks(chroma_url, tmp_path):
    with (
        agentmem.AgentMemory(tmp_path / "one", chroma_url=chroma_url, embedder=HashEmbedder()) as a,
        agentmem.AgentMemory(tmp_path / "two", chroma_url=chroma_url, embedder=HashEmbedder()) as b,
    ):
        a_ids = {m.id for m in a.bank("same-name").retain("Launch code ALPHA.", mentioned_at=T0)}
        b_ids = {m.id for m in b.bank("same-name").retain("Launch code BRAVO.", mentioned_at=T0)}
        assert a.bank("same-name")._collection != b.bank("same-name")._collection
        for mem, ids in ((a, a_ids), (b, b_ids)):
            hits = mem.bank("same-name").recall("launch code", strategies=["semantic"])
            assert {h.memory.id for h in hits} == ids
            assert mem.check_integrity().ok
        a.delete_bank("same-name")
        assert b.bank("same-name").recall("launch code", strategies=["semantic"]).hits


def test_a_store_opens_only_in_the_mode_it_was_created_with(chroma_url, tmp_path):
    with agentmem.AgentMemory(tmp_path / "server", chroma_url=chroma_url, embedder=HashEmbedder()):
        pass
    with pytest.raises(agentmem.InvalidInputError, match="Chroma server"):
        agentmem.AgentMemory(tmp_path / "server", embedder=HashEmbedder())
    with agentmem.AgentMemory(tmp_path / "embedded", embedder=HashEmbedder()):
        pass
    with pytest.raises(agentmem.InvalidInputError, match="embedded"):
        agentmem.AgentMemory(tmp_path / "embedded", chroma_url=chroma_url, embedder=HashEmbedder())


def test_an_unreachable_server_is_a_storage_error(tmp_path):
    with pytest.raises(agentmem.StorageError, match="cannot open the vector store"):
        agentmem.AgentMemory(tmp_path / "s", chroma_url=f"http://127.0.0.1:{_free_port()}")
    with pytest.raises(agentmem.StorageError, match="http"):
        agentmem.AgentMemory(tmp_path / "t", chroma_url="ftp://example")
