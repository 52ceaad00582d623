"""The memory graph of a bank, mirrored from DuckDB into networkx and kept current in place.

DuckDB is the system of record (``memory_entities`` and ``links``); recall walks a networkx
mirror instead of issuing a query per hop. The mirror is loaded once per bank per process, on
first use, and then updated incrementally by every write: ``retain`` adds the new memories with
their edges, ``link`` adds an edge, ``forget`` removes memories (and entities left without
memories), entity corrections refresh the entities they touch, ``delete_bank`` drops it. It is
never rebuilt per query. A write that fails after touching the mirror drops it, so the next use
reloads it from the store.

Nodes are memory ids (``type="memory"``) and entity ids (``type="entity"``, with ``name`` and
``kind``); ids never collide (both are random hex). Edges are keyed by their kind, so one pair
holds at most one edge of each kind: "entity" (memory → entity it mentions), "followed_by",
"caused_by", "semantic", "temporal", "related".
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

import networkx as nx

from agentmem.store.records import from_db_time, json_list, sql_list

if TYPE_CHECKING:
    from agentmem.engine import Engine

#: Kinds whose direction carries meaning: ``a caused_by b`` (b is a cause of a) and
#: ``a followed_by b`` (b came after a). The others are symmetric.
DIRECTED_KINDS: frozenset[str] = frozenset({"caused_by", "followed_by"})

_IDS = sql_list("ids")  # lists are bound as JSON text (see store/records.py)


class MemoryGraph:
    """One bank's graph. Readers and writers synchronise on :attr:`lock`.

    Attributes:
        lock: Held while reading or changing the graph; traversals are bounded by a budget,
            so holding it for one walk is short.
    """

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self._g = nx.MultiDiGraph()
        # casefolded name or alias -> entity ids, for "entities named in the query".
        self._names: dict[str, set[str]] = {}
        self._entities: set[str] = set()

    # -- loading and writing ---------------------------------------------------------------

    @classmethod
    def load(cls, cur: Any, bank_id: str) -> MemoryGraph:
        """Build the mirror of a bank from the store."""
        graph = cls()
        rows = cur.execute(
            "SELECT id, mentioned_at FROM memories WHERE bank_id = ?", [bank_id]
        ).fetchall()
        graph._add_memories(rows)
        graph._add_entity_rows(_entity_rows(cur, bank_id, None))
        graph._add_link_rows(_link_rows(cur, bank_id, None))
        return graph

    def sync_memories(self, cur: Any, bank_id: str, memory_ids: list[str]) -> None:
        """Add these memories as the store (``cur``, maybe mid-transaction) has them.

        Reads the memories, their entities (with current names) and every link touching them,
        whoever wrote it, so link kinds added by other stages need no hook of their own.
        """
        if not memory_ids:
            return
        rows = cur.execute(
            f"SELECT id, mentioned_at FROM memories WHERE bank_id = $bank AND "
            f"list_contains({_IDS}, id)",
            {"bank": bank_id, "ids": json_list(memory_ids)},
        ).fetchall()
        with self.lock:
            self._add_memories(rows)
            self._add_entity_rows(_entity_rows(cur, bank_id, memory_ids))
            self._add_link_rows(_link_rows(cur, bank_id, memory_ids))

    def add_link(self, src: str, dst: str, kind: str, weight: float) -> None:
        """Add or replace the ``kind`` edge from ``src`` to ``dst``."""
        with self.lock:
            if src in self._g and dst in self._g:
                self._g.add_edge(src, dst, key=kind, kind=kind, weight=weight)

    def remove_memories(self, memory_ids: Iterable[str]) -> None:
        """Drop memories with their edges, and entities no memory mentions any more."""
        with self.lock:
            orphans: set[str] = set()
            for memory_id in memory_ids:
                if memory_id not in self._g:
                    continue
                orphans.update(n for n in self._g.successors(memory_id) if self.is_entity(n))
                self._g.remove_node(memory_id)
            for entity_id in orphans:
                if not self._g.pred[entity_id]:
                    self._remove_entity(entity_id)

    def refresh_entities(self, cur: Any, bank_id: str, entity_ids: Iterable[str]) -> None:
        """Reload these entities and their memory edges from the store (after a correction)."""
        ids = list(entity_ids)
        with self.lock:
            for entity_id in ids:
                self._remove_entity(entity_id)
            rows = cur.execute(
                "SELECT me.memory_id, e.id, e.name, e.kind, e.aliases FROM memory_entities AS me "
                "JOIN entities AS e ON e.id = me.entity_id "
                f"WHERE me.bank_id = $bank AND list_contains({_IDS}, e.id)",
                {"bank": bank_id, "ids": json_list(ids)},
            ).fetchall()
            self._add_entity_rows(rows)

    def _add_memories(self, rows: Iterable[tuple[str, Any]]) -> None:
        for memory_id, mentioned_at in rows:
            when = from_db_time(mentioned_at)
            self._g.add_node(memory_id, type="memory", t=when.timestamp() if when else 0.0)

    def _add_entity_rows(self, rows: Iterable[tuple[str, str, str, str, Any]]) -> None:
        for memory_id, entity_id, name, kind, aliases in rows:
            if memory_id not in self._g:
                continue
            self._set_entity(entity_id, name, kind, tuple(aliases or ()))
            self._g.add_edge(memory_id, entity_id, key="entity", kind="entity", weight=1.0)

    def _add_link_rows(self, rows: Iterable[tuple[str, str, str, float]]) -> None:
        for src, dst, kind, weight in rows:
            if src in self._g and dst in self._g:
                self._g.add_edge(src, dst, key=kind, kind=kind, weight=float(weight))

    def _set_entity(self, entity_id: str, name: str, kind: str, aliases: tuple[str, ...]) -> None:
        old = self._g.nodes[entity_id] if entity_id in self._g else None
        if old is not None:
            for alias in (old["name"], *old["aliases"]):
                self._names.get(alias.casefold(), set()).discard(entity_id)
        self._g.add_node(entity_id, type="entity", name=name, kind=kind, aliases=aliases)
        self._entities.add(entity_id)
        for alias in (name, *aliases):
            self._names.setdefault(alias.casefold(), set()).add(entity_id)

    def _remove_entity(self, entity_id: str) -> None:
        if entity_id not in self._g:
            return
        data = self._g.nodes[entity_id]
        for alias in (data["name"], *data["aliases"]):
            ids = self._names.get(alias.casefold())
            if ids is not None:
                ids.discard(entity_id)
                if not ids:
                    del self._names[alias.casefold()]
        self._g.remove_node(entity_id)
        self._entities.discard(entity_id)

    # -- reading (call with ``lock`` held) ---------------------------------------------------

    def __contains__(self, node: object) -> bool:
        return node in self._g

    @property
    def memory_count(self) -> int:
        """Number of memory nodes."""
        return self._g.number_of_nodes() - len(self._entities)

    def is_entity(self, node: str) -> bool:
        """Whether ``node`` is an entity (else a memory)."""
        return node in self._entities

    def mentioned_at(self, memory_id: str) -> float:
        """When a memory was mentioned, as a POSIX timestamp (for recency ties)."""
        return float(self._g.nodes[memory_id].get("t", 0.0))

    def entity_info(self, entity_id: str) -> tuple[str, str, tuple[str, ...]]:
        """An entity's canonical name, kind and aliases."""
        data = self._g.nodes[entity_id]
        return data["name"], data["kind"], data["aliases"]

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
        n = max(2, self.memory_count)
        # Distinct predecessors: O(1), where a multigraph's in_degree walks every edge.
        df = max(1, len(self._g.pred[entity_id]))
        return math.log(1 + n / df) / math.log(1 + n)

    def edges_of(self, node: str) -> Iterator[tuple[str, str, float, bool]]:
        """(neighbour, kind, weight, outgoing) for every edge touching ``node``."""
        for _, other, kind, weight in self._g.out_edges(node, keys=True, data="weight"):
            yield other, kind, weight, True
        for other, _, kind, weight in self._g.in_edges(node, keys=True, data="weight"):
            yield other, kind, weight, False

    def export(self, texts: dict[str, str]) -> nx.MultiDiGraph:
        """A public copy: entity nodes named by their canonical name (``name (kind)`` when two
        entities share a name), memory nodes by id with their ``text``."""
        with self.lock:
            label: dict[str, str] = {}
            counts: dict[str, int] = {}
            for _node, data in self._g.nodes(data=True):
                if data["type"] == "entity":
                    counts[data["name"]] = counts.get(data["name"], 0) + 1
            out = nx.MultiDiGraph()
            for node, data in self._g.nodes(data=True):
                if data["type"] == "entity":
                    name = data["name"]
                    label[node] = name if counts[name] == 1 else f"{name} ({data['kind']})"
                    out.add_node(
                        label[node],
                        type="entity",
                        kind=data["kind"],
                        aliases=data["aliases"],
                        entity_id=node,
                    )
                else:
                    label[node] = node
                    out.add_node(node, type="memory", text=texts.get(node, ""))
            for src, dst, kind, weight in self._g.edges(keys=True, data="weight"):
                out.add_edge(label[src], label[dst], key=kind, kind=kind, weight=weight)
            return out


def _entity_rows(cur: Any, bank_id: str, memory_ids: list[str] | None) -> list[Any]:
    where = "" if memory_ids is None else f"AND list_contains({_IDS}, me.memory_id)"
    params: dict[str, Any] = {"bank": bank_id}
    if memory_ids is not None:
        params["ids"] = json_list(memory_ids)
    return cur.execute(
        "SELECT me.memory_id, e.id, e.name, e.kind, e.aliases FROM memory_entities AS me "
        f"JOIN entities AS e ON e.id = me.entity_id WHERE me.bank_id = $bank {where}",
        params,
    ).fetchall()


def _link_rows(cur: Any, bank_id: str, memory_ids: list[str] | None) -> list[Any]:
    where = (
        ""
        if memory_ids is None
        else f"AND (list_contains({_IDS}, src_id) OR list_contains({_IDS}, dst_id))"
    )
    params: dict[str, Any] = {"bank": bank_id}
    if memory_ids is not None:
        params["ids"] = json_list(memory_ids)
    return cur.execute(
        f"SELECT src_id, dst_id, kind, weight FROM links WHERE bank_id = $bank {where}", params
    ).fetchall()


def bank_graph(engine: Engine, bank_id: str) -> MemoryGraph:
    """The bank's mirror, loaded from the store on first use in this process.

    Loaded under the store's write lock, so no write can commit between the load and the
    mirror becoming visible to the writers that keep it current.
    """
    graph = engine.graphs.get(bank_id)
    if graph is None:
        with engine.db.write_lock:
            graph = engine.graphs.get(bank_id)
            if graph is None:
                graph = MemoryGraph.load(engine.db.cursor(), bank_id)
                engine.graphs[bank_id] = graph
    return graph


def loaded_graph(engine: Engine, bank_id: str) -> MemoryGraph | None:
    """The bank's mirror if it is loaded; writers update only a loaded mirror."""
    return engine.graphs.get(bank_id)
