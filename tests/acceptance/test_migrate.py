"""``agentmem migrate``: every bank copied whole from one store to another and back, with
progress on stderr; refusals are one line, exit 2, and write nothing."""

from __future__ import annotations

import fcntl
import tempfile
from pathlib import Path

import networkx as nx
import pytest

import agentmem
import agentmem.migrate
from agentmem.cli import main
from tests.conftest import CONVERSATION, T0, T1


def picture(graph: nx.MultiDiGraph) -> tuple[set, set]:
    nodes = {(n, d["type"]) for n, d in graph.nodes(data=True)}
    edges = {(u, v, k, round(w, 12)) for u, v, k, w in graph.edges(keys=True, data="weight")}
    return nodes, edges


def snapshot(location: str | Path) -> dict:
    """What a store holds, bank by bank, as comparable values (recall included)."""
    with agentmem.AgentMemory(location) as mem:
        out = {}
        for bank_id in mem.banks():
            bank = mem.bank(bank_id)
            out[bank_id] = {
                "memories": sorted(
                    (m.id, m.text, m.fact_type, m.mentioned_at, m.occurred_start, m.access_count)
                    for m in bank.memories()
                ),
                "entities": sorted((e.name, e.kind, e.aliases) for e in bank.entities()),
                "graph": picture(bank.graph()),
                "config": bank.config.to_mapping(),
                "recall": [
                    h.memory.id
                    for h in bank.recall("Where does Alice work?", top_k=5, reinforce=False)
                ],
            }
            assert bank.check_integrity().ok
        return out


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "source"
    with agentmem.AgentMemory(path) as mem:
        alice = mem.bank("alice")
        facts = alice.retain(CONVERSATION, mentioned_at=T0, document_id="session-1").memories
        alice.retain("Alice moved to Lisbon in May 2025.", mentioned_at=T1)
        alice.link(facts[1].id, facts[0].id, "caused_by")
        alice.add_alias("Alice", "Ally")
        alice.configure(temporal_sigma_days=3.0)
        alice.recall("Alice", top_k=3)  # access counts
        mem.bank("bob").retain("Bob plays the cello in Porto.", mentioned_at=T0)
        mem.bank("empty")
    return path


def test_migrate_copies_every_bank_whole_and_back(source, tmp_path, capsys):
    before = snapshot(source)
    target, back = tmp_path / "target", tmp_path / "back"
    assert main(["migrate", "--from", str(source), "--to", str(target)]) == 0
    out, err = capsys.readouterr()
    assert "migrated 3 bank(s)" in out
    assert "bank 'alice' (1/3): imported and verified" in err
    assert snapshot(target) == before
    with agentmem.AgentMemory(target) as mem:
        assert mem.bank("alice").entity("Ally").name == "Alice"  # the correction came too
    assert main(["migrate", "--from", str(target), "--to", str(back)]) == 0
    assert snapshot(back) == before
    assert snapshot(source) == before  # the source is only read


def test_migrate_refuses_a_target_bank_that_holds_memories(source, tmp_path, capsys):
    target = tmp_path / "target"
    with agentmem.AgentMemory(target) as mem:
        mem.bank("bob").retain("Bob sold his cello.", mentioned_at=T1)
    held = snapshot(target)
    assert main(["migrate", "--from", str(source), "--to", str(target)]) == 2
    err = capsys.readouterr().err
    assert "'bob'" in err and "--replace" in err
    assert len(err.strip().splitlines()) == 1
    assert snapshot(target) == held  # nothing written, not even the free banks
    assert main(["migrate", "--from", str(source), "--to", str(target), "--replace"]) == 0
    assert snapshot(target) == snapshot(source)


def test_migrate_copies_only_the_banks_asked_for(source, tmp_path):
    target = tmp_path / "target"
    args = ["migrate", "--from", str(source), "--to", str(target), "--bank", "bob"]
    assert main(args) == 0
    with agentmem.AgentMemory(target) as mem:
        assert mem.banks() == ["bob"]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--from", "{tmp}/missing", "--to", "{tmp}/target"], "no agentmem store"),
        (["--from", "{source}", "--to", "{source}"], "same store"),
        (["--from", "{source}", "--to", "{tmp}/target", "--bank", "nobody"], "no bank 'nobody'"),
        (["--from", "{source}", "--to", "{tmp}/target", "--bank", "../x"], "invalid bank id"),
    ],
)
def test_migrate_refusals_are_one_line_and_leave_no_target(
    source, tmp_path, capsys, arguments, message
):
    args = [a.format(tmp=tmp_path, source=source) for a in arguments]
    assert main(["migrate", *args]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "target").exists()


def test_migrate_removes_what_a_killed_migration_left_and_nothing_else(
    source, tmp_path, monkeypatch
):
    """A migration killed half-way leaves its export (a copy of a bank's data) in the temp
    directory: the next one removes it, but not the directory of one still running, one it
    cannot tell is abandoned (no lock: an older version's), nor what a link points at."""
    temp, elsewhere = tmp_path / "temp", tmp_path / "elsewhere"
    abandoned, running, older = (temp / f"agentmem-migrate-{n}" for n in ("a", "b", "c"))
    for workdir in (abandoned, running, older, elsewhere):
        workdir.mkdir(parents=True)
        (workdir / "bank.jsonl").write_text('{"memories": []}\n')
    for workdir in (abandoned, running, elsewhere):
        (workdir / "lock").touch()
    linked = temp / "agentmem-migrate-d"
    linked.symlink_to(elsewhere)
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    with open(running / "lock") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        assert main(["migrate", "--from", str(source), "--to", str(tmp_path / "copy")]) == 0
    assert sorted(p.name for p in temp.iterdir()) == [running.name, older.name, linked.name]
    assert sorted(p.name for p in elsewhere.iterdir()) == ["bank.jsonl", "lock"]
    assert snapshot(tmp_path / "copy") == snapshot(source)


def test_migrate_without_advisory_locks_neither_sweeps_nor_leaves_anything(
    source, tmp_path, monkeypatch
):
    """Where ``fcntl`` is missing (not POSIX) a migration still runs, in a plain temporary
    directory it removes, and touches no other directory."""
    temp = tmp_path / "temp"
    (temp / "agentmem-migrate-a").mkdir(parents=True)
    (temp / "agentmem-migrate-a" / "lock").touch()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    monkeypatch.setattr(agentmem.migrate, "fcntl", None)
    assert main(["migrate", "--from", str(source), "--to", str(tmp_path / "copy")]) == 0
    assert [p.name for p in temp.iterdir()] == ["agentmem-migrate-a"]
    assert snapshot(tmp_path / "copy") == snapshot(source)
