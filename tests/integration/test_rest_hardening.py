"""The REST server under hostile requests: oversized bodies, foreign Host headers, odd
tokens and arguments. Real HTTP on 127.0.0.1 (raw sockets where a client would be too polite).
"""

from __future__ import annotations

import json
import socket
from urllib.parse import urlsplit

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentmem.errors import InvalidInputError
from agentmem.server.rest import STRATEGY_ARGUMENTS, create_app

from .conftest import SLOW_MACHINE, TOKEN

T0 = "2025-03-04T09:00:00Z"
LIMIT = 4096


@pytest.fixture
def url(memory, serve):
    app = create_app(memory, max_body_bytes=LIMIT, max_import_bytes=4 * LIMIT)
    with serve(app) as base:
        yield base


def _raw_exchange(url: str, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send ``request`` bytes as they are and read the whole answer (the server closes)."""
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=SLOW_MACHINE) as sock:
        sock.sendall(request)
        answer = b""
        while b"\r\n\r\n" not in answer:
            answer += sock.recv(65536) or b"\r\n\r\n"
        head, _, body = answer.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = dict(line.split(": ", 1) for line in lines[1:] if ": " in line)
        headers = {k.lower(): v for k, v in headers.items()}
        while len(body) < int(headers.get("content-length", 0)):
            chunk = sock.recv(65536)
            if not chunk:
                break
            body += chunk
    return int(lines[0].split()[1]), headers, body


def test_a_declared_length_over_the_limit_is_refused_before_the_body_is_sent(url, memory):
    # Headers only: a server that waited for the 5 GB would never answer.
    request = (
        b"POST /banks/b/retain HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Type: application/json\r\nContent-Length: 5000000000\r\n\r\n"
    )
    status, headers, body = _raw_exchange(url, request)
    assert status == 413
    assert headers["connection"] == "close"
    refusal = json.loads(body)
    assert refusal["error"] == "ContentTooLarge" and "5000000000" in refusal["detail"]
    assert memory.banks() == []


@pytest.mark.parametrize("path", ["/banks/b/retain", "/banks/b/recall", "/import"])
def test_a_chunked_body_is_cut_at_the_limit(url, memory, path):
    sent = []

    def chunks():  # no Content-Length: httpx sends it chunked
        for _ in range(64):
            sent.append(LIMIT // 2)
            yield b"x" * (LIMIT // 2)

    response = httpx.post(f"{url}{path}", content=chunks(), timeout=SLOW_MACHINE)
    assert response.status_code == 413
    assert response.json()["error"] == "ContentTooLarge"
    assert memory.banks() == []
    assert memory.check_integrity().ok


def test_a_body_within_the_limit_is_served(url, memory):
    body = {"content": "Alice likes green tea.", "mentioned_at": T0}
    response = httpx.post(f"{url}/banks/b/retain", json=body, timeout=SLOW_MACHINE)
    assert response.status_code == 201
    assert [m.text for m in memory.bank("b").memories()] == ["Alice likes green tea."]


def test_import_has_its_own_limit_and_streams_a_chunked_file(url, memory):
    facts = ["Alice likes green tea.", "Bob moved to Lisbon.", "Carol plays the cello."]
    for fact in facts:
        memory.bank("b").retain(fact, mentioned_at=T0)
    exported = httpx.get(f"{url}/banks/b/export", timeout=SLOW_MACHINE).content
    assert LIMIT < len(exported) <= 4 * LIMIT  # over the JSON limit, under the import limit

    def chunks():
        for start in range(0, len(exported), 1000):
            yield exported[start : start + 1000]

    response = httpx.post(
        f"{url}/import", params={"bank_id": "copy"}, content=chunks(), timeout=SLOW_MACHINE
    )
    assert response.status_code == 200, response.text
    assert response.json() == {"result": {"bank_id": "copy", "memories": 3}}
    assert memory.banks() == ["b", "copy"]
    assert [m.text for m in memory.bank("copy").memories()] == facts
    bad = httpx.post(f"{url}/import", params={"bank_id": "..x"}, content=exported)
    assert bad.status_code == 400 and bad.json()["error"] == "InvalidInputError"
    assert memory.banks() == ["b", "copy"]
    assert memory.check_integrity().ok


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8888", "127.0.0.1.nip.io", "[::2]"])
def test_a_foreign_host_header_is_refused(url, memory, host):
    for method, path in [("GET", "/banks"), ("DELETE", "/banks/b"), ("GET", "/docs")]:
        response = httpx.request(method, f"{url}{path}", headers={"Host": host})
        assert response.status_code == 421, (method, path)
        assert response.json()["error"] == "MisdirectedRequest"
    memory.bank("b")
    assert memory.banks() == ["b"]  # the DELETE did not reach the store


def test_the_server_answers_to_its_own_address_and_localhost(url):
    port = urlsplit(url).port
    for host in (f"127.0.0.1:{port}", "127.0.0.1", f"localhost:{port}", "LOCALHOST"):
        response = httpx.get(f"{url}/health", headers={"Host": host})
        assert response.status_code == 200, host


def test_allowed_hosts_add_names(memory, serve):
    with serve(create_app(memory, allowed_hosts=["Memory.Example.com"])) as url:
        assert httpx.get(f"{url}/health", headers={"Host": "memory.example.com"}).is_success
        assert httpx.get(f"{url}/health", headers={"Host": "other.example.com"}).status_code == 421
    with serve(create_app(memory, allowed_hosts=["*"])) as url:
        assert httpx.get(f"{url}/health", headers={"Host": "other.example.com"}).is_success


def test_a_browser_page_of_another_origin_is_refused(url, memory):
    port = urlsplit(url).port
    for origin in ("https://evil.example", "null", "http://127.0.0.1.nip.io:8888"):
        body = '{"type": "agentmem-export"}\n'  # a "simple" request: no CORS preflight
        response = httpx.post(
            f"{url}/import", content=body, headers={"Origin": origin, "Content-Type": "text/plain"}
        )
        assert response.status_code == 403, origin
        assert response.json()["error"] == "Forbidden"
    for origin in (f"http://127.0.0.1:{port}", f"http://localhost:{port}"):  # the /docs page
        response = httpx.get(f"{url}/banks", headers={"Origin": origin})
        assert response.status_code == 200, origin
    assert memory.banks() == []


def test_a_request_without_a_host_header_is_refused(url):
    status, _, body = _raw_exchange(url, b"GET /banks HTTP/1.0\r\n\r\n")
    assert status == 400 and "Host" in json.loads(body)["detail"]


@pytest.mark.parametrize(
    "settings_",
    [
        {"token": ""},
        {"token": "two words"},
        {"token": "naïve"},
        {"allowed_hosts": ["http://example.com/"]},
        {"allowed_hosts": [""]},
        {"max_body_bytes": 0},
        {"max_import_bytes": -1},
        {"max_body_bytes": True},
    ],
)
def test_bad_settings_are_refused_when_the_app_is_made(memory, settings_):
    with pytest.raises(InvalidInputError):
        create_app(memory, **settings_)


def test_the_bearer_scheme_is_case_insensitive(memory, serve):
    with serve(create_app(memory, token=TOKEN)) as url:
        for header in (f"bearer {TOKEN}", f"BEARER {TOKEN}", f"Bearer  {TOKEN}"):
            response = httpx.get(f"{url}/banks", headers={"Authorization": header})
            assert response.status_code == 200, header
        for header in (f"Basic {TOKEN}", f"Bearer{TOKEN}", f"bearer {TOKEN}x", TOKEN, "bearer"):
            response = httpx.get(f"{url}/banks", headers={"Authorization": header})
            assert response.status_code == 401, header


@pytest.fixture
def seeded_url(memory, url):
    memory.bank("b").retain("Alice likes green tea.", mentioned_at=T0)
    return url


@pytest.mark.parametrize("key", ["self", "query", "rerank", "thinking_budget", "kwargs", "bogus"])
def test_strategy_params_that_are_no_strategy_argument_are_400(seeded_url, key):
    body = {"query": "tea", "strategy_params": {key: 1}}
    response = httpx.post(f"{seeded_url}/banks/b/recall", json=body, timeout=SLOW_MACHINE)
    assert response.status_code == 400, response.text
    assert response.json()["error"] == "InvalidInputError" and key in response.json()["detail"]


@settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
@given(
    params=st.dictionaries(
        st.one_of(st.sampled_from(sorted(STRATEGY_ARGUMENTS | {"self", "query"})), st.text()),
        st.one_of(st.none(), st.integers(), st.text(), st.lists(st.text(), max_size=3)),
        max_size=3,
    ),
    strategies=st.one_of(st.none(), st.just(["causal"]), st.just(["timeline", "graph"])),
)
def test_any_strategy_params_are_answered_without_a_server_error(seeded_url, params, strategies):
    body = {"query": "tea", "strategy_params": params, "strategies": strategies}
    response = httpx.post(f"{seeded_url}/banks/b/recall", json=body, timeout=SLOW_MACHINE)
    assert response.status_code in (200, 400, 404), response.text
    assert set(response.json()) >= ({"hits"} if response.is_success else {"error", "detail"})
