"""Background jobs in a shared store (PostgreSQL), claimed by one replica each.

A job (today: consolidating a retain's new facts) is a row of ``background_jobs``. A replica
takes the advisory lock of the bank with the oldest job no other replica is working on, claims
that bank's oldest job with ``FOR UPDATE SKIP LOCKED``, runs it inside the claiming
transaction and deletes it there: the job is gone exactly when its work has committed. A
replica that dies mid-job releases both locks, and another one runs the job. So one replica
runs each job, a bank's jobs run one at a time and in order, and other banks' jobs go on in
parallel.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

#: The jobs table (PostgreSQL).
SCHEMA = """
CREATE TABLE IF NOT EXISTS background_jobs (
    id BIGSERIAL PRIMARY KEY,
    bank_id text NOT NULL,
    kind text NOT NULL,
    memory_ids text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
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


@contextmanager
def claimed(db: Any) -> Iterator[Job | None]:
    """The oldest job no other replica holds, of a bank no other replica is working on
    (None: there is none), inside a transaction that deletes it when the block ends.

    The block runs the job; statements it runs on this thread join the transaction. If the
    block raises, the transaction, the job's deletion included, rolls back.
    """
    busy: list[str] = []  # banks another replica is working on
    while True:
        with db.transaction() as cur:
            oldest = cur.execute(
                "SELECT bank_id FROM background_jobs WHERE bank_id <> ALL(?) ORDER BY id LIMIT 1",
                [busy],
            ).fetchall()
            if not oldest:
                yield None
                return
            bank_id = oldest[0][0]
            # The bank first, then its oldest job: a bank's rows are claimed only under its
            # lock, so its jobs run one at a time and in order.
            locked = cur.execute(
                "SELECT pg_try_advisory_xact_lock(?, hashtext(?))", [_LOCK_SPACE, bank_id]
            ).fetchall()[0][0]
            rows = (
                cur.execute(
                    "SELECT id, kind, memory_ids FROM background_jobs WHERE bank_id = ? "
                    "ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED",
                    [bank_id],
                ).fetchall()
                if locked
                else []
            )
            if rows:
                job_id, kind, memory_ids = rows[0]
                yield Job(int(job_id), bank_id, kind, tuple(json.loads(memory_ids)))
                cur.execute("DELETE FROM background_jobs WHERE id = ?", [job_id])
                return
        if not locked:
            busy.append(bank_id)


def drop(db: Any, job_id: int) -> None:
    """Delete a job whose run failed so badly that its own transaction could not."""
    db.execute("DELETE FROM background_jobs WHERE id = ?", [job_id])


def pending(db: Any, bank_id: str) -> int:
    """How many jobs of the bank are queued or running."""
    return int(
        db.fetchall("SELECT count(*) FROM background_jobs WHERE bank_id = ?", [bank_id])[0][0]
    )
