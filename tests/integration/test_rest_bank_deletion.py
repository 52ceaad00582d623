"""Over HTTP: a retain whose bank is deleted while it runs answers 404; the store stays whole."""

from __future__ import annotations

import threading

import httpx

import agentmem
from agentmem.server.rest import create_app
from agentmem.testing import HashEmbedder
from tests.acceptance.test_bank_deletion import GatedExtractor, assert_empty_rebirth

from .conftest import SLOW_MACHINE, TOKEN


def test_a_retain_deleted_under_it_answers_404_and_leaves_nothing(tmp_path, serve):
    extractor = GatedExtractor()
    with (
        agentmem.AgentMemory(tmp_path / "s", embedder=HashEmbedder(), extractor=extractor) as mem,
        serve(create_app(mem, token=TOKEN)) as url,
        httpx.Client(
            base_url=url, timeout=SLOW_MACHINE, headers={"Authorization": f"Bearer {TOKEN}"}
        ) as http,
    ):
        answers: list[httpx.Response] = []
        body = {"content": "Alice moved to Berlin.", "mentioned_at": "2025-03-04T09:00:00Z"}
        worker = threading.Thread(
            target=lambda: answers.append(http.post("/banks/x/retain", json=body))
        )
        worker.start()
        assert extractor.started.wait(SLOW_MACHINE)
        assert http.delete("/banks/x").status_code == 204
        extractor.gate.set()
        worker.join(SLOW_MACHINE)
        (answer,) = answers
        assert answer.status_code == 404 and answer.json()["error"] == "NotFoundError"
        assert_empty_rebirth(mem, "x")
