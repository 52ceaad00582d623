"""Three ``agentmem serve`` replicas over one PostgreSQL database, as a load balancer would
use them: concurrent clients mix retain, recall and forget across replicas; every
acknowledged write is stored and visible through every replica, the counts add up, and a
replica killed (SIGKILL) mid-write loses nothing it acknowledged."""

from __future__ import annotations

import random
import signal
import subprocess
import threading
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field

import httpx
import pytest

import agentmem
from agentmem.bench.replicas import serve_replica as replica

TIMEOUT = 120.0  # seconds a request may take on a loaded two-core machine
CLIENTS = 4
OPERATIONS = 8  # per client
BANKS = ("north", "south")


@pytest.fixture
def replicas(pg_url: str) -> Iterator[list[tuple[subprocess.Popen[str], str]]]:
    with ExitStack() as stack:
        # The first creates the schema; the others start once it has.
        started = [stack.enter_context(replica(pg_url))]
        started += [stack.enter_context(replica(pg_url)) for _ in range(2)]
        yield started


@dataclass
class Ledger:
    """What the replicas acknowledged, across all clients."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    kept: dict[str, tuple[str, str]] = field(default_factory=dict)  # id -> (bank, text)
    forgotten: set[str] = field(default_factory=set)
    failures: list[str] = field(default_factory=list)


def retain(base: str, bank: str, text: str) -> str:
    response = httpx.post(
        f"{base}/banks/{bank}/retain",
        json={"content": text, "mentioned_at": "2025-05-01T10:00:00Z"},
        timeout=TIMEOUT,
    )
    assert response.status_code == 201, response.text
    (memory,) = response.json()["memories"]
    return memory["id"]


def recalled(base: str, bank: str, query: str) -> list[dict]:
    response = httpx.post(
        f"{base}/banks/{bank}/recall", json={"query": query, "top_k": 5}, timeout=TIMEOUT
    )
    assert response.status_code == 200, response.text
    return response.json()["hits"]


def assert_recalled(base: str, bank: str, query: str, memory_id: str) -> None:
    """The memory is among the replica's hits; if not, the failure says what came back, and
    what the same recall gives a moment later (a miss that heals says: a stale copy)."""
    hits = recalled(base, bank, query)
    if memory_id not in [hit["memory"]["id"] for hit in hits]:
        again = [hit["memory"]["id"] for hit in recalled(base, bank, query)]
        shown = [(h["memory"]["id"], h["memory"]["text"], h["strategy_details"]) for h in hits]
        raise AssertionError(
            f"{memory_id} not recalled by {base} for {query!r}: {shown}; "
            f"asked again: {memory_id in again} {again}"
        )


def stored_ids(base: str, bank: str) -> set[str]:
    response = httpx.get(
        f"{base}/banks/{bank}/memories", params={"limit": 100_000}, timeout=TIMEOUT
    )
    if response.status_code == 404:
        return set()
    assert response.status_code == 200, response.text
    return {m["id"] for m in response.json()}


def client(number: int, bases: list[str], ledger: Ledger) -> None:
    """Retain unique facts through one replica, read them back through another, and forget
    some of them through a third."""
    rng = random.Random(number)
    mine: list[str] = []
    try:
        for step in range(OPERATIONS):
            bank = BANKS[(number + step) % len(BANKS)]
            writer, reader, forgetter = rng.sample(bases, 3)
            token = f"zq{number}x{step}k"  # one word no other fact holds
            text = f"Courier {token} delivered parcel {number}-{step} to the harbour office."
            memory_id = retain(writer, bank, text)
            with ledger.lock:
                ledger.kept[memory_id] = (bank, text)
            mine.append(memory_id)
            # Visible through another replica at its next call: by id and by recall.
            got = httpx.get(f"{reader}/banks/{bank}/memories/{memory_id}", timeout=TIMEOUT)
            assert got.status_code == 200, got.text
            assert_recalled(reader, bank, f"Who is {token}?", memory_id)
            if step % 3 == 2:
                doomed = mine.pop(rng.randrange(len(mine)))
                doomed_bank = ledger.kept[doomed][0]
                response = httpx.post(
                    f"{forgetter}/banks/{doomed_bank}/forget",
                    json={"ids": [doomed]},
                    timeout=TIMEOUT,
                )
                assert response.status_code == 200, response.text
                assert response.json()["deleted"] == 1
                with ledger.lock:
                    ledger.forgotten.add(doomed)
                gone = httpx.get(f"{reader}/banks/{doomed_bank}/memories/{doomed}", timeout=TIMEOUT)
                assert gone.status_code == 404, gone.text
    except BaseException as exc:  # reported by the test, with the client that saw it
        with ledger.lock:
            ledger.failures.append(f"client {number}: {type(exc).__name__}: {exc}")


def test_three_replicas_serve_concurrent_clients_without_losing_a_write(replicas, pg_url):
    bases = [base for _, base in replicas]
    ledger = Ledger()
    threads = [threading.Thread(target=client, args=(n, bases, ledger)) for n in range(CLIENTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not ledger.failures, "\n".join(ledger.failures)  # in full: the diff truncates
    assert len(ledger.kept) == CLIENTS * OPERATIONS
    expected = {
        bank: {i for i, (b, _) in ledger.kept.items() if b == bank} - ledger.forgotten
        for bank in BANKS
    }
    for base in bases:  # every replica sees exactly what was acknowledged
        for bank in BANKS:
            assert stored_ids(base, bank) == expected[bank]
            stats = httpx.get(f"{base}/banks/{bank}", timeout=TIMEOUT).json()
            assert stats["memories"] == len(expected[bank])
    with agentmem.AgentMemory(pg_url) as mem:
        report = mem.check_integrity()
        assert report.ok, report.problems
        assert report.memories == sum(len(ids) for ids in expected.values())
        for bank in BANKS:
            texts = {m.id: m.text for m in mem.bank(bank).memories()}
            assert texts == {i: ledger.kept[i][1] for i in expected[bank]}


def test_a_replica_killed_mid_write_loses_nothing_it_acknowledged(replicas, pg_url):
    (victim, victim_base), *others = replicas
    acknowledged: list[str] = []
    stop = threading.Event()

    def write_until_killed() -> None:
        step = 0
        while not stop.is_set():
            try:
                acknowledged.append(
                    retain(victim_base, "north", f"Parcel wv{step}k left the depot at dawn.")
                )
            except (httpx.HTTPError, AssertionError):
                return  # the replica died under this request: it acknowledged nothing
            step += 1

    writer = threading.Thread(target=write_until_killed)
    writer.start()
    # Kill once it has acknowledged a few writes, while it is serving the next one.
    survivor = others[0][1]
    while len(acknowledged) < 3 and writer.is_alive():
        stop.wait(0.05)
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    stop.set()
    writer.join()
    assert len(acknowledged) >= 3
    stored = stored_ids(survivor, "north")
    assert set(acknowledged) <= stored
    assert len(stored - set(acknowledged)) <= 1  # at most the write it died serving
    # The survivors still write to the bank (no lock left behind by the dead replica).
    after = retain(survivor, "north", "Parcel after the crash arrived.")
    assert after in stored_ids(others[1][1], "north")
    with agentmem.AgentMemory(pg_url) as mem:
        report = mem.check_integrity()
        assert report.ok, report.problems
