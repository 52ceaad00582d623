"""The slots supersession reads in a fact are kept with it (``memories.statement_slots``): a
process reading a bank's statements for the first time parses none of them again and makes
the links a process that parsed them makes. Slots kept under other rules, damaged, or never
kept (a store written before, an import) are parsed as before, and kept from then on."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import pytest

import agentmem
from agentmem.models.nlp import load_nlp
from agentmem.retain import slots
from agentmem.testing import HashEmbedder
from tests.conftest import downgrade_store

T0 = datetime(2024, 1, 1, tzinfo=UTC)
CITIES = ["Berlin", "Lisbon", "Porto", "Rome", "Oslo", "Vienna"]


def _said(name: str, content: str) -> list[dict[str, str]]:
    return [{"role": "user", "name": name, "content": content}]


def _history(store: Path) -> None:
    """Ana's homes and jobs over twelve days, one statement a day, and some chat."""
    with agentmem.AgentMemory(store, embedder=HashEmbedder()) as mem:
        bank = mem.bank("b")
        for day in range(12):
            city = CITIES[day % len(CITIES)]
            said = f"I live in {city}." if day % 3 else f"I work at Acme in {city} now."
            bank.retain(_said("Ana", said), mentioned_at=T0 + timedelta(days=day))
            bank.retain(_said("Ben", "Thanks, that helps!"), mentioned_at=T0 + timedelta(days=day))


def _new_process() -> None:
    """What a new process starts with: no text read before."""
    slots._PARSED.clear()


class _Counting:
    """spaCy's pipeline, counting the texts supersession has it parse."""

    def __init__(self, parsed: list[str]) -> None:
        self._nlp = load_nlp()
        self._parsed = parsed

    def pipe(self, texts):  # noqa: ANN001, ANN201
        texts = list(texts)
        self._parsed.extend(texts)
        return self._nlp.pipe(texts)


def _move(
    store: Path, parsed: list[str], monkeypatch: pytest.MonkeyPatch, city: str = "Madrid"
) -> set[str]:
    """Retain one more move of Ana's in a new process; the texts of what it supersedes."""
    _new_process()
    counting = _Counting(parsed)
    monkeypatch.setattr(slots, "load_nlp", lambda: counting)
    with agentmem.AgentMemory(store, embedder=HashEmbedder()) as mem:
        bank = mem.bank("b")
        (moved,) = bank.retain(
            _said("Ana", f"We moved to {city} last week."), mentioned_at=T0 + timedelta(days=30)
        ).memories
        graph = bank.graph()
        replaced = {
            bank.get(dst).text
            for _, dst, data in graph.out_edges(moved.id, data=True)
            if data["kind"] == "supersedes"
        }
        assert bank.check_integrity().ok
    return replaced


def _set_kept(store: Path, value: str | None) -> None:
    con = duckdb.connect(str(store / "agentmem.duckdb"))
    con.execute(
        "UPDATE memories SET statement_slots = ? WHERE statement_slots IS NOT NULL", [value]
    )
    con.close()


@pytest.mark.duckdb_only("reads and edits the embedded store file")
def test_a_new_process_parses_no_stored_statement_and_links_the_same(tmp_path, monkeypatch):
    store = tmp_path / "store"
    _history(store)
    con = duckdb.connect(str(store / "agentmem.duckdb"))
    kept = con.execute(
        "SELECT text, statement_slots FROM memories WHERE statement_slots IS NOT NULL"
    ).fetchall()
    con.close()
    # Ana's statements each keep their slot; "Thanks, that helps!" may fill none: nothing kept.
    assert len(kept) == 12 and all(text.startswith("Ana: I ") for text, _ in kept)
    parsed: list[str] = []
    replaced = _move(store, parsed, monkeypatch)
    assert parsed == []  # the new move came parsed from extraction; the stored ones were kept
    assert replaced == {"Ana: I live in Vienna."}  # day 11: the last home before the move

    # A copy read without its kept slots (as a store written before them) parses every stored
    # statement of Ana's, and links the same.
    copy = tmp_path / "copy"
    shutil.copytree(store, copy)
    _set_kept(copy, None)
    parsed, reparsed = [], []
    moved = {"Ana: We moved to Madrid last week."}
    assert _move(store, parsed, monkeypatch, "Seville") == moved
    assert _move(copy, reparsed, monkeypatch, "Seville") == moved
    assert parsed == []
    assert {"We moved to Madrid last week.", "I live in Vienna."} <= set(reparsed)


@pytest.mark.duckdb_only("edits the embedded store file")
@pytest.mark.parametrize(
    "damaged",
    ['["another rules digest", [["ana", "home", "rome", false]]]', "not json", "[1]", "{}"],
)
def test_slots_kept_under_other_rules_or_damaged_are_parsed_again(tmp_path, monkeypatch, damaged):
    store = tmp_path / "store"
    _history(store)
    _set_kept(store, damaged)
    parsed: list[str] = []
    assert _move(store, parsed, monkeypatch) == {"Ana: I live in Vienna."}
    assert "I live in Vienna." in parsed
    # Parsed again, they are kept again: the next process parses none of them.
    parsed = []
    assert _move(store, parsed, monkeypatch, "Seville") == {"Ana: We moved to Madrid last week."}
    assert parsed == []


@pytest.mark.duckdb_only("the upgrade of an embedded store file")
def test_a_store_written_before_kept_slots_is_upgraded_and_links_as_before(tmp_path, monkeypatch):
    store = tmp_path / "store"
    _history(store)
    downgrade_store(store, "3", [("memories", "statement_slots")])
    parsed: list[str] = []
    assert _move(store, parsed, monkeypatch) == {"Ana: I live in Vienna."}
    assert "I live in Vienna." in parsed
    # From then on the new statements keep their slots, and so do the stored ones parsed
    # again: Ana's homes (read for the move) but not her jobs (no move asked for them).
    con = duckdb.connect(str(store / "agentmem.duckdb"))
    kept = con.execute(
        "SELECT text FROM memories WHERE statement_slots IS NOT NULL ORDER BY seq"
    ).fetchall()
    con.close()
    assert [text for (text,) in kept] == [
        *(f"Ana: I live in {CITIES[day % len(CITIES)]}." for day in range(12) if day % 3),
        "Ana: We moved to Madrid last week.",
    ]
    parsed = []
    assert _move(store, parsed, monkeypatch, "Seville") == {"Ana: We moved to Madrid last week."}
    assert parsed == []


@pytest.mark.duckdb_only("edits the embedded store file")
@pytest.mark.parametrize("damaged", ['["another rules digest", []]', None])
def test_repair_keeps_again_the_slots_read_under_other_rules(tmp_path, monkeypatch, damaged):
    """An upgrade (slots kept under other rules) or a store written before them: ``repair()``
    reads and keeps them all, so the retains after it parse none and link as before."""
    store = tmp_path / "store"
    _history(store)
    with agentmem.AgentMemory(store, embedder=HashEmbedder()) as mem:
        # A family's word in a text that fills no slot: nothing to keep, now or later.
        mem.bank("b").retain(_said("Ana", "I love working here."), mentioned_at=T0)
    _set_kept(store, damaged)
    with agentmem.AgentMemory(store, embedder=HashEmbedder()) as mem:
        assert mem.repair().slots == 12  # Ana's statements; Ben's thanks hold no family word
        assert mem.repair().slots == 0  # kept: nothing left to read
        assert mem.check_integrity().ok
    parsed: list[str] = []
    assert _move(store, parsed, monkeypatch) == {"Ana: I live in Vienna."}
    assert parsed == []
