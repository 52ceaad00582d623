"""Keyword and vector search on each backend: PostgreSQL (+ pgvector) beside DuckDB and Chroma.

For each size, synthetic memories (the scale benchmark's conversations, one memory a message,
its neighbouring turns as keyword context) are loaded into a DuckDB store and a PostgreSQL
database, with a second bank a tenth the size beside the measured one. Then:

* **keyword**: the probes' BM25 top-60 on each backend, interleaved query by query (the
  machine's load hits both alike), p50/p95, and how many probes got identical ids and scores;
* **vectors**: top-10 of noisy copies of stored unit vectors through each store's ``query``,
  p50/p95 and recall@10 against an exact search, and writes of 20 vectors (a retain's) into
  the loaded collection. pgvector is loaded before its index is built (the faster way to
  set up the measurement); Chroma indexes as it loads.

The loads are timed too (PostgreSQL's keyword write path tokenises in Python). Prints a table
and writes a JSON report. Run ``python -m agentmem.bench.search_backends --help``; without
``--pg-url`` it starts a throwaway PostgreSQL (``agentmem.testing_postgres``).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import numpy as np

from agentmem.bench.scale import _latency
from agentmem.bench.synthetic import ConversationGenerator
from agentmem.store.database import Database
from agentmem.store.keyword import KeywordIndex
from agentmem.store.postgres.database import PostgresDatabase
from agentmem.store.postgres.keyword import PostgresKeywordIndex
from agentmem.store.postgres.vectors import (
    PostgresVectorStore,
    _index_name,
    _Vector,
    index_ddl,
)
from agentmem.store.vectors import VectorStore

BANK = "measured"
OTHER = "other"
KEYWORD_TOP = 60
VECTOR_TOP = 10
DIMENSION = 384
CONTEXT_WEIGHT = 0.3
_INSERT = """
INSERT INTO memories (id, seq, bank_id, text, search_text, context_text, fact_type,
                      mentioned_at, tags, importance, access_count, created_at)
SELECT unnest($ids::{text}[]), unnest($seqs::BIGINT[]), $bank, unnest($texts::{text}[]),
       unnest($texts::{text}[]), unnest($contexts::{text}[]), 'experience',
       TIMESTAMP '2025-01-01', {empty}, 0.5, 0, TIMESTAMP '2025-01-01'
"""
_BATCH = 5000
# Retain-sized writes (20 vectors each) timed into a loaded collection.
RETAIN_WRITES = 25


def synthetic_memories(n: int, seed: int) -> tuple[list[tuple[str, str]], list[str]]:
    """``n`` (fact, neighbouring turns) pairs and the probe queries of their conversations."""
    rows: list[tuple[str, str]] = []
    queries: list[str] = []
    for session in ConversationGenerator(seed).sessions(n):
        texts = [f"{m.get('name') or m['role'].title()}: {m['content']}" for m in session.messages]
        for i, text in enumerate(texts):
            rows.append((text, " ".join(texts[max(0, i - 1) : i] + texts[i + 1 : i + 2])))
        queries += [p.query for p in session.probes]
    return rows, queries


def _load(db: Any, rows: Sequence[tuple[str, str]], bank: str, first_seq: int) -> list[int]:  # noqa: ANN401
    """Insert memories of ``bank`` in batches; returns their seqs."""
    text = "text" if db.dialect == "postgresql" else "VARCHAR"
    empty = f"CAST(ARRAY[] AS {text}[])"
    seqs = list(range(first_seq, first_seq + len(rows)))
    for start in range(0, len(rows), _BATCH):
        part = rows[start : start + _BATCH]
        with db.transaction() as cur:
            cur.execute(
                _INSERT.format(text=text, empty=empty),
                {
                    "ids": [f"m{seq}" for seq in seqs[start : start + _BATCH]],
                    "seqs": seqs[start : start + _BATCH],
                    "bank": bank,
                    "texts": [fact for fact, _ in part],
                    "contexts": [context for _, context in part],
                },
            )
    return seqs


def _timed(call: Callable[[], object]) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def keyword_arms(size: int, pg_url: str, workdir: Path, queries: int, seed: int) -> dict:
    """Load ``size`` memories (+ a tenth in another bank) into both stores; time BM25."""
    rows, probes = synthetic_memories(size, seed)
    other, _ = synthetic_memories(size // 10, seed + 1)
    probes = probes[:queries]
    report: dict[str, Any] = {"memories": size, "other_bank": len(other), "queries": len(probes)}
    with ExitStack() as stack:
        duck = Database(workdir / f"keyword-{size}.duckdb")
        stack.callback(duck.close)
        duck_index = KeywordIndex(
            duck, context_weight=CONTEXT_WEIGHT, rebuild_min=10**9, rebuild_fraction=1.0
        )
        stack.callback(duck_index.close)
        pg = PostgresDatabase(pg_url)
        stack.callback(pg.close)
        pg_index = PostgresKeywordIndex(pg, context_weight=CONTEXT_WEIGHT)

        started = time.perf_counter()
        _load(duck, rows, BANK, 1)
        _load(duck, other, OTHER, size + 1)
        report["duckdb_load_and_rebuild_s"] = round(
            time.perf_counter() - started + duck_index.rebuild(), 1
        )
        started = time.perf_counter()
        seqs = _load(pg, rows, BANK, 1) + _load(pg, other, OTHER, size + 1)
        loaded = time.perf_counter() - started
        indexing = 0.0
        for start in range(0, len(seqs), 1000):  # as retains and imports index: in batches
            part = seqs[start : start + 1000]
            with pg.transaction() as cur:
                indexing += _timed(lambda c=cur, p=part: pg_index.add_pending(c, p[0], p[-1]))
        pg.execute("VACUUM ANALYZE")  # what autovacuum does after a load
        report["postgres_load_s"] = round(loaded, 1)
        report["postgres_keyword_index_s"] = round(indexing, 1)
        report["postgres_keyword_index_rows_per_s"] = round(len(seqs) / indexing)

        duck_index.search(BANK, probes[0], KEYWORD_TOP)  # warm
        pg_index.search(BANK, probes[0], KEYWORD_TOP)
        duck_ms: list[float] = []
        pg_ms: list[float] = []
        identical = 0
        for query in probes:
            started = time.perf_counter()
            duck_hits = duck_index.search(BANK, query, KEYWORD_TOP)
            duck_ms.append(time.perf_counter() - started)
            started = time.perf_counter()
            pg_hits = pg_index.search(BANK, query, KEYWORD_TOP)
            pg_ms.append(time.perf_counter() - started)
            identical += pg_hits == duck_hits
        report["duckdb_bm25"] = _latency(duck_ms)
        report["postgres_bm25"] = _latency(pg_ms)
        report["identical_top60_and_scores"] = identical
        for table in ("keyword_postings", "memories"):
            pg.execute(f"DELETE FROM {table}")  # the next size starts empty
        pg.execute("DELETE FROM keyword_docs")
        pg.execute("DELETE FROM keyword_bank_stats")
    return report


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def vector_arms(size: int, pg_url: str, workdir: Path, queries: int, seed: int) -> dict:
    """Store ``size`` random unit vectors (+ a tenth in another collection) in Chroma and in
    pgvector; time top-10 of noisy copies of stored vectors (recall@10 against exact), and
    retain-sized writes of 20 new vectors into the loaded collection."""
    rng = np.random.default_rng(seed)
    vectors = _unit(rng.normal(size=(size, DIMENSION)).astype(np.float32))
    other = _unit(rng.normal(size=(size // 10, DIMENSION)).astype(np.float32))
    fresh = _unit(rng.normal(size=(RETAIN_WRITES * 20, DIMENSION)).astype(np.float32))
    picks = rng.choice(size, size=queries, replace=False)
    noisy = _unit(vectors[picks] + 0.5 * _unit(rng.normal(size=(queries, DIMENSION))))
    exact = [set(np.argsort(-(vectors @ q))[:VECTOR_TOP].tolist()) for q in noisy]
    ids = [f"m{i}" for i in range(size)]
    metas = [{"fact_type": "experience", "t_start": float(i)} for i in range(size)]
    report: dict[str, Any] = {"vectors": size, "other_collection": len(other), "queries": queries}
    collection, elsewhere = f"bank-{size}", f"bank-{size}-other"

    def load(store: Any) -> float:  # noqa: ANN401
        started = time.perf_counter()
        for start in range(0, size, _BATCH):
            part = slice(start, start + _BATCH)
            store.upsert(collection, ids[part], vectors[part], metas[part])
        store.upsert(elsewhere, ids[: len(other)], other, metas[: len(other)])
        return time.perf_counter() - started

    def measure(store: Any, arm: str) -> None:  # noqa: ANN401
        store.query(collection, noisy[0], VECTOR_TOP)  # warm
        samples, hits = [], 0
        for q, wanted in zip(noisy, exact, strict=True):
            started = time.perf_counter()
            found = store.query(collection, q, VECTOR_TOP)
            samples.append(time.perf_counter() - started)
            hits += len({int(i[1:]) for i, _ in found} & wanted)
        report[f"{arm}_top10"] = _latency(samples)
        report[f"{arm}_recall_at_10"] = round(hits / (VECTOR_TOP * len(noisy)), 3)
        writes = []
        for n in range(RETAIN_WRITES):
            batch = slice(n * 20, n * 20 + 20)
            new_ids = [f"new{i}" for i in range(batch.start, batch.stop)]
            writes.append(
                _timed(lambda i=new_ids, b=batch: store.upsert(collection, i, fresh[b], metas[b]))
            )
        report[f"{arm}_write_20"] = _latency(writes)

    chroma = VectorStore(workdir / f"chroma-{size}")
    try:
        report["chroma_load_s"] = round(load(chroma), 1)
        measure(chroma, "chroma")
    finally:
        chroma.close()
    pg = PostgresDatabase(pg_url)
    try:
        store = PostgresVectorStore(pg)
        for name in (collection, elsewhere):
            store.create_collection(name, DIMENSION)
            pg.execute(f"DROP INDEX {_index_name(name)}")  # built once after the load
        loaded = load(store)
        started = time.perf_counter()
        for name in (collection, elsewhere):
            pg.execute(index_ddl(name, DIMENSION))
        report["pgvector_load_s"] = round(loaded, 1)
        report["pgvector_index_build_s"] = round(time.perf_counter() - started, 1)
        pg.execute("VACUUM ANALYZE vectors")
        measure(store, "pgvector")
        report["pgvector_top10_server"] = _latency(_server_seconds(store, collection, noisy[:50]))
        store.drop(collection)
        store.drop(elsewhere)
    finally:
        pg.close()
    return report


def _server_seconds(store: PostgresVectorStore, collection: str, queries: np.ndarray) -> list:
    """The server's own time (planning + execution) of each top-10 query: the rest of a
    query's wall time is the client, the round trip and waiting for a CPU."""
    sql = "EXPLAIN (ANALYZE, FORMAT JSON) " + store._nearest_sql(
        collection, DIMENSION, "TRUE", VECTOR_TOP
    )
    seconds = []
    with store._searching() as con:
        for q in queries:
            (plan,) = con.execute(sql, {"q": _Vector(q)}).fetchone()[0]
            seconds.append((plan["Planning Time"] + plan["Execution Time"]) / 1000)
    return seconds


def run(
    keyword_sizes: Sequence[int],
    vector_sizes: Sequence[int],
    *,
    pg_url: str | None = None,
    queries: int = 200,
    seed: int = 7,
    out: Path | None = None,
) -> dict[str, Any]:
    """Both arms at every size; the report also goes to ``out`` as JSON when given."""
    report: dict[str, Any] = {"keyword": [], "vectors": []}
    with ExitStack() as stack:
        if pg_url is None:
            from agentmem.testing_postgres import TemporaryPostgres

            pg_url = stack.enter_context(TemporaryPostgres()).create_database()
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="agentmem-sb-")))
        for size in keyword_sizes:
            report["keyword"].append(keyword_arms(size, pg_url, workdir, queries, seed))
            print(json.dumps(report["keyword"][-1]), flush=True)
        for size in vector_sizes:
            report["vectors"].append(vector_arms(size, pg_url, workdir, queries, seed))
            print(json.dumps(report["vectors"][-1]), flush=True)
    if out is not None:
        out.write_text(json.dumps(report, indent=2) + "\n")
    return report


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keyword-sizes", type=int, nargs="*", default=[10_000, 100_000])
    parser.add_argument("--vector-sizes", type=int, nargs="*", default=[10_000, 100_000])
    parser.add_argument("--pg-url", help="an empty database (default: a throwaway server)")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--out", type=Path, default=Path("search-backends.json"))
    args = parser.parse_args(argv)
    run(
        args.keyword_sizes,
        args.vector_sizes,
        pg_url=args.pg_url,
        queries=args.queries,
        out=args.out,
    )


if __name__ == "__main__":
    main()
