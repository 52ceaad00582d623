"""The values that flow through the retain pipeline."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass(frozen=True, slots=True)
class Message:
    """One chat message of a ``retain`` call, validated and normalised."""

    role: str
    content: str
    name: str | None
    mentioned_at: datetime
    metadata: dict[str, Any] = field(default_factory=dict)
    #: Whether the message carries its own ``timestamp`` (else it has the call's time).
    timed: bool = False


@dataclass(frozen=True, slots=True)
class RetainInput:
    """The content of one ``retain`` call after validation.

    A plain string arrives as one message with role "user" and no name, marked ``is_text``.
    """

    messages: tuple[Message, ...]
    is_text: bool
    occurred_start: datetime | None = None
    occurred_end: datetime | None = None
    context: str | None = None


@dataclass(frozen=True, slots=True)
class EntityMention:
    """A name found in a fact, with its kind: person, org, place, product, event, concept.

    ``confidence`` is the weight of the evidence for that kind (``retain/entity_kinds.py``);
    the bank sums it over an entity's mentions to vote on the entity's kind. A ``tentative``
    mention (a capitalised word opening a sentence, with nothing else saying it is a name)
    is linked to an entity the bank already knows by that name, and never creates one.
    """

    name: str
    kind: str
    confidence: float = field(default=1.0, compare=False)
    tentative: bool = field(default=False, compare=False)


@dataclass(frozen=True, slots=True)
class ExtractedFact:
    """One fact an extractor produced, before it is stored.

    Attributes:
        text: The fact as it will be stored, embedded and shown.
        fact_type: "world" or "experience".
        mentioned_at: When it was said (the message's timestamp, else the call's).
        message_index: Index of the message it came from.
        entities: Names in the fact; the speaker is one of them.
        importance: In [0, 1].
        occurred_start: Occurrence interval start, when known.
        occurred_end: Occurrence interval end, when known.
        metadata: Metadata of the source message.
        keyword_context: Extra text indexed for keyword search only (e.g. the neighbouring turns),
            so a question phrased like the turn before still finds the reply that answers it.
        caused_by: Indexes of other facts of the same retain call that caused this one
            (stored as ``caused_by`` links).
        part_of: Index of the fact of the same call this one is a clause of (a ``part_of``
            link): only the causal strategy returns a part (see ``agentmem/links.py``).
        tags: Tags of this fact on top of the call's (labels with ``tag: true``).
    """

    text: str
    fact_type: str
    mentioned_at: datetime
    message_index: int
    entities: tuple[EntityMention, ...] = ()
    importance: float = 0.5
    occurred_start: datetime | None = None
    occurred_end: datetime | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    keyword_context: str = ""
    caused_by: tuple[int, ...] = ()
    part_of: int | None = None
    tags: tuple[str, ...] = ()
