"""The background thread that consolidates after ``retain`` has returned.

One daemon thread per ``AgentMemory`` takes jobs in order, so observations of a bank are
never refined by two threads at once. ``wait(bank_id)`` blocks until that bank's queued jobs
are done; a failed job is logged and remembered (facts are already stored, so nothing is lost).
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass

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
