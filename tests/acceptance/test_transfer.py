"""Export → import round-trips a bank exactly: memories, entities, links, times, vectors."""

from __future__ import annotations

import json

import numpy as np
import pytest

import agentmem
from agentmem.cli import main
from tests.conftest import CONVERSATION, T0, T1


def _snapshot(mem: agentmem.AgentMemory, bank: agentmem.MemoryBank) -> dict:
    memories = bank.memories()
    vectors = mem._engine.vectors.get_vectors(bank._collection, [m.id for m in memories])
    return {
        "memories": memories,
        "entities": bank.entities(),
        "edges": sorted(bank.graph().edges(data=True), key=repr),
        "stats": bank.stats(),
        "vectors": {k: v.tolist() for k, v in vectors.items()},
        "recall": [
            (h.memory.id, round(h.score, 6))
            for h in bank.recall("Where does Alice work?", now=T1, reinforce=False)
        ],
    }


@pytest.fixture
def rich_bank(bank):
    """The conftest bank plus timed facts, tags, metadata, an explicit link and reinforcement."""
    bank.retain(
        "Bob moved to Paris in 2020. He still misses the Berlin bakeries.",
        mentioned_at=T1,
        occurred_at=("2020-01-01", "2020-12-31"),
        tags=["travel", "bob"],
        metadata={"source": "email", "nested": {"n": [1, 2.5, None]}},
        importance=0.9,
        context="forwarded by Alice",
    )
    memories = bank.memories()
    bank.link(memories[0].id, memories[-1].id, "caused_by", 0.25)
    bank.recall("Berlin", now=T1)  # access counts must travel too
    bank.add_alias("Bob", "Bobby")  # entity corrections too
    return bank


def test_export_then_import_into_a_fresh_store_is_exact(mem, rich_bank, tmp_path):
    before = _snapshot(mem, rich_bank)
    path = tmp_path / "alice.jsonl"
    assert rich_bank.export(path) == len(before["memories"])
    with agentmem.AgentMemory(tmp_path / "other") as other:
        imported = other.import_(path)
        assert imported.id == "alice"
        after = _snapshot(other, imported)
        # Chroma hands back its own (normalised) float32 copy of a vector: from a PostgreSQL
        # store into the embedded one, vectors agree to float32 rounding, not bit for bit.
        # Recall scores follow their cosines, so they agree to that rounding too.
        vectors = [snapshot.pop("vectors") for snapshot in (before, after)]
        recalled = [snapshot.pop("recall") for snapshot in (before, after)]
        assert after == before
        assert [i for i, _ in recalled[1]] == [i for i, _ in recalled[0]]
        np.testing.assert_allclose(
            [s for _, s in recalled[1]], [s for _, s in recalled[0]], rtol=0, atol=1e-5
        )
        assert vectors[0].keys() == vectors[1].keys()
        for memory_id, vector in vectors[0].items():
            np.testing.assert_allclose(vectors[1][memory_id], vector, rtol=0, atol=1e-6)
        assert other.check_integrity().ok
    with agentmem.AgentMemory(tmp_path / "other") as other:  # and it persisted
        copy = other.bank("alice")
        assert copy.memories() == before["memories"]
        # The correction came along: a later "Bobby" is Bob, not a new entity.
        said = copy.retain("Bobby phoned from Paris.", mentioned_at=T1).memories[0]
        assert "Bob" in said.entities and copy.entity("Bobby").name == "Bob"


def test_import_into_the_same_store_under_another_id_renews_ids(mem, rich_bank, tmp_path):
    path = tmp_path / "alice.jsonl"
    rich_bank.export(path, vectors=False)  # forces re-embedding on import
    copy = mem.import_(path, bank_id="alice-copy")
    original = rich_bank.memories()
    copied = copy.memories()
    assert [m.text for m in copied] == [m.text for m in original]
    assert not {m.id for m in copied} & {m.id for m in original}
    assert [(m.mentioned_at, m.occurred_start, m.tags, m.metadata) for m in copied] == [
        (m.mentioned_at, m.occurred_start, m.tags, m.metadata) for m in original
    ]
    hit = copy.recall("INV-20931", strategies=["keyword"], reinforce=False).hits[0]
    assert hit.memory.bank_id == "alice-copy" and "INV-20931" in hit.text
    vectors = mem._engine.vectors
    a = vectors.get_vectors(mem.bank("alice")._collection, [original[3].id])[original[3].id]
    b = vectors.get_vectors(copy._collection, [copied[3].id])[copied[3].id]
    assert np.allclose(a, b, atol=1e-5)
    report = mem.check_integrity()
    assert report.ok, report.problems
    assert set(report.banks) == {"alice", "alice-copy"}


def test_observations_imported_under_fresh_ids_cite_their_own_banks_facts(mem, bank, tmp_path):
    """An observation names its evidence by id, and a contradicted fact the observation: both
    follow the ids the import gives, so the copy's observation cites the copy's facts (not the
    original bank's), and ids the file does not hold are left as they are."""
    facts = bank.memories()
    (observation,) = bank.reflect_commit(
        "Where does Alice work?",
        observations=["Alice has worked at Google since 2019."],
        cited_ids=[facts[0].id, facts[1].id],
    )
    path = tmp_path / "alice.jsonl"
    bank.export(path)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    for line in lines:  # as an LLM consolidation flags a fact the observation contradicts
        if line.get("id") == facts[2].id:
            line["metadata"]["contradicted_by"] = [observation.id, "not-in-this-file"]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))

    copy = mem.import_(path, bank_id="alice-copy")
    by_text = {m.text: m for m in copy.memories()}
    copied = by_text[observation.text]
    cited = [by_text[f.text].id for f in facts[:2]]
    assert copied.metadata["source_memory_ids"] == cited
    assert by_text[facts[2].text].metadata["contradicted_by"] == [copied.id, "not-in-this-file"]
    assert not {m.id for m in copy.memories()} & {m.id for m in bank.memories()}
    # The original is untouched, and the copy's observation is what observations() lists.
    assert bank.observations()[0].metadata["source_memory_ids"] == [facts[0].id, facts[1].id]
    assert copied.id in {o.id for o in copy.observations()}
    report = mem.check_integrity()
    assert report.ok, report.problems


def test_import_refuses_a_bank_that_has_memories_and_non_export_files(mem, rich_bank, tmp_path):
    path = tmp_path / "alice.jsonl"
    rich_bank.export(path)
    with pytest.raises(agentmem.InvalidInputError, match="empty"):
        mem.import_(path)
    bogus = tmp_path / "bogus.jsonl"
    bogus.write_text(json.dumps({"hello": "world"}) + "\n")
    with pytest.raises(agentmem.InvalidInputError, match="not an agentmem export"):
        mem.import_(bogus)
    assert mem.banks() == ["alice"]


def test_import_of_no_file_or_a_folder_says_so_and_creates_nothing(mem, tmp_path, capsys):
    with pytest.raises(agentmem.NotFoundError, match="no file"):
        mem.import_(tmp_path / "missing.jsonl", bank_id="copy")
    with pytest.raises(agentmem.InvalidInputError, match="is not a file") as refused:
        mem.import_(tmp_path, bank_id="copy")
    assert str(refused.value).count(str(tmp_path)) == 1  # said once, not wrapped twice
    assert mem.banks() == []
    target = tmp_path / "target"
    for path in (tmp_path / "missing.jsonl", tmp_path, "/dev/null"):
        assert main(["import", "--path", str(target), "--bank", "copy", str(path)]) == 2
    err = capsys.readouterr().err
    assert "no file" in err and "/dev/null is not a file" in err
    assert not target.exists()  # refused before a store was made for it


def test_cli_export_and_import(store_path, tmp_path, capsys):
    with agentmem.AgentMemory(store_path) as mem:
        mem.bank("notes").retain(CONVERSATION, mentioned_at=T0)
    path = tmp_path / "notes.jsonl"
    assert main(["export", "--path", str(store_path), "--bank", "notes", str(path)]) == 0
    target = tmp_path / "target"
    assert main(["import", "--path", str(target), "--bank", "copy", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"exported {len(CONVERSATION)} memories" in out
    assert f"imported {len(CONVERSATION)} memories into bank 'copy'" in out
    with agentmem.AgentMemory(target) as mem:
        assert [m.text for m in mem.bank("copy").memories()][
            0
        ] == "Alice: I moved to Berlin last June."
    assert main(["export", "--path", str(store_path), "--bank", "nope", str(path)]) == 2
