"""`agentmem bench scale --postgres URL`: the same bank measured on PostgreSQL beside DuckDB."""

from __future__ import annotations

import agentmem
from agentmem.bench.scale import BANK, format_report, run_scale


def test_a_small_run_measures_a_postgresql_copy_of_the_bank(tmp_path, pg_url):
    report = run_scale(
        [40],
        tmp_path / "work",
        queries=4,
        singles=2,
        imports=0,
        max_call=False,
        postgres_url=pg_url,
        replicas=(2,),
    )
    (size,) = report["sizes"]
    copy = size["postgresql"]
    assert set(copy["recall"]) == {"semantic", "keyword", "tempr"}
    assert copy["tempr_p50_over_embedded"] > 0 and copy["vector_top_k"]["p50_ms"] > 0
    assert set(copy["cold_start"]) == {"graph", "keyword", "rows", "vectors"}  # in-process copies
    paired = copy["interleaved_with_embedded"]
    assert set(paired) == {"semantic", "keyword", "tempr"}
    assert all(p["second_over_first"] > 0 for p in paired.values())
    assert all(p["second_p95_ms"] >= p["second_p50_ms"] > 0 for p in paired.values())
    served = copy["replicas"]["by_replicas"]
    assert list(served) == ["2"] and len(served["2"]["cold_start_s"]) == 2
    assert served["2"]["recalls_per_s"] > 0 and served["2"]["replica_cpu_ms_per_recall"] > 0
    # The copy holds the bank as the embedded store does.
    with agentmem.AgentMemory(pg_url) as mem:
        assert mem.bank(BANK).stats()["memories"] == size["memories_in_bank"]
        assert mem.check_integrity().ok
    table = format_report(report)
    assert "PostgreSQL: TEMPR p50 / embedded" in table
    assert "interleaved tempr p50 / p95, embedded | PostgreSQL (ms)" in table
    assert "-" not in table.splitlines()[-1].split()[-1]
