"""Crash safety under SIGKILL, and many threads sharing one AgentMemory."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections import Counter
from datetime import timedelta
from pathlib import Path

import agentmem
from agentmem.store.records import load_pieces
from agentmem.testing import HashEmbedder

# Bulk-retains batches of ten facts forever, printing "id code" for each fact of a batch once
# retain has returned (acknowledged). A low rebuild threshold puts keyword-index rebuilds
# among the points the kill can land on. Each turn holds two sentences, so each fact also
# stores its piece vectors (retain/pieces.py), written with the rows. With "recall" it also
# recalls after each batch (reinforcing: a write) with the bank's vectors copied whole on a
# thread, a few at a time (the path of a bank too large for the exact in-process copy), and
# sometimes forgets a fact, printing "forgetting id" first.
WRITER = textwrap.dedent(
    """
    import random, sys
    import agentmem
    import agentmem.store.vector_copy as vector_copy
    from agentmem.testing import HashEmbedder

    config = agentmem.EngineConfig(keyword_rebuild_min=40, keyword_rebuild_fraction=0.0)
    mem = agentmem.AgentMemory(sys.argv[1], embedder=HashEmbedder(), config=config)
    reading = sys.argv[3] == "recall"
    if reading:
        vector_copy.LOAD_BATCH = 7
        embedded = getattr(mem._engine.vectors, "_store", None)  # PostgreSQL's holds no copy
        if embedded is not None:
            embedded._flat = None
    bank = mem.bank("crash")
    batch = int(sys.argv[2])
    rng = random.Random(batch)
    while True:
        codes = [f"K{batch}X{j}" for j in range(10)]
        said = "Locker code {} is for Ann. She keeps it at home."
        messages = [
            {"role": "user", "name": "Ann", "content": said.format(code)} for code in codes
        ]
        result = bank.retain(messages, mentioned_at="2025-01-01", document_id=f"b{batch}")
        lines = [f"{m.id} {code}" for m, code in zip(result.memories, codes, strict=True)]
        sys.stdout.write("\\n".join(lines) + "\\n")
        sys.stdout.flush()
        if reading:
            bank.recall(f"Which locker code is K{batch}X3?", top_k=5)
            if rng.random() < 0.3:
                sys.stdout.write(f"forgetting {result.memories[0].id}\\n")
                sys.stdout.flush()
                bank.forget(ids=[result.memories[0].id])
        batch += 1
    """
)


# Retains where Ann lives, a new place a call, forever (each statement supersedes the one
# before), printing "id n" once retain has returned.
MOVER = textwrap.dedent(
    """
    import sys
    from datetime import datetime, timedelta, UTC
    import agentmem
    from agentmem.testing import HashEmbedder

    mem = agentmem.AgentMemory(sys.argv[1], embedder=HashEmbedder())
    bank = mem.bank("moves")
    n = int(sys.argv[2])
    while True:
        said = datetime(2025, 1, 1, tzinfo=UTC) + timedelta(hours=n)
        message = {"role": "user", "name": "Ann", "content": f"I live in Town{n} now."}
        [memory] = bank.retain([message], mentioned_at=said).memories
        sys.stdout.write(f"{memory.id} {n}\\n")
        sys.stdout.flush()
        n += 1
    """
)


def _run_and_kill(
    store: Path,
    first_batch: int,
    rng: random.Random,
    mode: str = "retain",
    *,
    script: str = WRITER,
    lines_per_batch: int = 10,
) -> tuple[dict[str, str], set[str]]:
    """Start the writer, SIGKILL it at a random moment; return the acknowledged facts and
    those it was forgetting (forgotten, or maybe not: the kill may have come first)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", script, str(store), str(first_batch), mode],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    wanted_batches = rng.randint(1, 6)
    lines: list[str] = []
    for line in proc.stdout:
        lines.append(line)
        if sum(not x.startswith("forgetting") for x in lines) >= wanted_batches * lines_per_batch:
            break
    time.sleep(rng.uniform(0, 0.4))  # land inside a later retain (recall, forget)
    proc.send_signal(signal.SIGKILL)
    rest, _ = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    # Lines printed before the kill were acknowledged too; a cut-off last line was not.
    lines += [line for line in rest.splitlines(keepends=True) if line.endswith("\n")]
    forgetting = {line.split()[1] for line in lines if line.startswith("forgetting")}
    acknowledged = dict(line.split() for line in lines if not line.startswith("forgetting"))
    return acknowledged, forgetting


def test_sigkill_at_random_points_loses_no_acknowledged_memory(store_path):
    rng = random.Random(int(os.environ.get("AGENTMEM_CRASH_SEED", "20251")))
    acknowledged: dict[str, str] = {}
    for run in range(4):
        acknowledged |= _run_and_kill(store_path, first_batch=run * 1000, rng=rng)[0]
        with agentmem.AgentMemory(store_path, embedder=HashEmbedder()) as mem:
            report = mem.check_integrity()
            assert report.ok, report.problems
            assert report.in_flight == 0  # the journal was replayed on open
            bank = mem.bank("crash")
            stored = {m.id: m for m in bank.memories()}
            assert set(acknowledged) <= set(stored)
            # A retain is all or nothing: every stored batch has its ten facts.
            per_episode = Counter(m.episode_id for m in stored.values())
            assert set(per_episode.values()) == {10}
            assert report.memories == report.vectors == len(stored)
            # Every stored fact has its two pieces: they commit with its row or not at all.
            pieces = load_pieces(mem._engine.db, "crash", list(stored), HashEmbedder().dimension)
            assert set(pieces) == set(stored)
            assert {p.shape[0] for p in pieces.values()} == {2}
            sample = rng.sample(sorted(acknowledged), min(15, len(acknowledged)))
            # Chroma holds each acknowledged fact's own vector (compared exactly: an HNSW
            # query over thousands of near-identical texts may rank a neighbour first).
            vectors = mem._engine.vectors.get_vectors(bank._collection, sample)
            expected = HashEmbedder().embed([stored[i].text for i in sample])
            for memory_id, vector in zip(sample, expected, strict=True):
                assert memory_id in vectors
                assert float(vectors[memory_id] @ vector) > 0.999
            for memory_id in sample:
                code = acknowledged[memory_id]
                # The code alone finds it by keyword.
                hits = bank.recall(code, strategies=["keyword"], top_k=50, reinforce=False)
                assert memory_id in {h.memory.id for h in hits}, code


def test_sigkill_while_recalls_copy_vectors_and_forget_loses_nothing(store_path):
    rng = random.Random(int(os.environ.get("AGENTMEM_CRASH_SEED", "20251")))
    acknowledged: dict[str, str] = {}
    forgetting: set[str] = set()
    for run in range(3):
        written, forgot = _run_and_kill(store_path, run * 1000, rng, mode="recall")
        acknowledged |= written
        forgetting |= forgot
        with agentmem.AgentMemory(store_path, embedder=HashEmbedder()) as mem:
            report = mem.check_integrity()
            assert report.ok, report.problems
            bank = mem.bank("crash")
            stored = {m.id for m in bank.memories()}
            assert set(acknowledged) - forgetting <= stored
            assert report.memories == report.vectors == len(stored)
            memory_id = rng.choice(sorted(set(acknowledged) & stored))
            # The code alone finds it by keyword (its words and vector are the others').
            hits = bank.recall(acknowledged[memory_id], strategies=["keyword"], top_k=50)
            assert memory_id in {h.memory.id for h in hits}


def test_sigkill_between_superseding_statements_keeps_the_chain(store_path):
    """Each statement of where Ann lives supersedes the one before; killed at random and
    reopened, the stored ones still form one chain, and the next retain continues it."""
    rng = random.Random(int(os.environ.get("AGENTMEM_CRASH_SEED", "20251")))
    acknowledged: dict[str, str] = {}
    for run in range(3):
        written, _ = _run_and_kill(store_path, run * 1000, rng, script=MOVER, lines_per_batch=3)
        acknowledged |= written
        with agentmem.AgentMemory(store_path, embedder=HashEmbedder()) as mem:
            report = mem.check_integrity()
            assert report.ok, report.problems
            bank = mem.bank("moves")
            stored = sorted(bank.memories(), key=lambda m: m.mentioned_at)
            assert set(acknowledged) <= {m.id for m in stored}
            chain = list(zip(stored[1:], stored[:-1], strict=True))
            assert {(new.id, old.id) for new, old in chain} <= _supersedes(bank)
            said = stored[-1].mentioned_at + timedelta(minutes=1)
            message = {"role": "user", "name": "Ann", "content": f"I live in Last{run} now."}
            [last] = bank.retain([message], mentioned_at=said).memories
            assert (last.id, stored[-1].id) in _supersedes(bank)
            assert mem.check_integrity().ok


def _supersedes(bank: agentmem.MemoryBank) -> set[tuple[str, str]]:
    """The bank's ``supersedes`` links, (newer, older), as its graph shows them."""
    edges = bank.graph().edges(data=True)
    return {(src, dst) for src, dst, data in edges if data["kind"] == "supersedes"}


def test_threads_mixing_retain_recall_and_forget_lose_nothing(store_path):
    threads, ops_per_thread = 6, 250
    with agentmem.AgentMemory(store_path, embedder=HashEmbedder()) as mem:
        banks = [mem.bank("left"), mem.bank("right")]
        errors: list[BaseException] = []
        retained: dict[str, set[str]] = {"left": set(), "right": set()}
        forgotten: dict[str, set[str]] = {"left": set(), "right": set()}
        foreign_hits: list[str] = []
        lock = threading.Lock()

        def worker(index: int) -> None:
            rng = random.Random(index)
            own: list[tuple[str, str]] = []
            try:
                for op in range(ops_per_thread):
                    bank = banks[rng.randrange(2)]
                    roll = rng.random()
                    if roll < 0.45:
                        code = f"T{index}N{op}"
                        result = bank.retain(
                            f"Thread {index} stored code {code} about Berlin.",
                            mentioned_at="2025-01-01",
                            tags=[f"t{index}"],
                        )
                        ids = {m.id for m in result}
                        own.extend((bank.id, i) for i in ids)
                        with lock:
                            retained[bank.id] |= ids
                    elif roll < 0.85:
                        strategies = rng.choice([None, ["semantic"], ["keyword"]])
                        result = bank.recall(
                            f"code T{rng.randrange(threads)}N{rng.randrange(op + 1)}",
                            strategies=strategies,
                            reinforce=rng.random() < 0.5,
                        )
                        foreign_hits.extend(
                            h.memory.id for h in result if h.memory.bank_id != bank.id
                        )
                    elif own:
                        bank_id, memory_id = own.pop(rng.randrange(len(own)))
                        assert mem.bank(bank_id).forget(memory_id) == 1
                        with lock:
                            forgotten[bank_id].add(memory_id)
            except BaseException as exc:  # reported below, with the thread's traceback
                errors.append(exc)
                raise

        pool = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
        for thread in pool:
            thread.start()
        for thread in pool:
            thread.join()

        assert not errors, errors
        assert not foreign_hits
        for bank in banks:
            expected = retained[bank.id] - forgotten[bank.id]
            assert {m.id for m in bank.memories()} == expected
            assert bank.stats()["memories"] == len(expected)
            assert bank.stats()["episodes"] == len(expected)  # one fact per retain here
        report = mem.check_integrity()
        assert report.ok, report.problems
        total = sum(len(retained[b] - forgotten[b]) for b in retained)
        assert report.memories == report.vectors == total
        assert sum(len(r) for r in retained.values()) > threads * ops_per_thread * 0.35


def test_a_threads_first_read_never_waits_for_a_writer(store_path):
    """A new thread's first read opened its cursor under the write lock: a retain holding the
    lock while it waited on what such a read was computing (a cached_property, whose lock in
    Python 3.11 is one for all instances) hung the process (seen in the mixed-threads test)."""
    with agentmem.AgentMemory(store_path, embedder=HashEmbedder()) as mem:
        bank = mem.bank("b")
        bank.retain("Ana lives in Lisbon.", mentioned_at="2025-01-01")
        found: list[object] = []
        with mem._engine.db.write_lock:  # a writer in the middle of its work
            reader = threading.Thread(target=lambda: found.append(bank.memories()))
            reader.start()
            reader.join(timeout=30)
            assert not reader.is_alive(), "a read on a new thread waited for the writer"
        assert [m.text for m in found[0]] == ["Ana lives in Lisbon."]
        assert mem.check_integrity().ok


def test_one_recall_computing_its_query_holds_up_no_other_recall(store_path):
    """What a recall computes once (its query's period and embedding, which may first load the
    bank's graph: seconds on a large bank) was computed under one lock for all recalls."""
    gate, inside = threading.Event(), threading.Event()

    class SlowForOneQuery(HashEmbedder):
        def embed_query(self, text: str):  # noqa: ANN202
            if "slow" in text:
                inside.set()
                gate.wait(30)
            return super().embed_query(text)

    with agentmem.AgentMemory(store_path, embedder=SlowForOneQuery()) as mem:
        for bank_id in ("a", "b"):
            mem.bank(bank_id).retain("Ana lives in Lisbon.", mentioned_at="2025-01-01")
        slow = threading.Thread(target=lambda: mem.bank("a").recall("slow Lisbon"))
        slow.start()
        assert inside.wait(30)
        found: list[object] = []
        fast = threading.Thread(target=lambda: found.append(mem.bank("b").recall("Lisbon")))
        fast.start()
        fast.join(timeout=30)
        held_up = fast.is_alive()
        gate.set()
        slow.join()
        fast.join()
        assert not held_up, "a recall of another bank waited for the slow one's query"
        assert [h.memory.text for h in found[0]] == ["Ana lives in Lisbon."]


def test_last_conversation_follows_every_write(store_path):
    # "Our last conversation" is resolved from the bank's newest mention time, which recall
    # caches; each retain and forget must move it.
    with agentmem.AgentMemory(store_path, embedder=HashEmbedder()) as mem:
        bank = mem.bank("talks")
        first = bank.retain("We talked about the garden shed.", mentioned_at="2025-01-01T10:00")
        query = "what did we discuss in our last conversation"
        assert [h.memory.id for h in bank.recall(query, strategies=["temporal"])] == [
            first.memories[0].id
        ]
        second = bank.retain("We talked about the boat engine.", mentioned_at="2025-02-01T10:00")
        assert [h.memory.id for h in bank.recall(query, strategies=["temporal"])] == [
            second.memories[0].id
        ]
        bank.forget(second.memories[0].id)
        assert [h.memory.id for h in bank.recall(query, strategies=["temporal"])] == [
            first.memories[0].id
        ]
