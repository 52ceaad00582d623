"""From ``AgentMemory(llm=...)`` to a :class:`~agentmem.protocols.LanguageModel`.

``llm`` may be an ``openai.OpenAI``-compatible client, :class:`LLMSettings`, a mapping of
settings (``base_url``, ``model``, ``api_key``), or any object with a ``structured`` method.
Any OpenAI-compatible server works (OpenAI, vLLM, Ollama, llama.cpp): Instructor's
``Mode.TOOLS`` is the one mode local servers answer reliably (research/stack.md §5).

``openai`` and ``instructor`` are imported only when an LLM is configured, and nothing here
reads the environment unless :meth:`LLMSettings.from_env` is called.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from agentmem.errors import InvalidInputError, LLMError, NotAvailableError
from agentmem.protocols import LanguageModel, LLMReply

DEFAULT_MODEL = "gpt-4o-mini"


@dataclass(frozen=True, slots=True)
class LLMSettings:
    """Where the LLM is and how to call it.

    Attributes:
        model: Model name the server knows (e.g. "gpt-4o-mini", "llama3.1:8b").
        base_url: The server's OpenAI-compatible URL (None: the OpenAI API).
        api_key: The key (local servers accept any non-empty string).
        client: A ready ``openai.OpenAI`` client; when given, base_url and api_key are unused.
        max_retries: Instructor re-asks after invalid output this many times.
        timeout: Seconds per request.
        temperature: Sampling temperature (0 keeps extraction repeatable).
    """

    model: str = DEFAULT_MODEL
    base_url: str | None = None
    api_key: str | None = None
    client: Any = None
    max_retries: int = 2
    timeout: float = 60.0
    temperature: float = 0.0

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> LLMSettings:
        """Settings from ``AGENTMEM_LLM_MODEL``, ``AGENTMEM_LLM_BASE_URL`` and
        ``AGENTMEM_LLM_API_KEY`` (else ``OPENAI_API_KEY``). Only this method reads them.
        """
        env = os.environ if environ is None else environ
        return cls(
            model=env.get("AGENTMEM_LLM_MODEL", DEFAULT_MODEL),
            base_url=env.get("AGENTMEM_LLM_BASE_URL"),
            api_key=env.get("AGENTMEM_LLM_API_KEY") or env.get("OPENAI_API_KEY"),
        )


class OpenAILanguageModel:
    """Instructor (``Mode.TOOLS``) over an OpenAI-compatible client.

    Provider errors and output that stays invalid after ``max_retries`` re-asks are raised as
    :class:`~agentmem.errors.LLMError`, never as the provider's own exception types.
    """

    def __init__(self, settings: LLMSettings) -> None:
        try:
            import instructor
            import openai
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise NotAvailableError(
                "the LLM path needs the openai extra: pip install 'agentmem[openai]'"
            ) from exc
        client = settings.client or openai.OpenAI(
            base_url=settings.base_url,
            api_key=settings.api_key or "not-needed",
            timeout=settings.timeout,
            max_retries=1,
        )
        self.settings = settings
        self._client = instructor.from_openai(client, mode=instructor.Mode.TOOLS)
        # The attempt counter is a client hook: one call at a time keeps counts per call.
        self._lock = threading.Lock()

    def structured(
        self, response_model: type[Any], messages: list[dict[str, str]], *, purpose: str
    ) -> LLMReply[Any]:
        """One structured call; see :class:`~agentmem.protocols.LanguageModel`."""
        attempts: list[None] = []

        def count(*_: Any, **__: Any) -> None:
            attempts.append(None)

        with self._lock:
            self._client.on("completion:kwargs", count)
            try:
                value, completion = self._client.chat.completions.create_with_completion(
                    model=self.settings.model,
                    response_model=response_model,
                    messages=messages,
                    max_retries=self.settings.max_retries,
                    temperature=self.settings.temperature,
                )
            except Exception as exc:  # provider, network and validation errors alike
                raise LLMError(f"the LLM failed during {purpose}: {exc}") from exc
            finally:
                self._client.off("completion:kwargs", count)
        usage = getattr(completion, "usage", None)
        return LLMReply(
            value=value,
            calls=max(len(attempts), 1),
            prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        )


def language_model(llm: object) -> LanguageModel | None:
    """The :class:`LanguageModel` for ``AgentMemory(llm=...)``; None when ``llm`` is None.

    Raises:
        InvalidInputError: ``llm`` is none of the accepted forms.
    """
    if llm is None:
        return None
    if isinstance(llm, LanguageModel):
        return llm
    if isinstance(llm, LLMSettings):
        return OpenAILanguageModel(llm)
    if isinstance(llm, Mapping):
        known = {f.name for f in fields(LLMSettings)}
        unknown = set(llm) - known
        if unknown:
            raise InvalidInputError(f"unknown LLM setting(s) {sorted(unknown)}")
        return OpenAILanguageModel(LLMSettings(**llm))
    completions = getattr(getattr(llm, "chat", None), "completions", None)
    if callable(getattr(completions, "create", None)):
        return OpenAILanguageModel(LLMSettings(client=llm))
    raise InvalidInputError(
        "llm must be an OpenAI-compatible client, LLMSettings, a mapping of settings, "
        "or an object with a structured() method"
    )
