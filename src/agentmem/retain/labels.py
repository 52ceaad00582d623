"""Entity labels: a bank's controlled vocabulary, assigned to facts by the LLM at retain time.

Each label group is one classification dimension (the seed's ``entity_labels``)::

    {"key": "pedagogy", "description": "Teaching strategies used", "type": "multi-values",
     "optional": true, "tag": false,
     "values": [{"value": "scaffolding", "description": "Breaking tasks into steps"}]}

An assigned label becomes the entity ``key:value`` (kind "label"): it joins the graph, the
keyword index and the embedded text like any entity. Values outside an enum group's list are
dropped; ``tag: true`` also writes the label as a tag of the fact.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from agentmem.errors import InvalidInputError

LABEL_TYPES = ("value", "multi-values", "text")
LABEL_KIND = "label"


@dataclass(frozen=True, slots=True)
class LabelValue:
    """One allowed value of an enum label group."""

    value: str
    description: str = ""


@dataclass(frozen=True, slots=True)
class LabelGroup:
    """One label dimension.

    Attributes:
        key: Prefix of the ``key:value`` entities.
        description: Shown to the LLM.
        type: "value" (one enum value), "multi-values" (several) or "text" (free string).
        values: Allowed values of enum groups (ignored for "text").
        optional: Whether the LLM may skip the group (always true for "multi-values").
        tag: Also write the labels as tags of the fact.
    """

    key: str
    description: str = ""
    type: str = "value"
    values: tuple[LabelValue, ...] = ()
    optional: bool = True
    tag: bool = False

    @classmethod
    def from_mapping(cls, raw: object) -> LabelGroup:
        """Validate one group as the seed writes it (raises InvalidInputError)."""
        if isinstance(raw, LabelGroup):
            return raw
        if not isinstance(raw, Mapping):
            raise InvalidInputError("each entity_labels group must be an object")
        unknown = set(raw) - {"key", "description", "type", "values", "optional", "tag"}
        if unknown:
            raise InvalidInputError(f"unknown entity_labels field(s) {sorted(unknown)}")
        key = raw.get("key")
        if not isinstance(key, str) or not key.strip() or ":" in key:
            raise InvalidInputError("an entity_labels key must be a non-empty string without ':'")
        kind = raw.get("type", "value")
        if kind not in LABEL_TYPES:
            raise InvalidInputError(f"entity_labels type must be one of {list(LABEL_TYPES)}")
        values = tuple(_value(v) for v in raw.get("values") or ())
        if kind != "text" and not values:
            raise InvalidInputError(f"entity_labels group {key!r} of type {kind!r} needs values")
        description = raw.get("description", "")
        optional, tag = raw.get("optional", True), raw.get("tag", False)
        if not isinstance(description, str):
            raise InvalidInputError("entity_labels description must be a string")
        if not isinstance(optional, bool) or not isinstance(tag, bool):
            raise InvalidInputError("entity_labels optional and tag must be booleans")
        return cls(key.strip(), description, kind, values, optional, tag)

    def to_mapping(self) -> dict[str, Any]:
        """The group as JSON-ready data, in the seed's shape."""
        return {
            "key": self.key,
            "description": self.description,
            "type": self.type,
            "values": [{"value": v.value, "description": v.description} for v in self.values],
            "optional": self.optional,
            "tag": self.tag,
        }

    def accept(self, values: Iterable[str]) -> list[str]:
        """The values the group keeps: enum members only, one for a "value" group."""
        cleaned = [" ".join(v.split()) for v in values if isinstance(v, str) and v.strip()]
        if self.type != "text":
            allowed = {v.value.casefold(): v.value for v in self.values}
            cleaned = [allowed[v.casefold()] for v in cleaned if v.casefold() in allowed]
        kept = list(dict.fromkeys(cleaned))
        return kept[:1] if self.type != "multi-values" else kept


def _value(raw: object) -> LabelValue:
    if isinstance(raw, str):
        raw = {"value": raw}
    if not isinstance(raw, Mapping) or not isinstance(raw.get("value"), str):
        raise InvalidInputError("entity_labels values are objects with a string 'value'")
    value = raw["value"].strip()
    if not value:
        raise InvalidInputError("entity_labels values must not be empty")
    return LabelValue(value, str(raw.get("description", "")))


def parse_label_groups(raw: object) -> tuple[LabelGroup, ...]:
    """Validate a bank's ``entity_labels`` list (keys must be unique)."""
    if raw is None:
        return ()
    if isinstance(raw, Mapping | str) or not isinstance(raw, Iterable):
        raise InvalidInputError("entity_labels must be a list of label groups")
    groups = tuple(LabelGroup.from_mapping(g) for g in raw)
    keys = [g.key for g in groups]
    if len(set(keys)) != len(keys):
        raise InvalidInputError("entity_labels keys must be unique")
    return groups


def assign_labels(
    groups: tuple[LabelGroup, ...], proposed: Iterable[tuple[str, str]]
) -> list[tuple[LabelGroup, str]]:
    """Filter the LLM's ``(key, value)`` proposals through the groups; unknown keys drop."""
    by_key: dict[str, list[str]] = {}
    for key, value in proposed:
        by_key.setdefault(str(key).strip(), []).append(value)
    return [(group, value) for group in groups for value in group.accept(by_key.get(group.key, ()))]
