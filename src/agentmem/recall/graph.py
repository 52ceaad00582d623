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
   would crowd the other arms' candidates out of the reranked head.
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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentmem.recall.candidates import StrategyHit
from agentmem.recall.people import entities_named_in
from agentmem.store.graph import MemoryGraph, bank_graph

if TYPE_CHECKING:
    from agentmem.recall.context import StrategyContext


@dataclass(frozen=True, slots=True)
class Activation:
    """What spreading activation reached: each node's best activation and where it came from.

    Attributes:
        level: Node id → the best activation any path gave it (seeds included).
        came_from: Node id → the node before it on its path (seeds have none): the best path
            up to when the node was expanded, so every node comes from one expanded before it
            and paths have no cycles (a "caused_by" boost can raise a node's activation later).
    """

    level: dict[str, float]
    came_from: dict[str, str]

    def path(self, node: str) -> list[str]:
        """The best path to ``node``, from its seed to itself."""
        path = [node]
        while path[-1] in self.came_from:
            path.append(self.came_from[path[-1]])
        return path[::-1]


def spreading_activation(
    graph: MemoryGraph,
    seeds: Mapping[str, float],
    *,
    budget: int,
    decay: float,
    causal_boost: float,
    edge_types: Iterable[str] | None = None,
    kind_weights: Mapping[str, float] | None = None,
) -> Activation:
    """Activation of every node reached from ``seeds`` (see the module docstring).

    Call with ``graph.lock`` held.

    Args:
        graph: The bank's graph.
        seeds: Node id → starting activation in [0, 1].
        budget: Most nodes expanded.
        decay: Activation kept per hop that ends at a memory.
        causal_boost: Factor on "caused_by" edges.
        edge_types: Only these edge kinds ("entity" for memory–entity edges); None = all.
        kind_weights: Extra factor per edge kind; kinds not named count 1.

    Returns:
        Each reached node's best activation and the path that gave it.
    """
    allowed = None if edge_types is None else frozenset(edge_types)
    kind_weights = kind_weights or {}
    best = {node: min(1.0, a) for node, a in seeds.items() if node in graph and a > 0}
    came_from: dict[str, str] = {}
    heap = [(-a, node) for node, a in best.items()]
    heapq.heapify(heap)
    expanded: set[str] = set()
    specificity: dict[str, float] = {}  # per entity, once per walk
    while heap and len(expanded) < budget:
        negative, node = heapq.heappop(heap)
        if node in expanded or -negative < best[node]:
            continue  # a stale entry: the node was reached again more strongly
        expanded.add(node)
        activation = best[node]
        for other, kind, weight, _ in graph.edges_of(node):
            if allowed is not None and kind not in allowed:
                continue
            if kind == "entity" and graph.is_entity(other):
                if other not in specificity:
                    specificity[other] = graph.entity_specificity(other)
                factor = weight * specificity[other]
            else:
                factor = weight * decay * (causal_boost if kind == "caused_by" else 1.0)
            factor *= kind_weights.get(kind, 1.0)
            reached = min(1.0, activation * factor)
            if reached > best.get(other, 0.0):
                best[other] = reached
                if other not in expanded:  # an expanded node keeps its path: no cycles
                    came_from[other] = node
                    heapq.heappush(heap, (-reached, other))
    return Activation(best, came_from)


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
        )
        memories = [(n, a) for n, a in reached.level.items() if not graph.is_entity(n)]
        # Ties (a session's turns share their mention time) by id: the same order every run.
        # The most activated first; only those kept are ordered by time and id.
        best = heapq.nlargest(ctx.pool, memories, key=lambda pair: pair[1])
        floor = best[-1][1] if len(best) == ctx.pool else -1.0
        tied = [pair for pair in memories if pair[1] >= floor]
        tied.sort(key=lambda pair: (-pair[1], -graph.mentioned_at(pair[0]), pair[0]))
        kept = tied[: ctx.pool]
        paths = {node: reached.path(node) for node, _ in kept}
        details = {node: _path_details(graph, path, reached.level) for node, path in paths.items()}
    return [
        StrategyHit(memory_id=node, rank=rank, score=a, normalized=a, details=details[node])
        for rank, (node, a) in enumerate(kept, start=1)
    ]


def _path_details(
    graph: MemoryGraph, path: list[str], level: Mapping[str, float]
) -> dict[str, Any]:
    """What ``strategy_details["graph"]`` says of a memory the walk reached.

    ``path`` is the best path, seed first, as ``{"memory": id}`` and ``{"entity": name}`` steps.
    When it passes another memory, ``from`` is the last one (the hit the activation was carried
    from) and ``carried`` the share of that memory's activation that arrived: the reranker
    turns it into support from that memory's own likelihood. An entry point, or a memory
    reached straight from an entity the query names, has neither.
    """
    steps = [
        {"entity": graph.entity_info(node)[0]} if graph.is_entity(node) else {"memory": node}
        for node in path
    ]
    details: dict[str, Any] = {"path": steps}
    origin = next((node for node in reversed(path[:-1]) if not graph.is_entity(node)), None)
    if origin is not None:
        details["from"] = origin
        details["carried"] = min(1.0, level[path[-1]] / level[origin])
    return details
