"""Integrity check: do DuckDB, Chroma and the keyword index agree, and is every fact whole?

What "whole" means, per bank:

* every memory has its vector in the bank's Chroma collection, of the bank's dimension, and
  Chroma holds no vector of a memory the bank does not have (vectors still in the journal,
  written by a call that has not finished, are in flight and not counted);
* every memory is keyword-searchable: in the built full-text index or in the pending postings,
  and the bank's keyword statistics (rows, total length) are those of its rows;
* every memory's piece vectors, where it has them, decode as vectors of the bank's dimension;
* every memory's episode exists; every memory–entity row names an existing memory and entity
  of the same bank; every link joins two memories of the bank; no entity is left without facts;
* no entity profile cites a fact the bank does not hold (a process killed between a forget's
  commit and the refresh of the profiles it touched leaves one; ``repair`` rebuilds it).

Store-wide: no row belongs to a bank the store does not know, and no pending posting belongs to
a deleted memory. The check holds the write lock while it reads DuckDB, so it sees no write
half-way. Chroma is read under the same lock: a write that committed before the check is in the
vector journal until Chroma has it, and none can commit while the check runs.

The keyword index supplies its own checks (``bank_checks``, ``store_checks``), as its tables
differ by backend. On PostgreSQL the same checks run against the one database, which holds
the vectors too (no journal, nothing in flight); there a problem means rows deleted or
written by something other than agentmem, not a damaged file. Other processes may write
meanwhile: the write lock is this process's only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agentmem.consolidate.profiles import stale_profiles
from agentmem.retain.pieces import readable

if TYPE_CHECKING:
    from agentmem.engine import Engine


@dataclass(frozen=True, slots=True)
class IntegrityReport:
    """The result of :meth:`AgentMemory.check_integrity` or :meth:`MemoryBank.check_integrity`.

    Attributes:
        banks: The banks checked.
        memories: Memories counted in DuckDB.
        vectors: Vectors counted in Chroma.
        keyword_pending: Memories keyword-searchable through pending postings (not yet in the
            built full-text index); informative, not a problem.
        in_flight: Vector journal entries of writes not yet confirmed by Chroma; after a clean
            open this is 0.
        problems: One line per inconsistency found; empty when the store is whole.
    """

    banks: tuple[str, ...]
    memories: int
    vectors: int
    keyword_pending: int
    in_flight: int
    problems: tuple[str, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        """True when no problem was found."""
        return not self.problems


# Each query returns offending ids for bank $bank; the label says what is wrong with them.
_BANK_CHECKS: tuple[tuple[str, str], ...] = (
    (
        "memory without its episode",
        "SELECT m.id FROM memories AS m LEFT JOIN episodes AS e ON e.id = m.episode_id "
        "WHERE m.bank_id = $bank AND m.episode_id IS NOT NULL AND e.id IS NULL",
    ),
    (
        "memory-entity row of a missing memory",
        "SELECT me.memory_id FROM memory_entities AS me "
        "LEFT JOIN memories AS m ON m.id = me.memory_id AND m.bank_id = me.bank_id "
        "WHERE me.bank_id = $bank AND m.id IS NULL",
    ),
    (
        "memory-entity row of a missing entity",
        "SELECT me.entity_id FROM memory_entities AS me "
        "LEFT JOIN entities AS e ON e.id = me.entity_id AND e.bank_id = me.bank_id "
        "WHERE me.bank_id = $bank AND e.id IS NULL",
    ),
    (
        "entity without any memory",
        "SELECT e.id FROM entities AS e WHERE e.bank_id = $bank AND NOT EXISTS "
        "(SELECT 1 FROM memory_entities AS me WHERE me.entity_id = e.id)",
    ),
    (
        "link to a missing memory",
        "SELECT l.src_id || ' -> ' || l.dst_id FROM links AS l WHERE l.bank_id = $bank AND ("
        "NOT EXISTS (SELECT 1 FROM memories AS m WHERE m.id = l.src_id AND m.bank_id = $bank) OR "
        "NOT EXISTS (SELECT 1 FROM memories AS m WHERE m.id = l.dst_id AND m.bank_id = $bank))",
    ),
)

_STORE_CHECKS: tuple[tuple[str, str], ...] = tuple(
    (
        f"{table} row of an unknown bank",
        f"SELECT DISTINCT t.bank_id FROM {table} AS t "
        "WHERE t.bank_id NOT IN (SELECT bank_id FROM banks)",
    )
    for table in (
        "memories",
        "episodes",
        "entities",
        "memory_entities",
        "links",
    )
)

_SHOWN = 5  # offending ids quoted per problem


def _problem(label: str, offenders: list[str]) -> str:
    shown = ", ".join(offenders[:_SHOWN]) + (" ..." if len(offenders) > _SHOWN else "")
    return f"{len(offenders)} × {label}: {shown}"


def _unreadable_pieces(engine: Engine, bank_id: str, dimension: int) -> list[str]:
    """Ids of the bank's memories whose stored piece vectors (``retain/pieces.py``) are no
    vectors of the bank's dimension."""
    rows = engine.db.fetchall(
        "SELECT id, piece_vectors FROM memories WHERE bank_id = ? AND piece_vectors IS NOT NULL "
        "ORDER BY seq",
        [bank_id],
    )
    return [memory_id for memory_id, stored in rows if not readable(stored, dimension)]


def check_integrity(engine: Engine, bank_ids: list[str] | None = None) -> IntegrityReport:
    """Check the given banks (every bank when None) and, for the whole store, the shared rows."""
    db = engine.db
    problems: list[str] = []
    with db.write_lock:
        engine.vectors.flush()  # staged vectors are in flight only until the next read
        rows = db.fetchall("SELECT bank_id, collection, dimension FROM banks ORDER BY bank_id")
        wanted = [r for r in rows if bank_ids is None or r[0] in bank_ids]
        collections = {bank_id: collection for bank_id, collection, _ in wanted}
        dimensions = {bank_id: dimension for bank_id, _, dimension in wanted}
        memory_ids: dict[str, set[str]] = {}
        in_flight: dict[str, set[str]] = {}
        for bank_id in collections:
            memory_ids[bank_id] = {
                r[0] for r in db.fetchall("SELECT id FROM memories WHERE bank_id = ?", [bank_id])
            }
            in_flight[bank_id] = {
                r[0]
                for r in db.fetchall(
                    "SELECT memory_id FROM vector_journal WHERE bank_id = ?", [bank_id]
                )
            }
            for label, sql in _BANK_CHECKS + engine.keyword.bank_checks:
                offenders = [str(r[0]) for r in db.fetchall(sql, {"bank": bank_id})]
                if offenders:
                    problems.append(f"bank {bank_id!r}: {_problem(label, offenders)}")
            unreadable = _unreadable_pieces(engine, bank_id, dimensions[bank_id])
            if unreadable:
                label = "memory whose piece vectors do not decode (repair() embeds them again)"
                problems.append(f"bank {bank_id!r}: {_problem(label, unreadable)}")
            stale = list(stale_profiles(db, bank_id))
            if stale:
                label = "profile citing a missing fact"
                problems.append(f"bank {bank_id!r}: {_problem(label, stale)}")
        if bank_ids is None:
            for label, sql in _STORE_CHECKS + engine.keyword.store_checks:
                offenders = [str(r[0]) for r in db.fetchall(sql)]
                if offenders:
                    problems.append(_problem(label, offenders))
        pending = engine.keyword.pending_memories(list(collections))
        # PostgreSQL keeps a partial index per bank's collection (Chroma one per collection).
        unindexed = set(engine.vectors.unindexed(list(collections.values())))
        vectors = 0
        for bank_id, collection in collections.items():
            stored = engine.vectors.ids(collection)
            vectors += len(stored)
            missing = sorted(memory_ids[bank_id] - stored - in_flight[bank_id])
            orphans = sorted(stored - memory_ids[bank_id] - in_flight[bank_id])
            if missing:
                problems.append(f"bank {bank_id!r}: {_problem('memory without a vector', missing)}")
            if orphans:
                problems.append(f"bank {bank_id!r}: {_problem('vector of no memory', orphans)}")
            dimension = engine.vectors.dimension(collection) if stored else None
            if collection in unindexed:
                problems.append(
                    f"bank {bank_id!r}: its vectors have no index (every semantic search "
                    "scans them all; repair() builds it)"
                )
            if dimension not in (None, dimensions[bank_id]):
                problems.append(
                    f"bank {bank_id!r}: its vectors have {dimension} dimensions, not the "
                    f"{dimensions[bank_id]} of its embedder"
                )
    return IntegrityReport(
        banks=tuple(collections),
        memories=sum(len(ids) for ids in memory_ids.values()),
        vectors=vectors,
        keyword_pending=int(pending),
        in_flight=sum(len(ids) for ids in in_flight.values()),
        problems=tuple(problems),
    )
