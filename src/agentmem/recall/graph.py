"""The "graph" strategy over the bank's memory graph (``store/graph.py``); "causal" lives in
``recall/causal.py``.

**graph** is spreading activation as in the seed (Hindsight's TEMPR graph arm):

1. Entry points: the top ``entry_points`` (10; the seed's 5) semantic matches with cosine ≥
   ``entry_similarity`` (0.3; the seed's 0.5, which MiniLM's cosines between a question and
   its answer often miss), activation = cosine; and the entities named in the query,
   activation = the entity's specificity (an IDF: a name on every other memory, such as the
   user's own, says little).
2. Best-first: the most activated unexplored node is expanded; a neighbour gets
   ``activation × edge weight × decay`` (0.8) when the hop ends at a memory, × 2 on "caused_by"
   edges, capped at 1, and keeps the best activation any path gave it. A memory → entity hop
   costs the entity's specificity instead of the decay, so memory → entity → memory is one
   decayed hop, like a direct link, but weak through hubs.
3. At most ``thinking_budget`` nodes are expanded; the most activated memories reached (as
   many as any arm returns) come back with their activation as raw and normalised score. More
   would crowd the other arms' candidates out of the reranked head. A node with many edges
   (an entity on thousands of memories) leaves unrecorded the memories it reaches too weakly
   to be among them or to be expanded: the same hits, paths and expansions, less to record.
4. Each hit says how it was reached (``strategy_details["graph"]``): ``path``, seed first
   (``[{"memory": hit}, {"entity": "Giulia"}, {"memory": id}]``), and, when the activation was
   carried from another memory, ``from`` (the last memory on the path) and ``carried`` (the
   share of its activation that arrived). The reranker turns that into graph support from the
   hit's own likelihood (``recall/calibrated.py``), so a fact two hops from the question can
   outrank facts that only repeat the question's name. The walk reads no entity kinds: only
   how many memories of the bank an entity is in.
"""

from __future__ import annotations

import heapq
from array import array
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from itertools import repeat
from typing import TYPE_CHECKING, Any, NamedTuple
from weakref import WeakKeyDictionary

import numpy as np

from agentmem.recall.candidates import StrategyHit
from agentmem.recall.people import entities_named_in
from agentmem.store.graph import EDGE_KINDS, KIND_MASK, SLOT_SHIFT, MemoryGraph, bank_graph

if TYPE_CHECKING:
    from agentmem.recall.context import StrategyContext

_ENTITY = EDGE_KINDS.index("entity")


@dataclass(frozen=True, slots=True)
class Activation:
    """What spreading activation reached: each node's best activation and where it came from.

    Kept by slot: read it while the graph is unchanged (its ``lock`` held).

    Attributes:
        graph: The graph walked.
        best: Slot → the best activation any path gave its node (seeds included).
        came_from: Slot → the slot of the node before it on its path (seeds have none): the
            best path up to when the node was expanded, so every node comes from one expanded
            before it and paths have no cycles (a "caused_by" boost can raise a node's
            activation later).
    """

    graph: MemoryGraph
    best: dict[int, float]
    came_from: dict[int, int]

    @property
    def level(self) -> dict[str, float]:
        """Node id → its best activation, for every node reached."""
        return {self.graph.node_at(slot): a for slot, a in self.best.items()}

    def activation(self, node: str) -> float:
        """The best activation of a node reached."""
        slot = self.graph.slot(node)
        assert slot is not None
        return self.best[slot]

    def path(self, node: str) -> list[str]:
        """The best path to ``node``, from its seed to itself."""
        slot = self.graph.slot(node)
        assert slot is not None and slot in self.best, node
        path = [slot]
        while path[-1] in self.came_from:
            path.append(self.came_from[path[-1]])
        return [self.graph.node_at(s) for s in reversed(path)]

    def strongest_memories(self, n: int) -> list[tuple[str, float]]:
        """The ``n`` most activated memories (entities aside) with their activation; ties
        newest first: by mention time, then (a session's turns share it) by the order they
        were retained in, so every run, and every store that retained the same, gives the
        same order."""
        graph = self.graph
        slots = np.fromiter(self.best, dtype=np.int64, count=len(self.best))
        levels = np.fromiter(self.best.values(), dtype=np.float64, count=len(self.best))
        memories = ~graph.entity_flags_at(slots)
        slots, levels = slots[memories], levels[memories]
        # The n-th best activation; only the memories at or above it are ordered by time.
        cut = len(levels) - n
        floor = float(np.partition(levels, cut)[cut]) if cut >= 0 else -1.0
        above = np.flatnonzero(levels >= floor)
        slots, levels = slots[above], levels[above]
        times, seqs = graph.mentioned_at_slots(slots), graph.seqs_at(slots)
        order = np.lexsort((-seqs, -times, -levels))
        ordered = levels[order], times[order], seqs[order]
        if np.any(np.logical_and.reduce([key[1:] == key[:-1] for key in ordered])):
            # Two memories alike in all three (one seq twice): their ids decide, in Python.
            tied = list(zip(slots.tolist(), levels.tolist(), strict=True))
            tied.sort(
                key=lambda pair: (
                    -pair[1],
                    -graph.mentioned_at_slot(pair[0]),
                    -graph.seq_at(pair[0]),
                    graph.node_at(pair[0]),
                )
            )
            return [(graph.node_at(slot), a) for slot, a in tied[:n]]
        order = order[:n]
        best = zip(slots[order].tolist(), levels[order].tolist(), strict=True)
        return [(graph.node_at(slot), a) for slot, a in best]


#: Edges of one node from which the walk weighs them with numpy, all at once, rather than one
#: at a time: below it, numpy's cost per call exceeds the loop's (a session's turn has 10-40
#: edges, a turn with many semantic links or a specific entity's hundreds).
VECTOR_EDGES = 48
#: A node with many edges puts aside the memories it reaches too weakly to matter (see
#: :class:`_Walk`) only when it reaches this many new ones: fewer cost less to record.
PRUNE_FROM = 64
#: Most edges whose factors are kept per graph and walk parameters (16-33 bytes each); past it
#: they are dropped and weighed again as walks reach their nodes.
FACTORS_KEPT = 1_000_000


class _EdgeFactors:
    """Each node's edges as a walk weighs them: the neighbours it may reach and, per edge, the
    factor activation is multiplied by (the edge's weight times the entity's specificity, or
    the decay and the kind's boost, then the kind's extra weight: the products of
    :func:`spreading_activation`'s rule, in its order, so the same floats to the bit).

    Kept per graph and walk parameters while the graph's ``version`` stays (an entity's
    specificity moves with every memory added), filled as walks expand nodes: a node's edges
    are weighed once, not at every walk. Use with the graph's ``lock`` held.
    """

    def __init__(
        self,
        graph: MemoryGraph,
        decay: float,
        allowed: tuple[bool, ...],
        hop: tuple[float, ...],
        extra: tuple[float, ...],
    ) -> None:
        self.graph = graph
        self._decay = decay
        self._allowed = allowed
        self._hop = hop
        self._extra = extra
        # Per kind code, as arrays for the nodes weighed all at once.
        self._follow = np.array(allowed, dtype=np.bool_)
        self._hop_factors = np.array(hop, dtype=np.float64)
        self._extra_factors = np.array(extra, dtype=np.float64)
        self._edges: dict[int, tuple[array[int], array[float]]] = {}
        self._vectors: dict[int, _VectorEdges] = {}
        self._kept = 0

    def of(self, slot: int) -> tuple[array[int], array[float]]:
        """The neighbours of ``slot``'s edges that the walk follows, and their factors, in
        edge order."""
        found = self._edges.get(slot)
        if found is not None:
            return found
        graph, decay, allowed, hop, extra = (
            self.graph,
            self._decay,
            self._allowed,
            self._hop,
            self._extra,
        )
        neighbours, factors = array("q"), array("d")
        codes, weights = graph.edge_codes(slot)
        for code, weight in zip(codes, weights, strict=True):
            kind = code & KIND_MASK
            if not allowed[kind]:
                continue
            other = code >> SLOT_SHIFT
            if kind == _ENTITY and graph.is_entity_slot(other):
                factor = weight * graph.specificity_at(other)
            else:
                factor = weight * decay * hop[kind]
            factor *= extra[kind]
            neighbours.append(other)
            factors.append(factor)
        self._keep(len(neighbours))
        self._edges[slot] = neighbours, factors
        return neighbours, factors

    def vectors_of(self, slot: int) -> _VectorEdges:
        """:meth:`of` as arrays, each neighbour once with the largest factor of its edges (the
        one that reaches it most strongly: a product is monotonic in a factor), weighed with
        numpy: the same products in the same order, so the same floats."""
        found = self._vectors.get(slot)
        if found is not None:
            return found
        graph = self.graph
        stored_codes, stored_weights = graph.edge_codes(slot)
        codes = np.array(stored_codes, dtype=np.int64)  # copies: the graph's arrays may grow
        weights = np.array(stored_weights, dtype=np.float64)
        kinds = codes & KIND_MASK
        followed = self._follow[kinds]
        codes, weights, kinds = codes[followed], weights[followed], kinds[followed]
        slots = codes >> SLOT_SHIFT
        factors = weights * self._decay * self._hop_factors[kinds]
        to_entity = np.flatnonzero((kinds == _ENTITY) & graph.entity_flags_at(slots))
        if len(to_entity):  # a memory's edges to the entities it names: few
            specificity = [graph.specificity_at(s) for s in slots[to_entity].tolist()]
            factors[to_entity] = weights[to_entity] * np.array(specificity, dtype=np.float64)
        factors *= self._extra_factors[kinds]
        order = np.lexsort((factors, slots))
        slots, factors = slots[order], factors[order]
        last = np.ones(len(slots), dtype=bool)
        last[:-1] = slots[1:] != slots[:-1]
        slots, factors = slots[last], factors[last]
        found = _VectorEdges(
            slots,
            factors,
            graph.entity_flags_at(slots),
            graph.seqs_at(slots),
        )
        self._keep(len(slots))
        self._vectors[slot] = found
        return found

    def _keep(self, edges: int) -> None:
        """Make room for ``edges`` more kept edges (all are dropped past FACTORS_KEPT)."""
        if self._kept + edges > FACTORS_KEPT:
            self._edges.clear()
            self._vectors.clear()
            self._kept = 0
        self._kept += edges


class _VectorEdges(NamedTuple):
    """A node's edges as a walk weighs them all at once (:meth:`_EdgeFactors.vectors_of`):
    its neighbours' slots, each neighbour's factor, whether it is an entity and its seq (a
    memory's place among equal activations)."""

    slots: np.ndarray
    factors: np.ndarray
    entity: np.ndarray
    seqs: np.ndarray


#: Per graph mirror: the graph's version they were weighed at, and its edge factors per walk
#: parameters (decay, allowed, hop, extra).
_FACTORS: WeakKeyDictionary[MemoryGraph, tuple[int, dict[tuple[Any, ...], _EdgeFactors]]] = (
    WeakKeyDictionary()
)


def _edge_factors(
    graph: MemoryGraph,
    decay: float,
    allowed: tuple[bool, ...],
    hop: tuple[float, ...],
    extra: tuple[float, ...],
) -> _EdgeFactors:
    """The graph's kept :class:`_EdgeFactors` for these parameters, new when it changed."""
    version, kept = _FACTORS.get(graph, (None, {}))
    if version != graph.version:
        kept = {}
        _FACTORS[graph] = graph.version, kept
    key = (decay, allowed, hop, extra)
    factors = kept.get(key)
    if factors is None:
        if len(kept) >= 8:  # walks with parameters of their own (edge_types, kind weights)
            kept.clear()
        factors = kept[key] = _EdgeFactors(graph, decay, allowed, hop, extra)
    return factors


class _Walk:
    """The state of one walk beside its activations and heap: the paths, the nodes expanded,
    and the batches of memories that nodes with many edges raised.

    A node with many edges (a turn that hundreds of near-duplicates link to) raises them all
    at once: their activations and paths are set with numpy and dict updates, and its
    memories go on the heap as one batch in heap order, with an entry for its first only;
    popping it puts the next on. Since every entry pops in the order of (-activation, tie,
    slot), the walk expands what it would with an entry per memory. A batch keeps only the
    memories the budget left can still expand: before a memory of the batch pops, every one
    ahead of it in the batch has been expanded (through this entry or a stronger one).

    With ``keep`` (the caller reads only the ``keep`` strongest memories), such a node does not
    record the memories it reaches for the first time below the ``keep``-th strongest memory
    so far, unless its batch holds them: they can be neither among the strongest at the end
    (that level only rises) nor expanded, so the walk is the same. It keeps their levels
    aside (:meth:`pruned_level`), so that a weaker path reaching one later raises nothing, as
    it would not have.
    """

    def __init__(
        self,
        graph: MemoryGraph,
        best: dict[int, float],
        heap: list[tuple[float, str, int, int]],
        budget: int,
        keep: int | None = None,
    ) -> None:
        self.graph = graph
        self.best = best
        self.heap = heap
        self.budget = budget
        self.keep = keep
        self.came_from: dict[int, int] = {}
        self.expanded: set[int] = set()
        #: Slot -> 1 once in ``best``: a node with many edges reads the levels of the few it
        #: reached before, not a dict lookup per edge.
        self.reached = bytearray(graph.slot_count)
        np.frombuffer(self.reached, dtype=np.uint8)[list(best)] = 1
        self._batches: list[Iterator[tuple[float, int]]] = []
        self._flags: bytearray | None = None  # slot -> 1 once expanded (for raise_all)
        #: Slot -> 1 once a level of it was kept aside; each entry holds such slots (sorted,
        #: as an array for bisect and as numpy's) and their levels.
        self.pruned_flags: bytearray | None = None
        self._pruned: list[tuple[array[int], np.ndarray, np.ndarray]] = []

    def expand(self, slot: int) -> None:
        """Count ``slot`` as expanded."""
        self.expanded.add(slot)
        if self._flags is not None:
            self._flags[slot] = 1

    def next_of(self, batch: int) -> None:
        """Put the next memory of a batch whose entry popped on the heap."""
        following = next(self._batches[batch], None)
        if following is not None:
            negative, slot = following
            heapq.heappush(self.heap, (negative, self.graph.tie_at(slot), slot, batch))

    def pruned_level(self, slot: int) -> float:
        """The best level kept aside for ``slot`` (0 if none)."""
        level = 0.0
        for slots, _, levels in self._pruned:
            i = bisect_left(slots, slot)
            if i < len(slots) and slots[i] == slot:
                level = max(level, float(levels[i]))
        return level

    def raise_all(self, slot: int, activation: float, edges: _VectorEdges) -> None:
        """Give every neighbour of ``slot`` that its edges reach more strongly than before
        that activation, and a path through ``slot`` with a place on the heap unless it was
        expanded (the small nodes' loop in :func:`spreading_activation`, all at once)."""
        best = self.best
        reached = np.minimum(1.0, activation * edges.factors)
        known = np.zeros(len(edges.slots), dtype=np.float64)
        seen = np.flatnonzero(np.frombuffer(self.reached, dtype=np.bool_)[edges.slots])
        if len(seen):
            levels_seen = map(best.__getitem__, edges.slots[seen].tolist())
            known[seen] = np.fromiter(levels_seen, np.float64, len(seen))
        before = np.maximum(known, self._pruned_levels(edges.slots)) if self._pruned else known
        raised = np.flatnonzero(reached > before)
        if not len(raised):
            return
        others, levels, entity = edges.slots[raised], reached[raised], edges.entity[raised]
        if self._flags is None:
            self._flags = bytearray(self.graph.slot_count)
            for done in self.expanded:
                self._flags[done] = 1
        opened = ~np.frombuffer(self._flags, dtype=np.bool_)[others]
        memories = np.flatnonzero(opened & ~entity)
        batch = memories[
            self._batch(others[memories], -levels[memories], -edges.seqs[raised][memories])
        ]
        if self.keep is not None:
            recorded = self._worth_recording(known[raised] > 0, entity, levels, batch)
            if recorded is not None:
                self._put_aside(others[~recorded], levels[~recorded])
                others, levels = others[recorded], levels[recorded]
                entity, opened = entity[recorded], opened[recorded]
        best.update(zip(others.tolist(), levels.tolist(), strict=True))
        np.frombuffer(self.reached, dtype=np.uint8)[others] = 1
        others, levels, entity = others[opened], levels[opened], entity[opened]
        self.came_from.update(zip(others.tolist(), repeat(slot)))
        tie_at, heap = self.graph.tie_at, self.heap
        for other, level in zip(others[entity].tolist(), levels[entity].tolist(), strict=True):
            heapq.heappush(heap, (-level, tie_at(other), other, -1))

    def _batch(self, slots: np.ndarray, negative: np.ndarray, ties: np.ndarray) -> np.ndarray:
        """Put these memories on the heap as one batch: in the order of (-activation, -seq,
        slot), as their entries would pop, as many as the budget left can expand. Returns
        the positions of those put on."""
        left = self.budget - len(self.expanded)
        if left <= 0 or not len(slots):
            return np.zeros(0, dtype=np.int64)
        ahead = np.arange(len(slots))
        if len(slots) > left:  # the `left` first by activation, with those tied with the last
            cut = np.partition(negative, left - 1)[left - 1]
            ahead = np.flatnonzero(negative <= cut)
        order = ahead[np.lexsort((slots[ahead], ties[ahead], negative[ahead]))[:left]]
        batch = zip(negative[order].tolist(), slots[order].tolist(), strict=True)
        first, first_slot = next(batch)
        self._batches.append(batch)
        entry = (first, self.graph.tie_at(first_slot), first_slot, len(self._batches) - 1)
        heapq.heappush(self.heap, entry)
        return order

    def _worth_recording(
        self, present: np.ndarray, entity: np.ndarray, levels: np.ndarray, batch: np.ndarray
    ) -> np.ndarray | None:
        """Which raised neighbours to record: all but the memories reached for the first time
        below the ``keep``-th strongest memory so far and not in the batch; None for all."""
        new = ~present & ~entity
        if int(new.sum()) < PRUNE_FROM:
            return None
        floor = self._floor()
        if floor <= 0.0:
            return None
        recorded = ~new | (levels >= floor)
        recorded[batch] = True
        return recorded

    def _floor(self) -> float:
        """The activation of the ``keep``-th strongest memory recorded so far (0 if fewer)."""
        assert self.keep is not None
        best = self.best
        slots = np.fromiter(best, dtype=np.int64, count=len(best))
        levels = np.fromiter(best.values(), dtype=np.float64, count=len(best))
        levels = levels[~self.graph.entity_flags_at(slots)]
        cut = len(levels) - self.keep
        return float(np.partition(levels, cut)[cut]) if cut >= 0 else 0.0

    def _put_aside(self, slots: np.ndarray, levels: np.ndarray) -> None:
        """Keep these memories' levels aside, unrecorded (``slots`` sorted)."""
        if not len(slots):
            return
        if self.pruned_flags is None:
            self.pruned_flags = bytearray(self.graph.slot_count)
        np.frombuffer(self.pruned_flags, dtype=np.uint8)[slots] = 1
        self._pruned.append((array("q", slots.tobytes()), slots, levels))

    def _pruned_levels(self, slots: np.ndarray) -> np.ndarray:
        """:meth:`pruned_level` of each of ``slots`` (sorted)."""
        assert self.pruned_flags is not None
        out = np.zeros(len(slots), dtype=np.float64)
        flagged = np.flatnonzero(np.frombuffer(self.pruned_flags, dtype=np.bool_)[slots])
        if not len(flagged):
            return out
        wanted = slots[flagged]
        for _, aside, levels in self._pruned:
            at = np.minimum(np.searchsorted(aside, wanted), len(aside) - 1)
            hit = aside[at] == wanted
            out[flagged[hit]] = np.maximum(out[flagged[hit]], levels[at[hit]])
        return out


def spreading_activation(
    graph: MemoryGraph,
    seeds: Mapping[str, float],
    *,
    budget: int,
    decay: float,
    causal_boost: float,
    edge_types: Iterable[str] | None = None,
    kind_weights: Mapping[str, float] | None = None,
    keep: int | None = None,
) -> Activation:
    """Activation of every node reached from ``seeds`` (see the module docstring).

    Call with ``graph.lock`` held. The walk runs on the graph's slots, each node's edges
    weighed once while the graph is unchanged (:class:`_EdgeFactors`), one at a time or, for a
    node with many (:data:`VECTOR_EDGES`), all at once; the most activated unexplored node is
    expanded next, ties as :meth:`MemoryGraph.tie_at` orders them (not by id: two stores that
    retained the same walk alike).

    Args:
        graph: The bank's graph.
        seeds: Node id → starting activation in [0, 1].
        budget: Most nodes expanded.
        decay: Activation kept per hop that ends at a memory.
        causal_boost: Factor on "caused_by" edges.
        edge_types: Only these edge kinds ("entity" for memory–entity edges); None = all.
        kind_weights: Extra factor per edge kind; kinds not named count 1.
        keep: How many of the strongest memories the caller reads; memories that cannot be
            among them may be left unrecorded (see :class:`_Walk`). None records all.

    Returns:
        Each reached node's best activation and the path that gave it (with ``keep``: the
        ``keep`` strongest memories, their paths and every expanded node, exactly).
    """
    wanted = None if edge_types is None else frozenset(edge_types)
    weights = kind_weights or {}
    # Per kind code: followed at all, its factor after the decay, its extra weight.
    edge_factors = _edge_factors(
        graph,
        decay,
        tuple(wanted is None or kind in wanted for kind in EDGE_KINDS),
        tuple(causal_boost if kind == "caused_by" else 1.0 for kind in EDGE_KINDS),
        tuple(weights.get(kind, 1.0) for kind in EDGE_KINDS),
    )
    best: dict[int, float] = {}
    for node, a in seeds.items():
        slot = graph.slot(node)
        if slot is not None and a > 0:
            best[slot] = min(1.0, a)
    # Entries (-activation, tie, slot, batch): a batch's entry (number ≥ 0) stands for the
    # rest of the batch after it (see _Walk.raise_all); no two entries share the first three.
    heap: list[tuple[float, str, int, int]] = [
        (-a, graph.tie_at(slot), slot, -1) for slot, a in best.items()
    ]
    heapq.heapify(heap)
    walk = _Walk(graph, best, heap, budget, keep)
    came_from, expanded = walk.came_from, walk.expanded
    best_of, ties, push, pop = best.get, graph.ties(), heapq.heappush, heapq.heappop
    reached_flags = walk.reached
    pruned = None  # walk.pruned_flags, once a node put levels aside
    while heap and len(expanded) < budget:
        negative, _, slot, batch = pop(heap)
        if batch >= 0:
            walk.next_of(batch)
        if slot in expanded or -negative < best[slot]:
            continue  # a stale entry: the node was reached again more strongly
        walk.expand(slot)
        activation = best[slot]
        if graph.degree_at(slot) >= VECTOR_EDGES:
            walk.raise_all(slot, activation, edge_factors.vectors_of(slot))
            pruned = walk.pruned_flags
            continue
        neighbours, factors = edge_factors.of(slot)
        # In edge order: of two edges to one node, the later raises it only if stronger.
        for other, factor in zip(neighbours, factors, strict=True):
            reached = activation * factor
            if reached > 1.0:
                reached = 1.0
            if reached > best_of(other, 0.0):
                if pruned is not None and pruned[other] and reached <= walk.pruned_level(other):
                    continue  # no stronger than a level put aside: it raised nothing then
                best[other] = reached
                reached_flags[other] = 1
                if other not in expanded:  # an expanded node keeps its path: no cycles
                    came_from[other] = slot
                    push(heap, (-reached, ties[other], other, -1))
    return Activation(graph, best, came_from)


def graph_strategy(ctx: StrategyContext) -> list[StrategyHit]:
    """The "graph" arm of TEMPR: spreading activation from the query's entry points."""
    config = ctx.engine.config.graph
    graph = bank_graph(ctx.engine, ctx.bank_id)
    seeds: dict[str, float] = {}
    for hit in ctx.semantic_hits()[: config.entry_points]:
        if hit.score >= config.entry_similarity:
            seeds[hit.memory_id] = hit.score
    with graph.lock:
        for entity_id in entities_named_in(ctx.config.query, graph):
            seeds[entity_id] = graph.entity_specificity(entity_id)
        reached = spreading_activation(
            graph,
            seeds,
            budget=ctx.config.thinking_budget,
            decay=config.decay,
            causal_boost=config.causal_boost,
            edge_types=ctx.config.strategy_params.get("edge_types"),
            kind_weights=config.kind_weights,
            keep=ctx.pool,
        )
        kept = reached.strongest_memories(ctx.pool)
        details = {node: _path_details(graph, reached, node) for node, _ in kept}
    return [
        StrategyHit(memory_id=node, rank=rank, score=a, normalized=a, details=details[node])
        for rank, (node, a) in enumerate(kept, start=1)
    ]


def _path_details(graph: MemoryGraph, reached: Activation, node: str) -> dict[str, Any]:
    """What ``strategy_details["graph"]`` says of a memory the walk reached.

    ``path`` is the best path, seed first, as ``{"memory": id}`` and ``{"entity": name}`` steps.
    When it passes another memory, ``from`` is the last one (the hit the activation was carried
    from) and ``carried`` the share of that memory's activation that arrived: the reranker
    turns it into support from that memory's own likelihood. An entry point, or a memory
    reached straight from an entity the query names, has neither.
    """
    path = reached.path(node)
    steps = [
        {"entity": graph.entity_info(step)[0]} if graph.is_entity(step) else {"memory": step}
        for step in path
    ]
    details: dict[str, Any] = {"path": steps}
    origin = next((step for step in reversed(path[:-1]) if not graph.is_entity(step)), None)
    if origin is not None:
        details["from"] = origin
        details["carried"] = min(1.0, reached.activation(path[-1]) / reached.activation(origin))
    return details
