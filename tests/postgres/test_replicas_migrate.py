"""``agentmem migrate`` between DuckDB and PostgreSQL, both ways: every bank arrives whole."""

from __future__ import annotations

from agentmem.cli import main
from tests.acceptance.test_migrate import snapshot, source  # noqa: F401 (a fixture)


def test_migrate_to_postgresql_and_back(source, tmp_path, pg_url, capsys):  # noqa: F811
    before = snapshot(source)
    assert main(["migrate", "--from", str(source), "--to", pg_url]) == 0
    assert "migrated 3 bank(s)" in capsys.readouterr().out
    assert snapshot(pg_url) == before
    # A second run is refused (the banks hold memories), then --replace overwrites them.
    assert main(["migrate", "--from", str(source), "--to", pg_url]) == 2
    assert "--replace" in capsys.readouterr().err
    assert main(["migrate", "--from", str(source), "--to", pg_url, "--replace"]) == 0
    back = tmp_path / "back"
    assert main(["migrate", "--from", pg_url, "--to", str(back)]) == 0
    assert snapshot(back) == before


def test_a_migrated_bank_has_its_vector_index(source, pg_url, capsys):  # noqa: F811
    from agentmem import AgentMemory
    from agentmem.store.postgres.vectors import _index_name

    assert main(["migrate", "--from", str(source), "--to", pg_url]) == 0
    with AgentMemory(pg_url) as mem:
        collections = [mem.bank(b)._collection for b in mem.banks()]
        valid = mem._engine.db.fetchall(
            "SELECT c.relname FROM pg_index AS i JOIN pg_class AS c ON c.oid = i.indexrelid "
            "WHERE i.indisvalid AND c.relname LIKE 'vectors\\_%' AND c.relname <> 'vectors_pkey'"
        )
    assert sorted(name for (name,) in valid) == sorted(map(_index_name, collections))
