"""The rows recall loads for its candidates, held in process per bank.

Recall builds each fused candidate from its stored row (text, times, entities and their kinds,
tags, importance, access count, metadata), follows the ``supersedes`` chains around the
candidates and measures the query's cosine with the stored vectors of candidates the semantic
arm did not return. All three are read here from a per-bank copy instead of the stores: rows
and links loaded in full on first use; vectors copied whole on a thread from the first time
recall asks for one (``store/vector_copy.py``, at most :data:`VECTORS_COPIED` over all banks), and
until then, or past that size, as recall asks for them (at most :data:`VECTORS_KEPT` a bank; a
bank of an embedded store small enough for the vector store's own exact copy,
``store/flat_index.py``, reads them from that instead); all kept at the bank's version
(store/changes.py) by replaying the change log. The rows and
vectors of the memories a change names are dropped (read again when next asked for), the
entities it names are read again, the ``supersedes`` links are read again; an entity
correction, an import, a deleted bank or a log that no longer reaches back drops the copy.
Recall's access counts are not changes: a reinforcing recall drops the rows it counted once it
has committed, and on a store other processes write too (PostgreSQL), where their recalls count
as well, each row remembers how often the bank's counts had moved when it was read
(``changes.count_accesses``); candidates read before the latest move have their counts read
again (one lookup by primary key), so a bank nobody reinforces costs no query.

Rows are kept as the store returns them (their lists as tuples), each turned into its
:class:`Memory` value once, when first read (as
:func:`~agentmem.store.records.load_memories_with_kinds` builds it): recall reads its
candidates' memories and hands out copies of the ones it returns, with metadata of their own
(a ``Memory`` is frozen, its metadata dict is not), so the values kept here are never changed.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from agentmem.store import changes
from agentmem.store.bulk import collection_paused
from agentmem.store.database import Database
from agentmem.store.records import (
    EntityKinds,
    Memory,
    load_memories_with_kinds,
    load_pieces,
    memories_by_id,
    memory_from_parts,
    memory_parts,
    split_plain_ids,
    sql_strings,
)
from agentmem.store.supersedes_chains import SupersedesChains, read_chains
from agentmem.store.vector_copy import VectorCopy

# The bank's rows, entities as ids, as records.py's load by literal ids has them. {me_ids} and
# {m_ids}: nothing (every row) or an ``AND ... IN (...)`` of literal ids.
_ROWS = """
WITH me AS (
    SELECT memory_id, array_agg(entity_id) AS entity_ids FROM memory_entities
    WHERE bank_id = $bank {me_ids} GROUP BY memory_id
)
SELECT m.id, m.bank_id, m.text, m.fact_type, m.occurred_start, m.occurred_end, m.mentioned_at,
       me.entity_ids, m.tags, m.importance, m.access_count, m.document_id, m.context,
       m.metadata, m.episode_id, m.piece_vectors IS NOT NULL AS has_pieces
FROM memories AS m LEFT JOIN me ON me.memory_id = m.id
WHERE m.bank_id = $bank {m_ids}
"""
_ENTITIES = "SELECT id, name, kind FROM entities WHERE bank_id = $bank {ids}"
# Where a row holds its access count, and whether the memory has pieces.
_ACCESS_COUNT = 10
_HAS_PIECES = 15
#: Most stored vectors kept per bank (~1.6 KiB each at 384 dimensions); past it they are
#: dropped and read again as recall asks for them.
VECTORS_KEPT = 100_000
#: Most vectors copied whole in process, over all banks (store/vector_copy.py: ~290 MiB at
#: 384 dimensions): a bank's copy makes room by dropping those of the banks recalled least
#: lately; a larger bank has its vectors read as recall asks for them.
VECTORS_COPIED = 200_000
#: Changes after which the copy is loaded anew rather than caught up.
_RELOAD_KINDS = changes.RELOAD_KINDS | {"correct"}

Row = tuple[Any, ...]


def _listed(column: str, ids: list[str] | None) -> str:
    return "" if ids is None else f"AND {column} IN ({sql_strings(ids)})"


@dataclass
class _Bank:
    version: int
    rows: dict[str, Row]
    entities: dict[str, tuple[str, str]]  # entity id -> (name, kind)
    supersedes: SupersedesChains
    # Moves whenever rows are dropped: rows read before a move are not kept.
    epoch: int = 0
    # Per row, the bank's access count moves its count reflects (a shared store's).
    counted_at: dict[str, int] = field(default_factory=dict)
    # memory id -> its stored vector, as the vector store returned it
    vectors: dict[str, np.ndarray] = field(default_factory=dict)
    # every vector of the bank, read on a thread of its own (store/vector_copy.py)
    vector_copy: VectorCopy | None = None
    # memory id -> its pieces' vectors (retain/pieces.py), None for a memory without pieces
    pieces: dict[str, np.ndarray | None] = field(default_factory=dict)
    # Moves whenever ``entities`` is replaced by a larger one.
    entities_read: int = 0
    # memory id -> (its row, ``entities_read`` then, the row's entities as sorted (name, kind)
    # pairs, the row's Memory), as :meth:`memory` last found them
    kinds: dict[str, tuple[Row, int, EntityKinds, Memory]] = field(default_factory=dict)

    def memory(self, row: Row) -> tuple[Memory, EntityKinds]:
        read = self.entities_read  # before the entities: a newer read is not taken for it
        entities = self.entities
        known = self.kinds.get(row[0])
        if known is None or known[0] is not row or known[1] != read:
            pairs = tuple(sorted(entities[e] for e in row[7] if e in entities))
            parts = (*row[:7], tuple(name for name, _ in pairs), *row[8:_HAS_PIECES])
            known = self.kinds[row[0]] = (row, read, pairs, memory_from_parts(parts))
        return known[3], known[2]


class VectorReader(Protocol):
    """What the copies read vectors from (the engine's vector store, either backend)."""

    def holds_copy(self, collection: str) -> bool:
        """Whether the store answers for the collection from an exact copy in this process
        (``store/flat_index.py``), read now if it may hold one."""
        ...

    def get_vectors(self, collection: str, ids: Sequence[str]) -> dict[str, np.ndarray]: ...


class RecallRows:
    """Per-bank copies of recall's candidate rows, ``supersedes`` links and stored vectors."""

    def __init__(
        self,
        db: Database,
        vectors: VectorReader,
        version: Callable[[str], int],
        accesses: Callable[[str], int],
    ) -> None:
        self._db = db
        self._vectors = vectors
        self._version = version
        self._accesses = accesses
        # Other processes' recalls count accesses too (see the module docstring).
        self._counts_elsewhere = not changes.is_local(db)
        self._banks: dict[str, _Bank] = {}
        # Banks with a whole copy of their vectors, least lately used first -> its size.
        self._copied: OrderedDict[str, int] = OrderedDict()
        self._lock = threading.RLock()

    def memories(self, bank_id: str, ids: Sequence[str]) -> dict[str, tuple[Memory, EntityKinds]]:
        """As ``load_memories_with_kinds`` without filters: the bank's memories among ``ids``,
        the values the copy keeps (read them; a caller hands out copies, see the module
        docstring)."""
        accesses = self._accesses(bank_id) if self._counts_elsewhere else 0  # before any read
        bank = self._current(bank_id)
        wanted = list(dict.fromkeys(ids))
        # The rows held now: another thread may drop some while this one reads the others (a
        # reinforcing recall that committed, a change replayed), and what was held then is
        # what this call was going to return.
        held = {i: row for i in wanted if (row := bank.rows.get(i)) is not None}
        plain, other = split_plain_ids(i for i in wanted if i not in held)
        read: dict[str, Row] = {}
        if plain:
            epoch = bank.epoch
            read = {row[0]: row for row in self._rows(bank_id, plain)}
            self._add_entities(bank, bank_id, read.values())
            with self._lock:
                if bank.epoch == epoch and self._banks.get(bank_id) is bank:
                    bank.rows.update(read)
                    bank.counted_at.update(dict.fromkeys(read, accesses))
        found = load_memories_with_kinds(self._db, bank_id, other) if other else {}
        rows = {i: row for i in wanted if (row := held.get(i) or read.get(i)) is not None}
        if self._counts_elsewhere:
            stale = {i: row for i, row in rows.items() if bank.counted_at.get(i) != accesses}
            if stale:
                epoch = bank.epoch
                counted = self._with_current_counts(bank_id, stale)
                rows.update(counted)
                with self._lock:
                    if bank.epoch == epoch and self._banks.get(bank_id) is bank:
                        bank.rows.update((i, row) for i, row in counted.items() if i in bank.rows)
                        bank.counted_at.update(dict.fromkeys(counted, accesses))
        for memory_id, row in rows.items():
            found[memory_id] = bank.memory(row)
        return {memory_id: found[memory_id] for memory_id in wanted if memory_id in found}

    def vectors(self, bank_id: str, collection: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """As the vector store's ``get_vectors(collection, ids)`` for the bank's collection.

        A store that holds an exact copy of the collection in this process (an embedded bank
        of at most ``FLAT_MAX`` memories) answers from it, so those are not copied here too."""
        if self._vectors.holds_copy(collection):
            return self._vectors.get_vectors(collection, ids)
        copy = self._vector_copy(bank_id, collection)
        held = copy.get(ids) if copy is not None else {}
        if len(held) == len(ids):
            return held
        return held | self._read_through(
            bank_id,
            [i for i in ids if i not in held],
            lambda bank: bank.vectors,
            # Absent vectors are not kept: a vector still staged arrives after its change.
            lambda missing: self._vectors.get_vectors(collection, missing),
        )

    def wait_for_vectors(self, bank_id: str, timeout: float | None = None) -> bool:
        """Wait until the bank's whole copy of its vectors is read, if one is being read
        (it starts at the bank's first :meth:`vectors`); whether none is still being read."""
        bank = self._banks.get(bank_id)
        copy = None if bank is None else bank.vector_copy
        return copy is None or copy.wait(timeout)

    def close(self) -> None:
        """Stop reading vectors (before the vector store closes)."""
        with self._lock:
            copies = [bank.vector_copy for bank in self._banks.values() if bank.vector_copy]
            self._banks.clear()
            self._copied.clear()
        for copy in copies:
            copy.stop()

    def _vector_copy(self, bank_id: str, collection: str) -> VectorCopy | None:
        """The bank's whole copy of its vectors, started at its first use (a bank of at most
        :data:`VECTORS_COPIED` memories, dropping the copies of the banks used least lately
        to make room)."""
        with self._lock:  # the bank at its current version, as no other call replaces it
            bank = self._current(bank_id)
            if bank.vector_copy is not None:
                self._copied.move_to_end(bank_id)
                return bank.vector_copy
            size = len(bank.rows)
            if not 0 < size <= VECTORS_COPIED:
                return None
            while sum(self._copied.values()) + size > VECTORS_COPIED:
                self._drop_copy(next(iter(self._copied)))
            bank.vector_copy = VectorCopy(
                list(bank.rows), lambda ids: self._vectors.get_vectors(collection, ids)
            )
            bank.vector_copy.start()
            self._copied[bank_id] = size
            return bank.vector_copy

    def _drop_copy(self, bank_id: str) -> None:
        """Stop and drop the bank's whole copy of its vectors (call with the lock held)."""
        self._copied.pop(bank_id, None)
        bank = self._banks.get(bank_id)
        if bank is not None and bank.vector_copy is not None:
            bank.vector_copy.stop(wait=False)  # a batch being read lands in the dropped copy
            bank.vector_copy = None

    def pieces(self, bank_id: str, ids: Sequence[str], dimension: int) -> dict[str, np.ndarray]:
        """As :func:`~agentmem.store.records.load_pieces` for the bank's memories ``ids``."""

        def read(missing: list[str]) -> dict[str, np.ndarray | None]:
            # A row in the copy says whether its memory has pieces: most have none.
            bank = self._banks.get(bank_id)
            rows = {} if bank is None else bank.rows
            unknown = [i for i in missing if (row := rows.get(i)) is None or row[_HAS_PIECES]]
            found = load_pieces(self._db, bank_id, unknown, dimension) if unknown else {}
            return {memory_id: found.get(memory_id) for memory_id in missing}

        return self._read_through(bank_id, ids, lambda bank: bank.pieces, read)

    def _read_through(
        self,
        bank_id: str,
        ids: Sequence[str],
        kept: Callable[[_Bank], dict[str, Any]],
        read: Callable[[list[str]], dict[str, Any]],
    ) -> dict[str, Any]:
        """The values of ``ids`` in one of the bank's per-memory copies (``kept``), those it
        lacks ``read`` and kept (at most :data:`VECTORS_KEPT`); ids whose value is None or was
        not read are absent."""
        bank = self._current(bank_id)
        copy = kept(bank)
        held = {i: value for i in ids if (value := copy.get(i)) is not None or i in copy}
        missing = [memory_id for memory_id in ids if memory_id not in held]
        fresh: dict[str, Any] = {}
        if missing:
            epoch = bank.epoch
            fresh = read(missing)
            with self._lock:
                if bank.epoch == epoch and self._banks.get(bank_id) is bank:
                    if len(copy) + len(fresh) > VECTORS_KEPT:
                        copy.clear()
                    copy.update(fresh)
        found = {}
        for memory_id in ids:
            value = held.get(memory_id)  # as held when this call began (see memories)
            if value is None:
                value = fresh.get(memory_id)
            if value is not None:
                found[memory_id] = value
        return found

    def supersedes_chains(self, bank_id: str) -> SupersedesChains:
        """The bank's ``supersedes`` links, by memory and chain."""
        return self._current(bank_id).supersedes

    def counted(self, bank_id: str, ids: Sequence[str]) -> None:
        """Drop the rows whose access count a committed reinforcement changed."""
        with self._lock:
            bank = self._banks.get(bank_id)
            if bank is not None:
                bank.epoch += 1
                for memory_id in ids:
                    bank.rows.pop(memory_id, None)

    def _current(self, bank_id: str) -> _Bank:
        with self._lock:
            bank = self._banks.get(bank_id)
            version = self._version(bank_id)  # before any read: a later write is seen next time
            if bank is not None and bank.version == version:
                return bank
            log = None if bank is None else changes.changes_since(self._db, bank_id, bank.version)
            if bank is None or log is None or any(c.kind in _RELOAD_KINDS for c in log):
                self._drop_copy(bank_id)  # its reads are of the old bank
                bank = self._banks[bank_id] = self._load(bank_id, version)
                return bank
            for change in log:
                for memory_id in change.memory_ids:
                    bank.rows.pop(memory_id, None)
                    bank.vectors.pop(memory_id, None)
                    bank.pieces.pop(memory_id, None)
                if bank.vector_copy is not None:
                    bank.vector_copy.drop(change.memory_ids)
            named = sorted({e for change in log for e in change.entity_ids})
            entities = dict(bank.entities)
            for entity_id in named:
                entities.pop(entity_id, None)
            if named:
                entities.update(self._entities(bank_id, named))
            fresh = _Bank(
                version,
                bank.rows,
                entities,
                read_chains(self._db, bank_id),
                epoch=bank.epoch + 1,
                counted_at=bank.counted_at,
                vectors=bank.vectors,
                vector_copy=bank.vector_copy,
                pieces=bank.pieces,
            )
            self._banks[bank_id] = fresh
            return fresh

    def _load(self, bank_id: str, version: int) -> _Bank:
        with collection_paused():  # a tuple and lists per row
            rows = {row[0]: row for row in self._rows(bank_id, None)}
            return _Bank(
                version, rows, self._entities(bank_id, None), read_chains(self._db, bank_id)
            )

    def _rows(self, bank_id: str, ids: list[str] | None) -> list[Row]:
        """The rows as :func:`memory_parts` converts them (times aware, entity ids and tags
        as tuples), once when read rather than at every Memory built from them: a row then
        holds no object the garbage collector tracks (the metadata stays JSON text), so a
        bank's copy adds nothing to a full collection's work."""
        sql = _ROWS.replace("{me_ids}", _listed("memory_id", ids))
        rows = self._db.fetchall(sql.replace("{m_ids}", _listed("m.id", ids)), {"bank": bank_id})
        return [(*memory_parts(row[:_HAS_PIECES]), *row[_HAS_PIECES:]) for row in rows]

    def _with_current_counts(self, bank_id: str, rows: dict[str, Row]) -> dict[str, Row]:
        """The rows with the access counts the store holds now (a row gone since keeps its
        own: the caller finds out it is gone where it matters, as with any read)."""
        counts = dict(memories_by_id(self._db, bank_id, rows, "m.id, m.access_count"))
        return {
            memory_id: row
            if counts.get(memory_id, row[_ACCESS_COUNT]) == row[_ACCESS_COUNT]
            else (*row[:_ACCESS_COUNT], counts[memory_id], *row[_ACCESS_COUNT + 1 :])
            for memory_id, row in rows.items()
        }

    def _entities(self, bank_id: str, ids: list[str] | None) -> dict[str, tuple[str, str]]:
        sql = _ENTITIES.replace("{ids}", _listed("id", ids))
        return {i: (name, kind) for i, name, kind in self._db.fetchall(sql, {"bank": bank_id})}

    def _add_entities(self, bank: _Bank, bank_id: str, rows: Any) -> None:
        """Read the entities of rows read late that the copy does not know yet."""
        unknown = sorted({e for row in rows for e in row[7]} - bank.entities.keys())
        if unknown:
            with self._lock:
                bank.entities = {**bank.entities, **self._entities(bank_id, unknown)}
                bank.entities_read += 1
