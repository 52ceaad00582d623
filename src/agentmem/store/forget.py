"""Deletion everywhere: rows, keyword postings, entity links, links, episodes and vectors.

Deletes follow the same journal discipline as writes (see ``store/reconcile.py``): the
DuckDB transaction removes the rows and journals the vector deletions, so a crash before
Chroma has dropped the vectors is finished on the next open.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from agentmem.store.changes import record_change
from agentmem.store.database import Database
from agentmem.store.graph import loaded_graph, mirror_dropped_on_failure
from agentmem.store.records import (
    json_list,
    memory_selector,
    require_bank,
    sql_list,
)
from agentmem.store.staged_vectors import DROP

if TYPE_CHECKING:
    from agentmem.engine import Engine

_IDS = sql_list("ids")
_PARTS = (
    "SELECT id, seq, episode_id FROM memories WHERE bank_id = $bank "
    f"AND NOT list_contains({_IDS}, id) AND id IN (SELECT src_id FROM links "
    f"WHERE bank_id = $bank AND kind = 'part_of' AND list_contains({_IDS}, dst_id))"
)
# Statements run in order once the memories in $ids are gone, each with the parameters it uses.
# Lists are bound as JSON text (see store/records.py).
_CLEANUP: tuple[tuple[str, tuple[str, ...]], ...] = (
    (f"DELETE FROM memory_entities WHERE list_contains({_IDS}, memory_id)", ("ids",)),
    (
        "DELETE FROM links WHERE bank_id = $bank "
        f"AND (list_contains({_IDS}, src_id) OR list_contains({_IDS}, dst_id))",
        ("bank", "ids"),
    ),
    (f"DELETE FROM memories WHERE list_contains({_IDS}, id)", ("ids",)),
    (
        "DELETE FROM episodes WHERE bank_id = $bank "
        f"AND list_contains({sql_list('episodes')}, id) "
        "AND id NOT IN (SELECT episode_id FROM memories "
        "WHERE bank_id = $bank AND episode_id IS NOT NULL)",
        ("bank", "episodes"),
    ),
    (
        "DELETE FROM entities WHERE bank_id = $bank "
        "AND id NOT IN (SELECT entity_id FROM memory_entities WHERE bank_id = $bank)",
        ("bank",),
    ),
)


def forget_memories(
    engine: Engine,
    bank_id: str,
    collection: str,
    ids: list[str] | None,
    tags: list[str] | None,
    document_id: str | None,
) -> int:
    """Delete the bank's memories matching every given selector; returns how many."""
    where, params = memory_selector(bank_id, ids, tags, document_id)
    # Held until Chroma is done too (see retain/pipeline.py), and the entity cache is dropped
    # before another writer can use entities that went with their facts.
    with engine.db.write_lock:
        version = None
        try:
            with mirror_dropped_on_failure(engine, bank_id), engine.db.transaction() as cur:
                require_bank(cur, bank_id, collection)
                engine.begin_write(cur, bank_id)
                gone = delete_rows(engine, cur, bank_id, collection, where, params)
                if not gone.memory_ids:
                    return 0
                version = record_change(
                    engine.db,
                    cur,
                    bank_id,
                    "forget",
                    [*gone.memory_ids, *gone.relinked],
                    gone.entity_ids,
                )
        finally:
            engine.drop_mirror("entity_indexes", bank_id)  # entities may have gone with facts
            engine.drop_mirror("dated_facts", bank_id)  # it holds the deleted facts
            engine.bank_changed(bank_id, version)
        doomed = list(gone.memory_ids)
        delete_vectors(engine, collection, doomed)
    engine.keyword.maybe_fold()  # drops the built postings of what went
    return len(doomed)


class Deleted(NamedTuple):
    """What :func:`delete_rows` deleted: the memories, and the entities they mentioned (some
    of which went with them); ``relinked``, the memories kept that got new ``supersedes``
    links (:func:`_bridges`)."""

    memory_ids: tuple[str, ...]
    entity_ids: tuple[str, ...]
    relinked: tuple[str, ...] = ()


def delete_rows(  # noqa: ANN001
    engine: Engine, cur, bank_id: str, collection: str, where: str, params: dict
) -> Deleted:
    """In the caller's transaction, delete the bank's memories matching ``where`` (from
    :func:`~agentmem.store.records.memory_selector`) with everything that hangs on them, and
    journal their vectors' deletion. The caller then drops the bank's entity cache and calls
    :func:`delete_vectors` once committed."""
    rows = cur.execute(f"SELECT id, seq, episode_id FROM memories WHERE {where}", params).fetchall()
    if not rows:
        return Deleted((), ())
    # A memory's parts (clauses split off it, "part_of" links) go with it.
    rows += cur.execute(
        _PARTS, {"bank": bank_id, "ids": json_list([r[0] for r in rows])}
    ).fetchall()
    doomed = [r[0] for r in rows]
    mentioned = cur.execute(
        f"SELECT DISTINCT entity_id FROM memory_entities WHERE list_contains({_IDS}, memory_id)",
        {"ids": json_list(doomed)},
    ).fetchall()
    engine.keyword.remove_rows(cur, [r[1] for r in rows])  # while the rows exist
    values = {
        "bank": bank_id,
        "ids": json_list(doomed),
        "episodes": json_list(sorted({r[2] for r in rows if r[2]})),
    }
    bridges = _bridges(cur, bank_id, doomed)
    for sql, names in _CLEANUP:
        cur.execute(sql, {name: values[name] for name in names})
    for newer, older in bridges:
        cur.execute(
            "INSERT INTO links VALUES (?, ?, ?, 'supersedes', 1.0, now())", [bank_id, newer, older]
        )
    engine.vectors.delete_in(cur, bank_id, collection, doomed)
    graph = loaded_graph(engine, bank_id)
    if graph is not None:
        graph.remove_memories(doomed)
        for newer, older in bridges:
            graph.add_link(newer, older, "supersedes", 1.0)
    return Deleted(
        tuple(doomed),
        tuple(sorted(row[0] for row in mentioned)),
        tuple(sorted({memory_id for pair in bridges for memory_id in pair})),
    )


def _bridges(cur, bank_id: str, doomed: list[str]) -> list[tuple[str, str]]:  # noqa: ANN001
    """The ``supersedes`` links that keep a chain whole when memories in it go.

    Retain links a statement to the ones it replaces directly, and recall follows the chain
    (``recall/supersession.py``): when "Ana lives in Lisbon" goes from Berlin → Lisbon → Porto,
    Porto's memory now replaces Berlin's, or Berlin would read as current again. Each memory
    kept that replaced a deleted one gets a link to each kept one the deleted replaced
    (through runs of deleted ones), unless it has one already."""
    rows = cur.execute(
        "SELECT src_id, dst_id FROM links WHERE bank_id = $bank AND kind = 'supersedes' "
        f"AND (list_contains({_IDS}, src_id) OR list_contains({_IDS}, dst_id))",
        {"bank": bank_id, "ids": json_list(doomed)},
    ).fetchall()
    if not rows:
        return []
    gone = set(doomed)
    newer: dict[str, list[str]] = {}
    older: dict[str, list[str]] = {}
    for src, dst in rows:
        newer.setdefault(dst, []).append(src)
        older.setdefault(src, []).append(dst)

    def kept_beyond(start: str, step: dict[str, list[str]]) -> list[str]:
        found, seen, todo = [], {start}, [start]
        while todo:
            for following in step.get(todo.pop(), ()):
                if following not in seen:
                    seen.add(following)
                    (todo if following in gone else found).append(following)
        return found

    wanted = {
        (up, down)
        for memory_id in gone & (newer.keys() | older.keys())
        for up in kept_beyond(memory_id, newer)
        for down in kept_beyond(memory_id, older)
        if up != down
    }
    if not wanted:
        return []
    ups, downs = sorted({u for u, _ in wanted}), sorted({d for _, d in wanted})
    present = cur.execute(
        "SELECT src_id, dst_id FROM links WHERE bank_id = $bank AND kind = 'supersedes' "
        f"AND list_contains({sql_list('ups')}, src_id) "
        f"AND list_contains({sql_list('downs')}, dst_id)",
        {"bank": bank_id, "ups": json_list(ups), "downs": json_list(downs)},
    ).fetchall()
    return sorted(wanted - {(src, dst) for src, dst in present})


def delete_vectors(engine: Engine, collection: str, doomed: list[str]) -> None:
    """Drop the vectors of deleted memories from Chroma and clear their journal entries."""
    engine.vectors.delete(collection, doomed)
    engine.db.execute(
        f"DELETE FROM vector_journal WHERE op = 'delete' AND list_contains({_IDS}, memory_id)",
        {"ids": json_list(doomed)},
    )


def delete_bank_rows(engine: Engine, bank_id: str, collection: str) -> None:
    """Remove every row of a bank and journal the drop of its vector collection.

    The caller drops the collection next, then clears the journal entry with
    :func:`finish_drop`; a crash in between is finished by the next open.
    """
    with engine.db.transaction() as cur:
        # The bank's row first: on PostgreSQL that waits for writes into the bank that hold it
        # (require_bank), so the deletes below see their rows; later ones find the bank gone.
        # Then its version, in the order every write takes the two.
        cur.execute("DELETE FROM banks WHERE bank_id = ?", [bank_id])
        engine.begin_write(cur, bank_id)
        engine.keyword.remove_bank(cur, bank_id)
        for table in (
            "memory_entities",
            "links",
            "memories",
            "entities",
            "episodes",
            "vector_journal",
            "entity_corrections",
        ):
            cur.execute(f"DELETE FROM {table} WHERE bank_id = ?", [bank_id])
        engine.vectors.drop_in(cur, bank_id, collection)
        version = record_change(engine.db, cur, bank_id, "delete_bank")
    # Once committed: a mirror (a bank handle) opened meanwhile holds the bank as it was.
    engine.drop_mirrors(bank_id)
    engine.bank_changed(bank_id, version)
    engine.keyword.maybe_fold()


def finish_drop(db: Database, collection: str) -> None:
    """Clear the journal entry of a collection that has been dropped."""
    db.execute("DELETE FROM vector_journal WHERE op = ? AND memory_id = ?", [DROP, collection])
