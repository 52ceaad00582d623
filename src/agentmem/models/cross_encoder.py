"""A cross-encoder reranker run by onnxruntime: the seed's date-aware reranking, no torch.

No cross-encoder weights ship on PyPI, so :class:`CrossEncoderReranker` loads a model the user
exported once (see the README's "Rerankers" section, or ``agentmem models
export-cross-encoder``) from a local folder holding ``model.onnx`` and ``tokenizer.json``.
As in the seed, each candidate is scored as the pair ``(query, "[Date: <date>] <text>")``,
the date being when the fact happened (or, when unknown, when it was learned), and the logit
is mapped to [0, 1] with a sigmoid.

Nothing loads at import or construction beyond a check that the files exist: the ONNX session
is created on first use, once per process, and shared (see :mod:`agentmem.models.embedder`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from agentmem.errors import InvalidInputError, ModelError
from agentmem.models.embedder import _default_threads, _load_session, read_tokenizer
from agentmem.recall.candidates import Candidate
from agentmem.types import Memory

if TYPE_CHECKING:
    from tokenizers import Tokenizer

#: Where a model folder's ONNX graph may be, in order (optimum writes ``model.onnx``).
MODEL_FILES: tuple[str, ...] = ("model.onnx", "onnx/model.onnx")
TOKENIZER_FILE = "tokenizer.json"
_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_PAD_TOKENS = ("[PAD]", "<pad>")
_PURPOSE = "cross-encoder"


def readable_date(moment: datetime) -> str:
    """A date as the seed's ``date_readable``: "March 4, 2025" (locale-independent)."""
    return f"{_MONTHS[moment.month - 1]} {moment.day}, {moment.year}"


def dated_text(memory: Memory) -> str:
    """The document side of a pair: ``"[Date: <when it happened or was learned>] <text>"``."""
    moment = memory.occurred_start or memory.mentioned_at
    return f"[Date: {readable_date(moment)}] {memory.text}"


def _sigmoid(logits: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(logits, -60.0, 60.0)))


class CrossEncoderReranker:
    """Reranks candidates with an ONNX cross-encoder, e.g. ms-marco-MiniLM-L-6-v2.

    The model takes ``input_ids`` and ``attention_mask`` (and ``token_type_ids`` if it has
    that input) and returns one logit per pair (shape ``(batch, 1)`` or ``(batch,)``; a
    two-class head ``(batch, 2)`` is read as not-relevant/relevant). Pairs are tokenized
    together, sorted by length and padded per batch.

    Args:
        model_dir: Folder with ``model.onnx`` (or ``onnx/model.onnx``) and ``tokenizer.json``.
        batch_size: Pairs per ONNX run.
        max_length: Tokens per pair; longer pairs are truncated (longest side first).
        threads: onnxruntime intra-op threads; defaults to ``min(os.cpu_count(), 4)``.

    Raises:
        ModelError: The folder, the ONNX file or the tokenizer is missing.
        InvalidInputError: An argument is out of range.

    Example:
        >>> reranker = CrossEncoderReranker("~/models/ms-marco-MiniLM-L-6-v2-onnx")
        >>> mem = AgentMemory("./memdata", reranker=reranker)
    """

    def __init__(
        self,
        model_dir: str | os.PathLike[str],
        *,
        batch_size: int = 32,
        max_length: int = 512,
        threads: int | None = None,
    ) -> None:
        if batch_size < 1:
            raise InvalidInputError(f"batch_size must be at least 1, got {batch_size}")
        if max_length < 4:
            raise InvalidInputError(f"max_length must be at least 4, got {max_length}")
        if threads is not None and threads < 1:
            raise InvalidInputError(f"threads must be at least 1, got {threads}")
        folder = Path(model_dir).expanduser().resolve()
        if not folder.is_dir():
            raise ModelError(f"cross-encoder folder not found: {str(folder)!r}")
        model_path = next((folder / f for f in MODEL_FILES if (folder / f).is_file()), None)
        if model_path is None:
            raise ModelError(
                f"no ONNX model in {str(folder)!r}: expected one of {list(MODEL_FILES)} "
                "(export one as the README's Rerankers section shows)"
            )
        if not (folder / TOKENIZER_FILE).is_file():
            raise ModelError(f"no {TOKENIZER_FILE} in cross-encoder folder {str(folder)!r}")
        self._folder = folder
        self._model_path = model_path
        self._batch_size = batch_size
        self._max_length = max_length
        self._threads = threads if threads is not None else _default_threads()
        self._tokenizer_lock = threading.Lock()
        self._tokenizer: Tokenizer | None = None
        self._pad_id = 0

    @property
    def name(self) -> str:
        """``cross-encoder:<folder name>``, recorded in each hit's ``strategy_details``."""
        return f"cross-encoder:{self._folder.name}"

    def rerank(self, query: str, candidates: Sequence[Candidate]) -> list[float]:
        """Score each candidate's dated text against the query.

        Args:
            query: The recall query.
            candidates: The fused candidates to score.

        Returns:
            One sigmoid(logit) in [0, 1] per candidate, in the candidates' order.

        Raises:
            ModelError: The model or tokenizer cannot be loaded, or the model is not a
                cross-encoder (unexpected inputs or output shape).
        """
        return self.score_pairs(query, [dated_text(c.memory) for c in candidates])

    def score_pairs(self, query: str, documents: Sequence[str]) -> list[float]:
        """Score ``(query, document)`` pairs; see :meth:`rerank`."""
        if not documents:
            return []
        tokenizer = self._load_tokenizer()
        session = _load_session(self._model_path, self._threads, _PURPOSE)
        names = {i.name for i in session.get_inputs()}
        if not {"input_ids", "attention_mask"} <= names:
            raise ModelError(
                f"{str(self._model_path)!r} is not a cross-encoder: inputs {sorted(names)}, "
                "expected input_ids and attention_mask"
            )
        encodings = tokenizer.encode_batch([(query, doc) for doc in documents])
        lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(documents))
        order = np.argsort(lengths, kind="stable")
        scores = np.empty(len(documents), dtype=np.float64)
        for start in range(0, len(documents), self._batch_size):
            rows = order[start : start + self._batch_size]
            width = int(lengths[rows].max())
            feeds = {
                "input_ids": np.full((len(rows), width), self._pad_id, dtype=np.int64),
                "attention_mask": np.zeros((len(rows), width), dtype=np.int64),
            }
            if "token_type_ids" in names:
                feeds["token_type_ids"] = np.zeros((len(rows), width), dtype=np.int64)
            for i, row in enumerate(rows):
                encoding = encodings[row]
                n = len(encoding.ids)
                feeds["input_ids"][i, :n] = encoding.ids
                feeds["attention_mask"][i, :n] = 1
                if "token_type_ids" in feeds:
                    feeds["token_type_ids"][i, :n] = encoding.type_ids
            try:
                (logits,) = session.run([session.get_outputs()[0].name], feeds)
            except Exception as exc:  # ORT errors are untyped
                raise ModelError(f"cross-encoder failed to run: {exc}") from exc
            scores[rows] = self._relevance(np.asarray(logits, dtype=np.float64), len(rows))
        return scores.tolist()

    def _relevance(self, logits: np.ndarray, rows: int) -> np.ndarray:
        if logits.shape in ((rows,), (rows, 1)):
            return _sigmoid(logits.reshape(rows))
        if logits.shape == (rows, 2):  # softmax over (not relevant, relevant)
            return _sigmoid(logits[:, 1] - logits[:, 0])
        raise ModelError(
            f"{str(self._model_path)!r} returned shape {logits.shape}; a cross-encoder "
            f"returns one logit per pair ({rows}, 1)"
        )

    def _load_tokenizer(self) -> Tokenizer:
        tokenizer = self._tokenizer
        if tokenizer is not None:
            return tokenizer
        with self._tokenizer_lock:
            if self._tokenizer is None:
                tokenizer = read_tokenizer(self._folder / TOKENIZER_FILE, self._max_length)
                self._pad_id = next(
                    (i for t in _PAD_TOKENS if (i := tokenizer.token_to_id(t)) is not None), 0
                )
                self._tokenizer = tokenizer
            return self._tokenizer
