"""An LLM reranker: one structured call per recall scores the top candidates.

:class:`LLMReranker` sends the query and the candidates (numbered, each with its date, as the
cross-encoder sees them) to any OpenAI-compatible chat model through Instructor and reads back
a relevance in [0, 1] per candidate. Needs ``agentmem[openai]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from agentmem.errors import InvalidInputError, ModelError, NotAvailableError
from agentmem.models.cross_encoder import dated_text
from agentmem.recall.candidates import Candidate

SYSTEM_PROMPT = (
    "You rank an agent's memories for a question. For every numbered memory, give the "
    "probability (0 to 1) that it helps answer the question: 1 if it states the answer, "
    "around 0.5 if it is part of the answer or needed to reach it, 0 if it is unrelated. "
    "Score every memory exactly once, by its number."
)


class MemoryRelevance(BaseModel):
    """The model's verdict on one numbered memory."""

    index: int = Field(description="The memory's number, as given")
    relevance: float = Field(ge=0.0, le=1.0, description="Probability that it helps answer")


class RelevanceScores(BaseModel):
    """The model's verdicts on all the memories it was shown."""

    scores: list[MemoryRelevance]


class LLMReranker:
    """Relevance from an OpenAI-compatible chat model, one Instructor call per recall.

    Args:
        client: An ``openai.OpenAI`` (or compatible) client.
        model: The chat model id.
        mode: Instructor mode; ``TOOLS`` works with OpenAI and llama.cpp servers.
        max_retries: Instructor re-asks on an invalid answer this many times.
        max_chars: Each memory's text is cut to this many characters in the prompt.

    Raises:
        NotAvailableError: ``instructor`` is not installed (``pip install agentmem[openai]``).
        InvalidInputError: ``max_chars`` or ``max_retries`` is out of range.

    Example:
        >>> from openai import OpenAI
        >>> mem = AgentMemory("./memdata", reranker=LLMReranker(OpenAI(), model="gpt-4o-mini"))
    """

    def __init__(
        self,
        client: Any,
        *,
        model: str = "gpt-4o-mini",
        mode: str = "TOOLS",
        max_retries: int = 1,
        max_chars: int = 500,
    ) -> None:
        if max_chars < 1:
            raise InvalidInputError(f"max_chars must be at least 1, got {max_chars}")
        if max_retries < 0:
            raise InvalidInputError(f"max_retries must be >= 0, got {max_retries}")
        try:
            import instructor
        except ImportError as exc:
            raise NotAvailableError(
                f"LLMReranker needs agentmem[openai]: pip install 'agentmem[openai]' ({exc})"
            ) from None
        self._client = instructor.from_openai(client, mode=instructor.Mode[mode])
        self._model = model
        self._max_retries = max_retries
        self._max_chars = max_chars

    @property
    def name(self) -> str:
        """``llm:<model>``, recorded in each hit's ``strategy_details``."""
        return f"llm:{self._model}"

    def rerank(self, query: str, candidates: Sequence[Candidate]) -> list[float]:
        """Score every candidate in one call.

        A memory the model leaves out scores 0.

        Raises:
            ModelError: The call failed or its answer stayed invalid after the retries.
        """
        if not candidates:
            return []
        listing = "\n".join(
            f"{number}. {dated_text(c.memory)[: self._max_chars]}"
            for number, c in enumerate(candidates, start=1)
        )
        try:
            answer = self._client.chat.completions.create(
                model=self._model,
                response_model=RelevanceScores,
                max_retries=self._max_retries,
                messages=[
                    {"role": "system", "content": SYSTEM_PROMPT},
                    {"role": "user", "content": f"Question: {query}\n\nMemories:\n{listing}"},
                ],
            )
        except Exception as exc:  # provider and validation errors are wrapped, never leaked
            raise ModelError(
                f"LLM rerank with {self._model!r} failed: {type(exc).__name__}: {exc}"
            ) from exc
        scores = [0.0] * len(candidates)
        for verdict in answer.scores:
            if 1 <= verdict.index <= len(candidates):
                scores[verdict.index - 1] = verdict.relevance
        return scores
