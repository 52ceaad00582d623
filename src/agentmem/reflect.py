"""reflect: recall facts and observations, then answer with an LLM that cites memory ids.

Three forms share one evidence step:

* ``reflect(query)``: with an LLM, an answer citing ids and possibly an "opinion" memory;
  offline, ``answer`` is None and the evidence is returned.
* ``reflect_prepare(query)``: the evidence and a ready prompt, for agents running their own
  LLM (HEBBS's prepare/commit);
* ``reflect_commit(...)``: stores the observations and opinions that agent produced.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from agentmem.config import BankConfig, RecallConfig, check_query
from agentmem.consolidate.observations import OBSERVATION, create_observation
from agentmem.engine import Engine
from agentmem.errors import InvalidInputError, NotFoundError, shown
from agentmem.llm.prompts import reflect_messages
from agentmem.recall.pipeline import recall
from agentmem.retain.messages import string_list
from agentmem.store.records import load_memories
from agentmem.types import Memory, Reflection, ReflectPrompt

OPINION = "opinion"
_FACT_TYPES = ("world", "experience", OPINION)


class ReflectionOut(BaseModel):
    """An answer grounded in the memories, with the ids it rests on."""

    answer: str
    cited_ids: list[str] = Field(default_factory=list)
    opinion: str | None = Field(None, description="A judgement worth remembering, or null")


def prepare(
    engine: Engine,
    bank_id: str,
    collection: str,
    query: str,
    *,
    top_k: int = 10,
    date_order: str = "MDY",
) -> ReflectPrompt:
    """Recall observations and facts for ``query`` and build the answer prompt."""

    def evidence(fact_types: Sequence[str]) -> list[Memory]:
        config = RecallConfig.build(
            query,
            top_k=top_k,
            fact_types=fact_types,
            reinforce=False,
            date_order=date_order,
            max_query_chars=engine.config.limits.query_chars,
        )
        return recall(engine, bank_id, collection, config).memories

    observations = evidence((OBSERVATION,))
    memories = evidence(_FACT_TYPES)
    return ReflectPrompt(
        query=query,
        messages=reflect_messages(query, observations, memories),
        observations=observations,
        memories=memories,
    )


def reflect(
    engine: Engine, bank_id: str, collection: str, config: BankConfig, query: str, top_k: int = 10
) -> Reflection:
    """Answer ``query`` from the bank; see ``MemoryBank.reflect``."""
    prompt = prepare(engine, bank_id, collection, query, top_k=top_k, date_order=config.date_order)
    if engine.llm is None:
        return Reflection(answer=None, observations=prompt.observations, memories=prompt.memories)
    reply = engine.llm.structured(ReflectionOut, prompt.messages, purpose="reflect")
    evidence = set(prompt.evidence_ids)
    cited = tuple(i for i in dict.fromkeys(reply.value.cited_ids) if i in evidence)
    opinion = None
    if reply.value.opinion and reply.value.opinion.strip():
        opinion = create_observation(
            engine,
            bank_id,
            collection,
            config,
            " ".join(reply.value.opinion.split()),
            cited,
            fact_type=OPINION,
            extra={"query": query},
        )
    return Reflection(
        answer=reply.value.answer,
        observations=prompt.observations,
        memories=prompt.memories,
        cited_ids=cited,
        opinion=opinion,
        llm_calls=reply.calls,
        prompt_tokens=reply.prompt_tokens,
        completion_tokens=reply.completion_tokens,
    )


def commit(
    engine: Engine,
    bank_id: str,
    collection: str,
    config: BankConfig,
    query: str,
    *,
    observations: Iterable[str] = (),
    opinions: Iterable[str] = (),
    cited_ids: Iterable[str] = (),
) -> list[Memory]:
    """Store what an agent concluded after ``reflect_prepare``; see ``MemoryBank``.

    Raises:
        InvalidInputError: A text is empty or not a string, or nothing is given.
        NotFoundError: A cited id is not a memory of this bank.
    """
    limits = engine.config.limits
    check_query(query, limits.query_chars)
    cited = _ids(cited_ids)
    found = load_memories(engine.db, bank_id, cited)
    missing = [i for i in cited if i not in found]
    if missing:
        raise NotFoundError(f"cited memories not in bank {bank_id!r}: {missing}")
    items = [(OBSERVATION, t) for t in _texts(observations, "observations")]
    items += [(OPINION, t) for t in _texts(opinions, "opinions")]
    if not items:
        raise InvalidInputError("reflect_commit needs at least one observation or opinion")
    if sum(len(text) for _, text in items) > limits.retain_chars:
        raise InvalidInputError(
            f"observations and opinions hold more than {limits.retain_chars} characters"
        )
    return [
        create_observation(
            engine, bank_id, collection, config, text, cited, fact_type=kind, extra={"query": query}
        )
        for kind, text in items
    ]


def _ids(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(string_list(values, field="cited_ids")))


def _texts(values: Iterable[Any], field: str) -> list[str]:
    if isinstance(values, Mapping) or not isinstance(values, str | Iterable):
        raise InvalidInputError(f"{field} must be a list of texts, got {shown(values)}")
    texts = [values] if isinstance(values, str) else list(values)
    cleaned = []
    for text in texts:
        if isinstance(text, Mapping):
            text = text.get("text")
        if not isinstance(text, str) or not text.strip():
            raise InvalidInputError(f"{field} must be non-empty strings")
        cleaned.append(" ".join(text.split()))
    return cleaned
