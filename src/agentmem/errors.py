"""Errors raised by agentmem.

Every error the library raises derives from :class:`AgentMemError`; where an error refines a
builtin, it subclasses that builtin too, so ``except ValueError`` keeps working::

    AgentMemError
    ├── InvalidInputError (also ValueError)    bad arguments: empty content, importance outside
    │                                          [0, 1], unknown strategy, bad bank id, ...
    ├── NotFoundError (also KeyError)          an unknown memory id, bank or entity
    ├── StorageError                           DuckDB / Chroma failures, a locked or damaged store
    │   └── StoreLockedError                   another process holds the store's write lock
    ├── ExtractionError                        the extractor (offline or LLM) could not run
    ├── LLMError                               the LLM provider failed or its output stayed
    │                                          invalid after retries (the provider's own
    │                                          exception is the ``__cause__``)
    ├── ModelError                             an offline model is missing or cannot be loaded
    └── NotAvailableError                      a strategy or feature that is not built yet
"""

from __future__ import annotations

import reprlib

_SHOWN = reprlib.Repr()
_SHOWN.maxlevel, _SHOWN.maxstring, _SHOWN.maxother = 3, 80, 80


def shown(value: object) -> str:
    """A bounded repr of a caller's value for an error message: a value nested thousands of
    levels deep or megabytes long is shown short, never raising RecursionError."""
    return _SHOWN.repr(value)


class AgentMemError(Exception):
    """Base class of every error agentmem raises."""


class InvalidInputError(AgentMemError, ValueError):
    """An argument is invalid; nothing was written."""


class NotFoundError(AgentMemError, KeyError):
    """A memory, bank or entity does not exist."""

    def __str__(self) -> str:  # KeyError would print the repr of the message
        return str(self.args[0]) if self.args else ""


class StorageError(AgentMemError):
    """The store could not be read or written."""


class StoreLockedError(StorageError):
    """Another process has the store open for writing."""


class ExtractionError(AgentMemError):
    """Facts could not be extracted from the content."""


class LLMError(AgentMemError):
    """The LLM call failed (network, provider error, invalid output after retries)."""


class ModelError(AgentMemError):
    """An offline model (embedder, NLP pipeline, tokenizer) is missing or failed to load."""


class NotAvailableError(AgentMemError, NotImplementedError):
    """The requested strategy or feature is not available in this version."""
