"""The collaborators ``AgentMemory`` takes. Protocols, so a fake needs no base class."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

import numpy as np

from agentmem.recall.candidates import Candidate
from agentmem.retain.facts import ExtractedFact, RetainInput

ModelT = TypeVar("ModelT")


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length vectors of a fixed dimension.

    ``name`` is persisted with each bank: reopening a bank with a different embedder is refused,
    since its vectors would not be comparable.

    An embedder whose cosines sit elsewhere than MiniLM's may have a ``cosine_levels``
    attribute ``(unrelated, evidence)``: recall and retain then read its cosines mapped onto
    MiniLM's scale (:mod:`agentmem.models.cosine`). One that runs its model without the GIL
    may have ``embed_query_beside(text, beside)``, calling ``beside()`` just before the model
    runs: recall starts its keyword arm there, so that arm runs during the model.
    """

    @property
    def name(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed documents: a float32 array (len(texts), dimension) of L2-normalised rows."""
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query; returns a float32 vector of shape (dimension,), L2-normalised."""
        ...


@runtime_checkable
class Extractor(Protocol):
    """Turns the content of one ``retain`` call into facts."""

    def extract(self, content: RetainInput) -> list[ExtractedFact]: ...


@runtime_checkable
class Reranker(Protocol):
    """Gives each fused candidate a relevance in [0, 1] for the query."""

    @property
    def name(self) -> str: ...

    def rerank(self, query: str, candidates: Sequence[Candidate]) -> list[float]:
        """Return one relevance in [0, 1] per candidate, in the candidates' order."""
        ...


@dataclass(frozen=True, slots=True)
class LLMReply(Generic[ModelT]):
    """A structured LLM answer and what it cost.

    Attributes:
        value: The validated response model instance.
        calls: Requests made (1, plus retries after invalid output).
        prompt_tokens: Prompt tokens the provider reported over those requests.
        completion_tokens: Completion tokens the provider reported.
    """

    value: ModelT
    calls: int = 1
    prompt_tokens: int = 0
    completion_tokens: int = 0


@runtime_checkable
class LanguageModel(Protocol):
    """An LLM that answers with an instance of a pydantic model.

    The default, :class:`~agentmem.llm.client.OpenAILanguageModel`, runs Instructor over any
    OpenAI-compatible client; :class:`~agentmem.testing.FakeLLM` scripts answers for tests.
    Implementations raise :class:`~agentmem.errors.LLMError` on any failure.
    """

    def structured(
        self, response_model: type[Any], messages: list[dict[str, str]], *, purpose: str
    ) -> LLMReply[Any]:
        """Ask for ``response_model``; ``purpose`` names the step ("extract", "reflect", ...)."""
        ...
