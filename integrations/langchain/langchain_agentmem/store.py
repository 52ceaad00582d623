"""``AgentMemStore``: LangGraph's long-term memory store (``BaseStore``) backed by agentmem.

A namespace maps to a bank and tags: its first label is the bank, and each deeper level adds
the path so far as a tag. ``put(("memories", "user-42"), "food", {...})`` retains the value in
bank ``memories`` with tag ``user-42``; ``("memories", "user-42", "notes")`` adds the tags
``user-42`` and ``user-42/notes``. So the items are ordinary memories: ``bank.recall(...,
tags=["user-42"])`` finds them, and ``search(namespace, query=...)`` runs agentmem's hybrid
recall (semantic + BM25 + scoring) instead of a plain vector search.

Each item is stored as memories of one ``document_id`` derived from its namespace and key,
with the item (namespace, key, value, times) in their metadata; ``put`` on an existing key
replaces them. ``get`` selects the item's memories by that document id, and listing without
a query by the namespace's tag, in DuckDB; listing namespaces still reads every item.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
from collections.abc import Iterable, Mapping
from datetime import UTC, date, datetime, time
from decimal import Decimal
from enum import Enum
from typing import Any
from uuid import UUID

from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)
from pydantic import BaseModel

from agentmem.errors import InvalidInputError
from agentmem.memory import AgentMemory, validate_bank_id
from agentmem.types import Memory

ITEM_KEY = "langgraph_item"
# Fields read as an item's text when no index fields are given, in this order.
TEXT_FIELDS = ("content", "text", "memory", "data")
# A recall for a search fetches this many times the requested items: an item can yield
# several memories, and memories outside the namespace are filtered afterwards.
OVERFETCH = 4


def namespace_tags(namespace: tuple[str, ...]) -> list[str]:
    """The tags of a namespace below its bank: each path prefix, joined with ``/``."""
    labels = namespace[1:]
    return ["/".join(labels[: depth + 1]) for depth in range(len(labels))]


def _document_id(namespace: tuple[str, ...], key: str) -> str:
    digest = hashlib.blake2b(json.dumps([*namespace, key]).encode(), digest_size=16)
    return f"langgraph:{digest.hexdigest()}"


def _get_path(value: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, UUID | Decimal):
        return str(value)
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, set | frozenset):
        return sorted(value, key=str)
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    raise TypeError(f"{type(value).__name__} is not JSON-serialisable")


def json_value(value: Mapping[str, Any]) -> dict[str, Any]:
    """An item's value as JSON, as LangGraph's own stores keep it: datetimes, dates, UUIDs,
    enums, sets, pydantic models and dataclasses become their JSON forms.

    Raises:
        InvalidInputError: A part of the value has no JSON form.
    """
    try:
        return json.loads(json.dumps(dict(value), default=_json_default, ensure_ascii=False))
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"the item's value cannot be stored as JSON: {exc}") from None


def item_text(value: Mapping[str, Any], index: list[str] | None) -> str:
    """What agentmem indexes for an item: the given fields, a text field, or the JSON."""
    if index:
        parts = [_get_path(value, path) for path in index]
        texts = [p if isinstance(p, str) else json.dumps(p) for p in parts if p is not None]
        if texts:
            return "\n".join(texts)
    for name in TEXT_FIELDS:
        if isinstance(value.get(name), str) and value[name].strip():
            return value[name]
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


_COMPARE = {
    "$eq": lambda a, b: a == b,
    "$ne": lambda a, b: a != b,
    "$gt": lambda a, b: a is not None and a > b,
    "$gte": lambda a, b: a is not None and a >= b,
    "$lt": lambda a, b: a is not None and a < b,
    "$lte": lambda a, b: a is not None and a <= b,
}


def _matches(value: Mapping[str, Any], conditions: Mapping[str, Any] | None) -> bool:
    """LangGraph's filter: exact matches, or ``{"$gt": 4}``-style operators, per field."""
    for field, wanted in (conditions or {}).items():
        actual = _get_path(value, field)
        if isinstance(wanted, Mapping) and wanted and all(op in _COMPARE for op in wanted):
            try:
                if not all(_COMPARE[op](actual, operand) for op, operand in wanted.items()):
                    return False
            except TypeError:  # comparing values of different types
                return False
        elif actual != wanted:
            return False
    return True


def _item_from(memory: Memory) -> dict[str, Any] | None:
    item = memory.metadata.get(ITEM_KEY)
    return item if isinstance(item, dict) else None


def _namespace_matches(namespace: tuple[str, ...], condition: MatchCondition) -> bool:
    path = condition.path
    if len(path) > len(namespace):
        return False
    labels = namespace[: len(path)] if condition.match_type == "prefix" else namespace[-len(path) :]
    return all(p == "*" or p == label for p, label in zip(path, labels, strict=True))


class AgentMemStore(BaseStore):
    """LangGraph ``BaseStore`` on an agentmem store; pass it as ``compile(store=...)`` or
    ``create_agent(..., store=...)``.

    Args:
        memory: The :class:`agentmem.AgentMemory` holding the banks.

    Example:
        >>> store = AgentMemStore(AgentMemory("./memdata"))
        >>> store.put(("memories", "user-42"), "food", {"content": "Loves spicy ramen"})
        >>> store.search(("memories", "user-42"), query="what food does the user like?")
    """

    __slots__ = ("memory",)

    def __init__(self, memory: AgentMemory) -> None:
        self.memory = memory

    # -- BaseStore ---------------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run the operations in order; the results match their positions."""
        results: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                results.append(self._get(op.namespace, op.key))
            elif isinstance(op, PutOp):
                self._put(op)
                results.append(None)
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list_namespaces(op))
            else:
                raise InvalidInputError(f"unknown store operation {type(op).__name__}")
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """:meth:`batch` in a worker thread (agentmem's engine is synchronous)."""
        return await asyncio.to_thread(self.batch, list(ops))

    # -- operations --------------------------------------------------------------------------

    def _bank_id(self, namespace: tuple[str, ...]) -> str:
        if not namespace:
            raise InvalidNamespaceError(
                "the namespace must not be empty: its first label is the bank"
            )
        try:
            return validate_bank_id(namespace[0])
        except InvalidInputError as exc:
            raise InvalidNamespaceError(f"the namespace's first label is the bank: {exc}") from None

    def _bank_memories(
        self, bank_id: str, *, tags: list[str] | None = None, document_id: str | None = None
    ) -> list[Memory]:
        if bank_id not in self.memory.banks():
            return []
        return self.memory.bank(bank_id).memories(tags=tags, document_id=document_id)

    def _stored(self, namespace: tuple[str, ...], key: str) -> tuple[list[str], dict | None]:
        """Ids of the memories holding an item, and the item."""
        doc = _document_id(namespace, key)
        found = self._bank_memories(self._bank_id(namespace), document_id=doc)
        return [m.id for m in found], (_item_from(found[0]) if found else None)

    def _get(self, namespace: tuple[str, ...], key: str) -> Item | None:
        _, item = self._stored(namespace, key)
        return None if item is None else _to_item(item)

    def _put(self, op: PutOp) -> None:
        namespace, key = tuple(op.namespace), str(op.key)
        bank_id = self._bank_id(namespace)
        old_ids, old = self._stored(namespace, key)
        if op.value is None:
            if old_ids:
                self.memory.bank(bank_id).forget(old_ids)
            return
        now = datetime.now(UTC)
        value = json_value(op.value)
        item = {
            "namespace": list(namespace),
            "key": key,
            "value": value,
            "created_at": old["created_at"] if old else now.isoformat(),
            "updated_at": now.isoformat(),
            # LangGraph's index=False: kept and listed, but not found by a query.
            "indexed": op.index is not False,
        }
        bank = self.memory.bank(bank_id)
        # Retaining under the item's document replaces the old version's memories in the same
        # transaction, so a refused value loses nothing.
        bank.retain(
            item_text(value, op.index if isinstance(op.index, list) else None),
            mentioned_at=now,
            tags=namespace_tags(namespace),
            document_id=_document_id(namespace, key),
            metadata={ITEM_KEY: item},
        )

    def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = tuple(op.namespace_prefix)
        bank_id = self._bank_id(prefix)
        wanted = op.offset + op.limit
        found: dict[tuple[tuple[str, ...], str], SearchItem] = {}
        if op.query and bank_id in self.memory.banks():
            tags = namespace_tags(prefix)[-1:] or None
            result = self.memory.bank(bank_id).recall(
                op.query, top_k=max(wanted * OVERFETCH, 10), tags=tags
            )
            candidates = [(hit.memory, hit.score) for hit in result]
        else:
            tags = namespace_tags(prefix)[-1:] or None
            candidates = [(m, None) for m in self._bank_memories(bank_id, tags=tags)]
        for memory, score in candidates:
            item = _item_from(memory)
            if item is None or tuple(item["namespace"][: len(prefix)]) != prefix:
                continue
            if op.query and not item.get("indexed", True):
                continue
            ident = (tuple(item["namespace"]), item["key"])
            if ident in found or not _matches(item["value"], op.filter):
                continue
            found[ident] = _to_search_item(item, score)
        items = list(found.values())
        if not op.query:
            items.sort(key=lambda i: i.updated_at, reverse=True)
        return items[op.offset : wanted]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        namespaces: set[tuple[str, ...]] = set()
        for bank_id in self.memory.banks():
            for memory in self.memory.bank(bank_id).memories():
                item = _item_from(memory)
                if item is None:
                    continue
                namespace = tuple(item["namespace"])
                if all(_namespace_matches(namespace, c) for c in op.match_conditions or ()):
                    depth = op.max_depth
                    namespaces.add(namespace if depth is None else namespace[:depth])
        return sorted(namespaces)[op.offset : op.offset + op.limit]


def _item_fields(item: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "namespace": tuple(item["namespace"]),
        "key": item["key"],
        "value": item["value"],
        "created_at": datetime.fromisoformat(item["created_at"]),
        "updated_at": datetime.fromisoformat(item["updated_at"]),
    }


def _to_item(item: Mapping[str, Any]) -> Item:
    return Item(**_item_fields(item))


def _to_search_item(item: Mapping[str, Any], score: float | None) -> SearchItem:
    return SearchItem(**_item_fields(item), score=score)
