"""Supersession: a newer statement of someone's home, job, occupation, partner, phone, email,
address, favourite thing, the one person in a role (manager, doctor, landlord...), plan, age,
weight or an amount of money (rent, salary...) replaces the older one.

"Ana: I live in Berlin." (January), then "Ana: We moved to Lisbon last week." (March): the
March memory gets a ``supersedes`` link to the January one. Nothing is deleted (the old fact
was true then, and "where did Ana live before?" needs it); recall ranks a superseded memory
below what superseded it and says so (``recall/supersession.py``).

Each statement is read as *slots* (subject, attribute family, value: ``retain/slots.py``). A
later statement with the same subject and family and another value supersedes the earlier
ones; for plans, a later change or cancellation supersedes the plan. Links are made to the
statements replaced directly only (a chain per slot, which recall follows), so a home said a
hundred times makes ~100 links, not ~5,000; forgetting a statement in the middle links its
successors to what it replaced (``store/forget.py``). The rules prefer missing an update to
linking two facts that both hold.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right, insort
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from operator import attrgetter, itemgetter
from typing import Any

from agentmem.retain.slots import (
    ANY_FAMILY_WORDS,
    FAMILY_WORDS,
    FIRST_PERSON_WORD,
    NARRATOR,
    Slot,
    is_kept_current,
    kept_value,
    slots_of,
    split_speaker,
)
from agentmem.store.changes import Change
from agentmem.store.dialect import json_rows, regex_search
from agentmem.store.records import from_db_time, memories_by_id

SUPERSEDES = "supersedes"


def supersedes(newer: Slot, older: Slot) -> bool:
    """Whether a later statement filling ``newer`` replaces an earlier one filling ``older``."""
    if (newer.subject, newer.family) != (older.subject, older.family):
        return False
    if newer.family.startswith("plan "):
        # A change replaces the plan it names; plans that are merely both made both hold.
        return newer.change and (
            not newer.value or set(newer.value.split()) <= set(older.value.split())
        )  # noqa: E501
    return newer.value != older.value


@dataclass(frozen=True, slots=True)
class Statement:
    """A memory as supersession reads it."""

    id: str
    seq: int
    mentioned_at: datetime
    slots: tuple[Slot, ...]

    @property
    def order(self) -> tuple[datetime, int]:
        """Its place in the bank's time order: mention, then retain order."""
        return (self.mentioned_at, self.seq)


#: A stored fact is a candidate for a new statement's (subject, family) when it names the
#: subject and holds a word of the family (``FAMILY_WORDS``): the key of that test.
Key = tuple[str, str]

_FAMILY_RE = {family: re.compile(words, re.IGNORECASE) for family, words in FAMILY_WORDS.items()}


_WORD = re.compile(r"\b[^\W\d_]+\b")  # a word a slot's subject may be (``retain/slots.py``)
# Entries of rows gone (forgotten, stored again) kept in the subjects' lists before they are
# dropped, beyond as many as the rows held have.
_STALE_ENTRIES = 64


def subjects_named(text: str) -> set[str]:
    """Every subject a slot of the fact ``text`` may have: its speaker (else the narrator of
    its "I", "we" or "my") and its capitalised words, casefolded as ``retain/slots.py`` keeps
    them (a superset: a slot's subject is one of these)."""
    speaker, said = split_speaker(text)
    named = {word.casefold() for word in _WORD.findall(said) if word[:1].isupper()}
    if speaker:
        return named | {speaker.casefold()}
    return named | {NARRATOR} if FIRST_PERSON_WORD.search(said) else named


@dataclass(slots=True)
class _Row:
    """A bank row holding a word of some family, as read: its slots once parsed."""

    seq: int
    mentioned_at: datetime
    text: str
    folded: str  # casefolded, as the subjects of slots are
    kept: str | None
    slots: tuple[Slot, ...] | None = None
    named: int = 0  # how many subjects it may be about (its entries in _by_subject)


class StoredStatements:
    """A bank's stored statements that a new one may supersede (or be superseded by), read
    from the store as retains ask for them: each retain reads only the rows stored since.

    A retain's candidates are the bank's facts that name one of its statements' subjects and
    hold a word of the statement's family (a :data:`Key`). Asked of the store per key, a key
    never asked before scanned the whole bank (~27 ms at 100k memories, for a fifth of the
    retains there). Here the bank's rows that hold a word of any family (a quarter of a chat
    bank) are held, in ``seq`` order, read up to the ``seq`` of the last retain; each retain
    reads the rows stored since, and a key tests the held rows of its subject (listed by
    :func:`subjects_named`) it was not tested on yet. That
    misses no row: a bank's rows get their ``seq`` under the bank's write lock
    (``memory_seq``, after ``begin_write``), in this process or any other, so the rows not
    yet read come after, and a row whose text changes gets a new ``seq``. It may hold rows
    deleted since (by any process): :func:`supersession_links` looks up again the rows its
    walks passed, forgets those gone and walks again.

    A mirror of the engine (``Engine.stored_statements``), used under the write lock: it is
    dropped when the bank is rewritten (import, ``delete_bank``, in any process: the change
    log says so) and when a retain that read into it rolls back.
    """

    def __init__(self) -> None:
        self._read_to = 0  # the bank's rows up to this seq were read
        self._rows: dict[str, _Row] = {}  # memory id -> (held: it holds a word of a family)
        # Who each held row may be about -> (seq, id) of those rows in seq order: a key tests
        # only the rows of its subject (scanning every held row for each key cost ~25 ms a
        # retain at 100k memories, 98 % of them rows of other subjects).
        self._by_subject: dict[str, list[tuple[int, str]]] = {}
        self._entries = 0  # (seq, id) pairs in _by_subject, of rows gone too
        self._live_entries = 0  # those of rows held
        self._tested_to: dict[Key, int] = {}  # key -> the held rows up to this seq were tested
        self._statements: dict[str, Statement] = {}  # memory id ->
        self._keys: dict[str, set[Key]] = {}  # memory id -> the keys it was read for
        # (subject, family) of a slot -> the statements filling it, in time order: a retain
        # walks a slot's chain from its own statements, and a chain grows with the bank
        # (sorting it anew each time made every retain cost more as the bank grew).
        self._by_slot: dict[tuple[str, str], list[Statement]] = {}

    def read(
        self,
        cur: Any,  # noqa: ANN401
        bank_id: str,
        wanted: Sequence[Key],
        new: Sequence[tuple[str, int, datetime, str]],
    ) -> None:
        """Read the bank's rows stored since the last read, except the ``new`` memories (the
        retain's own, inserted already), and take the statements of the held rows that pass
        the test of a ``wanted`` key and were not tested for it yet."""
        first_new = min(seq for _, seq, *_ in new)
        self._read_since(cur, bank_id, first_new, {memory_id for memory_id, *_ in new})
        stale: list[tuple[str, int, str | None]] = []
        for key in wanted:
            tested_to = self._tested_to.get(key, 0)
            subject, family = key
            rows_of_subject = self._by_subject.get(subject, [])
            start = bisect_right(rows_of_subject, tested_to, key=itemgetter(0))
            words = _FAMILY_RE[family]
            passed = []
            for seq, memory_id in rows_of_subject[start:]:
                row = self._rows.get(memory_id)
                if (
                    row is not None
                    and row.seq == seq
                    and subject in row.folded
                    and words.search(row.text)
                ):
                    passed.append((memory_id, row))
            stale += self._take(passed, key)
            self._tested_to[key] = self._read_to
        if stale:
            keep_slots(cur, bank_id, stale)

    def _read_since(self, cur: Any, bank_id: str, first_new: int, new: set[str]) -> None:  # noqa: ANN401
        """Hold the rows of the bank stored since the last read (but the retain's own)."""
        rows = cur.execute(
            "SELECT id, seq, mentioned_at, text, statement_slots FROM memories "
            "WHERE bank_id = $bank AND seq > $from AND fact_type IN ('world', 'experience') "
            f"AND {regex_search(cur, 'text', 'words')}",
            {"bank": bank_id, "from": self._read_to, "words": ANY_FAMILY_WORDS},
        ).fetchall()
        for memory_id, seq, when, text, kept in rows:
            if memory_id in new or self._held(memory_id, seq):
                continue
            self.forget([memory_id])  # a row stored again under its id is read anew
            subjects = subjects_named(text)
            self._rows[memory_id] = _Row(
                seq, _aware(when), text, text.casefold(), kept, named=len(subjects)
            )
            for subject in subjects:
                insort(self._by_subject.setdefault(subject, []), (seq, memory_id))
            self._entries += len(subjects)
            self._live_entries += len(subjects)
        # Every row of the bank before the retain's own was there to read.
        self._read_to = max(self._read_to, first_new - 1)
        if self._entries > 2 * self._live_entries + _STALE_ENTRIES:  # drop those of rows gone
            self._by_subject = {
                subject: kept
                for subject, entries in self._by_subject.items()
                if (kept := [(seq, i) for seq, i in entries if self._held(i, seq)])
            }
            self._entries = self._live_entries

    def _held(self, memory_id: str, seq: int) -> bool:
        row = self._rows.get(memory_id)
        return row is not None and row.seq == seq

    def _take(self, passed: list[tuple[str, _Row]], key: Key) -> list[tuple[str, int, str | None]]:
        """Parse the rows that passed ``key``'s test (once each) and keep their statements;
        (id, seq, slots to keep) of the rows whose kept slots were missing or stale."""
        unparsed = [(memory_id, row) for memory_id, row in passed if row.slots is None]
        parsed = slots_of([row.text for _, row in unparsed], [row.kept for _, row in unparsed])
        stale = []
        for (memory_id, row), slots in zip(unparsed, parsed, strict=True):
            row.slots = tuple(slots)
            if is_kept_current(row.kept):
                continue  # its slots were read from what is kept
            kept = kept_value(row.text, slots)
            if kept != row.kept:
                stale.append((memory_id, row.seq, kept))
                row.kept = kept
        for memory_id, row in passed:
            if not row.slots:
                continue
            if memory_id in self._statements:
                self._keys[memory_id].add(key)
                continue
            statement = Statement(memory_id, row.seq, row.mentioned_at, row.slots)
            self._statements[memory_id] = statement
            self._keys[memory_id] = {key}
            for slot_key in {(slot.subject, slot.family) for slot in statement.slots}:
                insort(self._by_slot.setdefault(slot_key, []), statement, key=_ORDER)
        return stale

    def catch_up(self, log: Sequence[Change]) -> bool:
        """After writes through another process: the rows they added come after those read
        (read at the next ask); those they deleted are found gone when a walk passes them
        (a "forget" change names the memories kept that it relinked too, which stay).
        Always caught up (True)."""
        del log
        return True

    def forget(self, memory_ids: Iterable[str]) -> None:
        """Drop the rows and statements of memories that are gone."""
        for memory_id in memory_ids:
            row = self._rows.pop(memory_id, None)
            if row is not None:
                self._live_entries -= row.named
            statement = self._statements.pop(memory_id, None)
            if statement is not None:
                del self._keys[memory_id]
                for slot_key in {(slot.subject, slot.family) for slot in statement.slots}:
                    self._by_slot[slot_key].remove(statement)

    def in_slot(self, slot_key: tuple[str, str], wanted: set[Key]) -> list[Statement]:
        """The stored statements filling ``slot_key`` that were read for a ``wanted`` key, in
        time order."""
        return [
            stored
            for stored in self._by_slot.get(slot_key, ())
            if not self._keys[stored.id].isdisjoint(wanted)
        ]


def supersession_links(
    cur: Any,  # noqa: ANN401
    bank_id: str,
    new: Sequence[tuple[str, int, datetime, str]],
    stored: StoredStatements | None = None,
) -> list[tuple[str, str, str, float]]:
    """``supersedes`` links between new memories ``(id, seq, mentioned_at, text)`` and the
    bank's (read through ``cur``, the retain transaction, into ``stored``: the bank's
    statements read before, or none), later mention → earlier, in time order of the later
    then of the earlier.

    A stored statement is one of the bank's facts that names the subject of a new one's slot
    with a word of its family. A statement is linked to the ones it replaces directly
    (:func:`_chain_pairs`): the bank's links form a chain per slot, which recall follows.
    """
    slots = slots_of([text for *_, text in new])
    statements = [
        Statement(memory_id, seq, when, tuple(found))
        for (memory_id, seq, when, _), found in zip(new, slots, strict=True)
        if found
    ]
    if not statements:
        return []
    stored = StoredStatements() if stored is None else stored
    wanted = sorted(
        {(slot.subject, slot.family.split()[0]) for s in statements for slot in s.slots}
    )
    stored.read(cur, bank_id, wanted, new)
    new_ids = {s.id for s in statements}
    wanted_keys = set(wanted)
    keys = sorted({_key(slot) for s in statements for slot in s.slots})
    while True:
        pairs: dict[tuple[str, str], tuple[Statement, Statement]] = {}
        looked_at: dict[str, int] = {}  # the stored statements deciding the pairs: id -> seq
        for slot_key in keys:
            chain = [s for s in stored.in_slot(slot_key, wanted_keys) if s.id not in new_ids]
            for new_statement in statements:
                if any(_key(slot) == slot_key for slot in new_statement.slots):
                    insort(chain, new_statement, key=_ORDER)
            for later, earlier in _chain_pairs(chain, slot_key, new_ids, looked_at):
                pairs[(later.id, earlier.id)] = (later, earlier)
        looked_at = {i: seq for i, seq in looked_at.items() if i not in new_ids}
        # A statement deleted since it was read may stand between two others: drop it and
        # walk again.
        gone = set(looked_at) - _still_stored(cur, bank_id, looked_at)
        if not gone:
            break
        stored.forget(gone)
    return [
        (later.id, earlier.id, SUPERSEDES, 1.0)
        for later, earlier in sorted(pairs.values(), key=lambda p: (p[0].order, p[1].order))
    ]


_ORDER = attrgetter("order")


def _chain_pairs(
    chain: Sequence[Statement],
    slot_key: tuple[str, str],
    new_ids: set[str],
    looked_at: dict[str, int],
) -> Iterator[tuple[Statement, Statement]]:
    """The (later, earlier) pairs of one slot's statements (``chain``, in time order) that
    involve a new one, where the later replaces the earlier directly: no statement between
    them replaces the earlier already.

    So each statement links to its nearest successors only, not to every newer one: Ana's
    home said 100 times makes ~100 links, not ~5,000 (recall follows the chain,
    ``recall/supersession.py``). Walking forward stops at the first later statement that
    replaces the new one. The statements that decide a pair are noted in ``looked_at`` (id
    -> seq): those paired, and those passed walking back whose values or changes stood
    between; a statement passed that decides nothing may be gone without changing a pair
    (noting every one made a plan said thousands of times look up thousands of rows on each
    retain of an older conversation).
    """
    plan = slot_key[1].startswith("plan ")
    for index, new in enumerate(chain):
        if new.id not in new_ids:
            continue
        if plan:
            yield from _plan_pairs_back(chain[:index], new, slot_key, looked_at)
        else:
            yield from _state_pairs_back(chain[:index], new, slot_key, looked_at)
        for later in chain[index + 1 :]:
            if _replaces(later, new, slot_key):
                looked_at[later.id] = later.seq
                yield later, new
                break


def _state_pairs_back(
    before: Sequence[Statement],
    new: Statement,
    slot_key: tuple[str, str],
    looked_at: dict[str, int],
) -> Iterator[tuple[Statement, Statement]]:
    """``new`` and the earlier statements of a state (home, job, ...) it replaces directly.

    One statement replaces another when their values differ, so an older one is replaced
    already when the values of those between and its own are not all one. Walking back stops
    once two values lie between (every older one is replaced by one of them), or at a
    statement of ``new``'s one value (whatever ``new`` replaces further back, it did)."""
    own = _values(new, slot_key)
    between: set[str] = set()  # the values of the statements passed
    for older in reversed(before):
        looked_at[older.id] = older.seq
        values = _values(older, slot_key)
        if not (between and len(between | values) > 1) and _replaces(new, older, slot_key):
            yield new, older
        between |= values
        if len(between) > 1 or (len(own) == 1 and values == own):
            return


def _plan_pairs_back(
    before: Sequence[Statement],
    new: Statement,
    slot_key: tuple[str, str],
    looked_at: dict[str, int],
) -> Iterator[tuple[Statement, Statement]]:
    """``new`` and the earlier plans it replaces directly: only a change of plan replaces
    one, so only the changes between may have replaced it already.

    Walking back stops after a change that replaces whatever ``new`` does (it names no more
    of the plan: "we cancelled the trip" before "we cancelled the Rome trip"): every older
    plan ``new`` replaces, that one replaced already. A plan changed again and again
    otherwise walked its whole history on each retain (thousands of statements at 100k)."""
    changes_made = [slot for slot in _slots(new, slot_key) if slot.change]
    if not changes_made:
        return  # a plan made replaces nothing: only a later change can replace it
    changes: list[Statement] = []  # the changes passed
    for older in reversed(before):
        if _replaces(new, older, slot_key) and not any(
            _replaces(change, older, slot_key) for change in changes
        ):
            looked_at[older.id] = older.seq
            yield new, older
        if any(slot.change for slot in _slots(older, slot_key)):
            looked_at[older.id] = older.seq
            changes.append(older)
            if _covers(older, changes_made, slot_key):
                return


def _covers(change: Statement, changes_made: list[Slot], slot_key: tuple[str, str]) -> bool:
    """Whether the plan change ``change`` replaces every plan that one of ``changes_made``
    replaces: it supersedes each of them (its words are among theirs)."""
    return all(any(supersedes(c, made) for c in _slots(change, slot_key)) for made in changes_made)


def _values(statement: Statement, slot_key: tuple[str, str]) -> set[str]:
    return {slot.value for slot in _slots(statement, slot_key)}


def _key(slot: Slot) -> tuple[str, str]:
    return (slot.subject, slot.family)


def _slots(statement: Statement, slot_key: tuple[str, str]) -> list[Slot]:
    return [slot for slot in statement.slots if _key(slot) == slot_key]


def _replaces(later: Statement, earlier: Statement, slot_key: tuple[str, str]) -> bool:
    """Whether ``later`` supersedes ``earlier`` in the slot ``slot_key``."""
    return any(supersedes(n, o) for n in _slots(later, slot_key) for o in _slots(earlier, slot_key))


def keep_slots(cur: Any, bank_id: str, rows: list[tuple[str, int, str | None]]) -> None:  # noqa: ANN401
    """Keep the slots parsed again in rows whose kept ones were missing (a store written
    before they were kept, an import) or written under other rules, so that the next process
    reads them instead of parsing the texts again."""
    cur.execute(
        f"UPDATE memories SET statement_slots = u.statement_slots "
        f"FROM {json_rows(cur, 'memories')} AS u "
        "WHERE memories.id = u.id AND memories.seq = u.seq AND memories.bank_id = $bank",
        {
            "bank": bank_id,
            "rows": json.dumps(
                [{"id": i, "seq": seq, "statement_slots": kept} for i, seq, kept in rows]
            ),
        },
    )


def _still_stored(cur: Any, bank_id: str, rows: dict[str, int]) -> set[str]:  # noqa: ANN401
    """Which of the memories (id -> the seq they were read with) the bank holds unchanged
    (by their ids: answered from the primary key, where a bound id list scans the bank)."""
    found = memories_by_id(cur, bank_id, rows, "m.id, m.seq, m.fact_type") if rows else []
    return {
        memory_id
        for memory_id, seq, fact_type in found
        if rows[memory_id] == seq and fact_type in ("world", "experience")
    }


def _aware(value: datetime) -> datetime:
    return from_db_time(value)  # type: ignore[return-value]
