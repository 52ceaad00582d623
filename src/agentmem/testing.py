"""Deterministic fakes for tests: yours and ours.

They satisfy agentmem's Protocols (see :mod:`agentmem.protocols`), load no model and touch no
network, and give the same output for the same input in every process, on every machine. Use
them where a test is about your code's use of memory, not about embedding quality::

    from agentmem import AgentMemory
    from agentmem.testing import HashEmbedder

    memory = AgentMemory(tmp_path, embedder=HashEmbedder())

Available fakes:

- :class:`HashEmbedder`: an :class:`~agentmem.protocols.Embedder` built on feature hashing.
  Texts that share words are similar; texts that share nothing are nearly orthogonal.
- :class:`FakeLLM`: a :class:`~agentmem.protocols.LanguageModel` answering from a script,
  per step ("extract", "consolidate", "reflect"), recording every prompt.
- :class:`FakeOpenAIServer`: an OpenAI-compatible chat-completions endpoint behind an
  ``httpx2.MockTransport``, for testing the real ``openai`` client + Instructor path with
  recorded tool-call replies, no network and no API key::

      server = FakeOpenAIServer({"extract": [{"facts": [...]}]})
      memory = AgentMemory(tmp_path, embedder=HashEmbedder(), llm=server.client())

  It also answers the ordinary turns of a tool-calling loop, from scripted or rule-based
  replies (``FakeOpenAIServer(chat=...)``), sync or async (``server.async_client()``).
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from pydantic import BaseModel

from agentmem.errors import InvalidInputError, LLMError
from agentmem.protocols import LLMReply

__all__ = ["ChatReplies", "FakeLLM", "FakeOpenAIServer", "HashEmbedder", "LLMCall"]

#: Which step a response model belongs to, for scripts keyed by step.
_STEP_OF_MODEL = {
    "ExtractionOut": "extract",
    "ConsolidationOut": "consolidate",
    "ReflectionOut": "reflect",
}
Script = Mapping[str, Sequence[Any]] | Callable[[str, list[dict[str, str]]], Any]

_WORD = re.compile(r"\w+")
_WORD_WEIGHT = 1.0
# Trigrams only nudge near-miss spellings ("memory" / "memories") together; words dominate.
_TRIGRAM_WEIGHT = 0.25
# Stands in for a text with no words, so its vector still has unit length.
_EMPTY_FEATURE = "\x00empty"


class HashEmbedder:
    """A fake :class:`~agentmem.protocols.Embedder`: hashed bag of words and character trigrams.

    Each lowercase word adds 1.0, and each character trigram of the word (padded with ``#``)
    adds 0.25, to one coordinate chosen by a blake2b hash of the feature. All coordinates are
    non-negative, so texts sharing a word always have a positive cosine, and more shared words
    give a higher one. The hash is unsalted, so vectors are identical across processes.

    Args:
        dimension: Vector length. Smaller means more hash collisions between unrelated words.

    Raises:
        InvalidInputError: ``dimension`` is below 1.
    """

    def __init__(self, dimension: int = 256) -> None:
        if dimension < 1:
            raise InvalidInputError(f"dimension must be at least 1, got {dimension}")
        self._dimension = dimension

    @property
    def name(self) -> str:
        """``hash-<dimension>``."""
        return f"hash-{self._dimension}"

    @property
    def dimension(self) -> int:
        """Length of every vector."""
        return self._dimension

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed documents.

        Args:
            texts: The texts; an empty sequence gives an empty array.

        Returns:
            float32 array of shape ``(len(texts), dimension)``, rows L2-normalised.

        Raises:
            InvalidInputError: ``texts`` is a string or holds a non-string.
        """
        if isinstance(texts, str):
            raise InvalidInputError("texts must be a sequence of strings, not a single string")
        out = np.zeros((len(texts), self._dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            if not isinstance(text, str):
                raise InvalidInputError(f"texts[{row}] must be a str, got {type(text).__name__}")
            for feature, weight in _features(text):
                out[row, _bucket(feature, self._dimension)] += weight
        out /= np.linalg.norm(out, axis=1, keepdims=True)
        return out

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query.

        Args:
            text: The query.

        Returns:
            float32 vector of shape ``(dimension,)``, L2-normalised.

        Raises:
            InvalidInputError: ``text`` is not a string.
        """
        if not isinstance(text, str):
            raise InvalidInputError(f"query must be a str, got {type(text).__name__}")
        return self.embed([text])[0]


def _features(text: str) -> list[tuple[str, float]]:
    words = _WORD.findall(text.lower())
    if not words:
        return [(_EMPTY_FEATURE, _WORD_WEIGHT)]
    features: list[tuple[str, float]] = []
    for word in words:
        # Prefixes keep a word and a trigram that spell the same ("cat" / "#ca") apart.
        features.append(("w:" + word, _WORD_WEIGHT))
        padded = f"#{word}#"
        features.extend(("t:" + padded[i : i + 3], _TRIGRAM_WEIGHT) for i in range(len(padded) - 2))
    return features


@lru_cache(maxsize=65_536)
def _bucket(feature: str, dimension: int) -> int:
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % dimension


@dataclass(frozen=True, slots=True)
class LLMCall:
    """One request a fake LLM received: the step and the chat messages."""

    purpose: str
    messages: list[dict[str, str]]

    @property
    def prompt(self) -> str:
        """Every message's content, joined (handy for ``in`` assertions)."""
        return "\n".join(m.get("content") or "" for m in self.messages)


class _Script:
    """Replies by step: each reply is a dict (validated), an exception (raised) or a callable."""

    def __init__(self, script: Script) -> None:
        self._script = script
        self._cursor: dict[str, int] = {}
        self._lock = threading.Lock()
        self.calls: list[LLMCall] = []

    def next(self, purpose: str, messages: list[dict[str, str]]) -> Any:
        with self._lock:
            self.calls.append(LLMCall(purpose, messages))
            if callable(self._script):
                return self._script(purpose, messages)
            replies = self._script.get(purpose, ())
            index = self._cursor.get(purpose, 0)
            self._cursor[purpose] = index + 1
        if index >= len(replies):
            raise LLMError(f"no scripted reply left for step {purpose!r}")
        reply = replies[index]
        return reply(messages) if callable(reply) else reply

    def of(self, purpose: str) -> list[LLMCall]:
        return [c for c in self.calls if c.purpose == purpose]


class FakeLLM:
    """A scripted :class:`~agentmem.protocols.LanguageModel`.

    Args:
        script: Replies per step ("extract", "consolidate", "reflect"), each a dict of the
            response model's fields, an exception to raise (wrapped in ``LLMError``), or a
            callable of the messages; or one callable ``(purpose, messages) -> reply``.
        tokens: (prompt, completion) tokens reported per call.

    Attributes:
        calls: Every request, in order.
    """

    def __init__(self, script: Script, *, tokens: tuple[int, int] = (100, 20)) -> None:
        self._script = _Script(script)
        self._tokens = tokens

    @property
    def calls(self) -> list[LLMCall]:
        """Every request received, in order."""
        return self._script.calls

    def calls_for(self, purpose: str) -> list[LLMCall]:
        """The requests of one step."""
        return self._script.of(purpose)

    def structured(
        self, response_model: type[Any], messages: list[dict[str, str]], *, purpose: str
    ) -> LLMReply[Any]:
        """Answer with the next scripted reply for ``purpose``."""
        reply = self._script.next(purpose, messages)
        if isinstance(reply, BaseException):
            raise LLMError(f"scripted failure during {purpose}: {reply}") from reply
        value = reply if isinstance(reply, BaseModel) else response_model.model_validate(reply)
        return LLMReply(value, 1, *self._tokens)


#: Replies of an ordinary chat loop: a callable of the request's JSON body, or a list used in
#: order. A reply is a text (the assistant's answer) or a dict ``{"content": ...}`` and/or
#: ``{"tool_calls": [{"name": ..., "arguments": {...}}]}`` (or the API's own message shape).
ChatReplies = Callable[[dict[str, Any]], Any] | Sequence[Any]


class FakeOpenAIServer:
    """An OpenAI chat-completions endpoint in process, for the real ``openai`` client.

    Two kinds of request are answered:

    * a **forced tool call** (Instructor's ``Mode.TOOLS``, agentmem's LLM path): the reply is
      the next of ``script`` for the step of the forced tool — the call's JSON arguments (a
      dict), an HTTP status code to fail with (an int), or a raw string (e.g. invalid JSON);
    * an **ordinary turn** of a tool-calling loop (``tools=...`` without ``tool_choice``): the
      reply comes from ``chat``, scripted or rule-based.

    A request it cannot answer gets HTTP 400 with the reason, so the client raises
    ``openai.BadRequestError`` saying what is missing. Usage is ~4 characters per token.

    Args:
        script: Replies per step, as for :class:`FakeLLM`.
        chat: Replies of ordinary turns (see ``ChatReplies``).

    Attributes:
        requests: The JSON bodies received, in order.

    Example:
        >>> server = FakeOpenAIServer(chat=[{"tool_calls": [{"name": "recall_memory",
        ...     "arguments": {"query": "invoice", "top_k": 3, "tags": None}}]}, "It is due."])
        >>> client = server.client()   # or server.async_client() for AsyncOpenAI
    """

    def __init__(self, script: Script | None = None, *, chat: ChatReplies | None = None) -> None:
        self._script = _Script(script or {})
        self._chat = chat
        self._chat_turns = 0
        self._lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []

    @property
    def calls(self) -> list[LLMCall]:
        """Every forced-tool request, as step and messages."""
        return self._script.calls

    def calls_for(self, purpose: str) -> list[LLMCall]:
        """The requests of one step."""
        return self._script.of(purpose)

    def client(self) -> Any:
        """An ``openai.OpenAI`` client wired to this server (needs the openai extra)."""
        import httpx2
        from openai import OpenAI

        transport = httpx2.MockTransport(self._handle)
        return OpenAI(
            api_key="fake-key",
            base_url="http://fake-openai.invalid/v1",
            max_retries=0,
            http_client=httpx2.Client(transport=transport),
        )

    def async_client(self) -> Any:
        """An ``openai.AsyncOpenAI`` client wired to this server (needs the openai extra)."""
        import httpx2
        from openai import AsyncOpenAI

        async def handle(request: Any) -> Any:
            return self._handle(request)

        return AsyncOpenAI(
            api_key="fake-key",
            base_url="http://fake-openai.invalid/v1",
            max_retries=0,
            http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handle)),
        )

    def _handle(self, request: Any) -> Any:
        import httpx2

        try:
            body = json.loads(request.content)
            with self._lock:
                self.requests.append(body)
                number = len(self.requests)
                choice = body.get("tool_choice")
                if isinstance(choice, dict) and "function" in choice:
                    message, status = self._forced_reply(body, choice["function"]["name"], number)
                else:
                    message, status = self._chat_reply(body, number), 200
        except (LLMError, KeyError, TypeError, ValueError) as exc:
            detail = f"FakeOpenAIServer cannot answer this request: {type(exc).__name__}: {exc}"
            return httpx2.Response(400, json={"error": {"message": detail, "type": "fake"}})
        if status != 200:
            return httpx2.Response(status, json={"error": {"message": f"status {status}"}})
        said = message.get("content") or ""
        said += "".join(c["function"]["arguments"] for c in message.get("tool_calls", ()))
        completion_tokens = len(said) // 4
        prompt_tokens = len(json.dumps(body.get("messages", []))) // 4
        completion = {
            "id": f"chatcmpl-{number}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "fake"),
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                    "message": message,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
        return httpx2.Response(200, json=completion)

    def _forced_reply(self, body: dict[str, Any], tool: str, number: int) -> tuple[dict, int]:
        reply = self._script.next(_STEP_OF_MODEL.get(tool, tool), body["messages"])
        if isinstance(reply, int):
            return {}, reply
        arguments = reply if isinstance(reply, str) else json.dumps(reply)
        return _assistant_message([{"name": tool, "arguments": arguments}], None, number), 200

    def _chat_reply(self, body: dict[str, Any], number: int) -> dict[str, Any]:
        if self._chat is None:
            raise LLMError("no chat replies given: FakeOpenAIServer(chat=...) answers such turns")
        if callable(self._chat):
            reply = self._chat(body)
        else:
            if self._chat_turns >= len(self._chat):
                raise LLMError(f"no scripted chat reply left after {self._chat_turns}")
            reply = self._chat[self._chat_turns]
        self._chat_turns += 1
        if isinstance(reply, str):
            return _assistant_message([], reply, number)
        if not isinstance(reply, Mapping):
            raise TypeError(f"a chat reply is a text or a dict, not {type(reply).__name__}")
        offered = {t.get("function", {}).get("name") for t in body.get("tools", [])}
        # Either {"name", "arguments"} or the API's own {"type": "function", "function": {...}}.
        calls = [call.get("function", call) for call in reply.get("tool_calls") or ()]
        for call in calls:
            if call["name"] not in offered:
                raise ValueError(f"the reply calls {call['name']!r}, a tool the request lacks")
        return _assistant_message(calls, reply.get("content"), number)


def _assistant_message(calls: Sequence[Mapping[str, Any]], content: str | None, number: int):
    """An assistant message in the chat-completions shape, with its tool calls."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [
            {
                "id": f"call_{number}_{index}",
                "type": "function",
                "function": {
                    "name": call["name"],
                    "arguments": call["arguments"]
                    if isinstance(call["arguments"], str)
                    else json.dumps(call["arguments"]),
                },
            }
            for index, call in enumerate(calls)
        ]
    return message
