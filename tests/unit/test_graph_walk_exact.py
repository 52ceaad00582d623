"""The graph walk weighs a node's edges in slot arrays, with numpy for a node with many: it must
reach exactly what a walk edge by edge reaches, the same activations to the bit, the same paths
and the same expansion order."""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from datetime import datetime
from unittest.mock import patch

from hypothesis import given, settings
from hypothesis import strategies as st

from agentmem.recall import graph as graph_walk
from agentmem.recall.graph import spreading_activation
from agentmem.store.graph import MemoryGraph

MEMORIES = [f"m{i}" for i in range(10)]
ENTITIES = [f"e{i}" for i in range(4)]
KINDS = ["caused_by", "followed_by", "semantic", "temporal", "related", "part_of"]


def edge_by_edge(
    graph: MemoryGraph,
    seeds: Mapping[str, float],
    *,
    budget: int,
    decay: float,
    causal_boost: float,
    edge_types: list[str] | None,
    kind_weights: Mapping[str, float],
) -> tuple[dict[str, float], dict[str, str]]:
    """The walk as the module docstring states it, one edge at a time (the oracle)."""
    allowed = None if edge_types is None else frozenset(edge_types)
    best = {node: min(1.0, a) for node, a in seeds.items() if node in graph and a > 0}
    came_from: dict[str, str] = {}
    heap = [(-a, _tie(graph, node), node) for node, a in best.items()]
    heapq.heapify(heap)
    expanded: set[str] = set()
    while heap and len(expanded) < budget:
        negative, _, node = heapq.heappop(heap)
        if node in expanded or -negative < best[node]:
            continue
        expanded.add(node)
        activation = best[node]
        for other, kind, weight, _ in graph.edges_of(node):
            if allowed is not None and kind not in allowed:
                continue
            if kind == "entity" and graph.is_entity(other):
                factor = weight * graph.entity_specificity(other)
            else:
                factor = weight * decay * (causal_boost if kind == "caused_by" else 1.0)
            factor *= kind_weights.get(kind, 1.0)
            reached = min(1.0, activation * factor)
            if reached > best.get(other, 0.0):
                best[other] = reached
                if other not in expanded:
                    came_from[other] = node
                    heapq.heappush(heap, (-reached, _tie(graph, other), other))
    return best, came_from


def _tie(graph: MemoryGraph, node: str) -> tuple[object, ...]:
    """Nodes of equal activation: memories first, newest retained (highest seq) first, then
    entities by name, kind and id."""
    if graph.is_entity(node):
        name, kind, _ = graph.entity_info(node)
        return (1, name.casefold(), kind, node)
    return (0, -graph.seq_at(graph.slot(node)))


_WEIGHT = st.sampled_from([0.05, 0.3, 0.5, 0.61, 0.9, 1.0])  # repeats make ties


@settings(max_examples=300, deadline=None)
@given(
    mentions=st.lists(st.tuples(st.integers(0, 9), st.integers(0, 3)), max_size=25),
    links=st.lists(
        st.tuples(st.integers(0, 9), st.integers(0, 9), st.sampled_from(KINDS), _WEIGHT),
        max_size=40,
    ),
    removed=st.lists(st.integers(0, 9), max_size=2),
    seeds=st.dictionaries(
        st.sampled_from(MEMORIES + ENTITIES + ["absent"]), _WEIGHT, min_size=1, max_size=4
    ),
    budget=st.integers(1, 30),
    edge_types=st.one_of(st.none(), st.lists(st.sampled_from(["entity", *KINDS]), max_size=4)),
    kind_weights=st.dictionaries(st.sampled_from(["entity", *KINDS]), _WEIGHT, max_size=2),
)
def test_the_walk_reaches_what_an_edge_by_edge_walk_reaches(
    mentions, links, removed, seeds, budget, edge_types, kind_weights
):
    graph = MemoryGraph()
    graph._add_memories((m, None, seq) for seq, m in enumerate(MEMORIES))
    graph._add_entity_rows(
        (MEMORIES[m], ENTITIES[e], f"name {e}", "person", ()) for m, e in mentions
    )
    params = {
        "budget": budget,
        "decay": 0.8,
        "causal_boost": 2.0,
        "edge_types": edge_types,
        "kind_weights": kind_weights,
    }
    for a, b, kind, weight in links:
        graph.add_link(MEMORIES[a], MEMORIES[b], kind, weight)
        with graph.lock:  # walks keep the edges' factors: each change must drop them
            level, _ = edge_by_edge(graph, seeds, **params)
            assert spreading_activation(graph, seeds, **params).level == level
    graph.remove_memories([MEMORIES[i] for i in removed])  # freed slots and rebuilt arrays
    with graph.lock:
        level, came_from = edge_by_edge(graph, seeds, **params)
        # Every node's edges one at a time, then all at once (numpy), as a node with many has.
        for vector_edges in (10**9, 0):
            with patch.object(graph_walk, "VECTOR_EDGES", vector_edges):
                reached = spreading_activation(graph, seeds, **params)
            assert reached.level == level  # exact floats
            for node in level:
                path = [node]
                while path[-1] in came_from:
                    path.append(came_from[path[-1]])
                assert reached.path(node) == path[::-1]
        # The graph arm's hits: the most activated memories, ties newest first (by mention
        # time, then by the order of retain: a memory's seq is its index here).
        memories = [(node, a) for node, a in level.items() if not graph.is_entity(node)]
        memories.sort(
            key=lambda pair: (-pair[1], -graph.mentioned_at(pair[0]), -MEMORIES.index(pair[0]))
        )
        for n in (1, 3, 20):
            assert reached.strongest_memories(n) == memories[:n]


@settings(max_examples=200, deadline=None)
@given(
    mentions=st.lists(st.tuples(st.integers(0, 9), st.integers(0, 3)), max_size=25),
    links=st.dictionaries(
        st.tuples(st.integers(0, 9), st.integers(0, 9), st.sampled_from(KINDS)),
        _WEIGHT,
        max_size=40,
    ),
    seeds=st.dictionaries(st.sampled_from(MEMORIES + ENTITIES), _WEIGHT, min_size=1, max_size=4),
    budget=st.integers(1, 30),
    order=st.randoms(use_true_random=False),
)
def test_two_stores_that_retained_the_same_walk_alike(mentions, links, seeds, budget, order):
    """Ids are random: a second store of the same memories has other ids, other slots and its
    edges in another order, and its walk must still expand, reach and rank the same nodes."""
    nodes = MEMORIES + ENTITIES
    fresh = [f"id{n:06d}" for n in order.sample(range(10**6), len(nodes))]
    renamed = dict(zip(nodes, fresh, strict=True))

    def build(name: dict[str, str], shuffled: bool) -> MemoryGraph:
        graph = MemoryGraph()
        memories = list(enumerate(MEMORIES))
        edges, rows = list(links.items()), list(mentions)
        if shuffled:
            for items in (memories, edges, rows):
                order.shuffle(items)
        graph._add_memories((name[m], None, seq) for seq, m in memories)
        graph._add_entity_rows(
            (name[MEMORIES[m]], name[ENTITIES[e]], f"name {e}", "person", ()) for m, e in rows
        )
        for (a, b, kind), weight in edges:
            graph.add_link(name[MEMORIES[a]], name[MEMORIES[b]], kind, weight)
        return graph

    params = {"budget": budget, "decay": 0.8, "causal_boost": 2.0}
    first = build({node: node for node in renamed}, shuffled=False)
    second = build(renamed, shuffled=True)
    with first.lock, second.lock:
        one = spreading_activation(first, seeds, **params)
        other = spreading_activation(
            second, {renamed[node]: a for node, a in seeds.items()}, **params
        )
        assert {renamed[node]: a for node, a in one.level.items()} == other.level
        for node in one.level:
            assert [renamed[step] for step in one.path(node)] == other.path(renamed[node])
        assert [(renamed[node], a) for node, a in one.strongest_memories(20)] == (
            other.strongest_memories(20)
        )


HUB_MEMORIES = [f"h{i}" for i in range(60)]


@settings(max_examples=150, deadline=None)
@given(
    hubs=st.lists(st.integers(0, 59), min_size=1, max_size=3, unique=True),
    spokes=st.lists(
        st.tuples(st.integers(0, 59), st.sampled_from(KINDS), _WEIGHT, st.booleans()),
        min_size=20,
        max_size=160,
    ),
    mentions=st.lists(st.tuples(st.integers(0, 59), st.integers(0, 3)), max_size=80),
    days=st.lists(st.integers(0, 2), min_size=60, max_size=60),
    seeds=st.dictionaries(
        st.sampled_from(HUB_MEMORIES + ENTITIES), _WEIGHT, min_size=1, max_size=4
    ),
    budget=st.integers(1, 80),
    vector_edges=st.sampled_from([0, 4, 48]),
)
def test_nodes_with_many_edges_raise_what_an_edge_by_edge_walk_raises(
    hubs, spokes, mentions, days, seeds, budget, vector_edges
):
    """Hubs (a turn that many near-duplicates link to, an entity on many memories) are raised
    all at once, their memories batched on the heap: the activations, paths, expansion and
    the strongest memories (ties in activation and mention time) stay those of the oracle."""
    graph = MemoryGraph()
    graph._add_memories(
        (m, datetime(2024, 1, 1 + days[seq]), seq) for seq, m in enumerate(HUB_MEMORIES)
    )
    graph._add_entity_rows(
        (HUB_MEMORIES[m], ENTITIES[e], f"name {e}", "person", ()) for m, e in mentions
    )
    for n, (other, kind, weight, outgoing) in enumerate(spokes):
        hub = HUB_MEMORIES[hubs[n % len(hubs)]]
        src, dst = (hub, HUB_MEMORIES[other]) if outgoing else (HUB_MEMORIES[other], hub)
        graph.add_link(src, dst, kind, weight)
    params = {
        "budget": budget,
        "decay": 0.8,
        "causal_boost": 2.0,
        "edge_types": None,
        "kind_weights": {},
    }
    with graph.lock:
        level, came_from = edge_by_edge(graph, seeds, **params)
        with patch.object(graph_walk, "VECTOR_EDGES", vector_edges):
            reached = spreading_activation(graph, seeds, **params)
        assert reached.level == level
        assert reached.came_from == {graph.slot(n): graph.slot(m) for n, m in came_from.items()}
        memories = [(node, a) for node, a in level.items() if not graph.is_entity(node)]
        memories.sort(
            key=lambda pair: (
                -pair[1],
                -graph.mentioned_at(pair[0]),
                -HUB_MEMORIES.index(pair[0]),
            )
        )
        for n in (1, 5, 30, 100):
            assert reached.strongest_memories(n) == memories[:n]
        # Told it reads only the n strongest, the walk may leave weaker memories unrecorded:
        # the n strongest, their paths and every level it records stay the oracle's.
        for n in (1, 5, 30):
            with (
                patch.object(graph_walk, "VECTOR_EDGES", vector_edges),
                patch.object(graph_walk, "PRUNE_FROM", 1),
            ):
                kept = spreading_activation(graph, seeds, **params, keep=n)
            assert kept.strongest_memories(n) == memories[:n]
            assert all(level[node] == a for node, a in kept.level.items())
            for node, _ in memories[:n]:
                assert kept.path(node) == reached.path(node)


def _star(seeds: Mapping[str, float], spokes: Mapping[str, float]) -> MemoryGraph:
    """Seed memories (oldest) and spokes (newer), each hub linked to every spoke at its weight."""
    graph = MemoryGraph()
    names = [*seeds, *[f"s{i}" for i in range(6)]]
    graph._add_memories((m, datetime(2024, 1, 1 + seq), seq) for seq, m in enumerate(names))
    for hub, weight in spokes.items():
        for spoke in names[len(seeds) :]:
            graph.add_link(hub, spoke, "semantic", weight)
    return graph


def _kept_walk(graph: MemoryGraph, seeds: Mapping[str, float], budget: int, keep: int):
    params = {"budget": budget, "decay": 0.8, "causal_boost": 2.0}
    with graph.lock:
        with patch.object(graph_walk, "VECTOR_EDGES", 0), patch.object(graph_walk, "PRUNE_FROM", 1):
            kept = spreading_activation(graph, seeds, **params, keep=keep)
        level, _ = edge_by_edge(graph, seeds, **params, edge_types=None, kind_weights={})
    return kept, level


def test_a_memory_reached_at_the_keep_th_level_is_recorded_and_can_win_the_tie() -> None:
    # h is expanded first; the third strongest so far is y (0.8), which every spoke reaches
    # too (1.0 x 0.8): newer than y, the newest spoke is the third strongest memory.
    seeds = {"h": 1.0, "x": 0.9, "y": 0.8}
    kept, level = _kept_walk(_star(seeds, {"h": 1.0}), seeds, budget=1, keep=3)
    assert [node for node, _ in kept.strongest_memories(3)] == ["h", "x", "s5"]
    assert all(level[node] == a for node, a in kept.level.items())


def test_a_weaker_path_to_a_memory_put_aside_raises_nothing() -> None:
    # h1 reaches the spokes at 0.34, below the third strongest (0.8), and records only its
    # batch (the budget left: 2); h2 reaches them again at 0.192, which raises none of them.
    seeds = {"a": 0.9, "h1": 0.85, "h2": 0.8}
    graph = _star(seeds, {"h1": 0.5, "h2": 0.3})
    kept, level = _kept_walk(graph, seeds, budget=4, keep=3)
    assert all(level[node] == a for node, a in kept.level.items())
    assert sum(node.startswith("s") for node in kept.level) == 2
    assert kept.strongest_memories(3) == [("a", 0.9), ("h1", 0.85), ("h2", 0.8)]
