"""A graph mirror's bulk load (slots numbered in SQL, edges read as arrays) holds exactly what
adding the bank's rows one at a time (the path every write takes) gives, through any writes."""

from __future__ import annotations

from contextlib import suppress
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentmem
from agentmem.store.graph import MemoryGraph
from agentmem.testing import HashEmbedder

T0 = "2025-03-04T09:00:00Z"
NAMES = ["Robert Chen", "Kenji", "Oslo", "Priya", "Atlas"]
_SENTENCE = st.tuples(st.sampled_from(NAMES), st.sampled_from(NAMES), st.integers(0, 99)).map(
    lambda t: f"{t[0]} met {t[1]} about plan {t[2]}."
)
_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("retain"), st.lists(_SENTENCE, min_size=1, max_size=5)),
        st.tuples(
            st.just("link"),
            st.integers(0, 30),
            st.integers(0, 30),
            st.sampled_from(["related", "caused_by", "temporal"]),
            st.floats(0.05, 1.0),
        ),
        st.tuples(st.just("forget"), st.integers(0, 30)),
        st.tuples(st.just("alias"), st.sampled_from(NAMES), st.sampled_from(NAMES)),
        # A second row of a link already stored, written past the API (the table has no key).
        st.tuples(st.just("duplicate_link"), st.integers(0, 30), st.floats(0.05, 1.0)),
    ),
    min_size=1,
    max_size=6,
)


def readings(graph: MemoryGraph) -> dict[str, Any]:
    """Everything recall reads from the mirror, for every node, in an order-free form."""
    with graph.lock:
        nodes = {graph.node_at(s) for s in range(graph.slot_count)} - {""}
        return {
            "nodes": nodes,
            "memory_count": graph.memory_count,
            "names": {key: graph.entity_ids_named(key) for key in graph.name_keys()},
            "edges": {n: sorted(graph.edges_of(n)) for n in nodes},
            # Outgoing edges first in every slot (walks meet neighbours in this order).
            "outgoing_first": {
                n: [e[3] for e in graph.edges_of(n)]
                == sorted((e[3] for e in graph.edges_of(n)), reverse=True)
                for n in nodes
            },
            "entities": {n: graph.entity_info(n) for n in nodes if graph.is_entity(n)},
            "specificity": {n: graph.entity_specificity(n) for n in nodes if graph.is_entity(n)},
            "mentioned_at": {n: graph.mentioned_at(n) for n in nodes if not graph.is_entity(n)},
            "wholes": {n: graph.whole_of(n) for n in nodes if not graph.is_entity(n)},
        }


def row_by_row(mem: agentmem.AgentMemory, bank_id: str) -> MemoryGraph:
    """The bank's graph built as writes keep it: every memory added with its rows."""
    graph = MemoryGraph()
    ids = [m.id for m in mem.bank(bank_id).memories()]
    graph.sync_memories(mem._engine.db.cursor(), bank_id, ids)
    return graph


def apply(mem: agentmem.AgentMemory, op: tuple[Any, ...]) -> None:
    bank = mem.bank("b")
    ids = sorted(m.id for m in bank.memories())
    name, *args = op
    if name == "retain":
        bank.retain([{"role": "user", "content": text} for text in args[0]], mentioned_at=T0)
    elif name == "link" and len(ids) > 1:
        src, dst = ids[args[0] % len(ids)], ids[args[1] % len(ids)]
        if src != dst:
            bank.link(src, dst, args[2], args[3])
    elif name == "forget" and ids:
        bank.forget(ids[args[0] % len(ids)])
    elif name == "alias":
        with suppress(agentmem.AgentMemError):  # not an entity of the bank, or the same one
            bank.add_alias(args[0], args[1])
    elif name == "duplicate_link":
        db = mem._engine.db
        links = db.fetchall(
            "SELECT src_id, dst_id, kind, created_at FROM links WHERE bank_id = 'b' "
            "ORDER BY src_id, dst_id, kind"
        )
        if links:
            src, dst, kind, created_at = links[args[0] % len(links)]
            with db.transaction() as cur:
                cur.execute(
                    "INSERT INTO links VALUES ('b', ?, ?, ?, ?, ?)",
                    [src, dst, kind, args[1], created_at],
                )


def check_load_matches_rows(store: Any, ops: list[tuple[Any, ...]]) -> None:  # noqa: ANN401
    with agentmem.AgentMemory(store, embedder=HashEmbedder()) as mem:
        mem.bank("b").retain(
            [{"role": "user", "content": "Robert Chen and Kenji flew to Oslo."}], mentioned_at=T0
        )
        for op in ops:
            apply(mem, op)
            with mem._engine.db.snapshot() as cur:
                loaded = MemoryGraph.load(cur, "b")
            assert readings(loaded) == readings(row_by_row(mem, "b"))
        # Another bank's rows never reach this bank's mirror.
        mem.bank("other").retain([{"role": "user", "content": "Kenji met Priya."}], mentioned_at=T0)
        with mem._engine.db.snapshot() as cur:
            assert readings(MemoryGraph.load(cur, "b")) == readings(row_by_row(mem, "b"))
            empty = MemoryGraph.load(cur, "never-written")
        assert empty.slot_count == 0 and empty.memory_count == 0


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=_OPS)
def test_bulk_load_equals_the_rows_added_one_by_one(tmp_path_factory, ops):
    check_load_matches_rows(tmp_path_factory.mktemp("store"), ops)
