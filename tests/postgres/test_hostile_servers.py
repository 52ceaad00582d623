"""Out-of-contract input through REST and MCP served from PostgreSQL, next to the same server
on the embedded store: the same answer (status and error type) on both, nothing written on a
refusal, the same memories stored on an acceptance, and integrity after all of it.

PostgreSQL's text cannot hold NUL (and no store holds a lone surrogate): what DuckDB stores
after cleaning, PostgreSQL must store the same way, and what one refuses the other refuses
before anything is written.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

import agentmem
from agentmem.config import Limits
from agentmem.server.mcp_server import create_mcp_server
from agentmem.server.rest import create_app
from agentmem.testing import HashEmbedder
from tests.conftest import T0

NUL = "a\x00b"
LATE = "9999-12-31T23:59:59Z"


def _nested(depth: int) -> dict:
    value: dict = {}
    for _ in range(depth):
        value = {"x": value}
    return value


@pytest.fixture(scope="module")
def memories(
    pg_cluster: Any,  # noqa: ANN401
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[dict[str, agentmem.AgentMemory]]:
    """One store per backend, each with bank ``b`` holding one memory."""
    stores = {
        "duckdb": agentmem.AgentMemory(
            tmp_path_factory.mktemp("hostile") / "store", embedder=HashEmbedder()
        ),
        "postgresql": agentmem.AgentMemory(pg_cluster.create_database(), embedder=HashEmbedder()),
    }
    for mem in stores.values():
        mem.bank("b").retain("Bob likes coffee.", mentioned_at=T0)
    yield stores
    for mem in stores.values():
        mem.close()


@pytest.fixture(scope="module")
def clients(memories: dict[str, agentmem.AgentMemory]) -> dict[str, TestClient]:
    return {
        name: TestClient(create_app(mem), raise_server_exceptions=False)
        for name, mem in memories.items()
    }


def _held(mem: agentmem.AgentMemory) -> list[tuple[str, ...]]:
    """What the store holds, comparable across backends (ids differ)."""
    return sorted(
        (bank_id, m.text, m.document_id or "", json.dumps(m.metadata, sort_keys=True))
        for bank_id in mem.banks()
        for m in mem.bank(bank_id).memories(limit=10_000)
    )


def _answer(client: TestClient, method: str, path: str, body: Any) -> tuple[int, str | None]:  # noqa: ANN401
    content = None if body is None else json.dumps(body)
    response = client.request(
        method, path, content=content, headers={"content-type": "application/json"}
    )
    assert response.status_code < 500, response.text
    error = response.json().get("error") if response.status_code >= 400 else None
    return response.status_code, error


def _same_on_both(
    clients: dict[str, TestClient],
    memories: dict[str, agentmem.AgentMemory],
    method: str,
    path: str,
    body: Any,  # noqa: ANN401
) -> tuple[int, str | None]:
    before = {name: _held(mem) for name, mem in memories.items()}
    answers = {name: _answer(client, method, path, body) for name, client in clients.items()}
    assert answers["duckdb"] == answers["postgresql"], (path, body, answers)
    status, _ = answers["duckdb"]
    after = {name: _held(mem) for name, mem in memories.items()}
    if status >= 400:
        assert after == before, (path, body)
    assert after["duckdb"] == after["postgresql"], (path, body)
    return answers["duckdb"]


CASES = [
    ("POST", "/banks/b/retain", {"content": NUL, "mentioned_at": T0}),
    ("POST", "/banks/b/retain", {"content": "Ann likes tea.", "metadata": {NUL: NUL}}),
    ("POST", "/banks/b/retain", {"content": "Ann likes tea.", "metadata": {"k": [NUL, 1.5]}}),
    ("POST", "/banks/b/retain", {"content": "Ann likes tea.", "document_id": NUL}),
    ("POST", "/banks/b/retain", {"content": "Ann likes tea.", "context": NUL}),
    ("POST", "/banks/b/retain", {"content": "Ann likes tea.", "tags": [NUL]}),
    ("POST", "/banks/b/retain", {"content": [{"role": "user", "name": NUL, "content": "Hi."}]}),
    ("POST", "/banks/b/retain", {"content": "Ann likes tea.", "mentioned_at": LATE}),
    ("POST", "/banks/b/retain", {"content": "Ann likes tea.", "occurred_at": [T0, LATE]}),
    ("POST", "/banks/b/retain", {"content": "Ann likes tea.", "metadata": _nested(600)}),
    ("POST", "/banks/b/retain", {"content": "x" * (Limits().retain_chars + 1)}),
    ("POST", "/banks/b/recall", {"query": "x" * (Limits().query_chars + 1)}),
    ("POST", "/banks/b/recall", {"query": NUL}),
    ("POST", "/banks/b/recall", {"query": "tea", "tags": [NUL]}),
    ("POST", "/banks/b/recall", {"query": "tea", "now": LATE}),
    ("POST", "/banks/b/forget", {"ids": [NUL, "x' OR '1'='1"]}),
    ("POST", "/banks/b/forget", {"document_id": NUL}),
    ("POST", "/banks/b/links", {"src_id": NUL, "dst_id": "x", "kind": "caused_by"}),
    ("GET", "/banks/b/entities/a%00b", None),
    ("GET", "/banks/b/memories/a%00b", None),
    ("GET", "/banks/b'%3B DROP TABLE banks --", None),
    ("POST", "/banks/b%22x/retain", {"content": "Ann likes tea."}),
    ("POST", "/banks/b%C3%A9/retain", {"content": "Ann likes tea."}),
    ("DELETE", "/banks/a%00b", None),
]


@pytest.mark.parametrize(("method", "path", "body"), CASES)
def test_rest_answers_the_same_on_both_backends(clients, memories, method, path, body):
    _same_on_both(clients, memories, method, path, body)
    for mem in memories.values():
        assert mem.check_integrity().ok


def test_refusals_that_matter_are_refusals(clients, memories):
    """A few of the cases above, pinned: refused as invalid input, not stored."""
    for body in (
        {"content": "x", "mentioned_at": LATE},
        {"content": "x", "tags": [NUL]},
        {"content": "x", "metadata": _nested(600)},
    ):
        assert _same_on_both(clients, memories, "POST", "/banks/b/retain", body) == (
            400,
            "InvalidInputError",
        )
    for path in ("/banks/b%22x/retain", "/banks/b%C3%A9/retain"):
        assert _same_on_both(clients, memories, "POST", path, {"content": "x"})[0] == 400
    assert all(mem.banks() == ["b"] for mem in memories.values())


# Characters each store treats with care: NUL and other controls, lone surrogates, quotes and
# placeholder marks of either SQL dialect, line separators, a byte-order mark, an emoji.
_TRICKY = st.sampled_from(
    ["a", "Z", " ", "\x00", "\x01", "\x1b", "\ud800", "\udfff", "é", "\u2028", "'", '"', "\\"]
    + ["%", "%s", "?", "$1", "$bank", "--", "\ufeff", "\U0001f600", "\n"]
)
_TEXT = st.lists(_TRICKY, max_size=12).map("".join)
_FIELDS = st.sampled_from(
    ["content", "document_id", "context", "metadata_key", "metadata_value", "tag", "name"]
)


def _retain_body(field: str, value: str) -> dict[str, Any]:
    body: dict[str, Any] = {"content": "Eve keeps bees in Ghent.", "mentioned_at": T0}
    if field == "name":
        body["content"] = [{"role": "user", "name": value, "content": "Eve keeps bees."}]
    elif field == "tag":
        body["tags"] = [value]
    elif field.startswith("metadata"):
        body["metadata"] = {value: 1} if field == "metadata_key" else {"k": value}
    else:
        body[field] = value
    return body


@settings(
    max_examples=10,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(field=_FIELDS, value=_TEXT, query=_TEXT)
def test_any_text_anywhere_is_stored_or_refused_alike(clients, memories, field, value, query):
    _same_on_both(clients, memories, "POST", "/banks/b/retain", _retain_body(field, value))
    _same_on_both(clients, memories, "POST", "/banks/b/recall", {"query": query or "x"})
    _same_on_both(clients, memories, "POST", "/banks/b/forget", {"document_id": query or "x"})


def test_integrity_after_the_hostile_traffic(memories):
    for mem in memories.values():
        report = mem.check_integrity()
        assert report.ok, report.problems


async def test_mcp_tools_answer_the_same_on_both_backends(memories):
    outcomes: dict[str, list[tuple[bool, str]]] = {}
    for name, mem in memories.items():
        bank = mem.bank("b")
        answers = []
        async with Client(create_mcp_server(bank)) as client:
            for tool, arguments in [
                ("retain_memory", {"content": NUL, "tags": ["ok"]}),
                ("retain_memory", {"content": "Ann likes tea.", "tags": [NUL]}),
                ("retain_memory", {"content": "Ann likes tea.", "importance": float("nan")}),
                ("retain_memory", {"content": "x" * (Limits().retain_chars + 1)}),
                ("recall_memory", {"query": NUL, "tags": [NUL]}),
                ("recall_memory", {"query": "tea", "top_k": -1}),
                ("forget_memory", {"memory_ids": [NUL, "x' OR '1'='1"]}),
                ("reflect_memory", {"query": "\ud800"}),
            ]:
                result = await client.call_tool(tool, arguments)
                text = result.content[0].text if result.is_error else ""
                answers.append((result.is_error, text.split(":")[0]))
        outcomes[name] = answers
        assert mem.check_integrity().ok
    assert outcomes["duckdb"] == outcomes["postgresql"]
    assert _held(memories["duckdb"]) == _held(memories["postgresql"])
