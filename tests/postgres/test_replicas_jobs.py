"""Background jobs over a shared store: each job run by exactly one replica, a bank's jobs
in order and never two at once, jobs outliving the replica that queued them, failures
remembered without stopping the worker."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from agentmem.consolidate.worker import ConsolidationJob, SharedConsolidationWorker
from agentmem.store import jobs
from agentmem.store.postgres.database import PostgresDatabase


@pytest.fixture
def stores(pg_url: str) -> Iterator[list[PostgresDatabase]]:
    opened = [PostgresDatabase(pg_url) for _ in range(2)]
    yield opened
    for db in opened:
        db.close()


class Runs:
    """What the workers ran, and whether two ran jobs of one bank at once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.done: list[tuple[str, str, tuple[str, ...]]] = []
        self.running: set[str] = set()
        self.overlaps: list[str] = []

    def runner(self, replica: str, db: PostgresDatabase):  # noqa: ANN201
        def run(bank_id: str, memory_ids: tuple[str, ...]) -> None:
            with self.lock:
                if bank_id in self.running:
                    self.overlaps.append(bank_id)
                self.running.add(bank_id)
            db.execute("INSERT INTO meta VALUES (?, ?)", [f"ran:{memory_ids[0]}", replica])
            threading.Event().wait(0.01)  # let the other replica try the same bank meanwhile
            with self.lock:
                self.running.discard(bank_id)
                self.done.append((replica, bank_id, memory_ids))

        return run


def job(bank_id: str, marker: str) -> ConsolidationJob:
    return ConsolidationJob(bank_id, (marker,), run=lambda: None)


def test_each_job_runs_once_on_one_replica_and_a_bank_never_twice_at_once(stores):
    runs = Runs()
    workers = [
        SharedConsolidationWorker(db, runs.runner(f"r{i}", db), idle_seconds=0.05)
        for i, db in enumerate(stores)
    ]
    try:
        submitted = {bank: [] for bank in ("a", "b")}
        for n in range(20):
            bank = "aaab"[n % 4]  # mostly one bank: both replicas want its jobs
            marker = f"{bank}{n}"
            workers[n % 2].submit(job(bank, marker))
            submitted[bank].append(marker)
        for bank in submitted:
            assert workers[0].wait(bank, timeout=120)
        assert runs.overlaps == []
        for bank, markers in submitted.items():
            ran = [ids[0] for _, b, ids in runs.done if b == bank]
            assert ran == markers  # each once, in the order queued
        recorded = dict(stores[0].fetchall("SELECT key, value FROM meta WHERE key LIKE 'ran:%'"))
        assert recorded == {f"ran:{ids[0]}": replica for replica, _, ids in runs.done}
        assert jobs.pending(stores[0], "a") == 0
    finally:
        for worker in workers:
            worker.stop()


def test_a_job_outlives_the_replica_that_queued_it(stores):
    first, second = stores
    runs = Runs()
    jobs.enqueue(first, "a", "consolidate", ["a1"])  # queued; that replica is gone
    worker = SharedConsolidationWorker(second, runs.runner("r1", second), idle_seconds=0.05)
    try:
        assert worker.wait("a", timeout=120)
        assert [(r, ids) for r, _, ids in runs.done] == [("r1", ("a1",))]
    finally:
        worker.stop()


def test_a_job_whose_replica_died_running_it_is_run_again(stores):
    first, second = stores
    jobs.enqueue(first, "a", "consolidate", ["a1"])
    jobs.enqueue(first, "a", "consolidate", ["a2"])
    held = jobs.claim(first, lease_seconds=0.5)  # and the replica dies: never finished
    assert held is not None and held.memory_ids == ("a1",)
    assert jobs.claim(second, lease_seconds=60) is None  # a2 waits behind the held a1
    runs = Runs()
    worker = SharedConsolidationWorker(second, runs.runner("r1", second), idle_seconds=0.05)
    try:
        assert worker.wait("a", timeout=120)
        assert [ids for _, _, ids in runs.done] == [("a1",), ("a2",)]
    finally:
        worker.stop()


def test_failed_jobs_are_remembered_dropped_and_the_worker_goes_on(stores):
    db = stores[0]
    done: list[str] = []

    def run(bank_id: str, memory_ids: tuple[str, ...]) -> None:
        marker = memory_ids[0]
        if marker == "raises":
            raise RuntimeError("the model is down")
        if marker == "breaks":
            db.execute("SELECT * FROM no_such_table")  # a StorageError
        done.append(marker)

    worker = SharedConsolidationWorker(db, run, idle_seconds=0.05)
    try:
        worker.submit(job("a", "raises"))
        assert worker.wait("a", timeout=120)
        assert "the model is down" in worker.last_error("a")
        worker.submit(job("a", "breaks"))
        worker.submit(job("a", "fine"))
        assert worker.wait("a", timeout=120)
        assert done == ["fine"]
        assert worker.last_error("a") is None  # the bank's last job succeeded
        worker.forget("a")
    finally:
        worker.stop()
