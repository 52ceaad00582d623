"""Writes racing ``delete_bank``: each either commits before the deletion or raises
NotFoundError; the store stays whole, and a bank re-created under the same id starts empty."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import agentmem
from agentmem.retain.extract import OfflineExtractor
from agentmem.testing import FakeLLM, HashEmbedder
from tests.conftest import CONVERSATION, T0


class GatedExtractor(OfflineExtractor):
    """The offline extractor, held at a gate: the test deletes the bank while it waits."""

    def __init__(self) -> None:
        super().__init__()
        self.started = threading.Event()
        self.gate = threading.Event()

    def extract(self, content):  # noqa: ANN001, ANN201
        self.started.set()
        assert self.gate.wait(30)
        return super().extract(content)


@pytest.fixture
def gated(tmp_path: Path) -> Iterator[tuple[agentmem.AgentMemory, GatedExtractor]]:
    extractor = GatedExtractor()
    with agentmem.AgentMemory(
        tmp_path / "store", embedder=HashEmbedder(), extractor=extractor
    ) as mem:
        yield mem, extractor


def assert_empty_rebirth(mem: agentmem.AgentMemory, bank_id: str) -> None:
    """The store is whole and ``bank_id`` re-created holds nothing, nowhere."""
    report = mem.check_integrity()
    assert report.ok, report.problems
    engine = mem._engine
    for cache in (engine.graphs, engine.entity_indexes, engine.resolvers, engine.dated_facts):
        assert bank_id not in cache
    bank = mem.bank(bank_id)
    assert bank.memories() == [] and bank.entities() == []
    assert bank.stats()["episodes"] == 0 and bank.stats()["links"] == 0
    assert engine.vectors.ids(bank._collection) == set()
    for strategies in (["keyword"], ["semantic"], None):
        assert bank.recall("Alice Berlin Quixotrix", strategies=strategies).hits == []
    assert bank.graph().number_of_nodes() == 0
    assert mem.check_integrity().ok


def test_a_retain_whose_bank_is_deleted_while_it_extracts_raises_not_found(gated):
    mem, extractor = gated
    bank = mem.bank("x")
    outcome: list[BaseException | agentmem.RetainResult] = []

    def retain() -> None:
        try:
            outcome.append(bank.retain(CONVERSATION, mentioned_at=T0))
        except BaseException as exc:  # noqa: BLE001 - the test inspects it
            outcome.append(exc)

    worker = threading.Thread(target=retain)
    worker.start()
    assert extractor.started.wait(30)
    mem.delete_bank("x")
    mem.bank("x")  # re-created while the deleted bank's retain is still running
    extractor.gate.set()
    worker.join(30)
    (result,) = outcome
    assert isinstance(result, agentmem.NotFoundError)
    assert_empty_rebirth(mem, "x")


def test_a_deleted_banks_handle_raises_not_found_and_writes_nothing(tmp_path):
    with agentmem.AgentMemory(tmp_path / "s", embedder=HashEmbedder()) as mem:
        stale = mem.bank("x")
        first, second = stale.retain(CONVERSATION[:2], mentioned_at=T0).memories
        mem.delete_bank("x")
        calls: list[Callable[[], object]] = [
            lambda: stale.retain("Alice lives in Berlin.", mentioned_at=T0),
            lambda: stale.recall("Berlin"),
            lambda: stale.get(first.id),
            lambda: stale.memories(),
            lambda: stale.forget(first.id),
            lambda: stale.link(first.id, second.id, "related"),
            lambda: stale.entities(),
            lambda: stale.entity("Alice"),
            lambda: stale.add_alias("Alice", "Ali"),
            lambda: stale.split_alias("Alice", "Ali"),
            lambda: stale.configure(rerank=False),
            lambda: stale.reflect_commit("q", observations=["Alice likes Berlin."]),
            lambda: stale.stats(),
            lambda: stale.graph(),
            lambda: stale.export(tmp_path / "x.jsonl"),
        ]
        for call in calls:
            with pytest.raises(agentmem.NotFoundError):
                call()
        with pytest.raises(agentmem.NotFoundError):
            mem.delete_bank("x")
        assert mem.banks() == []
        assert_empty_rebirth(mem, "x")
        mem.bank("x").retain("Alice lives in Berlin.", mentioned_at=T0)  # a new handle works
        with pytest.raises(agentmem.NotFoundError):  # the old one still does not
            stale.retain("Alice lives in Berlin.", mentioned_at=T0)
        assert len(mem.bank("x").memories()) == 1 and mem.check_integrity().ok


def _outcome(call: Callable[[], object]) -> BaseException | None:
    try:
        call()
    except agentmem.NotFoundError as exc:
        return exc
    return None


def _write(bank: agentmem.MemoryBank, seeded: list[agentmem.Memory], write: str, n: int) -> None:
    if write == "retain":
        bank.retain(CONVERSATION, mentioned_at=T0)
    elif write == "forget":
        bank.forget([m.id for m in seeded[:2]])
    elif write == "link":
        bank.link(seeded[0].id, seeded[-1].id, "caused_by")
    elif write == "add_alias":
        bank.add_alias("Alice", f"Al{n}")
    elif write == "split_alias":
        bank.split_alias("Alice", "Ali")
    elif write == "configure":
        bank.configure(rerank=False)
    else:
        bank.reflect_commit(
            "What does Alice drink?", observations=["Alice drinks tea."], cited_ids=[seeded[0].id]
        )


@pytest.mark.parametrize(
    "write",
    ["retain", "forget", "link", "add_alias", "split_alias", "configure", "reflect_commit"],
)
def test_writes_racing_delete_bank_in_threads(tmp_path, write):
    """Real threads, random delays: every write succeeds before the delete or raises
    NotFoundError, and nothing of the deleted bank survives into its successor."""
    rng = random.Random(write)
    with agentmem.AgentMemory(tmp_path / "s", embedder=HashEmbedder()) as mem:
        for n in range(8):
            bank = mem.bank("x")
            seeded = bank.retain(CONVERSATION, mentioned_at=T0).memories
            bank.add_alias("Alice", "Ali")
            outcomes: list[BaseException | None] = []
            worker = threading.Thread(
                target=lambda b=bank, s=seeded, n=n, out=outcomes: out.append(
                    _outcome(lambda: _write(b, s, write, n))
                )
            )
            delay = threading.Timer(rng.uniform(0, 0.02), lambda: mem.delete_bank("x"))
            worker.start()
            delay.start()
            worker.join(60)
            delay.join(60)
            assert len(outcomes) == 1, f"round {n}: the write raised something else"
            assert_empty_rebirth(mem, "x")
            mem.delete_bank("x")


def test_consolidation_of_a_bank_deleted_while_the_model_thinks_writes_nothing(tmp_path):
    opened: list[agentmem.AgentMemory] = []

    def delete_then_create(messages):  # noqa: ANN001, ANN202
        opened[0].delete_bank("b")  # the user deletes the bank during the consolidation call
        opened[0].bank("b")
        return {"actions": [{"action": "create", "text": "Alice prefers tea."}]}

    llm = FakeLLM(
        {
            "extract": [
                {"facts": [{"text": "Alice ordered tea at the cafe.", "message_index": 0}]}
            ],
            "consolidate": [delete_then_create],
        }
    )
    with agentmem.AgentMemory(tmp_path / "s", embedder=HashEmbedder(), llm=llm) as mem:
        opened.append(mem)
        mem.bank("b").retain("Alice ordered tea.", mentioned_at=T0)
        assert mem.bank("b").wait_for_consolidation(timeout=30)
        assert len(llm.calls_for("consolidate")) == 1
        bank = mem.bank("b")
        assert bank.consolidation_error is None
        assert bank.observations() == [] and bank.memories() == []
        assert mem.check_integrity().ok


def test_an_interrupted_drop_is_finished_on_the_next_open(tmp_path):
    """A crash between deleting a bank's rows and dropping its collection: the journalled drop
    runs on the next open."""
    path = tmp_path / "s"
    with agentmem.AgentMemory(path, embedder=HashEmbedder()) as mem:
        bank = mem.bank("x")
        bank.retain(CONVERSATION, mentioned_at=T0)
        collection = bank._collection
        engine = mem._engine
        engine.vectors.flush()  # the vectors are in Chroma (staged ones of deleted rows never are)
        real_drop = engine.vectors.drop
        engine.vectors.drop = lambda name: (_ for _ in ()).throw(agentmem.StorageError("crash"))
        with pytest.raises(agentmem.StorageError):
            mem.delete_bank("x")
        engine.vectors.drop = real_drop
        assert mem.banks() == []
        assert len(engine.vectors.ids(collection)) == len(CONVERSATION)
    with agentmem.AgentMemory(path, embedder=HashEmbedder()) as mem:
        client = mem._engine.vectors._store._client
        assert collection not in {c.name for c in client.list_collections()}
        assert mem.check_integrity().ok
        assert mem._engine.db.fetchall("SELECT count(*) FROM vector_journal")[0][0] == 0
