"""Recall throughput of 1, 2 and 3 ``agentmem serve`` replicas over one PostgreSQL database.

For each replica count, that many ``agentmem serve --path URL`` processes are started on
loopback ports, each warmed (its first recall loads the bank's in-process copies: the cold
start, reported), and then concurrent clients send read-only recalls, client ``i`` to replica
``i mod n`` (what a load balancer does). Reported per count: requests per second, latency p50
and p95 as the clients see it, and where the time went — CPU seconds per request of the
replicas and of the PostgreSQL server processes serving the database (read from ``/proc``,
so only for a server on this machine), the rest being time spent waiting for a core or a
lock. On a machine of few cores the replicas share them: the point is that throughput does
not collapse as replicas are added, not that it grows.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from agentmem.bench.locomo import percentile

_LISTENING = re.compile(r"running on (http://127\.0\.0\.1:\d+)")
#: Seconds one request may take before the benchmark gives up on it.
_TIMEOUT = 300.0
_TICKS = os.sysconf("SC_CLK_TCK")


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of a process so far (None when it is not on this machine)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / _TICKS


def _total_cpu(pids: Sequence[int]) -> float:
    return sum(c for c in map(_cpu_seconds, pids) if c is not None)


@contextmanager
def serve_replica(url: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``agentmem serve --path URL`` on a free loopback port, with this process's agentmem."""
    source = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([source, os.environ.get("PYTHONPATH", "")])}
    env.pop("AGENTMEM_TOKEN", None)
    command = [sys.executable, "-m", "agentmem.cli", "serve", "--path", url, "--port", "0"]
    with subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True) as server:
        try:
            for line in server.stderr or ():
                match = _LISTENING.search(line)
                if match:
                    # Keep draining stderr, so the server never blocks on a full pipe.
                    threading.Thread(target=server.stderr.read, daemon=True).start()  # type: ignore[union-attr]
                    yield server, match.group(1)
                    break
            else:
                raise RuntimeError(f"a replica exited with {server.wait()} before listening")
        finally:
            if server.poll() is None:
                server.send_signal(signal.SIGTERM)
                try:
                    server.wait(60)
                except subprocess.TimeoutExpired:
                    server.kill()
                    server.wait()


def _server_pids(url: str) -> list[int]:
    """The PostgreSQL backend processes serving the database of ``url`` now."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as con:
        rows = con.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid()"
        ).fetchall()
    return [pid for (pid,) in rows]


def _recall(client: Any, base: str, bank: str, query: str, now: datetime) -> None:  # noqa: ANN401
    response = client.post(
        f"{base}/banks/{bank}/recall",
        json={"query": query, "top_k": 10, "reinforce": False, "now": now.isoformat()},
        timeout=_TIMEOUT,
    )
    response.raise_for_status()


def _round(value: float, digits: int = 2) -> float:
    return round(value, digits)


def replica_throughput(
    url: str,
    bank: str,
    queries: Sequence[str],
    now: datetime,
    *,
    replicas: Sequence[int] = (1, 2, 3),
    clients: int = 6,
    requests: int = 120,
) -> dict[str, Any]:
    """Recall throughput of each count of ``replicas`` over the database at ``url``.

    Args:
        url: The PostgreSQL database holding ``bank``.
        bank: The bank recalled from (read only: ``reinforce=False``).
        queries: Recall queries, used in turn.
        now: The ``now`` of every recall (recency is measured from it).
        replicas: The replica counts to measure, each with fresh processes.
        clients: Concurrent clients (threads), client ``i`` on replica ``i mod n``.
        requests: Recalls per replica count, shared among the clients.
    """
    results: dict[str, Any] = {"clients": clients, "requests": requests, "by_replicas": {}}
    for count in replicas:
        results["by_replicas"][str(count)] = _served_by(
            url, count, bank, queries, now, clients=clients, requests=requests
        )
    return results


def _served_by(
    url: str,
    count: int,
    bank: str,
    queries: Sequence[str],
    now: datetime,
    *,
    clients: int,
    requests: int,
) -> dict[str, Any]:
    """The figures of ``count`` fresh replicas (see :func:`replica_throughput`)."""
    import httpx

    with ExitStack() as stack:
        started = [stack.enter_context(serve_replica(url)) for _ in range(count)]
        bases = [base for _, base in started]
        cold = []
        with httpx.Client() as client:
            for base in bases:  # each loads its copies of the bank
                began = time.perf_counter()
                _recall(client, base, bank, queries[0], now)
                cold.append(_round(time.perf_counter() - began))
        replica_pids = [server.pid for server, _ in started]
        server_pids = _server_pids(url)
        latencies: list[float] = []
        failures: list[BaseException] = []
        lock = threading.Lock()
        turn = iter(range(requests))

        def client_loop(index: int) -> None:
            base = bases[index % len(bases)]
            with httpx.Client() as client:
                while True:
                    with lock:
                        number = next(turn, None)
                    if number is None:
                        return
                    began = time.perf_counter()
                    try:
                        _recall(client, base, bank, queries[number % len(queries)], now)
                    except Exception as exc:  # reported, not raised from a thread
                        with lock:
                            failures.append(exc)
                        return
                    with lock:
                        latencies.append(time.perf_counter() - began)

        replica_cpu = _total_cpu(replica_pids)
        server_before = {pid: _cpu_seconds(pid) or 0.0 for pid in server_pids}
        began = time.perf_counter()
        threads = [threading.Thread(target=client_loop, args=(i,)) for i in range(clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        wall = time.perf_counter() - began
        replica_cpu = _total_cpu(replica_pids) - replica_cpu
        # Backends the pools opened meanwhile count from zero.
        server_cpu = sum(
            (_cpu_seconds(pid) or 0.0) - server_before.get(pid, 0.0)
            for pid in {*server_before, *_server_pids(url)}
        )
    if failures:
        raise RuntimeError(f"{len(failures)} recall(s) failed: {failures[0]!r}")
    done = len(latencies)
    return {
        "recalls_per_s": _round(done / wall, 1),
        "p50_ms": _round(percentile(latencies, 50) * 1000, 1),
        "p95_ms": _round(percentile(latencies, 95) * 1000, 1),
        "cold_start_s": cold,
        "replica_cpu_ms_per_recall": _round(replica_cpu / done * 1000, 1),
        "postgres_cpu_ms_per_recall": _round(server_cpu / done * 1000, 1),
        "wall_ms_per_recall_per_client": _round(wall * clients / done * 1000, 1),
    }
