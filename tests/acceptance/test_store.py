"""Persistence, isolation, forgetting, crash repair and locking of the store."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

import agentmem
from tests.conftest import CONVERSATION, T0, T1


def test_everything_survives_close_and_reopen(store_path):
    with agentmem.AgentMemory(store_path) as mem:
        bank = mem.bank("alice")
        stored = bank.retain(CONVERSATION, mentioned_at=T0, tags=["crm"]).memories
        entities_before = bank.entities()
    with agentmem.AgentMemory(store_path) as mem:
        assert mem.banks() == ["alice"]
        bank = mem.bank("alice")
        assert [bank.get(m.id) for m in stored] == stored
        assert bank.entities() == entities_before
        for strategy in ("semantic", "keyword"):
            result = bank.recall(
                "INV-20931 unpaid invoice", strategies=[strategy], now=T1, reinforce=False
            )
            assert result.hits[0].memory == stored[3]


def test_banks_are_isolated(mem):
    a, b = mem.bank("team-a"), mem.bank("team-b")
    a_ids = {m.id for m in a.retain("The launch code is ALPHA-7.", mentioned_at=T0)}
    b_ids = {m.id for m in b.retain("The launch code is BRAVO-9.", mentioned_at=T0)}
    for strategies in (None, ["semantic"], ["keyword"]):
        assert {h.memory.id for h in a.recall("launch code", strategies=strategies)} == a_ids
        assert {h.memory.id for h in b.recall("launch code", strategies=strategies)} == b_ids
    with pytest.raises(agentmem.NotFoundError):
        a.get(next(iter(b_ids)))
    assert a.forget(ids=list(b_ids)) == 0
    assert b.get(next(iter(b_ids)))


@pytest.mark.parametrize("memory_id", ["x' OR '1'='1", "a\x00b", "", "ünïcode-id", "a b"])
def test_get_with_ids_that_are_not_plain_finds_nothing_and_breaks_nothing(mem, memory_id):
    bank = mem.bank("ids")
    stored = bank.retain("Alice Chen met Bob in Lisbon.", mentioned_at=T0).memories[0]
    with pytest.raises(agentmem.NotFoundError):
        bank.get(memory_id)
    again = bank.get(stored.id)  # read by primary key
    assert again.entities == stored.entities == tuple(sorted(stored.entities))
    assert {"Alice Chen", "Lisbon"} <= set(again.entities)


def test_forget_removes_a_memory_from_every_store(store_path):
    with agentmem.AgentMemory(store_path) as mem:
        bank = mem.bank("alice")
        memories = bank.retain(CONVERSATION, mentioned_at=T0).memories
        invoice = memories[3]
        assert bank.forget(invoice.id) == 1
        with pytest.raises(agentmem.NotFoundError):
            bank.get(invoice.id)
        for strategies in (["semantic"], ["keyword"]):
            found = bank.recall("INV-20931 Quixotrix", strategies=strategies, now=T1)
            assert invoice.id not in {h.memory.id for h in found}
        graph = bank.graph()
        assert invoice.id not in graph
        assert "Quixotrix" not in graph  # the entity only this fact mentioned is gone too
        with pytest.raises(agentmem.NotFoundError):
            bank.entity("Quixotrix")
        assert all(invoice.id not in e.memory_ids for e in bank.entities())
    with agentmem.AgentMemory(store_path) as mem:
        bank = mem.bank("alice")
        assert len(bank.memories()) == len(CONVERSATION) - 1
        vectors = mem._engine.vectors.ids(mem.bank("alice")._collection)
        assert invoice.id not in vectors and len(vectors) == len(CONVERSATION) - 1


def test_forget_by_document_and_tags_and_episode_cleanup(mem):
    bank = mem.bank("docs")
    bank.retain("Doc one says hello.", mentioned_at=T0, document_id="d1", tags=["x"])
    bank.retain("Doc two says goodbye.", mentioned_at=T0, document_id="d2", tags=["y"])
    assert bank.forget(document_id="d1") == 1
    assert bank.stats()["episodes"] == 1
    assert bank.forget(tags=["x"]) == 0
    assert bank.forget(tags=["y"]) == 1
    assert bank.stats()["memories"] == 0 and bank.stats()["episodes"] == 0
    with pytest.raises(agentmem.InvalidInputError):
        bank.forget()


def test_memories_select_by_tags_and_document_like_forget(mem):
    bank = mem.bank("select")
    bank.retain("Doc one says hello.", mentioned_at=T0, document_id="d1", tags=["x"])
    bank.retain("Doc two says goodbye.", mentioned_at=T0, document_id="d2", tags=["x", "y"])
    texts = lambda **kw: [m.text for m in bank.memories(**kw)]  # noqa: E731
    assert texts() == ["Doc one says hello.", "Doc two says goodbye."]  # oldest first
    assert texts(tags=["y"]) == ["Doc two says goodbye."]
    assert texts(tags=["x"], document_id="d1") == ["Doc one says hello."]
    assert texts(tags=["y"], document_id="d1") == []
    assert texts(tags=["x"], limit=1) == ["Doc one says hello."]
    with pytest.raises(agentmem.InvalidInputError):
        bank.memories(document_id=42)
    with pytest.raises(agentmem.InvalidInputError):
        bank.memories(limit=-1)


def test_delete_bank_removes_it_and_a_new_bank_of_that_name_starts_empty(mem):
    bank = mem.bank("temp")
    bank.retain("Short-lived fact about kiwis.", mentioned_at=T0)
    mem.delete_bank("temp")
    assert "temp" not in mem.banks()
    fresh = mem.bank("temp")
    assert fresh.memories() == [] and len(fresh.recall("kiwis")) == 0
    with pytest.raises(agentmem.NotFoundError):
        mem.delete_bank("never-existed")


CRASH_SCRIPT = textwrap.dedent(
    """
    import os, sys
    import agentmem
    from agentmem.store import vectors

    def crash(*args, **kwargs):
        os._exit(9)  # the process dies after the DuckDB commit, before Chroma has the vectors

    mem = agentmem.AgentMemory(sys.argv[1])
    bank = mem.bank("crashy")
    bank.retain("Fact stored before the crash: the vault code is 7781.", mentioned_at="2025-01-01")
    mem._engine.vectors.flush()  # the first fact's vector is in Chroma
    vectors.VectorStore.upsert = crash
    bank.retain("Fact acknowledged by DuckDB only: the gate code is 4410.",
                mentioned_at="2025-01-02")
    mem.close()  # writes the staged vector: the process dies there
    """
)


@pytest.mark.duckdb_only(
    "the crash window between DuckDB and Chroma; PostgreSQL writes vectors in the rows' transaction"
)
def test_crash_between_duckdb_and_chroma_is_repaired_on_next_open(store_path):
    proc = subprocess.run([sys.executable, "-c", CRASH_SCRIPT, str(store_path)], timeout=120)
    assert proc.returncode == 9
    with agentmem.AgentMemory(store_path) as mem:
        bank = mem.bank("crashy")
        assert len(bank.memories()) == 2
        hit = bank.recall("gate code", strategies=["semantic"]).hits[0]
        assert hit.text == "Fact acknowledged by DuckDB only: the gate code is 4410."
        assert mem._engine.db.fetchall("SELECT count(*) FROM vector_journal")[0][0] == 0


@pytest.mark.duckdb_only("DuckDB's one-writer file lock; any number of processes share PostgreSQL")
def test_a_second_process_gets_a_clear_error_pointing_to_server_mode(store_path):
    with agentmem.AgentMemory(store_path):
        script = (
            "import sys, agentmem\n"
            "try:\n    agentmem.AgentMemory(sys.argv[1])\n"
            "except agentmem.StoreLockedError as exc:\n    print(exc); sys.exit(3)\n"
        )
        proc = subprocess.run(
            [sys.executable, "-c", script, str(store_path)],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert proc.returncode == 3, proc.stderr
    assert "agentmem serve" in proc.stdout


AFTER_SCRIPT = textwrap.dedent(
    """
    import sys
    import agentmem

    with agentmem.AgentMemory(sys.argv[1]) as mem:
        mem.bank("b").retain("Pietro studies octopuses in Palermo.", mentioned_at="2025-01-02")
    """
)


@pytest.mark.duckdb_only("an embedded store written in turn by two processes")
def test_a_store_reopened_after_another_process_wrote_to_it_reads_what_it_wrote(store_path):
    with agentmem.AgentMemory(store_path) as mem:
        bank = mem.bank("b")
        bank.retain("Giulia is a marine biologist in Naples.", mentioned_at="2025-01-01")
        assert bank.recall("marine biologist", strategies=["semantic"]).hits
    proc = subprocess.run(
        [sys.executable, "-c", AFTER_SCRIPT, str(store_path)], capture_output=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    # Reopened in this process, which had read the vector store before the other one wrote.
    with agentmem.AgentMemory(store_path) as mem:
        bank = mem.bank("b")
        hits = bank.recall("Who studies octopuses?", strategies=["semantic"], top_k=2).hits
        assert hits[0].text == "Pietro studies octopuses in Palermo."
        assert bank.check_integrity().ok


def test_temporary_store_is_removed_on_close():
    mem = agentmem.AgentMemory()
    path = mem.path
    mem.bank("t").retain("Temporary fact.", mentioned_at=T0)
    mem.close()
    mem.close()  # closing twice is fine
    assert not path.exists()
    with pytest.raises(agentmem.StorageError):
        mem.bank("t")


def test_reopening_a_bank_with_another_embedder_is_refused(store_path):
    from agentmem.testing import HashEmbedder

    with agentmem.AgentMemory(store_path) as mem:
        mem.bank("minilm").retain("Vectors from MiniLM.", mentioned_at=T0)
    with agentmem.AgentMemory(store_path, embedder=HashEmbedder()) as mem:
        with pytest.raises(agentmem.InvalidInputError, match="embedder"):
            mem.bank("minilm")
        mem.bank("hashed").retain("Vectors from hashing.", mentioned_at=T0)


def test_a_store_made_with_the_fp32_model_keeps_it_when_reopened(store_path, tmp_path):
    from agentmem.models.embedder import MINILM_DYNAMIC_NAME, MINILM_NAME, MiniLMEmbedder

    fp32 = MiniLMEmbedder(dynamic_int8=False)
    with agentmem.AgentMemory(store_path, embedder=fp32) as mem:
        mem.bank("old").retain("Alice moved to Lisbon in June 2024.", mentioned_at=T0)
    with agentmem.AgentMemory(store_path) as mem:
        assert mem.embedder.name == MINILM_NAME
        hits = mem.bank("old").recall("Where does Alice live now?", now=T1).hits
        assert hits[0].text == "Alice moved to Lisbon in June 2024."
        mem.bank("new").retain("Bob likes green tea.", mentioned_at=T0)
    with agentmem.AgentMemory(store_path) as mem:
        assert [h.text for h in mem.bank("new").recall("What does Bob drink?", now=T1)] == [
            "Bob likes green tea."
        ]
    with agentmem.AgentMemory(tmp_path / "fresh") as mem:
        mem.bank("b").retain("Carol plays the cello.", mentioned_at=T0)
        assert mem.embedder.name == MINILM_DYNAMIC_NAME
