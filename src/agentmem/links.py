"""The vocabulary of memory-to-memory links: which kinds exist and what a weight may be.

Kept apart from ``retain/relations.py`` (which finds links) so that configuration, the
import check and the bank's ``link`` verb can validate links without the retain pipeline.
"""

from __future__ import annotations

import math
import re

from agentmem.errors import InvalidInputError, shown

#: Link kinds a caller may create (``bank.link``, ``retain(links=...)``); "entity" edges come
#: from entity resolution only.
LINK_KINDS: frozenset[str] = frozenset(
    {"temporal", "semantic", "caused_by", "followed_by", "related", "supersedes"}
)
#: "a part_of b": a is a clause the extractor split off b's text (the cause of a chat turn,
#: which the turn is ``caused_by``). Made by retain only. A part is no recall candidate (its
#: whole holds its text) except for the causal strategy, whose cause it is.
PART_OF = "part_of"
#: Every kind a stored link may have (what an import accepts): the link kinds and "part_of".
STORED_KINDS: frozenset[str] = LINK_KINDS | {PART_OF}
#: Kinds a graph walk may be restricted to (``edge_types``): the stored kinds plus "entity".
EDGE_KINDS: frozenset[str] = STORED_KINDS | {"entity"}


def normalize_kind(kind: object, allowed: frozenset[str] = LINK_KINDS) -> str:
    """A link kind in our spelling, "caused_by" ("CausedBy" and "caused-by" are accepted).

    Raises:
        InvalidInputError: Not a string, or not one of ``allowed``.
    """
    if not isinstance(kind, str):
        raise InvalidInputError(f"link kind must be a string, got {type(kind).__name__}")
    name = re.sub(r"(?<=[a-z])(?=[A-Z])", "_", kind.strip()).lower().replace("-", "_")
    if name not in allowed:
        raise InvalidInputError(
            f"unknown link kind {shown(kind)}; expected one of {sorted(allowed)}"
        )
    return name


def validate_weight(weight: object) -> float:
    """A link weight: a finite number in [0, 1].

    Raises:
        InvalidInputError: Anything else.
    """
    if isinstance(weight, bool) or not isinstance(weight, int | float):
        raise InvalidInputError("weight must be a number")
    if not math.isfinite(weight) or not 0 <= weight <= 1:
        raise InvalidInputError("weight must be in [0, 1]")
    return float(weight)
