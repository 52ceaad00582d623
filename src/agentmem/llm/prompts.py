"""The prompts of the LLM path: extraction, consolidation and reflect.

Each builder returns chat messages; the response's shape is the pydantic model Instructor is
given, so the prompts describe intent and rules, not JSON syntax.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentmem.config import BankConfig
from agentmem.types import Memory

_EXTRACTION_BASE = """You extract long-term memories from a conversation or document.
Each fact is a self-contained narrative: who did what, when, where, why and how, with the
emotions and reasons that were expressed. Keep a decision together with its alternatives and
its reason rather than splitting it into fragments. Use names, never pronouns.
fact_type is "experience" for what the assistant itself did or said, "world" for everything
else. message_index is the [index] of the message the fact comes from (the last one when
several). occurred_start / occurred_end: the ISO-8601 dates when the fact happened, resolved
against the time the message was said (e.g. "last June" said on 2025-01-15 is 2024-06-01 to
2024-06-30); leave them null for timeless facts such as preferences. entities: the people,
organisations, places, products, events and concepts the fact names, with their kind.
caused_by: indexes of earlier facts in your list that caused this one.
Do not extract greetings, filler, or text that merely repeats stored memories."""

_MODES = {
    "concise": "Be selective: only facts worth remembering in a later conversation; merge "
    "closely related statements into one fact.",
    "verbose": "Be thorough: extract every significant fact with its full context, details "
    "and relationships; prefer several rich facts over one summary.",
}


def _label_rules(config: BankConfig) -> str:
    if not config.entity_labels:
        return ""
    lines = ["Assign labels (key, value) from these groups to each fact where they apply:"]
    for group in config.entity_labels:
        need = "optional" if group.optional or group.type == "multi-values" else "required"
        head = f"- {group.key} ({group.type}, {need}): {group.description}".rstrip(": ")
        lines.append(head)
        if group.type == "text":
            lines.append("    any short value")
        lines.extend(f"    {v.value}: {v.description}".rstrip(": ") for v in group.values)
    if group_values_only := [g.key for g in config.entity_labels if g.type != "text"]:
        lines.append(f"Use only the listed values for {', '.join(group_values_only)}.")
    if not config.entities_allow_free_form:
        lines.append("Return no free-form entities: labels only.")
    return "\n".join(lines)


def extraction_messages(config: BankConfig, transcript: str) -> list[dict[str, str]]:
    """The extraction prompt for one chunk, steered by the bank's mission, mode and labels."""
    if config.extraction_mode == "custom":
        rules = f"You extract long-term memories.\n{config.extraction_rules}"
    else:
        rules = f"{_EXTRACTION_BASE}\n{_MODES[config.extraction_mode]}"
    parts = [rules]
    if config.retain_mission:
        parts.append(f"Mission of this memory bank: {config.retain_mission}")
    if labels := _label_rules(config):
        parts.append(labels)
    return _chat("\n\n".join(parts), transcript)


def _chat(system: str, user: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def _memory_lines(memories: Sequence[Memory]) -> str:
    return "\n".join(f"[{m.id}] ({m.fact_type}) {m.text}" for m in memories) or "(none)"


def consolidation_messages(
    facts: Sequence[Memory], observations: Sequence[Memory]
) -> list[dict[str, str]]:
    """Ask how new facts change the bank's observations."""
    return _chat(
        "You maintain observations: durable, general statements synthesised from facts "
        "(preferences, habits, relationships, patterns). Compare the new facts with the "
        "existing observations. For each pattern either create a new observation or refine an "
        "existing one (give its id and the refined text, which must keep what the old text "
        "said unless the new facts correct it). List the ids of the facts that support it. "
        "List in contradicted_fact_ids the ids of new facts an observation shows to be wrong. "
        "Return no actions when nothing general can be said.",
        f"Existing observations:\n{_memory_lines(observations)}\n\n"
        f"New facts:\n{_memory_lines(facts)}",
    )


def reflect_messages(
    query: str, observations: Sequence[Memory], memories: Sequence[Memory]
) -> list[dict[str, str]]:
    """Ask for an answer that cites the ids of the memories it rests on."""
    return _chat(
        "Answer the question from the memories below only. Cite the id of every memory you "
        "use in cited_ids. If the memories do not answer it, say so. When the evidence "
        "supports a judgement worth keeping, state it as opinion (else leave it null).",
        f"Question: {query}\n\nObservations:\n{_memory_lines(observations)}\n\n"
        f"Facts:\n{_memory_lines(memories)}",
    )
