"""Scale benchmark: retain throughput, recall latency, memory and disk at 10k-100k memories.

For each bank size it measures, in one process and on the same vectors:

* **retain**: bulk (one ``retain`` per synthetic session of 20 messages), an import of long
  conversations (one ``retain`` per conversation of 500 messages, after the bank is built) and
  one message per call, in memories per second; the raw embedder's throughput on the same
  kind of texts, so retain is also a ratio of what the embedding model alone allows (it embeds
  one text per run, so the size of a call does not change its throughput); and the models of
  retain alone (spaCy pipeline + embedder) on the same texts, the rate retain could reach;
* **recall**: p50/p95 latency of ``strategies=["semantic"]``, ``["keyword"]`` and full TEMPR
  (``strategies=None``), read-only (``reinforce=False``), on probe questions whose answer is a
  known memory (the hit rate at 10 is reported as a sanity check, not as a quality figure);
  and its irreducible parts, the query's embedding and a bare Chroma top-k with the same
  query vectors, timed in turn with the recalls, probe by probe, so recall is also a ratio
  (and, beside, the parts each timed in a loop of itself);
* **keyword index**: the cost of making a memory keyword-searchable on retain (the pending
  postings written per call), BM25 latency with pending rows against none, the fold of those
  rows into the built postings and a full rebuild (seconds);
* **retain after reopening**: a new process opens the store just built and retains the
  conversation's next sessions (:data:`REOPEN_CALLS` calls at most), models loaded first:
  what a restart costs the first retains, which read again what a process keeps in memory;
* **resources**: peak RSS of the process (sizes run in order, so the figure of the largest size
  is the peak of the whole run) and the store's size on disk;
* **maximum-size call**: the peak RSS of one ``retain`` of ``Limits().retain_chars``
  characters of text (one string: the heaviest shape for the extractor), in a fresh process,
  beside that process's peak after a small call has loaded the models.

A store built by an earlier run (``workdir`` kept) is reused when it already holds the size:
its bulk retain figures, and the embedder throughput they are compared with, come from the
file written when it was built (a machine's load changes between runs).

Usage::

    agentmem bench scale --sizes 10000 100000 --workdir /tmp/agentmem-scale --out scale.json
"""

from __future__ import annotations

import json
import random
import resource
import shutil
import statistics
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from agentmem.bench.locomo import bench_environment, percentile
from agentmem.bench.synthetic import ConversationGenerator, Probe, Session
from agentmem.memory import AgentMemory
from agentmem.retain.extract import parse_in_batches
from agentmem.store.graph import bank_graph

ProgressCallback = Callable[[str, int, int], None]
"""Called as ``progress(description, completed_steps, total_steps)``."""

TARGETS = {
    "tempr_p50_ms_at_100k": 50.0,
    "tempr_p50_over_chroma_p50": 8.0,
    "bulk_retain_per_s": 250.0,
    "bulk_retain_over_raw_embedder": 0.5,
    "bulk_retain_over_model_only": 0.8,
    "peak_rss_gib_at_100k": 2.0,
}
RECALL_RUNS: dict[str, list[str] | None] = {
    "semantic": ["semantic"],
    "keyword": ["keyword"],
    "tempr": None,
}
BANK = "scale"
TOP_K = 10
#: Retain calls timed in a new process after the bank is built (a tenth of the build's at most).
REOPEN_CALLS = 50
#: Messages per conversation of the import (one ``retain`` each).
IMPORT_CALL = 500
_BUILD_FILE = "build.json"
#: During the bulk build, the models alone are timed on every this-many-th session's texts.
MODELS_IN_TURN_EVERY = 20


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


def _latency(samples: Sequence[float]) -> dict[str, float]:
    return {
        "p50_ms": _ms(percentile(samples, 50)),
        "p95_ms": _ms(percentile(samples, 95)),
        "mean_ms": _ms(statistics.fmean(samples)),
    }


def _disk_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def _peak_rss_mib() -> float:
    # ru_maxrss is in KiB on Linux.
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


@contextmanager
def _timed_calls(obj: Any, name: str, samples: list[float]) -> Iterator[None]:
    """Record the duration of every call of ``obj.name`` while the block runs."""
    original = getattr(obj, name)

    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            samples.append(time.perf_counter() - started)

    setattr(obj, name, timed)
    try:
        yield
    finally:
        delattr(obj, name)  # the instance attribute shadowed the class's method


def raw_embedder_throughput(mem: AgentMemory, sessions: Sequence[Session]) -> float:
    """Texts per second the embedder alone manages, in the batches bulk retain gives it."""
    batches = [_session_texts(s) for s in sessions]
    mem.embedder.embed(batches[0])  # load the model outside the timing
    started = time.perf_counter()
    for batch in batches:
        mem.embedder.embed(batch)
    return sum(len(b) for b in batches) / (time.perf_counter() - started)


def _session_texts(session: Session) -> list[str]:
    """A session's messages as retain embeds them (the speaker before the content)."""
    return [f"{m.get('name') or m['role'].title()}: {m['content']}" for m in session.messages]


def _models_seconds(mem: AgentMemory, texts: list[str]) -> float:
    """Seconds the models of retain alone (the spaCy pipeline, then the embedder) take on
    ``texts``."""
    started = time.perf_counter()
    list(parse_in_batches(texts))
    mem.embedder.embed(texts)
    return time.perf_counter() - started


def model_only_throughput(mem: AgentMemory, sessions: Sequence[Session]) -> float:
    """Texts per second the models of retain alone manage on bulk retain's texts, in its
    batches: what retain would reach with no other work."""
    batches = [_session_texts(s) for s in sessions]
    _models_seconds(mem, batches[0])  # load the models outside the timing
    return sum(len(b) for b in batches) / sum(_models_seconds(mem, b) for b in batches)


def _bulk_retain(
    mem: AgentMemory,
    sessions: Sequence[Session],
    progress: ProgressCallback | None,
    label: str,
    *,
    models_every: int | None = None,
) -> dict[str, Any]:
    """One ``retain`` per session; with ``models_every``, the models alone are also timed on
    the texts of the first session and one in ``models_every`` after it, once it is retained
    (outside the retain's time): the rate retain is compared with is then the machine's
    during the build, not before it."""
    bank = mem.bank(BANK)
    keyword = mem._engine.keyword
    folds: list[float] = []
    count = 0
    models_texts, models_seconds = 0, 0.0
    started = time.perf_counter()
    with _timed_calls(keyword, "fold_pending", folds):
        for index, session in enumerate(sessions):
            count += len(
                bank.retain(
                    session.messages,
                    mentioned_at=session.mentioned_at,
                    document_id=session.document_id,
                )
            )
            if models_every and index % models_every == 0:
                texts = _session_texts(session)
                models_texts += len(texts)
                models_seconds += _models_seconds(mem, texts)
            if progress and index % 25 == 0:
                progress(f"{label}: bulk retain", count, sum(len(s.messages) for s in sessions))
    elapsed = time.perf_counter() - started - models_seconds
    in_turn = {}
    if models_texts:
        in_turn = {
            "model_only_in_turn_per_s": round(models_texts / models_seconds, 1),
            "model_only_in_turn_texts": models_texts,
        }
    return {
        "memories": count,
        "calls": len(sessions),
        "seconds": round(elapsed, 1),
        "memories_per_s": round(count / elapsed, 1),
        "keyword_folds": len(folds),
        "keyword_fold_seconds_total": round(sum(folds), 2),
        **in_turn,
    }


def _import_retain(mem: AgentMemory, messages: int, seed: int) -> dict[str, Any]:
    """Retain ``messages`` in long conversations, one call each, as an import of chat history
    would."""
    conversations = [
        replace(c, document_id=f"import-{c.document_id}")  # not the bulk sessions' documents
        for c in ConversationGenerator(seed, turns_per_session=IMPORT_CALL).sessions(messages)
    ]
    return {**_bulk_retain(mem, conversations, None, "import"), "messages_per_call": IMPORT_CALL}


def _single_retains(mem: AgentMemory, sessions: Sequence[Session], n: int) -> dict[str, Any]:
    """``n`` retain calls of one user message each; also times the pending-postings insert."""
    bank = mem.bank(BANK)
    messages = [m for s in sessions for m in s.messages if m["role"] == "user"][:n]
    when = sessions[-1].mentioned_at
    pending: list[float] = []
    run = time.time_ns()
    started = time.perf_counter()
    with _timed_calls(mem._engine.keyword, "add_pending", pending):
        for n, message in enumerate(messages):
            # A new document each (a reused store holds the last run's): retaining other
            # content under one document id replaces it, the same content is a no-op.
            bank.retain([message], mentioned_at=when, document_id=f"single-{run}-{n}")
    elapsed = time.perf_counter() - started
    return {
        "calls": len(messages),
        "memories_per_s": round(len(messages) / elapsed, 1),
        "mean_ms_per_call": _ms(elapsed / len(messages)),
        "pending_postings_insert": _latency(pending),
    }


def _recall_latencies(
    mem: AgentMemory, probes: Sequence[Probe], now: Any
) -> dict[str, dict[str, Any]]:
    """p50/p95 of each run of :data:`RECALL_RUNS`, interleaved probe by probe."""
    return _recall_and_parts(mem, probes, now, parts=False)[0]


def _recall_and_parts(
    mem: AgentMemory, probes: Sequence[Probe], now: Any, *, parts: bool = True
) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """Recall latency per run of :data:`RECALL_RUNS` and, with ``parts``, its irreducible
    parts: the query's embedding and a bare Chroma top-10 (vectors embedded beforehand).

    Each probe goes through every step, the order rotating from probe to probe, so each
    step sees the same machine: a machine's speed drifts within minutes, and a model call or
    a Chroma query in a loop of itself runs on warmer caches than any recall leaves it
    (``docs/benchmarks.md``, Scale). The parts timed in loops are kept beside
    (``bare_chroma["back_to_back"]``).
    """
    bank = mem.bank(BANK)
    found = dict.fromkeys(RECALL_RUNS, 0)

    def recalling(name: str) -> Callable[[Probe], None]:
        strategies = RECALL_RUNS[name]

        def run(probe: Probe) -> None:
            result = bank.recall(
                probe.query, top_k=TOP_K, strategies=strategies, reinforce=False, now=now
            )
            found[name] += any(hit.text == probe.answer for hit in result)

        return run

    steps = {name: recalling(name) for name in RECALL_RUNS}
    if parts:
        engine = mem._engine
        collection = engine.vectors.collection(bank._collection)
        vectors = {p.query: np.asarray(engine.embedder.embed_query(p.query)) for p in probes}
        steps["embedding"] = lambda probe: engine.embedder.embed_query(probe.query)
        steps["chroma"] = lambda probe: collection.query(
            query_embeddings=[vectors[probe.query]], n_results=TOP_K, include=["distances"]
        )
    for step in steps.values():
        step(probes[0])  # warm
    found.update(dict.fromkeys(RECALL_RUNS, 0))
    samples = _timed_in_turn(steps, probes)
    recall = {
        name: {**_latency(samples[name]), "hit_rate_at_10": round(found[name] / len(probes), 3)}
        for name in RECALL_RUNS
    }
    if not parts:
        return recall, {}
    chroma = {
        **_latency(samples["chroma"]),
        "query_embedding": _latency(samples["embedding"]),
        "back_to_back": _bare_chroma(mem, probes),
    }
    return recall, chroma


def _timed_in_turn(
    steps: dict[str, Callable[[Probe], object]], probes: Sequence[Probe]
) -> dict[str, list[float]]:
    """Seconds of every step on every probe, the steps' order rotating from probe to probe."""
    names = list(steps)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for number, probe in enumerate(probes):
        turn = number % len(names)
        for name in names[turn:] + names[:turn]:
            started = time.perf_counter()
            steps[name](probe)
            samples[name].append(time.perf_counter() - started)
    return samples


def _paired_recall_latencies(
    first: AgentMemory, second: AgentMemory, probes: Sequence[Probe], now: Any
) -> dict[str, dict[str, float]]:
    """Recall latency (p50, p95) of two stores holding the same bank, each probe asked of one
    then the other (in turn which first), per strategy: both see the same load, so their
    ratio holds on a busy machine where two separate runs do not."""
    banks = (first.bank(BANK), second.bank(BANK))
    results: dict[str, dict[str, float]] = {}
    for name, strategies in RECALL_RUNS.items():
        samples: tuple[list[float], list[float]] = ([], [])
        for number, probe in enumerate(probes):
            for which in (number % 2, 1 - number % 2):
                started = time.perf_counter()
                banks[which].recall(
                    probe.query, top_k=TOP_K, strategies=strategies, reinforce=False, now=now
                )
                samples[which].append(time.perf_counter() - started)
        first_p50, second_p50 = (percentile(s, 50) for s in samples)
        results[name] = {
            "first_p50_ms": _ms(first_p50),
            "second_p50_ms": _ms(second_p50),
            "first_p95_ms": _ms(percentile(samples[0], 95)),
            "second_p95_ms": _ms(percentile(samples[1], 95)),
            "second_over_first": round(second_p50 / first_p50, 2),
        }
    return results


def _rss_mib() -> float:
    """The process's resident set now (Linux), in MiB."""
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    return pages * resource.getpagesize() / 2**20


def _cold_start(mem: AgentMemory) -> dict[str, Any]:
    """Seconds (wall and this process's CPU: a loaded machine stretches the first, on
    PostgreSQL the server's share is in the first only) and resident MiB each per-bank
    in-process copy takes to load (first use)."""
    engine = mem._engine
    loads: dict[str, Callable[[], object]] = {"graph": lambda: bank_graph(engine, BANK)}
    if engine.keyword_mirrors is not None:
        loads["keyword"] = lambda: engine.keyword_mirrors.search(BANK, ["x"], 1)
    if engine.recall_rows is not None:
        loads["rows"] = lambda: engine.recall_rows.memories(BANK, [])
        collection = mem.bank(BANK)._collection
        # One vector asked for: a small embedded bank reads its exact copy whole, a larger
        # one starts its whole copy on a thread (store/vector_copy.py), waited for here.
        some = [m.id for m in mem.bank(BANK).memories(limit=1)]
        loads["vectors"] = lambda: (
            engine.recall_rows.vectors(BANK, collection, some),
            engine.recall_rows.wait_for_vectors(BANK),
        )
    figures: dict[str, Any] = {}
    for name, load in loads.items():
        before, started, cpu = _rss_mib(), time.perf_counter(), time.process_time()
        load()
        figures[name] = {
            "seconds": round(time.perf_counter() - started, 3),
            "cpu_seconds": round(time.process_time() - cpu, 3),
            "rss_mib": round(_rss_mib() - before, 1),
        }
    return figures


def _bare_chroma(mem: AgentMemory, probes: Sequence[Probe]) -> dict[str, Any]:
    """Top-k straight from the bank's Chroma collection, with vectors embedded beforehand, and
    the query embedding, each timed in a loop of itself (see :func:`_recall_and_parts`)."""
    engine = mem._engine
    collection = engine.vectors.collection(mem.bank(BANK)._collection)
    vectors = [np.asarray(engine.embedder.embed_query(p.query)) for p in probes]
    collection.query(query_embeddings=[vectors[0]], n_results=TOP_K)  # warm
    samples: list[float] = []
    for vector in vectors:
        started = time.perf_counter()
        collection.query(query_embeddings=[vector], n_results=TOP_K, include=["distances"])
        samples.append(time.perf_counter() - started)
    embed: list[float] = []
    for probe in probes[:50]:
        started = time.perf_counter()
        engine.embedder.embed_query(probe.query)
        embed.append(time.perf_counter() - started)
    return {**_latency(samples), "query_embedding": _latency(embed)}


def _keyword_costs(mem: AgentMemory, probes: Sequence[Probe]) -> dict[str, Any]:
    """BM25 latency with the pending postings left by the run, then after folding them in;
    the fold's and a full rebuild's seconds."""
    keyword = mem._engine.keyword
    pending_rows = keyword.pending_rows()
    with_pending = _bm25_latency(mem, probes)
    fold_seconds = keyword.fold_pending()
    without_pending = _bm25_latency(mem, probes)
    return {
        "pending_rows": pending_rows,
        "bm25_with_pending": with_pending,
        "bm25_without_pending": without_pending,
        "fold_seconds": round(fold_seconds, 2),
        "full_rebuild_seconds": round(keyword.rebuild(), 2),
    }


def _vector_top_k(mem: AgentMemory, probes: Sequence[Probe]) -> dict[str, float]:
    """Top-k through the store's vector index (Chroma or pgvector), query vectors embedded
    beforehand."""
    engine = mem._engine
    collection = mem.bank(BANK)._collection
    vectors = [np.asarray(engine.embedder.embed_query(p.query)) for p in probes]
    engine.vectors.query(collection, vectors[0], TOP_K)  # warm
    samples: list[float] = []
    for vector in vectors:
        started = time.perf_counter()
        engine.vectors.query(collection, vector, TOP_K)
        samples.append(time.perf_counter() - started)
    return _latency(samples)


def _bm25_latency(mem: AgentMemory, probes: Sequence[Probe]) -> dict[str, float]:
    """The keyword index's top-60 (SQL on either backend), as the keyword arm asks for it."""
    keyword = mem._engine.keyword
    queries = [p.query for p in probes[:100]]
    keyword.search(BANK, queries[0], 60)
    samples = []
    for query in queries:
        started = time.perf_counter()
        keyword.search(BANK, query, 60)
        samples.append(time.perf_counter() - started)
    return _latency(samples)


def postgres_copy(
    store: Path,
    url: str,
    probes: Sequence[Probe],
    now: Any,
    embedded_recall: dict[str, Any],
    embedded_bm25: dict[str, float],
    replicas: Sequence[int] = (),
) -> dict[str, Any]:
    """Copy the size's bank into the PostgreSQL database at ``url`` (its bank replaced) and
    measure recall there, beside the embedded store's figures of the same run (its recall
    and folded BM25 latencies, measured by :func:`run_size`); then the recall throughput of
    each count of ``replicas`` serving it (:func:`~agentmem.bench.replicas.replica_throughput`).
    """
    from agentmem.bench.replicas import replica_throughput
    from agentmem.migrate import migrate

    with AgentMemory(store) as source, AgentMemory(url) as target:
        started = time.perf_counter()
        migrate(source, target, banks=[BANK], replace=True)
        copy_seconds = time.perf_counter() - started
        cold = _cold_start(target)
        recall = _recall_latencies(target, probes, now)
        vectors = _vector_top_k(target, probes)
        keyword = _bm25_latency(target, probes)
        embedded_vectors = _vector_top_k(source, probes)
        paired = _paired_recall_latencies(source, target, probes, now)
    served = (
        replica_throughput(url, BANK, [p.query for p in probes], now, replicas=replicas)
        if replicas
        else None
    )
    return {
        "copy_seconds": round(copy_seconds, 1),
        "cold_start": cold,
        "replicas": served,
        "recall": recall,
        "vector_top_k": vectors,
        "bm25_top60": keyword,
        "embedded_vector_top_k": embedded_vectors,
        "embedded_bm25_top60": embedded_bm25,
        "tempr_p50_over_embedded": round(
            recall["tempr"]["p50_ms"] / embedded_recall["tempr"]["p50_ms"], 2
        ),
        # Embedded store first, PostgreSQL second, probe by probe.
        "interleaved_with_embedded": paired,
    }


def _probes(sessions: Sequence[Session], n: int, seed: int) -> list[Probe]:
    every = [p for s in sessions for p in s.probes]
    return random.Random(seed).sample(every, min(n, len(every)))


def run_size(
    size: int,
    workdir: Path,
    *,
    queries: int = 200,
    singles: int = 300,
    imports: int = 5000,
    seed: int = 7,
    progress: ProgressCallback | None = None,
    postgres_url: str | None = None,
    replicas: Sequence[int] = (),
) -> dict[str, Any]:
    """Build (or reuse) a bank of ``size`` memories under ``workdir`` and measure it; with
    ``postgres_url``, also a copy of it in that PostgreSQL database, served by each count of
    ``replicas`` in turn (:func:`postgres_copy`).

    ``imports`` messages are retained last, in conversations of :data:`IMPORT_CALL` (the
    store keeps them: a reused store grows by them and the one-at-a-time messages).
    """
    sessions = list(ConversationGenerator(seed).sessions(size))
    store = workdir / f"scale-{size}"
    build_file = store / _BUILD_FILE
    label = f"{size:,}"
    with AgentMemory(store) as mem:
        raw = raw_embedder_throughput(mem, sessions[: max(1, 2000 // 20)])
        models = model_only_throughput(mem, sessions[: max(1, 2000 // 20)])
        existing = mem.bank(BANK).stats()["memories"] if BANK in mem.banks() else 0
        if existing == 0:
            # The ratios compare the bulk retain with the models timed during it, and beside
            # with those timed just before it.
            bulk = {
                **_bulk_retain(mem, sessions, progress, label, models_every=MODELS_IN_TURN_EVERY),
                "raw_embedder_per_s": raw,
                "model_only_per_s": models,
            }
            build_file.write_text(json.dumps(bulk))
        elif build_file.is_file() and existing >= size:
            bulk = {**json.loads(build_file.read_text()), "reused_store": True}
        else:
            raise RuntimeError(f"{store} holds a partial bank; delete it and run again")
        now = sessions[-1].mentioned_at
        probes = _probes(sessions, queries, seed)
        if progress:
            progress(f"{label}: recall", 0, 1)
        cold = _cold_start(mem)
        recall, chroma = _recall_and_parts(mem, probes, now)
        single = _single_retains(mem, sessions, singles)
        keyword = _keyword_costs(mem, probes)
        memories = mem.bank(BANK).stats()["memories"]
        # Last, so the figures above are those of a bank of this size.
        imported = _import_retain(mem, imports, seed + 1) if imports else None
        rss = _peak_rss_mib()
    disk = _disk_bytes(store)
    postgres = None
    if postgres_url is not None:
        if progress:
            progress(f"{label}: PostgreSQL copy", 0, 1)
        postgres = postgres_copy(
            store,
            postgres_url,
            probes,
            now,
            recall,
            keyword["bm25_without_pending"],
            replicas=replicas,
        )
    # Last, so the PostgreSQL copy holds the bank measured. A reused store retained these
    # sessions in the run that built it: they would repeat.
    reopened = (
        None
        if bulk.get("reused_store")
        else retain_after_reopen(store, seed, size, min(REOPEN_CALLS, len(sessions) // 10 or 1))
    )
    tempr_p50 = recall["tempr"]["p50_ms"]
    irreducible = chroma["p50_ms"] + chroma["query_embedding"]["p50_ms"]
    back_to_back = chroma["back_to_back"]
    irreducible_in_loops = back_to_back["p50_ms"] + back_to_back["query_embedding"]["p50_ms"]
    return {
        "size": size,
        "memories_in_bank": memories,
        "raw_embedder_per_s": round(raw, 1),
        "model_only_per_s": round(models, 1),
        "bulk_retain": bulk,
        "single_retain": single,
        "import_retain": imported,
        "retain_after_reopen": reopened,
        "cold_start": cold,
        "recall": recall,
        "bare_chroma": chroma,
        "keyword_index": keyword,
        "ratios": {
            "bulk_retain_over_raw_embedder": round(
                bulk["memories_per_s"] / bulk.get("raw_embedder_per_s", raw), 3
            ),
            # Against the models timed during the build (a store built before they were:
            # before it), and beside, against the models timed just before the build.
            "bulk_retain_over_model_only": round(
                bulk["memories_per_s"]
                / bulk.get("model_only_in_turn_per_s", bulk.get("model_only_per_s", models)),
                3,
            ),
            "bulk_retain_over_model_only_before_build": round(
                bulk["memories_per_s"] / bulk.get("model_only_per_s", models), 3
            ),
            "import_retain_over_raw_embedder": (
                round(imported["memories_per_s"] / raw, 3) if imported else None
            ),
            "tempr_p50_over_chroma_p50": round(tempr_p50 / chroma["p50_ms"], 2),
            # Over its irreducible parts: a bare top-10 plus the query's embedding.
            "tempr_p50_over_chroma_and_embedding": round(tempr_p50 / irreducible, 2),
            "semantic_p50_over_chroma_and_embedding": round(
                recall["semantic"]["p50_ms"] / irreducible, 2
            ),
            # The same over the parts each timed in a loop of itself (a best case).
            "tempr_p50_over_parts_back_to_back": round(tempr_p50 / irreducible_in_loops, 2),
            "semantic_p50_over_parts_back_to_back": round(
                recall["semantic"]["p50_ms"] / irreducible_in_loops, 2
            ),
            "tempr_p95_over_p50": round(recall["tempr"]["p95_ms"] / tempr_p50, 2),
            "semantic_p50_over_chroma_p50": round(
                recall["semantic"]["p50_ms"] / chroma["p50_ms"], 2
            ),
        },
        "peak_rss_mib": rss,
        "disk_mib": round(disk / 2**20, 1),
        "postgresql": postgres,
    }


# Run in a fresh interpreter, so its peak RSS is the call's and not the benchmark's.
_MAX_CALL = textwrap.dedent(
    """
    import json, resource, sys, time
    from agentmem import AgentMemory, Limits
    from agentmem.bench.synthetic import ConversationGenerator

    def peak_mib():
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    chars = int(sys.argv[3]) or Limits().retain_chars
    parts, size = [], 0
    for session in ConversationGenerator(seed=int(sys.argv[2])).sessions(10**9):
        for message in session.messages:
            parts.append(message["content"])
            size += len(message["content"]) + 1
        if size >= chars:
            break
    text = " ".join(parts)[:chars]
    with AgentMemory(sys.argv[1]) as mem:
        bank = mem.bank("max-call")
        bank.retain(" ".join(parts[:20]), mentioned_at="2024-01-01")  # loads every model
        baseline = peak_mib()
        started = time.perf_counter()
        facts = len(bank.retain(text, mentioned_at="2024-01-01").memories)
        seconds = time.perf_counter() - started
    print(json.dumps({"chars": len(text), "facts": facts, "seconds": round(seconds, 1),
                      "baseline_peak_rss_mib": round(baseline, 1),
                      "peak_rss_mib": round(peak_mib(), 1)}))
    """
)


def max_call_peak_rss(workdir: Path, chars: int | None = None, seed: int = 7) -> dict[str, Any]:
    """Peak RSS of one maximum-size ``retain`` call (or of ``chars`` characters), measured in
    a fresh process."""
    store = workdir / "max-call"
    shutil.rmtree(store, ignore_errors=True)
    return _in_fresh_process("the maximum-size call", _MAX_CALL, store, seed, chars or 0)


_REOPEN = textwrap.dedent(
    """
    import json, sys, time
    from agentmem.bench.synthetic import ConversationGenerator
    from agentmem.memory import AgentMemory
    from agentmem.retain.extract import parse_in_batches
    store, bank_id, seed, size, calls = sys.argv[1:3] + [int(a) for a in sys.argv[3:6]]
    built = len(list(ConversationGenerator(seed).sessions(size)))
    sessions = list(ConversationGenerator(seed).sessions(size + 40 * calls))
    sessions = sessions[built : built + calls]
    with AgentMemory(store) as mem:
        texts = [message["content"] for message in sessions[0].messages]
        list(parse_in_batches(texts))  # the models load outside the timing
        mem.embedder.embed(texts)
        bank = mem.bank(bank_id)
        started = time.perf_counter()
        count = sum(
            len(bank.retain(s.messages, mentioned_at=s.mentioned_at, document_id=s.document_id))
            for s in sessions
        )
        seconds = time.perf_counter() - started
    print(json.dumps({"calls": len(sessions), "memories": count, "seconds": round(seconds, 2),
                      "memories_per_s": round(count / seconds, 1)}))
    """
)


def retain_after_reopen(store: Path, seed: int, size: int, calls: int) -> dict[str, Any]:
    """A new process opens the store a bank of ``size`` was built in and retains the next
    ``calls`` sessions of its conversation, timed once the models are loaded."""
    return _in_fresh_process("the retains after reopening", _REOPEN, store, BANK, seed, size, calls)


def _in_fresh_process(what: str, script: str, *args: object) -> dict[str, Any]:
    """The JSON the script prints last, run by this Python in a process of its own."""
    done = subprocess.run(
        [sys.executable, "-c", script, *map(str, args)], capture_output=True, text=True
    )
    if done.returncode != 0:
        raise RuntimeError(f"{what} failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_scale(
    sizes: Sequence[int],
    workdir: str | Path,
    *,
    out_path: str | Path | None = None,
    queries: int = 200,
    singles: int = 300,
    imports: int = 5000,
    max_call: bool = True,
    max_call_chars: int | None = None,
    progress: ProgressCallback | None = None,
    postgres_url: str | None = None,
    replicas: Sequence[int] = (),
) -> dict[str, Any]:
    """Run :func:`run_size` for each size (ascending), then (with ``max_call``)
    :func:`max_call_peak_rss` of ``max_call_chars`` (default the limit), and write the JSON
    report."""
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {
        "benchmark": "agentmem scale",
        "environment": bench_environment(),
        "targets": TARGETS,
        "sizes": [],
    }
    for size in sorted(sizes):
        report["sizes"].append(
            run_size(
                size,
                workdir,
                queries=queries,
                singles=singles,
                imports=imports,
                progress=progress,
                postgres_url=postgres_url,
                replicas=replicas,
            )
        )
        _write_report(report, out_path)  # after each size: a long run keeps what it measured
    if max_call:
        if progress is not None:
            progress("maximum-size retain call", 0, 1)
        report["max_call"] = max_call_peak_rss(workdir, max_call_chars)
        report["max_call_peak_rss_mb"] = report["max_call"]["peak_rss_mib"]
        _write_report(report, out_path)
    return report


def _write_report(report: dict[str, Any], out_path: str | Path | None) -> None:
    if out_path is not None:
        Path(out_path).parent.mkdir(parents=True, exist_ok=True)
        Path(out_path).write_text(json.dumps(report, indent=2, default=str))


def format_report(report: dict[str, Any]) -> str:
    """The report as a plain-text table, one column per size."""
    sizes = report["sizes"]
    rows: list[tuple[str, Callable[[dict[str, Any]], object]]] = [
        ("bulk retain (memories/s)", lambda s: s["bulk_retain"]["memories_per_s"]),
        (
            f"import, {IMPORT_CALL} a call (memories/s)",
            lambda s: (s["import_retain"] or {}).get("memories_per_s"),
        ),
        ("one-at-a-time retain (memories/s)", lambda s: s["single_retain"]["memories_per_s"]),
        (
            "first retains after reopening (memories/s)",
            lambda s: (s.get("retain_after_reopen") or {}).get("memories_per_s"),
        ),
        ("raw embedder (texts/s)", lambda s: s["raw_embedder_per_s"]),
        ("model only: spaCy + embedder (texts/s)", lambda s: s["model_only_per_s"]),
        (
            "  in turn with the bulk build (texts/s)",
            lambda s: s["bulk_retain"].get("model_only_in_turn_per_s"),
        ),
        ("bulk retain / raw embedder", lambda s: s["ratios"]["bulk_retain_over_raw_embedder"]),
        (
            "bulk retain / model only in turn (before the build)",
            lambda s: (
                f"{s['ratios']['bulk_retain_over_model_only']} "
                f"({s['ratios']['bulk_retain_over_model_only_before_build']})"
            ),
        ),
        ("import / raw embedder", lambda s: s["ratios"]["import_retain_over_raw_embedder"]),
        *(
            (f"recall {name} p50 / p95 (ms)", _p50_p95(name))
            for name in ("semantic", "keyword", "tempr")
        ),
        (
            "bare Chroma top-10 p50 / p95, in turn | back to back (ms)",
            lambda s: (
                f"{s['bare_chroma']['p50_ms']} / {s['bare_chroma']['p95_ms']} | "
                f"{s['bare_chroma']['back_to_back']['p50_ms']}"
            ),
        ),
        ("TEMPR p50 / Chroma p50", lambda s: s["ratios"]["tempr_p50_over_chroma_p50"]),
        (
            "TEMPR, semantic p50 / (Chroma + embedding)",
            lambda s: (
                f"{s['ratios']['tempr_p50_over_chroma_and_embedding']} / "
                f"{s['ratios']['semantic_p50_over_chroma_and_embedding']}"
            ),
        ),
        (
            "  over the parts timed back to back",
            lambda s: (
                f"{s['ratios']['tempr_p50_over_parts_back_to_back']} / "
                f"{s['ratios']['semantic_p50_over_parts_back_to_back']}"
            ),
        ),
        (
            "query embedding p50, in turn / back to back (ms)",
            lambda s: (
                f"{s['bare_chroma']['query_embedding']['p50_ms']} / "
                f"{s['bare_chroma']['back_to_back']['query_embedding']['p50_ms']}"
            ),
        ),
        ("TEMPR p95 / p50", lambda s: s["ratios"]["tempr_p95_over_p50"]),
        ("cold start per bank (s)", _cold_start_seconds),
        ("TEMPR hit rate @10", lambda s: s["recall"]["tempr"]["hit_rate_at_10"]),
        (
            "pending postings insert p50 (ms)",
            lambda s: s["single_retain"]["pending_postings_insert"]["p50_ms"],
        ),
        (
            "BM25 p50 with N pending / none (ms)",
            lambda s: (
                f"{s['keyword_index']['bm25_with_pending']['p50_ms']} "
                f"(N={s['keyword_index']['pending_rows']}) / "
                f"{s['keyword_index']['bm25_without_pending']['p50_ms']}"
            ),
        ),
        ("keyword fold / full rebuild (s)", _fold_and_rebuild_seconds),
        ("peak RSS (MiB)", lambda s: s["peak_rss_mib"]),
        ("disk (MiB)", lambda s: s["disk_mib"]),
    ]
    if any(s.get("postgresql") for s in sizes):
        rows += [
            (f"PostgreSQL: recall {name} p50 / p95 (ms)", _postgres(_p50_p95(name)))
            for name in ("semantic", "keyword", "tempr")
        ]
        rows += [
            ("PostgreSQL: TEMPR p50 / embedded", _postgres(lambda p: p["tempr_p50_over_embedded"])),
            (
                "PostgreSQL / embedded p50, interleaved: semantic, keyword, TEMPR",
                _postgres(
                    lambda p: " ".join(
                        str(p["interleaved_with_embedded"][name]["second_over_first"])
                        for name in ("semantic", "keyword", "tempr")
                    )
                ),
            ),
            *(
                (
                    f"interleaved {name} p50 / p95, embedded | PostgreSQL (ms)",
                    _postgres(_interleaved(name)),
                )
                for name in ("semantic", "keyword", "tempr")
            ),
            (
                "vector top-10 p50, pgvector / Chroma (ms)",
                _postgres(
                    lambda p: (
                        f"{p['vector_top_k']['p50_ms']} / {p['embedded_vector_top_k']['p50_ms']}"
                    )
                ),
            ),
            (
                "BM25 top-60 p50, PostgreSQL / DuckDB (ms)",
                _postgres(
                    lambda p: f"{p['bm25_top60']['p50_ms']} / {p['embedded_bm25_top60']['p50_ms']}"
                ),
            ),
            ("PostgreSQL: copy of the bank (s)", _postgres(lambda p: p["copy_seconds"])),
            ("PostgreSQL: cold start per bank (s)", _postgres(_cold_start_seconds)),
            ("PostgreSQL: replicas, recalls/s (p50 ms)", _postgres(_replica_rates)),
        ]
    width = max(len(label) for label, _ in rows) + 2
    lines = [" " * width + "".join(f"{s['size']:>24,}" for s in sizes)]
    for label, cell in rows:
        lines.append(label.ljust(width) + "".join(f"{cell(s)!s:>24}" for s in sizes))
    if "max_call" in report:
        call = report["max_call"]
        lines.append(
            f"maximum-size retain ({call['chars']:,} characters, {call['facts']:,} facts, "
            f"{call['seconds']} s): peak RSS {call['peak_rss_mib']} MiB, "
            f"{call['baseline_peak_rss_mib']} MiB after a small call"
        )
    return "\n".join(lines)


def _postgres(cell: Callable[[dict[str, Any]], object]) -> Callable[[dict[str, Any]], object]:
    """A cell of the PostgreSQL copy's figures ("-" for a size measured without one)."""
    return lambda size: cell(size["postgresql"]) if size.get("postgresql") else "-"


def _interleaved(name: str) -> Callable[[dict[str, Any]], str]:
    def cell(copy: dict[str, Any]) -> str:
        paired = copy["interleaved_with_embedded"][name]
        return (
            f"{paired['first_p50_ms']} / {paired['first_p95_ms']} | "
            f"{paired['second_p50_ms']} / {paired['second_p95_ms']}"
        )

    return cell


def _cold_start_seconds(size: dict[str, Any]) -> str:
    return " ".join(f"{name} {load['seconds']}" for name, load in size["cold_start"].items())


def _replica_rates(copy: dict[str, Any]) -> str:
    served = copy.get("replicas") or {}
    return (
        " ".join(
            f"{n}: {r['recalls_per_s']} ({r['p50_ms']})"
            for n, r in served.get("by_replicas", {}).items()
        )
        or "-"
    )


def _fold_and_rebuild_seconds(size: dict[str, Any]) -> str:
    costs = size["keyword_index"]
    return f"{costs['fold_seconds']:.2f} / {costs['full_rebuild_seconds']:.2f}"


def _p50_p95(name: str) -> Callable[[dict[str, Any]], str]:
    return lambda s: f"{s['recall'][name]['p50_ms']} / {s['recall'][name]['p95_ms']}"
