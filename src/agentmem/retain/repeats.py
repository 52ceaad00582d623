"""Idempotent retain: what of a retain call the bank already holds.

Two content hashes are stored with the rows (schema version 2, ``store/database.py``):

* ``episodes.content_hash`` is the hash of a whole call: its messages (speaker, text, time,
  metadata) and every call field that shapes the stored facts (occurrence, tags, importance,
  context, metadata, entity, links). A ``document_id`` whose episodes all have the call's hash
  holds this content already, and the call is a no-op. Any other content *replaces* the
  document's memories, as Hindsight's ``document_id`` does; a fact that would be stored exactly
  as it is stored already keeps its memory (id, links, access count).
* ``memories.content_hash`` is the hash of the message a fact came from (speaker and normalised
  text). Without a ``document_id``, a message is an exact repeat when the bank holds a fact of
  the same hash mentioned at the same time, and it is not extracted again.

A call that says nothing of when (no ``mentioned_at``, no message ``timestamp``) cannot be
matched by time: each such call is dated now. An agent that sends the whole conversation, or
its last turns, at every call would store each turn again and again. So the leading messages
of such a call that repeat, in order, the last messages the bank stored are a continuation
of them and are skipped. A call of two or more messages that repeats them all is the same
history sent again (an agent's second call before a new turn, or a retry) and stores nothing;
a single message said again ("ok") may be the same words said again, and is stored. So with
a call dated by ``mentioned_at`` whose messages carry no ``timestamp``: an agent that sends
its last turns at every turn, dated when it sends them, stores each turn once, at the time of
the call that first sent it (the continued messages must be stored as said before the call).

The pipeline checks both before extraction (a repeat costs no model time) and again under the
write lock before it writes, so two threads retaining the same thing at once store it once.
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from agentmem.errors import InvalidInputError
from agentmem.retain.facts import ExtractedFact, Message, RetainInput
from agentmem.retain.messages import normalize_content
from agentmem.store.records import (
    MEMORY_SELECT,
    from_db_time,
    memory_from_row,
    memory_selector,
    sql_strings,
    to_db_time,
)
from agentmem.types import Memory


def normalize_text(text: str) -> str:
    """Text as compared for repeats: Unicode-normalised, whitespace collapsed, case folded."""
    return " ".join(unicodedata.normalize("NFKC", text).split()).casefold()


def _digest(value: object) -> str:
    data = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return hashlib.sha256(data.encode("utf-8")).hexdigest()[:32]


def message_hash(message: Message) -> str:
    """The hash stored on every fact of ``message``: its speaker and normalised text."""
    return _digest([message.name or "", normalize_text(message.content)])


@dataclass(frozen=True, slots=True)
class RepeatCheck:
    """What makes one retain call a repeat of what a bank holds.

    Attributes:
        document_id: The call's document, if any.
        call_hash: Hash of the whole call (stored on its episode).
        messages: ``(message hash, mentioned_at)`` of each message of the call.
        untimed_lead: How many of the first messages have no ``timestamp`` of their own
            (and, in a call without ``mentioned_at``, no time at all): those may continue the
            bank's last messages.
        dated: The call has a ``mentioned_at``: its lead continues the bank's last messages
            only as messages said before it (a window of the conversation sent again later).
    """

    document_id: str | None
    call_hash: str
    messages: tuple[tuple[str, datetime], ...]
    untimed_lead: int = 0
    dated: bool = False


def repeat_check(
    request: RetainInput,
    *,
    document_id: str | None,
    tags: tuple[str, ...],
    importance: float | None,
    metadata: dict[str, Any],
    entity_id: str | None,
    links: list[tuple[str, str, float]],
    time_given: bool,
) -> RepeatCheck:
    """The :class:`RepeatCheck` of a validated retain call (``time_given``: the call has a
    ``mentioned_at``)."""
    messages = [
        [m.role, m.name, m.content, m.mentioned_at.isoformat(), m.metadata]
        for m in request.messages
    ]
    times = [request.occurred_start, request.occurred_end]
    call = [request.is_text, messages, times, request.context, sorted(tags), importance]
    call += [metadata, entity_id, sorted(links)]
    untimed_lead = 0
    while untimed_lead < len(request.messages) and not request.messages[untimed_lead].timed:
        untimed_lead += 1
    return RepeatCheck(
        document_id,
        _digest(call),
        tuple((message_hash(m), m.mentioned_at) for m in request.messages),
        untimed_lead,
        dated=time_given,
    )


@dataclass(slots=True)
class Repeats:
    """What a call repeats, as read from the store.

    Attributes:
        unchanged: The call's document holds exactly this content: nothing is to be written.
        held: Memories the call would store again (all of an unchanged document's, or those
            of its exact-repeat messages), oldest first.
        repeated_messages: Indexes of the call's messages that are not to be stored: exact
            repeats, and those that continue the bank's last messages.
        continued: Those of them that continue the bank's last messages (an untimed call may
            hold the same message again after them: the same words said anew).
        document: The document's current memories with their hashes, when the call replaces it.
    """

    unchanged: bool = False
    held: list[Memory] = field(default_factory=list)
    repeated_messages: frozenset[int] = frozenset()
    continued: frozenset[int] = frozenset()
    document: list[tuple[Memory, str | None]] = field(default_factory=list)


def find_repeats(conn: Any, bank_id: str, check: RepeatCheck) -> Repeats:  # noqa: ANN401
    """What of ``check``'s call the bank holds (``conn``: the database or a cursor)."""
    if check.document_id is not None:
        hashes = {
            h
            for (h,) in conn.execute(
                "SELECT content_hash FROM episodes WHERE bank_id = $bank AND document_id = $doc",
                {"bank": bank_id, "doc": check.document_id},
            ).fetchall()
        }
        document = _document_memories(conn, bank_id, check.document_id)
        if hashes == {check.call_hash}:
            return Repeats(unchanged=True, held=[m for m, _ in document])
        return Repeats(document=document)
    held = held_messages(conn, bank_id, check.messages)
    continued = continued_messages(conn, bank_id, check)
    held[: len(continued)] = continued
    repeated = frozenset(i for i, found in enumerate(held) if found)
    return Repeats(
        unchanged=len(repeated) == len(check.messages),
        held=_unique(m for found in held for m in found),
        repeated_messages=repeated,
        continued=frozenset(i for i, found in enumerate(continued) if found),
    )


def held_messages(
    conn: Any,  # noqa: ANN401
    bank_id: str,
    keys: tuple[tuple[str, datetime | None], ...] | list[tuple[str, datetime | None]],
) -> list[list[Memory]]:
    """For each ``(message hash, mentioned_at)``, the bank's memories from such a message
    (any time when ``mentioned_at`` is None), oldest first."""
    hashes = sorted({h for h, _ in keys})
    if not hashes:
        return [[] for _ in keys]
    sql = MEMORY_SELECT.replace("FROM memories AS m", ", m.content_hash FROM memories AS m")
    sql += f"WHERE m.bank_id = $bank AND m.content_hash IN ({sql_strings(hashes)})"
    params: dict[str, Any] = {"bank": bank_id}
    if all(when is not None for _, when in keys):
        # Only the times asked are read: a message said thousands of times ("ok", "thanks")
        # is not loaded whole at each repeat check (at 100k memories that was ~100 ms).
        times = sorted({when for _, when in keys})
        names = [f"t{i}" for i in range(len(times))]
        sql += f" AND m.mentioned_at IN ({', '.join('$' + n for n in names)})"
        params |= {n: to_db_time(when) for n, when in zip(names, times, strict=True)}
    rows = conn.execute(sql + " ORDER BY m.seq", params).fetchall()
    by_hash: dict[str, list[Memory]] = defaultdict(list)
    by_time: dict[tuple[str, datetime], list[Memory]] = defaultdict(list)
    for row in rows:
        memory = memory_from_row(row[:-1])
        by_hash[row[-1]].append(memory)
        by_time[row[-1], memory.mentioned_at].append(memory)
    return [
        list(by_hash.get(h, ())) if when is None else list(by_time.get((h, _stored(when)), ()))
        for h, when in keys
    ]


def continued_messages(conn: Any, bank_id: str, check: RepeatCheck) -> list[list[Memory]]:  # noqa: ANN401
    """The memories of the call's first messages that continue the bank's last messages: the
    longest run of its untimed leading messages that repeats, in order, the messages the bank
    stored last, shorter than the call unless the call holds two or more messages, all
    untimed (see the module docstring); in a dated call, only messages stored as said before
    it. Empty when none does."""
    count = len(check.messages)
    resent = count >= 2 and check.untimed_lead == count  # the whole history, sent again
    most = count if resent else min(check.untimed_lead, count - 1)
    leading = [h for h, _ in check.messages[:most]]
    # Most calls continue nothing: the bank's last message alone tells (a short read).
    if most < 1 or not (last := _last_messages(conn, bank_id, 1)) or last[0][0] not in leading:
        return []
    last = _last_messages(conn, bank_id, most) if most > 1 else last
    for count in range(min(most, len(last)), 0, -1):
        tail = last[len(last) - count :]
        if [h for h, _ in tail] == leading[:count]:
            ids = sorted({i for _, message_ids in tail for i in message_ids})
            rows = conn.execute(
                MEMORY_SELECT + f"WHERE m.bank_id = $bank AND m.id IN ({sql_strings(ids)})",
                {"bank": bank_id},
            ).fetchall()
            by_id = {m.id: m for m in map(memory_from_row, rows)}  # less any forgotten since
            said = check.messages[0][1]
            if check.dated and any(m.mentioned_at >= _stored(said) for m in by_id.values()):
                return []  # not said before the call: the same words said anew
            return [
                [by_id[i] for i in reversed(message_ids) if i in by_id] for _, message_ids in tail
            ]
    return []


def _last_messages(conn: Any, bank_id: str, count: int) -> list[tuple[str, list[str]]]:  # noqa: ANN401
    """The bank's last ``count`` retained messages, oldest first: each one's hash and the ids of
    its facts (a message's facts are stored together, under its hash and episode)."""
    messages: list[tuple[str, str | None, list[str]]] = []  # hash, episode, memory ids
    batch, offset = 64 * count, 0
    while len(messages) <= count:
        rows = conn.execute(
            "SELECT id, content_hash, episode_id FROM memories "
            "WHERE bank_id = $bank AND content_hash IS NOT NULL "
            f"ORDER BY seq DESC LIMIT {batch} OFFSET {offset}",
            {"bank": bank_id},
        ).fetchall()
        for memory_id, content_hash, episode_id in rows:
            if messages and messages[-1][:2] == (content_hash, episode_id):
                messages[-1][2].append(memory_id)
            else:
                messages.append((content_hash, episode_id, [memory_id]))
        if len(rows) < batch:
            break
        offset += batch
    # The oldest message read may have more facts beyond the rows read: it is not counted.
    complete = messages[:count] if len(messages) > count else messages
    return [(h, ids) for h, _, ids in reversed(complete)]


# The mention time given to messages without a timestamp, to tell them apart (never stored).
_UNTIMED = datetime(1, 1, 2, tzinfo=UTC)


def retained_from(
    conn: Any,  # noqa: ANN401
    bank_id: str,
    content: object,
    *,
    max_depth: int,
) -> list[list[Memory]]:
    """For each message of ``content`` (as ``retain`` takes it; a string is one message), the
    bank's memories from an identical message: same speaker and normalised text, and the same
    time when the message has a ``timestamp``. Empty messages hold nothing. Message metadata
    may nest ``max_depth`` levels, as in retain.

    Raises:
        InvalidInputError: Malformed content, as ``retain`` would refuse it.
    """
    raws = [content] if isinstance(content, str) else content
    if not isinstance(raws, Sequence) or isinstance(raws, bytes | bytearray):
        # Raises the error retain would.
        normalize_content(content, mentioned_at=_UNTIMED, max_depth=max_depth)
        return []
    keys: list[tuple[str, datetime | None] | None] = []
    for raw in raws:
        message = _message(content if isinstance(content, str) else [raw], max_depth)
        untimed = message is None or message.mentioned_at == _UNTIMED
        keys.append(
            None
            if message is None
            else (message_hash(message), None if untimed else message.mentioned_at)
        )
    found = iter(held_messages(conn, bank_id, [k for k in keys if k is not None]))
    return [[] if key is None else next(found) for key in keys]


def _message(content: object, max_depth: int) -> Message | None:
    """The one message of ``content``, or None if it is empty."""
    try:
        return normalize_content(content, mentioned_at=_UNTIMED, max_depth=max_depth).messages[0]
    except InvalidInputError:
        raw = content if isinstance(content, str) else content[0]  # type: ignore[index]
        text = raw.get("content") if isinstance(raw, Mapping) else getattr(raw, "content", raw)
        if isinstance(text, str) and not text.strip():
            return None
        raise


def _stored(when: datetime) -> datetime:
    """A time as it comes back from the store (microseconds, UTC)."""
    return from_db_time(to_db_time(when))  # type: ignore[return-value]


_DOCUMENT_HELD = (
    "WITH named AS MATERIALIZED (SELECT bank_id FROM memories WHERE document_id = $document_id) "
    "SELECT 1 FROM named WHERE bank_id = $bank LIMIT 1"
)


def _document_memories(
    conn: Any,  # noqa: ANN401
    bank_id: str,
    document_id: str,
) -> list[tuple[Memory, str | None]]:
    where, params = memory_selector(bank_id, document_id=document_id)
    # Most documents retained are new: whether it has memories at all is asked first, from the
    # ``memories_document`` index (DuckDB scans the bank when the bank's test sits beside it).
    if not conn.execute(_DOCUMENT_HELD, params).fetchall():
        return []
    sql = MEMORY_SELECT.replace("FROM memories AS m", ", m.content_hash FROM memories AS m")
    rows = conn.execute(sql + f"WHERE {where} ORDER BY m.seq", params).fetchall()
    return [(memory_from_row(row[:-1]), row[-1]) for row in rows]


def _unique(memories: Any) -> list[Memory]:  # noqa: ANN401
    return list({m.id: m for m in memories}.values())


def fact_key(memory: Memory, content_hash: str | None) -> tuple[Any, ...]:
    """What must be equal for a new fact to be the same as a stored one (a replaced
    document's fact that keeps its memory)."""
    return (
        content_hash,
        memory.text,
        memory.fact_type,
        memory.occurred_start,
        memory.occurred_end,
        memory.mentioned_at,
        tuple(sorted(memory.tags)),
        memory.importance,
        json.dumps(memory.metadata, sort_keys=True, ensure_ascii=False),
        memory.context,
    )


@dataclass(frozen=True, slots=True)
class Resolution:
    """How one retain call's facts relate to what the bank holds, decided under the lock.

    Attributes:
        unchanged: Nothing to write (the document holds this content already).
        keep: Indexes of the facts to store anew.
        kept_memories: For other facts, the stored memory that stays in their place.
        held: Memories of repeated messages, returned as already stored.
        replaced: Ids of the document's memories the call replaces (deleted).
        hashes: Content hashes for kept memories stored without one (before schema 2).
    """

    unchanged: bool
    keep: list[int]
    kept_memories: dict[int, Memory]
    held: list[Memory]
    replaced: list[str]
    hashes: dict[str, str] = field(default_factory=dict)


def resolve(
    conn: Any,  # noqa: ANN401
    bank_id: str,
    check: RepeatCheck,
    new_facts: list[Memory],
    hashes: list[str | None],
    found: Repeats | None = None,
) -> Resolution:
    """Decide, from the store as it is now, which facts to write and which memories go.

    ``new_facts`` are the call's facts as they would be stored (their ids unused here);
    ``found``, what :func:`find_repeats` read of a store that has not changed since.
    """
    found = find_repeats(conn, bank_id, check) if found is None else found
    if found.unchanged:
        return Resolution(True, [], {}, found.held, [])
    if check.document_id is None:
        repeated = {
            (h, _stored(when))
            for i, (h, when) in enumerate(check.messages)
            if i in found.repeated_messages and i not in found.continued
        }
        keep = [
            i
            for i, (fact, h) in enumerate(zip(new_facts, hashes, strict=True))
            if (h, _stored(fact.mentioned_at)) not in repeated
        ]
        return Resolution(False, keep, {}, found.held, [])
    stored: dict[tuple[Any, ...], list[Memory]] = defaultdict(list)
    for memory, h in found.document:
        stored[fact_key(memory, h)].append(memory)
    keep, kept, backfill = [], {}, {}
    for i, (fact, h) in enumerate(zip(new_facts, hashes, strict=True)):
        fact = _as_stored(fact)
        same = stored.get(fact_key(fact, h))
        if not same and h is not None:  # a memory stored before hashes were kept
            same = stored.get(fact_key(fact, None))
            if same:
                backfill[same[0].id] = h
        if same:
            kept[i] = same.pop(0)
        else:
            keep.append(i)
    reused = {m.id for m in kept.values()}
    replaced = [m.id for m, _ in found.document if m.id not in reused]
    return Resolution(False, keep, kept, [], replaced, backfill)


def _as_stored(memory: Memory) -> Memory:
    return replace(
        memory,
        mentioned_at=_stored(memory.mentioned_at),
        occurred_start=None if memory.occurred_start is None else _stored(memory.occurred_start),
        occurred_end=None if memory.occurred_end is None else _stored(memory.occurred_end),
    )


def with_wholes(facts: list[ExtractedFact], keep: list[int]) -> list[int]:
    """``keep`` without the parts whose whole is left out (a clause of a turn already stored
    would otherwise become a memory of its own)."""
    kept = set(keep)
    return [i for i in keep if facts[i].part_of is None or facts[i].part_of in kept]


def subset(facts: list[ExtractedFact], keep: list[int]) -> list[ExtractedFact]:
    """The facts at ``keep``, their ``caused_by`` and ``part_of`` indexes renumbered (causes
    left out go; ``keep`` holds the whole of every part, see :func:`with_wholes`)."""
    position = {old: new for new, old in enumerate(keep)}
    return [
        replace(
            facts[i],
            caused_by=tuple(position[c] for c in facts[i].caused_by if c in position),
            part_of=None if facts[i].part_of is None else position.get(facts[i].part_of),
        )
        for i in keep
    ]
