"""Background jobs in a shared store (PostgreSQL), claimed by one replica each.

A job (today: consolidating a retain's new facts) is a row of ``background_jobs``. A replica
claims the oldest job nobody holds (``FOR UPDATE SKIP LOCKED``), under the advisory lock of
its bank, and only if it is the bank's oldest and no job of the bank is held: it then writes a
lease (``claimed_until``) and commits at once, runs the job outside any transaction (an LLM
call must not hold a connection or the store's write lock), and deletes the row when done. So
a bank's jobs run one at a time and in order, other banks' in parallel; a replica that dies
mid-job leaves its lease to expire, and another replica runs the job again (at least once).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

#: The jobs table (PostgreSQL).
SCHEMA = """
CREATE TABLE IF NOT EXISTS background_jobs (
    id BIGSERIAL PRIMARY KEY,
    bank_id text NOT NULL,
    kind text NOT NULL,
    memory_ids text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    claimed_until timestamptz
);
CREATE INDEX IF NOT EXISTS background_jobs_bank ON background_jobs (bank_id);
"""
# The first key of the per-bank advisory locks (the second is a hash of the bank id).
_LOCK_SPACE = 0x61676A62  # "agjb"


@dataclass(frozen=True, slots=True)
class Job:
    """One claimed job."""

    id: int
    bank_id: str
    kind: str
    memory_ids: tuple[str, ...]


def enqueue(db: Any, bank_id: str, kind: str, memory_ids: Sequence[str]) -> None:
    """Add a job; any replica may run it."""
    db.execute(
        "INSERT INTO background_jobs (bank_id, kind, memory_ids) VALUES (?, ?, ?)",
        [bank_id, kind, json.dumps(list(memory_ids))],
    )


def claim(db: Any, lease_seconds: float) -> Job | None:
    """Claim the next job this replica may run (None: there is none) for ``lease_seconds``;
    call :func:`finish` when it is done."""
    busy: list[str] = []  # banks whose jobs another replica holds
    while True:
        with db.transaction() as cur:
            rows = cur.execute(
                "SELECT id, bank_id FROM background_jobs WHERE bank_id <> ALL(?) "
                "AND (claimed_until IS NULL OR claimed_until < now()) "
                "ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED",
                [busy],
            ).fetchall()
            if not rows:
                return None
            job_id, bank_id = rows[0]
            if cur.execute(
                "SELECT pg_try_advisory_xact_lock(?, hashtext(?))", [_LOCK_SPACE, bank_id]
            ).fetchall()[0][0]:
                first, held = cur.execute(
                    "SELECT min(id), coalesce(bool_or(claimed_until >= now()), false) "
                    "FROM background_jobs WHERE bank_id = ?",
                    [bank_id],
                ).fetchall()[0]
                if first == job_id and not held:
                    kind, memory_ids = cur.execute(
                        "UPDATE background_jobs SET claimed_until = now() + make_interval("
                        "secs => ?) WHERE id = ? RETURNING kind, memory_ids",
                        [lease_seconds, job_id],
                    ).fetchall()[0]
                    return Job(int(job_id), bank_id, kind, tuple(json.loads(memory_ids)))
        busy.append(bank_id)


def finish(db: Any, job_id: int) -> None:
    """A claimed job is done (or failed for good): delete it."""
    db.execute("DELETE FROM background_jobs WHERE id = ?", [job_id])


def pending(db: Any, bank_id: str) -> int:
    """How many jobs of the bank are queued or running."""
    return int(
        db.fetchall("SELECT count(*) FROM background_jobs WHERE bank_id = ?", [bank_id])[0][0]
    )
