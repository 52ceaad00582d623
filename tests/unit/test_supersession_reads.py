"""Supersession's stored statements, read per key from the rows stored since the last ask
(``StoredStatements``), give the links the scan of the whole bank gives: the reference below
is that scan (the implementation before it, with the chain rule stated plainly), run beside
every retain of a mixed history (updates, plans and their changes, statements told late,
documents replaced, memories forgotten, retains rolled back, the bank deleted or imported
again, a second writer on the same store: another process, or a replica on PostgreSQL)."""

from __future__ import annotations

import random
import re
import tempfile
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentmem
from agentmem.retain import pipeline, supersession
from agentmem.retain.slots import FAMILY_WORDS, slots_of
from agentmem.retain.supersession import SUPERSEDES, Statement, _aware, supersedes
from agentmem.store.dialect import regex_search
from agentmem.testing import HashEmbedder

T0 = datetime(2024, 1, 1, tzinfo=UTC)
_CITIES = ["Berlin", "Lisbon", "Porto", "Rome", "Oslo"]
_ORGS = ["Acme", "Globex", "Initech"]
_SAID = [
    "I live in {city}.",
    "We moved to {city} last week.",
    "I work at {org} now.",
    "I started a new job at {org}.",
    "I quit my job.",
    "I also work at {org}.",
    "My new phone number is 555-01{n}.",
    "My favourite colour is {colour}.",
    "We're planning a trip to {city} in May.",
    "The {city} trip is cancelled.",
    # Changes of plan that name the plan or not: a change passed walking back may replace
    # whatever the new one does, and the walk stops there.
    "We cancelled the trip.",
    "We called off the trip to {city}.",
    "The meeting moved to Friday.",
    "We have a meeting with {org} next week.",
    "{name} moved to {city}.",
    "{name} works at {org}.",
    "Thanks, that helps!",
]


def reference_links(
    cur: Any,  # noqa: ANN401
    bank_id: str,
    new: Sequence[tuple[str, int, datetime, str]],
) -> list[tuple[str, str, str, float]]:
    """The links as a scan of the bank finds them, with the chain rule of
    ``supersession_links`` stated plainly (every pair looked at, no early stop)."""
    slots = slots_of([text for *_, text in new])
    statements = [
        Statement(memory_id, seq, when, tuple(found))
        for (memory_id, seq, when, _), found in zip(new, slots, strict=True)
        if found
    ]
    if not statements:
        return []
    wanted = sorted(
        {(slot.subject, slot.family.split()[0]) for s in statements for slot in s.slots}
    )
    either = " OR ".join(regex_search(cur, "text", f"words{n}") for n in range(len(wanted)))
    params: dict[str, object] = {"bank": bank_id, "new": [s.id for s in statements]}
    for n, (_, family) in enumerate(wanted):
        params[f"words{n}"] = FAMILY_WORDS[family]
    rows = [
        row
        for row in cur.execute(
            "SELECT id, seq, mentioned_at, text FROM memories WHERE bank_id = $bank AND "
            f"fact_type IN ('world', 'experience') AND NOT list_contains($new, id) AND ({either})",
            params,
        ).fetchall()
        # The subject of a slot is casefolded ("Strauß" → "strauss"), and so is the text.
        if any(
            subject in row[3].casefold() and re.search(FAMILY_WORDS[family], row[3], re.I)
            for subject, family in wanted
        )
    ]
    parsed = slots_of([text for *_, text in rows])
    older = [
        Statement(i, seq, _aware(when), tuple(found))
        for (i, seq, when, _), found in zip(rows, parsed, strict=True)
        if found
    ]
    # The chain rule as stated: in each slot, a later statement links to an earlier one it
    # replaces when none between them replaces it already.
    new_ids = {s.id for s in statements}
    pairs: dict[tuple[str, str], tuple[Statement, Statement]] = {}
    for key in {(slot.subject, slot.family) for s in statements for slot in s.slots}:
        chain = sorted(
            (s for s in [*older, *statements] if any(_in(slot, key) for slot in s.slots)),
            key=lambda s: (s.mentioned_at, s.seq),
        )
        for late, later in enumerate(chain):
            for early, earlier in enumerate(chain[:late]):
                if (later.id in new_ids or earlier.id in new_ids) and (
                    _replaces(later, earlier, key)
                    and not any(_replaces(x, earlier, key) for x in chain[early + 1 : late])
                ):
                    pairs[(later.id, earlier.id)] = (later, earlier)
    ordered = sorted(pairs.values(), key=lambda p: (p[0].order, p[1].order))
    return [(later.id, earlier.id, SUPERSEDES, 1.0) for later, earlier in ordered]


def _in(slot: Any, key: tuple[str, str]) -> bool:  # noqa: ANN401
    return (slot.subject, slot.family) == key


def _replaces(later: Statement, earlier: Statement, key: tuple[str, str]) -> bool:
    return any(
        supersedes(n, o) for n in later.slots if _in(n, key) for o in earlier.slots if _in(o, key)
    )


class _RolledBack(Exception):
    """Raised by a retain after its links were made: its transaction rolls back."""


#: One step of a history: ``(writer, what, said, document, days_late, pick)``; ``said`` is
#: indexes into _SAID and the fillers, ``pick`` chooses the memory forgotten.
_STEP = st.tuples(
    st.sampled_from([0, 0, 0, 1]),
    st.sampled_from(["retain"] * 8 + ["forget", "fail", "delete", "reimport"]),
    st.lists(st.integers(0, 10**6), min_size=1, max_size=4),
    st.one_of(st.none(), st.sampled_from([f"doc-{n}" for n in range(4)])),
    st.sampled_from([0, 0, 0, 3, 40]),
    st.integers(0, 10**6),
)


def _said(choice: int) -> dict[str, str]:
    rng = random.Random(choice)
    said = rng.choice(_SAID).format(
        city=rng.choice(_CITIES),
        org=rng.choice(_ORGS),
        n=rng.randrange(10, 14),
        colour=rng.choice(["green", "blue"]),
        name=rng.choice(["Stan", "Lena", "Jürgen Strauß"]),
    )
    return {"role": "user", "name": rng.choice(["Ana", "Ben", "Jürgen Strauß"]), "content": said}


def retain_history(store: object, steps: Sequence[tuple], bank_id: str = "b") -> int:
    """Run ``steps`` (:data:`_STEP`) into ``store`` through two AgentMemory (the second a
    writer the first does not see), checking every retain's links against the reference;
    returns how many supersedes links were made."""
    made: list[int] = []
    fail = [False]
    real = pipeline.supersession_links

    def checked(cur, bank_id, new, stored):  # noqa: ANN001, ANN202
        expected = reference_links(cur, bank_id, new)
        links = real(cur, bank_id, new, stored)
        assert links == expected
        made.append(len(links))
        if fail[0]:
            raise _RolledBack
        return links

    embedder = HashEmbedder()
    with (
        mock.patch.object(pipeline, "supersession_links", checked),
        agentmem.AgentMemory(store, embedder=embedder) as first,
        agentmem.AgentMemory(store, embedder=embedder) as second,
        tempfile.TemporaryDirectory() as scratch,
    ):
        for index, (writer, what, said, document, late, pick) in enumerate(steps):
            mem = (first, second)[writer]
            bank = mem.bank(bank_id)
            if what == "forget":
                memories = bank.memories()
                if memories:
                    bank.forget(memories[pick % len(memories)].id)
            elif what in ("delete", "reimport"):
                # The other AgentMemory's vectors staged for the bank's collection would be
                # written to a collection gone (not what this test is about).
                for each in (first, second):
                    each._engine.vectors.flush()
            if what == "delete":
                mem.delete_bank(bank_id)
            elif what == "reimport":
                bank.export(Path(scratch) / "bank.jsonl")
                mem.delete_bank(bank_id)
                mem.import_(Path(scratch) / "bank.jsonl", bank_id=bank_id)
            elif what in ("retain", "fail"):
                fail[0] = what == "fail"
                when = T0 + timedelta(days=index - late)
                try:
                    bank.retain([_said(c) for c in said], mentioned_at=when, document_id=document)
                except _RolledBack:
                    assert fail[0]
                fail[0] = False
    return sum(made)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(_STEP, min_size=1, max_size=20))
def test_links_read_from_the_rows_stored_since_are_those_of_a_scan(steps):
    with tempfile.TemporaryDirectory() as store:
        retain_history(Path(store) / "store", steps)


def _steps(seed: int, count: int = 70) -> list[tuple]:
    """A long history, mostly retains, whose links are many (the property's examples are
    short)."""
    rng = random.Random(seed)
    kinds = ["retain"] * 16 + ["forget", "forget", "fail", "delete", "reimport"]
    return [
        (
            int(rng.random() < 0.2),
            rng.choice(kinds),
            [rng.randrange(10**6) for _ in range(rng.randint(1, 4))],
            f"doc-{rng.randrange(6)}" if rng.random() < 0.4 else None,
            rng.randrange(60) if rng.random() < 0.2 else 0,
            rng.randrange(10**6),
        )
        for _ in range(count)
    ]


@pytest.mark.parametrize("seed", [1, 2])
def test_a_long_history_links_as_a_scan_does(tmp_path, seed):
    assert retain_history(tmp_path / "store", _steps(seed)) > 10


def test_a_history_links_as_a_scan_does_when_the_rows_gone_are_dropped_at_every_read(tmp_path):
    """The rows held are listed by the subjects they may be about; the entries of rows gone
    are dropped from those lists now and then (here: at every read)."""
    with mock.patch.object(supersession, "_STALE_ENTRIES", -(10**9)):
        assert retain_history(tmp_path / "store", _steps(3)) > 10


def test_an_older_plan_told_late_looks_up_the_rows_that_decide_its_links_only(tmp_path):
    """A plan made a hundred times, then one told late (dated before them all) and a change
    of it: each retain checks again only the stored rows its links depend on, not every plan
    its walk passed (every one of them, on each retain of an older conversation at 100k)."""
    looked_up: list[int] = []
    still_stored = supersession._still_stored

    def counted(cur: Any, bank_id: str, rows: dict[str, int]) -> set[str]:  # noqa: ANN401
        looked_up.append(len(rows))
        return still_stored(cur, bank_id, rows)

    def ana(text: str) -> dict[str, str]:
        return {"role": "user", "name": "Ana", "content": text}

    with agentmem.AgentMemory(tmp_path / "store", embedder=HashEmbedder()) as mem:
        bank = mem.bank("plans")
        for day in range(100):
            bank.retain(
                [ana(f"We're planning a trip to {_CITIES[day % 5]} in May.")],
                mentioned_at=T0 + timedelta(days=day + 10),
            )
        cancelled = bank.retain([ana("We cancelled the trip.")], mentioned_at=T0 + timedelta(200))
        with mock.patch.object(supersession, "_still_stored", counted):
            late = bank.retain([ana("We're planning a trip to Oslo in May.")], mentioned_at=T0)
            change = bank.retain(
                [ana("We called off the trip to Rome.")], mentioned_at=T0 + timedelta(300)
            )
        assert 0 < max(looked_up) <= 3, looked_up
        graph = bank.graph()
        # The cancellation replaced every plan, the one told late too; the later change of
        # plan replaces none of them again.
        [cancelled_id, late_id, change_id] = [r.memories[0].id for r in (cancelled, late, change)]
        kinds = [d["kind"] for d in (graph.get_edge_data(cancelled_id, late_id) or {}).values()]
        assert SUPERSEDES in kinds
        assert not any(d["kind"] == SUPERSEDES for *_, d in graph.out_edges(change_id, data=True))
        assert mem.check_integrity().ok
