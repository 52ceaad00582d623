"""Export a Hugging Face cross-encoder to the ONNX folder :class:`CrossEncoderReranker` loads.

This is a one-off step for a machine with network access, run through ``optimum`` (not an
agentmem dependency: it pulls in torch and transformers). It does what the README's
``optimum-cli export onnx --task text-classification`` command does, then checks that the
folder holds what the reranker needs. Everything fails as an :class:`AgentMemError` with a
message that says what to install or that the network is needed.
"""

from __future__ import annotations

import os
from pathlib import Path

from agentmem.errors import InvalidInputError, ModelError, NotAvailableError
from agentmem.models.cross_encoder import CrossEncoderReranker

DEFAULT_CROSS_ENCODER = "cross-encoder/ms-marco-MiniLM-L-6-v2"
"""The seed's cross-encoder on the Hugging Face Hub."""

INSTALL_HINT = 'pip install "optimum[onnxruntime]"'


def export_cross_encoder(
    out_dir: str | os.PathLike[str], model: str = DEFAULT_CROSS_ENCODER
) -> CrossEncoderReranker:
    """Download ``model`` from the Hugging Face Hub and write ``model.onnx`` + tokenizer files.

    Args:
        out_dir: The folder to write (created if missing); later pass it to
            ``CrossEncoderReranker`` or ``agentmem bench … --cross-encoder-dir``.
        model: A Hub id (or a local transformers checkpoint folder) of a cross-encoder with a
            sequence-classification head.

    Returns:
        A reranker over the exported folder (checked to hold ``model.onnx`` and
        ``tokenizer.json``; the model itself loads on first use).

    Raises:
        NotAvailableError: ``optimum`` is not installed.
        ModelError: The download or the export failed (most often: no network access).
        InvalidInputError: ``out_dir`` exists and is not a folder.
    """
    folder = Path(out_dir).expanduser()
    if folder.exists() and not folder.is_dir():
        raise InvalidInputError(f"{folder} exists and is not a folder")
    try:
        from optimum.exporters.onnx import main_export
    except ImportError as exc:
        raise NotAvailableError(
            f"exporting a cross-encoder needs optimum, which agentmem does not install: "
            f"{INSTALL_HINT} (it brings torch and transformers), then run this again on a "
            f"machine with network access to the Hugging Face Hub ({exc})"
        ) from None
    try:
        main_export(model, output=folder, task="text-classification")
    except Exception as exc:  # noqa: BLE001 - hub, network and export errors come in many types
        raise ModelError(
            f"could not download and export {model!r}: {type(exc).__name__}: {exc}. "
            "The export needs network access to the Hugging Face Hub once (or a local "
            "checkpoint folder as --model)"
        ) from exc
    return CrossEncoderReranker(folder)
