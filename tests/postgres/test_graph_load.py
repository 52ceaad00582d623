"""The graph mirror's bulk load on PostgreSQL (slots numbered in SQL, edges read by binary
COPY) holds what adding the bank's rows one at a time gives (tests/unit/test_graph_load.py)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from tests.postgres.test_in_process_recall import _database
from tests.unit import test_graph_load as cases


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=cases._OPS)
def test_bulk_load_equals_the_rows_added_one_by_one(pg_cluster, ops):
    with _database(pg_cluster) as url:
        cases.check_load_matches_rows(url, ops)
