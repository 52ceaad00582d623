"""The background thread that consolidates after ``retain`` has returned.

One daemon thread per ``AgentMemory`` takes jobs in order, so observations of a bank are
never refined by two threads at once. Over a shared store (PostgreSQL) the jobs are rows of the
store instead, claimed by one replica each (:class:`SharedConsolidationWorker`).
``wait(bank_id)`` blocks until that bank's queued jobs are done; a failed job is logged and
remembered (facts are already stored, so nothing is lost).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agentmem.store import jobs

log = logging.getLogger("agentmem")


@dataclass(frozen=True, slots=True)
class ConsolidationJob:
    """New facts of one bank to consolidate, and the function that does it."""

    bank_id: str
    memory_ids: tuple[str, ...]
    run: Callable[[], None]


class ConsolidationWorker:
    """A queue of consolidation jobs served by one daemon thread."""

    def __init__(self) -> None:
        self._queue: queue.Queue[ConsolidationJob | None] = queue.Queue()
        self._pending: dict[str, int] = {}
        self._errors: dict[str, str] = {}
        self._done = threading.Condition()
        self._thread = threading.Thread(
            target=self._serve, name="agentmem-consolidation", daemon=True
        )
        self._thread.start()

    def submit(self, job: ConsolidationJob) -> None:
        """Queue a job; it runs after the jobs queued before it."""
        with self._done:
            self._pending[job.bank_id] = self._pending.get(job.bank_id, 0) + 1
        self._queue.put(job)

    def wait(self, bank_id: str, timeout: float | None = None) -> bool:
        """Block until the bank has no queued job; False if ``timeout`` seconds passed first."""
        with self._done:
            return self._done.wait_for(lambda: not self._pending.get(bank_id), timeout=timeout)

    def last_error(self, bank_id: str) -> str | None:
        """The error of the bank's most recent failed job, if its last job failed."""
        with self._done:
            return self._errors.get(bank_id)

    def forget(self, bank_id: str) -> None:
        """Drop what is remembered about a deleted bank (its queued jobs still run)."""
        with self._done:
            self._errors.pop(bank_id, None)

    def stop(self) -> None:
        """Finish the queued jobs, then end the thread."""
        self._queue.put(None)
        self._thread.join()

    def _serve(self) -> None:
        while (job := self._queue.get()) is not None:
            error: str | None = None
            try:
                job.run()
            except Exception as exc:  # a failed job must not kill the worker
                error = f"{type(exc).__name__}: {exc}"
                log.warning("consolidation of bank %r failed: %s", job.bank_id, error)
            with self._done:
                self._pending[job.bank_id] -= 1
                if error is None:
                    self._errors.pop(job.bank_id, None)
                else:
                    self._errors[job.bank_id] = error
                self._done.notify_all()


class SharedConsolidationWorker:
    """The worker of a replica over a shared store (PostgreSQL): jobs are rows of the store
    (store/jobs.py), run by whichever replica claims them first, one bank at a time.

    Same interface as :class:`ConsolidationWorker`. A job outlives the replica that queued
    it: stopped or killed, its jobs are run by another replica (or by it when it restarts);
    one that died running a job leaves it to be run again once its lease expires. ``wait``
    waits for the bank's jobs of every replica.

    Args:
        db: The shared store.
        run: Runs one job: ``run(bank_id, memory_ids)``.
        idle_seconds: How long the thread sleeps when no job is queued (it wakes at once
            for a job this replica submits).
        lease_seconds: How long a claimed job is this replica's; a job not finished by then
            (its replica died) is run again by another.
    """

    def __init__(
        self,
        db: Any,
        run: Callable[[str, tuple[str, ...]], None],
        idle_seconds: float = 1.0,
        lease_seconds: float = 900.0,
    ) -> None:
        self._db = db
        self._run = run
        self._idle = idle_seconds
        self._lease = lease_seconds
        self._errors: dict[str, str] = {}
        self._wake = threading.Condition()
        self._stopped = False
        self._thread = threading.Thread(
            target=self._serve, name="agentmem-consolidation", daemon=True
        )
        self._thread.start()

    def submit(self, job: ConsolidationJob) -> None:
        """Queue a job in the store; it runs after the bank's jobs queued before it."""
        jobs.enqueue(self._db, job.bank_id, "consolidate", job.memory_ids)
        with self._wake:
            self._wake.notify_all()

    def wait(self, bank_id: str, timeout: float | None = None) -> bool:
        """Block until no replica has a job of the bank queued or running; False if
        ``timeout`` seconds passed first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while jobs.pending(self._db, bank_id):
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(0.05)
        return True

    def last_error(self, bank_id: str) -> str | None:
        """The error of the bank's most recent failed job run by this replica."""
        with self._wake:
            return self._errors.get(bank_id)

    def forget(self, bank_id: str) -> None:
        """Drop what is remembered about a deleted bank."""
        with self._wake:
            self._errors.pop(bank_id, None)

    def stop(self) -> None:
        """Finish the job in hand, then end the thread (queued jobs stay in the store)."""
        with self._wake:
            self._stopped = True
            self._wake.notify_all()
        self._thread.join()

    def _serve(self) -> None:
        while not self._stopped:
            try:
                ran = self._run_one()
            except Exception as exc:  # the store is unreachable: try again later
                log.warning("consolidation could not claim a job: %s", exc)
                ran = False
            if not ran:
                with self._wake:
                    if not self._stopped:
                        self._wake.wait(self._idle)

    def _run_one(self) -> bool:
        """Claim and run one job; False when none is queued."""
        job = jobs.claim(self._db, self._lease)
        if job is None:
            return False
        error: str | None = None
        try:
            self._run(job.bank_id, job.memory_ids)
        except Exception as exc:  # a failed job must not kill the worker
            error = f"{type(exc).__name__}: {exc}"
            log.warning("consolidation of bank %r failed: %s", job.bank_id, error)
        jobs.finish(self._db, job.id)  # failed too: the facts are stored, a retry would fail
        with self._wake:
            if error is None:
                self._errors.pop(job.bank_id, None)
            else:
                self._errors[job.bank_id] = error
        return True
