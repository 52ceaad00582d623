"""The "causal" strategy: a bounded walk over cause, effect and order links from seed memories.

It starts from ``seed_memory_id`` (or the memory closest to the query, which is then returned
first at distance 0) and walks ``edge_types`` (default "caused_by" and "followed_by") up to
``max_depth`` hops (default 5, hard cap 10), towards causes, effects or both (``direction``).
Hits are ranked by distance, then recency.

Each hit says how it relates to the seed, read from the real direction of every hop on the
path that reached it (``strategy_details["causal"]``: ``distance``, ``relation``, ``path``):

- "cause": every hop went from an effect to its cause ("a caused_by b", walked a → b);
- "effect": every hop went from a cause to its effect;
- "earlier" / "later": every hop went back / forward, some along "followed_by" or
  "supersedes" (order, not cause: a newer statement leads back to the one it replaced);
- "related": the path turns (a sibling effect of the seed's cause is no cause of the seed) or
  crosses an undirected link or a shared entity.

At equal distance a path that keeps one direction is preferred over one that turns.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from agentmem.errors import NotFoundError
from agentmem.recall.candidates import StrategyHit
from agentmem.store.graph import DIRECTED_KINDS, MemoryGraph, bank_graph

if TYPE_CHECKING:
    from agentmem.recall.context import StrategyContext

MAX_DEPTH_CAP = 10
CAUSAL_EDGE_TYPES: tuple[str, ...] = ("caused_by", "followed_by")

# A hop: "back" (to a cause or an earlier memory) or "forward", and whether it was causal.
_Hop = tuple[str, bool]
# Preference among relations reached at the same distance.
_RANK = {"seed": 0, "cause": 1, "effect": 1, "earlier": 2, "later": 2, "related": 3}


def causal_strategy(ctx: StrategyContext) -> list[StrategyHit]:
    """The "causal" strategy (see the module docstring).

    Raises:
        NotFoundError: ``seed_memory_id`` names no memory of this bank.
    """
    params = ctx.config.strategy_params
    graph = bank_graph(ctx.engine, ctx.bank_id)
    explicit = params.get("seed_memory_id")
    seeds: list[str]
    if explicit is not None:
        seeds = [explicit] if isinstance(explicit, str) else list(explicit)
    else:
        closest = ctx.semantic_hits()[:1]
        seeds = [closest[0].memory_id] if closest else []
    depth_limit = min(
        MAX_DEPTH_CAP, int(params.get("max_depth", ctx.engine.config.graph.causal_max_depth))
    )
    edge_types = frozenset(params.get("edge_types") or CAUSAL_EDGE_TYPES)
    direction = params.get("direction", "both")
    with graph.lock:
        for seed in seeds:
            if seed not in graph or graph.is_entity(seed):
                raise NotFoundError(f"no memory {seed!r} in bank {ctx.bank_id!r}")
        found = walk(graph, seeds, depth_limit, edge_types, direction)
        if explicit is not None:
            for seed in seeds:
                found.pop(seed, None)  # the caller knows its seeds; a chosen seed is news
        ranked = sorted(
            found.items(),
            key=lambda item: (len(item[1]) - 1, -graph.mentioned_at(item[0]), item[0]),
        )
    hits = []
    for rank, (node, path) in enumerate(ranked[: ctx.pool], start=1):
        distance = len(path) - 1
        hits.append(
            StrategyHit(
                memory_id=node,
                rank=rank,
                score=1.0 / (1 + distance),
                normalized=1.0 / (1 + distance),
                details={
                    "distance": distance,
                    "relation": relation_of([hop for _, hop in path[1:]]),
                    "path": [memory for memory, _ in path],
                },
            )
        )
    return hits


def relation_of(hops: list[_Hop | None]) -> str:
    """How the end of a path relates to its start, from its hops (None: undirected)."""
    if not hops:
        return "seed"
    directed = [hop for hop in hops if hop is not None]
    ways = {way for way, _ in directed}
    if len(directed) < len(hops) or len(ways) > 1:
        return "related"
    causal = all(is_causal for _, is_causal in directed)
    if ways == {"back"}:
        return "cause" if causal else "earlier"
    return "effect" if causal else "later"


def walk(
    graph: MemoryGraph,
    seeds: list[str],
    depth_limit: int,
    edge_types: frozenset[str],
    direction: str,
) -> dict[str, list[tuple[str, _Hop | None]]]:
    """Breadth-first: memory id → its path from a seed, as (memory, hop into it) pairs.

    Call with ``graph.lock`` held.
    """
    found: dict[str, list[tuple[str, _Hop | None]]] = {seed: [(seed, None)] for seed in seeds}
    frontier = list(seeds)
    for _ in range(depth_limit):
        reached: dict[str, list[tuple[str, _Hop | None]]] = {}
        for node in frontier:
            for other, hop in _steps(graph, node, edge_types, direction):
                if other in found:
                    continue
                path = [*found[node], (other, hop)]
                known = reached.get(other)
                if known is None or _preference(path) < _preference(known):
                    reached[other] = path
        if not reached:
            break
        found.update(reached)
        frontier = list(reached)
    return found


def _preference(path: list[tuple[str, _Hop | None]]) -> int:
    return _RANK[relation_of([hop for _, hop in path[1:]])]


def _steps(
    graph: MemoryGraph, node: str, edge_types: frozenset[str], direction: str
) -> Iterable[tuple[str, _Hop | None]]:
    """Memories one hop from ``node``, with the hop's direction (None: undirected)."""
    for other, kind, _, outgoing in graph.edges_of(node):
        if kind not in edge_types:
            continue
        if kind == "entity":
            # memory → entity → memory counts as one hop through a shared entity.
            yield from (
                (m, None)
                for m, k, _, out in graph.edges_of(other)
                if k == "entity" and not out and m != node
            )
            continue
        if kind not in DIRECTED_KINDS:
            yield other, None
            continue
        # "a caused_by b": b is a cause of a. "a followed_by b": b came after a.
        # "a supersedes b": b is what a replaced, so it came before a.
        back = outgoing if kind in ("caused_by", "supersedes") else not outgoing
        if direction == "both" or (direction == "causes") == back:
            yield other, ("back" if back else "forward", kind == "caused_by")
