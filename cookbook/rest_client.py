"""Talk to ``agentmem serve`` over HTTP, offline: start the server, retain, recall, stop.

The server binds 127.0.0.1 on a free port and requires a bearer token.

    python cookbook/rest_client.py [--path ./memdata]
"""

from __future__ import annotations

import argparse
import os
import re
import secrets
import subprocess
import sys
import tempfile

import httpx


def start_server(path: str, token: str) -> tuple[subprocess.Popen, str]:
    """``agentmem serve`` on port 0 (a free one); the URL is read from its startup log."""
    server = subprocess.Popen(
        [sys.executable, "-m", "agentmem.cli", "serve", "--path", path, "--port", "0"],
        env={**os.environ, "AGENTMEM_TOKEN": token},
        stderr=subprocess.PIPE,
        text=True,
    )
    for line in server.stderr:
        match = re.search(r"running on (http://127\.0\.0\.1:\d+)", line)
        if match:
            return server, match.group(1)
    raise RuntimeError(f"agentmem serve exited with {server.wait()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--path", default=None, help="store directory (default: temporary)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        token = secrets.token_urlsafe(16)
        server, url = start_server(args.path or tmp, token)
        try:
            headers = {"Authorization": f"Bearer {token}"}
            with httpx.Client(base_url=url, headers=headers, timeout=60) as client:
                print("health:", client.get("/health").json())
                print("without the token:", httpx.get(f"{url}/banks").status_code)
                retained = client.post(
                    "/banks/support/retain",
                    json={
                        "content": [
                            {"role": "user", "name": "Alice", "content": "My order 7731 is late."},
                            {"role": "assistant", "content": "I'll ask the warehouse today."},
                        ],
                        "mentioned_at": "2025-01-15T10:00:00Z",
                        "document_id": "ticket-1",
                    },
                ).json()
                print("retained:", [m["text"] for m in retained["memories"]])
                hits = client.post(
                    "/banks/support/recall", json={"query": "order 7731", "top_k": 2}
                ).json()["hits"]
                for hit in hits:
                    print(f"recalled {hit['score']:.2f}: {hit['memory']['text']}")
                print(
                    "entities:", [e["name"] for e in client.get("/banks/support/entities").json()]
                )
                forgot = client.post("/banks/support/forget", json={"document_id": "ticket-1"})
                print("forgot:", forgot.json())
        finally:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    main()
