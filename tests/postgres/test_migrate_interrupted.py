"""``agentmem migrate`` killed half-way (SIGKILL), both directions, then run again: every bank
of the target is whole or absent (never a bank that looks copied and is not), the second run
refuses the banks already there with a clear message, and ``--replace`` completes the copy.
One store under two URLs is refused before anything is deleted."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import psycopg
import pytest

import agentmem
from agentmem.cli import main
from agentmem.testing import HashEmbedder
from tests.acceptance.test_migrate import snapshot, source  # noqa: F401 (a fixture)
from tests.conftest import T0

#: Polls (x 20 ms) for the killed run to reach its stall: a bound, not a timing.
STALL_POLLS = 6000


def _migrate_command(origin: str, target: str) -> list[str]:
    return [sys.executable, "-m", "agentmem.cli", "migrate", "--from", origin, "--to", target]


def _import_stalled(url: str) -> bool:
    with psycopg.connect(url, autocommit=True) as con:
        return bool(
            con.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO bank_changes%'"
            ).fetchone()[0]
        )


def _kill_when(command: list[str], line: str, *, stall_url: str | None = None) -> list[str]:
    """Run ``command``; SIGKILL it once its stderr shows ``line`` (and, with ``stall_url``,
    once its write there waits on the held change log). Returns the stderr lines read."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env)
    seen: list[str] = []
    try:
        assert process.stderr is not None
        for text in process.stderr:
            seen.append(text)
            if line in text:
                break
        assert line in "".join(seen), seen
        for _ in range(STALL_POLLS if stall_url else 0):
            if _import_stalled(stall_url) or process.poll() is not None:
                break
            threading.Event().wait(0.02)
        process.send_signal(signal.SIGKILL)
    finally:
        process.kill()
        process.wait()
    assert process.returncode == -signal.SIGKILL, seen
    return seen


def _whole_or_absent(copy: dict, original: dict) -> list[str]:
    """The banks of ``copy``, each checked equal to its original."""
    for bank_id, held in copy.items():
        assert held == original[bank_id], bank_id
    return sorted(copy)


def _stall_the_import_of(url: str, bank_id: str) -> psycopg.Connection:
    """Make the bank's write wait at its last statement (its change-log entry) while the
    returned session is open: a trigger waits for an advisory lock that session holds."""
    with agentmem.AgentMemory(url, embedder=HashEmbedder()):  # the schema
        pass
    with psycopg.connect(url, autocommit=True) as con:
        con.execute(
            "CREATE FUNCTION stall() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN PERFORM pg_advisory_xact_lock(4242); RETURN NEW; END $$"
        )
        con.execute(
            "CREATE TRIGGER stall BEFORE INSERT ON bank_changes FOR EACH ROW "
            f"WHEN (NEW.bank_id = '{bank_id}') EXECUTE FUNCTION stall()"
        )
    blocker = psycopg.connect(url, autocommit=True)
    blocker.execute("SELECT pg_advisory_lock(4242)")
    return blocker


@pytest.fixture
def temp(tmp_path: Path, monkeypatch) -> Path:
    """The temp directory of this test's migrations, killed (TMPDIR) and in-process."""
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    return temp


def _workdirs(temp: Path) -> list[str]:
    return sorted(p.name for p in temp.glob("agentmem-migrate-*"))


def test_a_migration_to_postgresql_killed_mid_import_is_refused_then_replaced(
    source,  # noqa: F811
    pg_url,
    temp,
    capsys,
):
    before = snapshot(source)
    blocker = _stall_the_import_of(pg_url, "bob")
    try:
        killed = _kill_when(
            _migrate_command(str(source), pg_url), "(2/3): exported", stall_url=pg_url
        )
    finally:
        blocker.close()
    with psycopg.connect(pg_url, autocommit=True) as con:
        con.execute("DROP TRIGGER stall ON bank_changes")
    assert any("(1/3): imported and verified" in line for line in killed)
    assert len(_workdirs(temp)) == 1  # the killed run's export of a bank
    assert _whole_or_absent(snapshot(pg_url), before) == ["alice"]
    assert main(["migrate", "--from", str(source), "--to", pg_url]) == 2
    assert "already holds bank(s) 'alice'; pass --replace" in capsys.readouterr().err
    assert main(["migrate", "--from", str(source), "--to", pg_url, "--replace"]) == 0
    assert snapshot(pg_url) == before
    assert _workdirs(temp) == []  # removed by the next migration


def test_a_migration_from_postgresql_killed_half_way_is_refused_then_replaced(
    source,  # noqa: F811
    pg_url,
    tmp_path: Path,
    temp,
    capsys,
):
    assert main(["migrate", "--from", str(source), "--to", pg_url]) == 0
    before = snapshot(pg_url)
    back = tmp_path / "back"
    _kill_when(_migrate_command(pg_url, str(back)), "(2/3): exported")
    copied = _whole_or_absent(snapshot(back), before)
    assert "alice" in copied
    capsys.readouterr()
    assert main(["migrate", "--from", pg_url, "--to", str(back)]) == 2
    assert "pass --replace" in capsys.readouterr().err
    assert main(["migrate", "--from", pg_url, "--to", str(back), "--replace"]) == 0
    assert snapshot(back) == before
    assert _workdirs(temp) == []


def test_one_store_under_two_urls_is_refused_before_anything_is_deleted(pg_url, capsys):
    with agentmem.AgentMemory(pg_url) as mem:
        mem.bank("a").retain("Alice moved to Berlin last June.", mentioned_at=T0)
    before = snapshot(pg_url)
    for other in (pg_url.replace("postgresql://", "postgres://"), pg_url + "&sslmode=disable"):
        assert main(["migrate", "--from", pg_url, "--to", other, "--replace"]) == 2
        assert "--from and --to are the same store" in capsys.readouterr().err
    assert snapshot(pg_url) == before
