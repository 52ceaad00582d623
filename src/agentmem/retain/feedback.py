"""The feedback-loop guard: memories recalled into a prompt are not extracted again.

An agent that injects recalled memories into its prompt and then retains the whole
conversation would hand the memories back to the extractor, which stores them again; mem0
users found 97.8% of their memories were such junk (mem0#4573). Before LLM extraction a
message is skipped when it is

* the output of the recall tool (a JSON object with a ``memories`` list of ``id``/``text``
  items, as :mod:`agentmem.tools` returns), or
* made only of lines that repeat memories of the bank (the same text after case, whitespace,
  bullet and trailing-punctuation normalisation, or a line carrying a memory's id), apart
  from header lines ending in ":" such as "Relevant memories:".
"""

from __future__ import annotations

import json
import re
from dataclasses import replace

from agentmem.engine import Engine
from agentmem.retain.facts import RetainInput

_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*")
_MEMORY_ID = re.compile(r"\b[0-9a-f]{32}\b")


def _normalize(line: str) -> str:
    line = _BULLET.sub("", line)
    return " ".join(line.split()).casefold().rstrip(" .!")


def _is_recall_output(text: str) -> bool:
    try:
        data = json.loads(text)
    except ValueError:
        return False
    memories = data.get("memories") if isinstance(data, dict) else None
    return (
        isinstance(memories, list)
        and bool(memories)
        and all(isinstance(m, dict) and {"id", "text"} <= set(m) for m in memories)
    )


def skip_recalled(engine: Engine, bank_id: str, content: RetainInput) -> tuple[RetainInput, int]:
    """The content without messages that repeat the bank's memories, and how many were cut."""
    lines = {
        i: [
            line
            for line in map(_normalize, m.content.splitlines())
            if line and not line.endswith(":")
        ]
        for i, m in enumerate(content.messages)
    }
    candidates = sorted({line for message_lines in lines.values() for line in message_lines})
    ids = sorted({found for m in content.messages for found in _MEMORY_ID.findall(m.content)})
    known_texts: set[str] = set()
    known_ids: set[str] = set()
    if candidates or ids:
        rows = engine.db.fetchall(
            "SELECT id, lower(regexp_replace(trim(text), '\\s+', ' ', 'g')) FROM memories "
            "WHERE bank_id = $bank AND (list_contains($ids, id) OR list_contains($texts, "
            "rtrim(lower(regexp_replace(trim(text), '\\s+', ' ', 'g')), ' .!')))",
            {"bank": bank_id, "ids": ids, "texts": candidates},
        )
        known_ids = {row[0] for row in rows}
        known_texts = {row[1].rstrip(" .!") for row in rows}

    def recalled(index: int) -> bool:
        message = content.messages[index]
        if _is_recall_output(message.content):
            return True
        return bool(lines[index]) and all(
            line in known_texts or any(i in known_ids for i in _MEMORY_ID.findall(line))
            for line in lines[index]
        )

    kept = tuple(m for i, m in enumerate(content.messages) if not recalled(i))
    return replace(content, messages=kept), len(content.messages) - len(kept)
