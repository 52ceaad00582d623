"""LLMReranker through the real openai client + Instructor, against a fake HTTP transport."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

httpx2 = pytest.importorskip("httpx2")
openai = pytest.importorskip("openai")
pytest.importorskip("instructor")

import agentmem  # noqa: E402
from agentmem.errors import ModelError  # noqa: E402
from agentmem.recall.llm_rerank import LLMReranker  # noqa: E402


def fake_client(
    requests: list[dict[str, Any]], *, status: int = 200, skip: str | None = None
) -> openai.OpenAI:
    """A chat model that rates a memory 0.9 if it mentions tea, else 0.1 (and leaves out the
    memory numbered ``skip``)."""

    def handle(request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        requests.append(body)
        if status != 200:
            return httpx2.Response(status, json={"error": {"message": "overloaded"}})
        listing = body["messages"][-1]["content"].split("Memories:\n", 1)[1]
        scores = [
            {"index": int(number), "relevance": 0.9 if "tea" in text.lower() else 0.1}
            for number, text in re.findall(r"^(\d+)\. (.*)$", listing, re.MULTILINE)
            if number != skip
        ]
        tool = body["tools"][0]["function"]["name"]
        call = {"id": "call_1", "type": "function"}
        call["function"] = {"name": tool, "arguments": json.dumps({"scores": scores})}
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
        completion = {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
        }
        return httpx2.Response(200, json=completion)

    transport = httpx2.MockTransport(handle)
    return openai.OpenAI(
        api_key="offline", max_retries=0, http_client=httpx2.Client(transport=transport)
    )


def test_one_call_per_recall_scores_the_candidates_and_reorders_them(tmp_path: Path):
    requests: list[dict[str, Any]] = []
    reranker = LLMReranker(fake_client(requests), model="fake-model")
    with agentmem.AgentMemory(tmp_path / "store", reranker=reranker) as mem:
        bank = mem.bank("b")
        bank.retain("Alice drinks coffee every day.", mentioned_at="2025-03-04T09:00:00Z")
        bank.retain("Alice likes tea.", mentioned_at="2025-03-04T09:00:00Z")
        offline = bank.recall("What does Alice drink?", rerank=False, reinforce=False)
        assert offline[0].memory.text.startswith("Alice drinks coffee")
        assert requests == []
        result = bank.recall("What does Alice drink?", reinforce=False)
    assert len(requests) == 1
    prompt = requests[0]["messages"][-1]["content"]
    assert "Question: What does Alice drink?" in prompt
    assert "[Date: March 4, 2025] Alice likes tea." in prompt
    assert result[0].memory.text == "Alice likes tea."
    rerank = result[0].strategy_details["rerank"]
    assert (rerank["score"], rerank["reranker"]) == (0.9, "llm:fake-model")


def test_a_memory_the_model_leaves_out_scores_zero(tmp_path: Path):
    requests: list[dict[str, Any]] = []
    with agentmem.AgentMemory(
        tmp_path / "store", reranker=LLMReranker(fake_client(requests, skip="2"), model="m")
    ) as mem:
        bank = mem.bank("b")
        for text in ("Tea at noon.", "Tea at night.", "Tea at dawn."):
            bank.retain(text, mentioned_at="2025-03-04T09:00:00Z")
        result = bank.recall("tea", reinforce=False)
    prompt = requests[0]["messages"][-1]["content"]
    second = re.search(r"^2\. \[Date: [^\]]+\] (.*)$", prompt, re.MULTILINE).group(1)
    scores = {h.memory.text: h.strategy_details["rerank"]["score"] for h in result}
    assert scores.pop(second) == 0.0
    assert set(scores.values()) == {0.9}


def test_provider_errors_are_model_errors(tmp_path: Path):
    reranker = LLMReranker(fake_client([], status=503), model="m")
    with agentmem.AgentMemory(tmp_path / "store", reranker=reranker) as mem:
        bank = mem.bank("b")
        bank.retain("Alice likes tea.", mentioned_at="2025-03-04T09:00:00Z")
        with pytest.raises(ModelError, match="LLM rerank with 'm' failed"):
            bank.recall("tea")
        assert bank.recall("tea", rerank=False)[0].memory.text == "Alice likes tea."
