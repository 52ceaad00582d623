"""The library's limits as a REST client meets them: a value the library refuses is a 400 with
its message, never a 500, and nothing is written."""

from __future__ import annotations

import httpx
import pytest

from agentmem.server.rest import create_app

from .conftest import SLOW_MACHINE

T0 = "2025-03-04T09:00:00Z"
LATE = "9999-12-31T23:00-05:00"  # past year 9999 in UTC
EARLY = "0001-01-01T01:00+05:00"  # before year 1 in UTC


def _nested(depth: int) -> dict:
    value: dict = {}
    for _ in range(depth):
        value = {"x": value}
    return value


@pytest.fixture
def url(memory, serve):
    memory.bank("b").retain("Alice likes green tea.", mentioned_at=T0)
    with serve(create_app(memory)) as base:
        yield base


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/banks/b/retain", {"content": "x", "mentioned_at": LATE}),
        ("/banks/b/retain", {"content": "x", "occurred_at": EARLY}),
        ("/banks/b/retain", {"content": "x", "occurred_at": [T0, LATE]}),
        ("/banks/b/retain", {"content": [{"role": "user", "content": "x", "timestamp": LATE}]}),
        ("/banks/b/retain", {"content": "x", "metadata": _nested(600)}),
        ("/banks/b/recall", {"query": "tea", "now": LATE}),
        ("/banks/b/recall", {"query": "tea", "time_range": {"start": EARLY}}),
        ("/banks/b/recall", {"query": "tea " * 100_000}),
        ("/banks/notes%0A/retain", {"content": "x", "mentioned_at": T0}),
        (f"/banks/{'a' * 129}/retain", {"content": "x", "mentioned_at": T0}),
    ],
)
def test_values_the_library_refuses_are_400_and_write_nothing(url, memory, path, body):
    before = [m.id for m in memory.bank("b").memories()]
    response = httpx.post(f"{url}{path}", json=body, timeout=SLOW_MACHINE)
    assert response.status_code == 400, response.text
    assert response.json()["error"] == "InvalidInputError" and response.json()["detail"]
    assert "datetime.datetime(" not in response.text  # a time is shown as ISO 8601
    assert memory.banks() == ["b"]
    assert [m.id for m in memory.bank("b").memories()] == before
    assert memory.check_integrity().ok


def test_reads_of_a_bank_id_with_a_final_newline_are_400(url):
    for path in ("/banks/b%0A", "/banks/b%0A/memories", "/banks/b%0A/entities"):
        response = httpx.get(f"{url}{path}", timeout=SLOW_MACHINE)
        assert response.status_code == 400, path
