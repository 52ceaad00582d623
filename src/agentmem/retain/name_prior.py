"""What a bare name most likely denotes, from what the embedding model knows of names.

The grammar around a mention decides its kind when it says something ("my sister Giulia",
"flew to Yerevan", ``retain/entity_kinds.py``), but many sentences say nothing the rules
read: "Jamal works at Deloitte", "Paris Hilton was on TV", "Lukas quit Siemens". spaCy's
small model labels such names almost at random in chat. MiniLM, trained on a billion
sentence pairs, places a name near the words for what it usually is: "Jamal" next to "a
person's name", "Deloitte" next to "a company or organization". That is one more weak vote:
the nearest of five plain descriptions, when it is nearer than the next by a clear margin,
of spaCy's weight (``docs/entities-and-causes.md`` has what it gains on text the rules were
not written on).

The prior always uses the bundled MiniLM, whatever embedder the bank uses, so a bank's kinds
do not depend on its embedder and no name goes to a remote API. A name costs one run of the
model (under a millisecond: a name is a few tokens), once per process. Should the model fail
to load or run, the prior abstains (logged once): kinds are then decided as without it.
"""

from __future__ import annotations

import functools
import logging
import threading
from typing import NamedTuple

import numpy as np

from agentmem.errors import ModelError
from agentmem.models.embedder import MiniLMEmbedder

log = logging.getLogger("agentmem")

__all__ = ["NAME_PRIOR_MARGIN", "NAME_PRIOR_WEIGHT", "may_name_a_person", "name_prior"]

#: The weight of the prior's vote: spaCy's own (``entity_kinds.SPACY_WEIGHT``). Chosen on
#: the labelled set among 0.75, 0.9, 0.99, 1, 1.01, 1.25, 1.6, 2 and 3 (heavier votes
#: override grammar's cues; lighter ones never outvote spaCy's label).
NAME_PRIOR_WEIGHT = 1.0
#: How much nearer (cosine) the nearest description must be than the next for the prior to
#: vote; chosen on the labelled set among 0.02, 0.05, 0.1 and 0.15 (0.1 and 0.15 tied).
NAME_PRIOR_MARGIN = 0.1

# One plain description per kind. Concepts have none: a bare name rarely says it is one.
_DESCRIPTIONS = {
    "person": "a person's name",
    "org": "a company or organization",
    "place": "a city, country or place",
    "product": "a product, app, book or film",
    "event": "an event, festival or tournament",
}
_CACHED_NAMES = 65_536

_lock = threading.Lock()
_embedder: MiniLMEmbedder | None = None
_descriptions: np.ndarray | None = None
_failed = False


def name_prior(name: str) -> tuple[str, float] | None:
    """The kind a bare ``name`` most likely denotes and the weight of that vote, or ``None``
    when no description is clearly nearer than the others."""
    reading = _reading(name.casefold())  # the tokenizer lower-cases anyway
    if reading is None or reading.kind is None:
        return None
    return reading.kind, NAME_PRIOR_WEIGHT


def may_name_a_person(name: str) -> bool:
    """Whether the model does not place the bare ``name`` clearly (by the margin) nearer
    another kind's description than a person's: true of "Wojciech", "Aoife" and "Cal", not of
    "Bali" or "Chelsea"; true when the model cannot be run."""
    reading = _reading(name.casefold())
    return reading is None or reading.nearer_than_person < NAME_PRIOR_MARGIN


_KINDS = list(_DESCRIPTIONS)
_PERSON = _KINDS.index("person")


class _Reading(NamedTuple):
    """What the model makes of one name, worked out once: its kind when one description is
    nearer than the next by the margin, and how much nearer than a person's the nearest is."""

    kind: str | None
    nearer_than_person: float


@functools.lru_cache(maxsize=_CACHED_NAMES)
def _reading(key: str) -> _Reading | None:
    """The model's reading of a name, or None when the model cannot be run. Cached as plain
    floats: a retain asks about the same names again and again, and numpy's sort of five
    cosines gives up the interpreter lock each time, to wait behind the embedding thread."""
    global _failed  # noqa: PLW0603 - reported once per process
    if _failed:
        return None
    try:
        embedder, descriptions = _model()
        cosines = (descriptions @ embedder.embed([key])[0]).tolist()
    except ModelError as exc:
        _failed = True
        log.warning("entity kinds without the name prior: %s", exc)
        return None
    first, second = sorted(range(len(cosines)), key=cosines.__getitem__, reverse=True)[:2]
    clear = cosines[first] - cosines[second] >= NAME_PRIOR_MARGIN
    return _Reading(_KINDS[first] if clear else None, cosines[first] - cosines[_PERSON])


def _model() -> tuple[MiniLMEmbedder, np.ndarray]:
    global _embedder, _descriptions  # noqa: PLW0603 - one model per process, loaded on first use
    with _lock:
        if _embedder is None or _descriptions is None:
            embedder = MiniLMEmbedder()
            _descriptions = embedder.embed(list(_DESCRIPTIONS.values()))
            _embedder = embedder
        return _embedder, _descriptions
