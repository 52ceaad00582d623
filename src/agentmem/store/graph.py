"""The memory graph of a bank, mirrored from DuckDB into compact arrays and kept current in place.

DuckDB is the system of record (``memory_entities`` and ``links``); recall walks this mirror
instead of issuing a query per hop. The mirror is loaded once per bank per process, on first
use, and then updated incrementally by every write: ``retain`` adds the new memories with their
edges, ``link`` adds an edge, ``forget`` removes memories (and entities left without memories),
entity corrections refresh the entities they touch, ``delete_bank`` drops it. It is never
rebuilt per query. A write that fails after touching the mirror drops it, so the next use
reloads it from the store.

Nodes are memory ids and entity ids (with ``name``, ``kind`` and ``aliases``); ids never
collide (both are random hex). One pair holds at most one edge of each kind: "entity"
(memory → entity it mentions), "followed_by", "caused_by", "semantic", "temporal", "related",
"supersedes", "part_of".

Layout: a bank of 100k memories holds about a million edges, and a networkx graph spent over
600 bytes on each (a dict per edge and per neighbour, both ways). Here every node is a slot
number, and a slot's edges, both directions, are two arrays: an int64 code per edge
(neighbour slot, direction bit, kind) and its float64 weight (exactly the stored one). Outgoing
edges come first, each direction in the order the edges were added, as networkx gave them: walks
break ties by the order they meet nodes in. Removing nodes rebuilds the arrays of their
neighbours only; freed slots are reused.
"""

from __future__ import annotations

import math
import threading
from array import array
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import networkx as nx
import numpy as np

from agentmem.store.bulk import bulk_read, collection_paused, fetch_arrays
from agentmem.store.records import from_db_time, json_list, sql_list

if TYPE_CHECKING:
    from agentmem.store.changes import Change
    from agentmem.store.database import Database

#: Kinds whose direction carries meaning: ``a caused_by b`` (b is a cause of a),
#: ``a followed_by b`` (b came after a), ``a supersedes b`` (a newer statement of what b
#: said) and ``a part_of b`` (a is a clause of b's text). The others are symmetric.
DIRECTED_KINDS: frozenset[str] = frozenset({"caused_by", "followed_by", "supersedes", "part_of"})
#: Every edge kind, in the order of their codes.
EDGE_KINDS: tuple[str, ...] = (
    "entity",
    "followed_by",
    "caused_by",
    "semantic",
    "temporal",
    "related",
    "supersedes",
    "part_of",
)

_KIND_CODE = {kind: code for code, kind in enumerate(EDGE_KINDS)}
_ENTITY_CODE = _KIND_CODE["entity"]
_PART_OF_CODE = _KIND_CODE["part_of"]
_KIND_MASK = 0b111
_OUTGOING = 0b1000  # the edge leaves the slot whose array holds it
_SLOT_SHIFT = 4
#: An edge code's parts (see :meth:`MemoryGraph.edge_codes`).
SLOT_SHIFT, KIND_MASK = _SLOT_SHIFT, _KIND_MASK
_IDS = sql_list("ids")  # lists are bound as JSON text (see store/records.py)
_BATCH_ROWS = 10_000

# What a load reads (in one snapshot). The bank's nodes numbered as the mirror's slots: its
# memories in the order of their ids, then the entities they mention in the order of theirs.
_MEMORY_NODES = (
    "SELECT id, CAST(epoch_us(mentioned_at) AS int8), seq FROM memories WHERE bank_id = $bank "
    "ORDER BY id"
)
# The entities the bank's memories mention.
_MENTIONED = """mentioned AS (
    SELECT DISTINCT me.entity_id AS id FROM memory_entities AS me
    JOIN memories AS m ON m.id = me.memory_id
    JOIN entities AS e ON e.id = me.entity_id
    WHERE me.bank_id = $bank AND m.bank_id = $bank
)"""
_NODES = f"""
WITH memory_slots AS (
    SELECT id, row_number() OVER (ORDER BY id) - 1 AS slot FROM memories WHERE bank_id = $bank
), {_MENTIONED}, entity_slots AS (
    SELECT id, (SELECT count(*) FROM memory_slots) + row_number() OVER (ORDER BY id) - 1 AS slot
    FROM mentioned
), nodes AS (SELECT * FROM memory_slots UNION ALL SELECT * FROM entity_slots)
"""
# The entities in the order of their slots (their ids): no memory's slot is needed for it.
_ENTITY_NODES = f"""
WITH {_MENTIONED}
SELECT e.id, e.name, e.kind, e.aliases FROM entities AS e JOIN mentioned ON mentioned.id = e.id
ORDER BY e.id
"""
# Every edge as slots: the memories' mentions of entities (part 0), then the links (part 1).
_EDGES = f"""
SELECT CAST(m.slot AS int8) AS src, CAST(e.slot AS int8) AS dst, CAST(0 AS int8) AS kind,
       CAST(1.0 AS float8) AS weight, CAST(0 AS int8) AS part
FROM memory_entities AS me
JOIN memory_slots AS m ON m.id = me.memory_id
JOIN entity_slots AS e ON e.id = me.entity_id
WHERE me.bank_id = $bank
UNION ALL
SELECT CAST(s.slot AS int8), CAST(d.slot AS int8),
       CAST(CASE l.kind {" ".join(f"WHEN '{k}' THEN {c}" for c, k in enumerate(EDGE_KINDS))} END
            AS int8),
       CAST(l.weight AS float8), CAST(1 AS int8)
FROM links AS l JOIN nodes AS s ON s.id = l.src_id JOIN nodes AS d ON d.id = l.dst_id
WHERE l.bank_id = $bank AND l.kind IN ({", ".join(f"'{k}'" for k in EDGE_KINDS)})
"""
_EDGE_COLUMNS = {"src": "int8", "dst": "int8", "kind": "int8", "weight": "float8", "part": "int8"}


class _Entity(NamedTuple):
    name: str
    kind: str
    aliases: tuple[str, ...]


class MemoryGraph:
    """One bank's graph. Readers and writers synchronise on :attr:`lock`.

    Attributes:
        lock: Held while reading or changing the graph; traversals are bounded by a budget,
            so holding it for one walk is short.
    """

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self._slots: dict[str, int] = {}
        self._node_ids: list[str] = []  # slot -> node id; "" marks a free slot
        self._free: list[int] = []
        # slot -> its edges: neighbour slot << _SLOT_SHIFT | _OUTGOING or 0 | kind code
        self._codes: list[array[int]] = []
        self._weights: list[array[float]] = []  # slot -> the weights of those edges
        self._out_degree = array("q")  # slot -> how many of its edges, first, are outgoing
        self._times = array("d")  # slot -> mentioned_at as a POSIX timestamp (memories)
        self._seqs = array("q")  # slot -> the memory's seq: the order it was retained in
        self._ties: list[str] = []  # slot -> its place among nodes of equal activation
        self._entity_flags = bytearray()  # slot -> 1 for an entity
        self._entities: dict[str, _Entity] = {}
        # casefolded name or alias -> entity ids, for "entities named in the query".
        self._names: dict[str, set[str]] = {}
        #: Moves whenever an entity is set or removed (what is derived from the bank's names
        #: is kept until it moves).
        self.names_version = 0
        #: Moves whenever a node, an edge or a time changes (what is derived from the graph's
        #: edges is kept until it moves).
        self.version = 0
        # "part_of" edges ever added since the load (removals aside): none, no parts.
        self._part_edges = 0

    # -- loading and writing ---------------------------------------------------------------

    @classmethod
    def load(cls, cur: Any, bank_id: str) -> MemoryGraph:
        """Build the mirror of a bank from the store (``cur``: one snapshot of it).

        Four bulk reads: the memories (slots by id), the entities they mention (slots by id,
        after them), and every edge as a pair of slots, which SQL computes and which arrive
        as numpy arrays (no Python object per edge: a 100k bank has about a million). Edges
        are laid out in the order of (source, target, kind), so both backends build the same
        mirror of the same bank.
        """
        params = {"bank": bank_id}
        with collection_paused():
            bulk_read(cur)
            memories = cur.execute(_MEMORY_NODES, params).fetchall()
            entities = cur.execute(_ENTITY_NODES, params).fetchall()
            edges = fetch_arrays(cur, _NODES + _EDGES, params, _EDGE_COLUMNS)
            ids = [memory_id for memory_id, _, _ in memories]
            times = np.array([at for _, at, _ in memories], dtype=np.float64)
            seqs = np.array([seq for _, _, seq in memories], dtype=np.int64)
            graph = cls()
            graph._fill(ids, times / 1e6, seqs, entities, edges)
        return graph

    def _fill(
        self,
        memory_ids: list[str],
        times: np.ndarray,
        seqs: np.ndarray,
        entities: Sequence[tuple[str, str, str, Any]],
        edges: dict[str, np.ndarray],
    ) -> None:
        """Lay out an empty graph: memories in slots from 0 with their times (seconds) and
        seqs, entities (id, name, kind, aliases) in the slots after them, and the edges between
        slots (``src``, ``dst``, ``kind`` code, ``weight``, in ``part`` order). Of edges of one
        source, target and kind, the first is kept with the last one's weight (as
        :meth:`_set_edge` replaces a weight)."""
        node_ids = [*memory_ids, *(row[0] for row in entities)]
        count = len(node_ids)
        src, dst, kinds = edges["src"], edges["dst"], edges["kind"]
        key = (src * count + dst) * len(EDGE_KINDS) + kinds
        order = np.argsort(key * 2 + edges["part"], kind="stable")
        key, src, dst, kinds, weights = (a[order] for a in (key, src, dst, kinds, edges["weight"]))
        first, last = np.ones(len(key), dtype=bool), np.ones(len(key), dtype=bool)
        first[1:] = last[:-1] = key[1:] != key[:-1]
        src, dst, kinds, weights = src[first], dst[first], kinds[first], weights[last]
        # Each edge twice, in the arrays of both its ends; a stable sort by the holding slot
        # keeps each slot's outgoing edges (the first half) before its incoming ones.
        holder = np.concatenate([src, dst])
        codes = np.concatenate(
            [dst << _SLOT_SHIFT | _OUTGOING | kinds, src << _SLOT_SHIFT | kinds]
        ).astype(np.int64)
        order = np.argsort(holder, kind="stable")
        code_bytes = codes[order].tobytes()
        weight_bytes = np.concatenate([weights, weights])[order].astype(np.float64).tobytes()
        ends = (np.cumsum(np.bincount(holder, minlength=count)) * 8).tolist()
        starts = [0, *ends][:-1]
        self._node_ids = node_ids
        self._slots = dict(zip(node_ids, range(count), strict=True))
        self._codes = [array("q", code_bytes[a:b]) for a, b in zip(starts, ends, strict=True)]
        self._weights = [array("d", weight_bytes[a:b]) for a, b in zip(starts, ends, strict=True)]
        self._out_degree = array("q", np.bincount(src, minlength=count).astype(np.int64).tobytes())
        all_times = np.zeros(count, dtype=np.float64)
        all_times[: len(memory_ids)] = times
        self._times = array("d", all_times.tobytes())
        all_seqs = np.zeros(count, dtype=np.int64)
        all_seqs[: len(memory_ids)] = seqs
        self._seqs = array("q", all_seqs.tobytes())
        self._ties = [*map(_memory_tie, seqs.tolist()), *([""] * len(entities))]
        self._entity_flags = bytearray(count)  # each entity's set by _set_entity
        self._part_edges = int(np.count_nonzero(kinds == _PART_OF_CODE))
        for entity_id, name, kind, aliases in entities:
            self._set_entity(entity_id, _Entity(name, kind, tuple(aliases or ())))

    def sync_memories(self, cur: Any, bank_id: str, memory_ids: list[str]) -> None:
        """Add these memories as the store (``cur``, maybe mid-transaction) has them.

        Reads the memories, their entities (with current names) and every link touching them,
        whoever wrote it, so link kinds added by other stages need no hook of their own.
        """
        if not memory_ids:
            return
        rows = _batched(
            cur,
            f"SELECT id, mentioned_at, seq FROM memories WHERE bank_id = $bank AND "
            f"list_contains({_IDS}, id)",
            bank_id,
            memory_ids,
        )
        with self.lock:
            self._add_memories(rows)
            self._add_entity_rows(_entity_rows(cur, bank_id, memory_ids))
            self._add_link_rows(_link_rows(cur, bank_id, memory_ids))

    def catch_up(self, cur: Any, bank_id: str, log: Sequence[Change]) -> bool:
        """Apply writes made through other processes (store/changes.py): the memories they
        touched are read again from the store (or dropped if gone), the entities corrected
        are refreshed. Replaying a change already applied changes nothing."""
        memory_ids = sorted({m for c in log for m in c.memory_ids})
        entity_ids = sorted({e for c in log if c.kind == "correct" for e in c.entity_ids})
        with self.lock:
            if memory_ids:
                present = {
                    row[0]
                    for row in _batched(
                        cur,
                        f"SELECT id FROM memories WHERE bank_id = $bank AND "
                        f"list_contains({_IDS}, id)",
                        bank_id,
                        memory_ids,
                    )
                }
                self.remove_memories([m for m in memory_ids if m not in present])
                self.sync_memories(cur, bank_id, sorted(present))
            if entity_ids:
                self.refresh_entities(cur, bank_id, entity_ids)
        return True

    def add_link(self, src: str, dst: str, kind: str, weight: float) -> None:
        """Add or replace the ``kind`` edge from ``src`` to ``dst``."""
        with self.lock:
            self._set_edge(src, dst, kind, weight)

    def remove_memories(self, memory_ids: Iterable[str]) -> None:
        """Drop memories with their edges, and entities no memory mentions any more."""
        with self.lock:
            doomed = {
                self._slots[m] for m in memory_ids if m in self._slots and m not in self._entities
            }
            mentioned = {
                self._node_ids[code >> _SLOT_SHIFT]
                for slot in doomed
                for code in self._codes[slot]
                if code & _KIND_MASK == _ENTITY_CODE
            }
            self._remove_slots(doomed)
            self._remove_entities([e for e in mentioned if not self._codes[self._slots[e]]])

    def refresh_entities(self, cur: Any, bank_id: str, entity_ids: Iterable[str]) -> None:
        """Reload these entities and their memory edges from the store (after a correction)."""
        ids = list(entity_ids)
        with self.lock:
            self._remove_entities(ids)
            rows = cur.execute(
                "SELECT me.memory_id, e.id, e.name, e.kind, e.aliases FROM memory_entities AS me "
                "JOIN entities AS e ON e.id = me.entity_id "
                f"WHERE me.bank_id = $bank AND list_contains({_IDS}, e.id)",
                {"bank": bank_id, "ids": json_list(ids)},
            ).fetchall()
            self._add_entity_rows(rows)

    def _add_memories(self, rows: Iterable[tuple[str, Any, int]]) -> None:
        """Set (or add) memories from ``(id, mentioned_at, seq)`` rows."""
        self.version += 1
        for memory_id, mentioned_at, seq in rows:
            when = from_db_time(mentioned_at)
            slot = self._slot_of(memory_id)
            self._times[slot] = when.timestamp() if when else 0.0
            self._seqs[slot] = int(seq)
            self._ties[slot] = _memory_tie(int(seq))

    def _add_entity_rows(self, rows: Iterable[tuple[str, str, str, str, Any]]) -> None:
        for memory_id, entity_id, name, kind, aliases in rows:
            if memory_id not in self._slots:
                continue
            self._set_entity(entity_id, _Entity(name, kind, tuple(aliases or ())))
            self._set_edge(memory_id, entity_id, "entity", 1.0)

    def _add_link_rows(self, rows: Iterable[tuple[str, str, str, float]]) -> None:
        for src, dst, kind, weight in rows:
            self._set_edge(src, dst, kind, float(weight))

    def _slot_of(self, node: str) -> int:
        """The node's slot, taking a free one (or a new one) for a new node."""
        slot = self._slots.get(node)
        if slot is not None:
            return slot
        self.version += 1
        if self._free:
            slot = self._free.pop()
            self._node_ids[slot] = node
        else:
            slot = len(self._node_ids)
            self._node_ids.append(node)
            self._codes.append(array("q"))
            self._weights.append(array("d"))
            self._out_degree.append(0)
            self._times.append(0.0)
            self._seqs.append(0)
            self._ties.append("")
            self._entity_flags.append(0)
        self._slots[node] = slot
        return slot

    def _set_edge(self, src: str, dst: str, kind: str, weight: float) -> None:
        """Add or reweight an edge between two nodes of the graph (else do nothing)."""
        a, b = self._slots.get(src), self._slots.get(dst)
        if a is None or b is None:
            return
        self.version += 1
        code = _KIND_CODE[kind]
        # The direction bit tells the two apart, so each matches on its own side only.
        out, back = b << _SLOT_SHIFT | _OUTGOING | code, a << _SLOT_SHIFT | code
        if out in self._codes[a]:
            self._weights[a][self._codes[a].index(out)] = weight
            self._weights[b][self._codes[b].index(back)] = weight
        else:
            end = self._out_degree[a]
            self._codes[a].insert(end, out)
            self._weights[a].insert(end, weight)
            self._out_degree[a] = end + 1
            self._codes[b].append(back)
            self._weights[b].append(weight)
            self._part_edges += code == _PART_OF_CODE

    def _remove_slots(self, doomed: set[int]) -> None:
        """Free these slots, first dropping their edges from their neighbours' arrays."""
        self.version += 1
        neighbours = {code >> _SLOT_SHIFT for slot in doomed for code in self._codes[slot]}
        for slot in neighbours - doomed:
            codes, weights = self._codes[slot], self._weights[slot]
            kept = [i for i, code in enumerate(codes) if code >> _SLOT_SHIFT not in doomed]
            self._codes[slot] = array("q", [codes[i] for i in kept])
            self._weights[slot] = array("d", [weights[i] for i in kept])
            self._out_degree[slot] = sum(1 for code in self._codes[slot] if code & _OUTGOING)
        for slot in doomed:
            del self._slots[self._node_ids[slot]]
            self._node_ids[slot] = ""
            self._codes[slot] = array("q")
            self._weights[slot] = array("d")
            self._out_degree[slot] = 0
            self._times[slot] = 0.0
            self._seqs[slot] = 0
            self._ties[slot] = ""
            self._entity_flags[slot] = 0
            self._free.append(slot)

    def _set_entity(self, entity_id: str, entity: _Entity) -> None:
        self.names_version += 1
        self.version += 1
        old = self._entities.get(entity_id)
        if old is not None:
            for alias in (old.name, *old.aliases):
                self._names.get(alias.casefold(), set()).discard(entity_id)
        slot = self._slot_of(entity_id)
        self._entity_flags[slot] = 1
        self._ties[slot] = f"1{entity.name.casefold()}\0{entity.kind}\0{entity_id}"
        self._entities[entity_id] = entity
        for alias in (entity.name, *entity.aliases):
            self._names.setdefault(alias.casefold(), set()).add(entity_id)

    def _remove_entities(self, entity_ids: Iterable[str]) -> None:
        self.names_version += 1
        self.version += 1
        doomed: set[int] = set()
        for entity_id in entity_ids:
            entity = self._entities.pop(entity_id, None)
            if entity is None:
                continue
            for alias in (entity.name, *entity.aliases):
                ids = self._names.get(alias.casefold())
                if ids is not None:
                    ids.discard(entity_id)
                    if not ids:
                        del self._names[alias.casefold()]
            doomed.add(self._slots[entity_id])
        self._remove_slots(doomed)

    # -- reading (call with ``lock`` held) ---------------------------------------------------

    def __contains__(self, node: object) -> bool:
        return node in self._slots

    @property
    def memory_count(self) -> int:
        """Number of memory nodes."""
        return len(self._slots) - len(self._entities)

    def is_entity(self, node: str) -> bool:
        """Whether ``node`` is an entity (else a memory)."""
        return node in self._entities

    def mentioned_at(self, memory_id: str) -> float:
        """When a memory was mentioned, as a POSIX timestamp (for recency ties)."""
        return self._times[self._slots[memory_id]]

    def entity_info(self, entity_id: str) -> tuple[str, str, tuple[str, ...]]:
        """An entity's canonical name, kind and aliases."""
        entity = self._entities[entity_id]
        return entity.name, entity.kind, entity.aliases

    def entity_ids_named(self, name: str) -> set[str]:
        """Entities whose name or an alias is ``name`` (case-insensitive)."""
        return set(self._names.get(name.casefold(), ()))

    def name_keys(self) -> Iterator[str]:
        """Every casefolded entity name and alias."""
        return iter(self._names)

    def entity_specificity(self, entity_id: str) -> float:
        """How much an entity says about a memory: 1 for one mention, near 0 for a hub.

        An IDF, ``log(1 + N/df) / log(1 + N)``: activation through "the user", mentioned by
        half the bank, must not flood the walk, while a rare name links strongly.
        """
        return self.specificity_at(self._slots[entity_id])

    @property
    def has_parts(self) -> bool:
        """Whether a memory may be a part of another: False only when no "part_of" edge was
        added since the graph was loaded."""
        return self._part_edges > 0

    def whole_of(self, memory_id: str) -> str | None:
        """The memory that ``memory_id`` is a part of (its "part_of" link), if any."""
        slot = self._slots.get(memory_id)
        if slot is None:
            return None
        codes = self._codes[slot]
        for i in range(self._out_degree[slot]):  # outgoing edges come first
            if codes[i] & _KIND_MASK == _PART_OF_CODE:
                return self._node_ids[codes[i] >> _SLOT_SHIFT]
        return None

    def edges_of(self, node: str) -> Iterator[tuple[str, str, float, bool]]:
        """(neighbour, kind, weight, outgoing) for every edge touching ``node``."""
        slot = self._slots.get(node)
        if slot is None:
            return
        node_ids = self._node_ids
        for code, weight in zip(self._codes[slot], self._weights[slot], strict=True):
            yield (
                node_ids[code >> _SLOT_SHIFT],
                EDGE_KINDS[code & _KIND_MASK],
                weight,
                bool(code & _OUTGOING),
            )

    # -- reading by slot, for walks (call with ``lock`` held, slots valid until it is released)

    def slot(self, node: str) -> int | None:
        """The node's slot, None if it is not in the graph."""
        return self._slots.get(node)

    def node_at(self, slot: int) -> str:
        """The id of the node in ``slot``."""
        return self._node_ids[slot]

    @property
    def slot_count(self) -> int:
        """Slots in use or free: every slot is below this."""
        return len(self._node_ids)

    def is_entity_slot(self, slot: int) -> bool:
        """Whether ``slot`` holds an entity."""
        return self._entity_flags[slot] == 1

    def entity_slot_flags(self) -> np.ndarray:
        """:meth:`is_entity_slot` of every slot, as a boolean array (a copy)."""
        return np.frombuffer(bytes(self._entity_flags), dtype=np.bool_)

    def entity_flags_at(self, slots: np.ndarray) -> np.ndarray:
        """:meth:`is_entity_slot` of each of ``slots`` (int64), as a boolean array (a copy)."""
        return np.frombuffer(self._entity_flags, dtype=np.bool_)[slots]

    def edge_codes(self, slot: int) -> tuple[Sequence[int], Sequence[float]]:
        """The edges touching ``slot``, in the order :meth:`edges_of` gives them: a code per
        edge (``code >> SLOT_SHIFT`` the neighbour's slot, ``code & KIND_MASK`` the index of
        its kind in :data:`EDGE_KINDS`) and its weight. Read them before the graph changes.
        """
        return self._codes[slot], self._weights[slot]

    def degree_at(self, slot: int) -> int:
        """How many edges touch ``slot``."""
        return len(self._codes[slot])

    def specificity_at(self, slot: int) -> float:
        """:meth:`entity_specificity` of the entity in ``slot``."""
        n = max(2, self.memory_count)
        # An entity's only edges are "entity" edges, one from each memory mentioning it.
        df = max(1, len(self._codes[slot]))
        return math.log(1 + n / df) / math.log(1 + n)

    def mentioned_at_slot(self, slot: int) -> float:
        """:meth:`mentioned_at` of the memory in ``slot``."""
        return self._times[slot]

    def seq_at(self, slot: int) -> int:
        """The seq of the memory in ``slot``: the order it was retained in (for ties of
        mention time, which a session's turns share)."""
        return self._seqs[slot]

    def seqs_at(self, slots: np.ndarray) -> np.ndarray:
        """:meth:`seq_at` of each of ``slots`` (int64), as an array (a copy)."""
        return np.frombuffer(self._seqs, dtype=np.int64)[slots]

    def mentioned_at_slots(self, slots: np.ndarray) -> np.ndarray:
        """:meth:`mentioned_at_slot` of each of ``slots`` (int64), as an array (a copy)."""
        return np.frombuffer(self._times, dtype=np.float64)[slots]

    def tie_at(self, slot: int) -> str:
        """Where the node in ``slot`` goes among nodes of equal activation: memories first,
        newest retained first, then entities by name and kind. Made of what two stores that
        retained the same hold alike (not of ids, which are random), so a walk over either
        expands the same nodes."""
        return self._ties[slot]

    def ties(self) -> Sequence[str]:
        """:meth:`tie_at` of every slot, indexed by slot: the graph's own list, for a walk's
        inner loop (read it with the lock held; never change it)."""
        return self._ties

    def export(self, texts: dict[str, str]) -> nx.MultiDiGraph:
        """A public copy: entity nodes named by their canonical name (``name (kind)`` when two
        entities share a name), memory nodes by id with their ``text``."""
        with self.lock:
            counts: dict[str, int] = {}
            for entity in self._entities.values():
                counts[entity.name] = counts.get(entity.name, 0) + 1
            label: list[str] = []
            out = nx.MultiDiGraph()
            for node in self._node_ids:
                entity = self._entities.get(node)
                if not node:
                    label.append("")
                elif entity is None:
                    label.append(node)
                    out.add_node(node, type="memory", text=texts.get(node, ""))
                else:
                    name = entity.name
                    label.append(name if counts[name] == 1 else f"{name} ({entity.kind})")
                    out.add_node(
                        label[-1],
                        type="entity",
                        kind=entity.kind,
                        aliases=entity.aliases,
                        entity_id=node,
                    )
            for slot, codes in enumerate(self._codes):
                for code, weight in zip(codes, self._weights[slot], strict=True):
                    if code & _OUTGOING:
                        kind = EDGE_KINDS[code & _KIND_MASK]
                        dst = label[code >> _SLOT_SHIFT]
                        out.add_edge(label[slot], dst, key=kind, kind=kind, weight=weight)
            return out


#: Above every seq (a BIGINT), so that :func:`_memory_tie` orders memories newest first.
_SEQ_CEILING = 10**19


def _memory_tie(seq: int) -> str:
    """A memory's :meth:`MemoryGraph.tie_at`: ``0`` then its seq counted down from the top."""
    return f"0{_SEQ_CEILING - seq:020d}"


def _entity_rows(cur: Any, bank_id: str, memory_ids: list[str]) -> Iterator[Any]:
    return _batched(
        cur,
        "SELECT me.memory_id, e.id, e.name, e.kind, e.aliases FROM memory_entities AS me "
        f"JOIN entities AS e ON e.id = me.entity_id WHERE me.bank_id = $bank "
        f"AND list_contains({_IDS}, me.memory_id)",
        bank_id,
        memory_ids,
    )


def _link_rows(cur: Any, bank_id: str, memory_ids: list[str]) -> Iterator[Any]:
    return _batched(
        cur,
        f"SELECT src_id, dst_id, kind, weight FROM links WHERE bank_id = $bank "
        f"AND (list_contains({_IDS}, src_id) OR list_contains({_IDS}, dst_id))",
        bank_id,
        memory_ids,
    )


def _batched(cur: Any, sql: str, bank_id: str, memory_ids: list[str]) -> Iterator[Any]:
    """The rows of a query on ``$bank`` and ``$ids``, fetched a batch at a time (a write may
    touch many memories, and rows as tuples are large)."""
    params: dict[str, Any] = {"bank": bank_id, "ids": json_list(memory_ids)}
    cur.execute(sql, params)
    while batch := cur.fetchmany(_BATCH_ROWS):
        yield from batch


class GraphOwner(Protocol):
    """What keeps the per-bank mirrors (the engine): the database and a mirror per bank."""

    db: Database
    graphs: dict[str, MemoryGraph]

    def bank_version(self, bank_id: str) -> int: ...
    def mirror(self, name: str, bank_id: str, source: Any = None) -> Any: ...
    def keep_mirror(self, name: str, bank_id: str, value: Any, version: int) -> None: ...
    def drop_mirror(self, name: str, bank_id: str) -> None: ...


def bank_graph(engine: GraphOwner, bank_id: str) -> MemoryGraph:
    """The bank's mirror at the bank's current version: loaded from the store on first use in
    this process, caught up with writes made elsewhere (store/changes.py) after that.

    Loaded under the store's write lock, so no write of this process can commit between the
    load and the mirror becoming visible to the writers that keep it current; the version is
    read before the load, so a write of another process committing meanwhile is replayed.
    """
    graph = engine.mirror("graphs", bank_id)
    if graph is None:
        with engine.db.write_lock:
            graph = engine.mirror("graphs", bank_id)
            if graph is None:
                version = engine.bank_version(bank_id)
                with engine.db.snapshot() as cur:  # slots numbered in SQL: one snapshot
                    graph = MemoryGraph.load(cur, bank_id)
                    # A read racing delete_bank must not leave a mirror behind for a
                    # re-created bank.
                    exists = cur.execute("SELECT 1 FROM banks WHERE bank_id = ?", [bank_id])
                    if exists.fetchall():
                        engine.keep_mirror("graphs", bank_id, graph, version)
    return graph


@contextmanager
def mirror_dropped_on_failure(engine: GraphOwner, bank_id: str) -> Iterator[None]:
    """Drop the bank's graph mirror if the block fails.

    Wrap a write's whole transaction in it, COMMIT included: a write that updated the mirror
    and then rolled back leaves it holding what the store does not, so it is reloaded from the
    store on next use.
    """
    try:
        yield
    except BaseException:
        engine.drop_mirror("graphs", bank_id)
        raise


def loaded_graph(engine: GraphOwner, bank_id: str) -> MemoryGraph | None:
    """The bank's mirror if it is loaded; writers update only a loaded mirror (brought to
    the bank's version by ``Engine.begin_write``)."""
    return engine.graphs.get(bank_id)
