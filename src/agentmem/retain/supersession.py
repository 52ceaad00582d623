"""Supersession: a newer statement of someone's home, job, partner, phone, email, address,
favourite thing or plan replaces the older one.

"Ana: I live in Berlin." (January), then "Ana: We moved to Lisbon last week." (March): the
March memory gets a ``supersedes`` link to the January one. Nothing is deleted (the old fact
was true then, and "where did Ana live before?" needs it); recall ranks a superseded memory
below what superseded it and says so (``recall/supersession.py``).

Each statement is read as *slots*: (subject, attribute family, value). The subject is the
speaker for first-person statements ("I", "we", "my ...") or a person named as the subject;
the value is the place, organisation or name the statement gives (spaCy's entities, from the
pipeline the offline extractor uses), an e-mail address, digits, or "none" ("we broke up",
"I quit my job"). A later statement with the same subject and family and another value
supersedes the earlier ones; for plans, a later change or cancellation supersedes the plan.
Questions, hypotheticals ("thinking of moving to"), the past ("I lived in Rome") and
additions ("I also work at ...") fill no slot: the rules prefer missing an update to linking
two facts that both hold.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from agentmem.models.nlp import load_nlp
from agentmem.store.dialect import regex_search
from agentmem.store.records import from_db_time

SUPERSEDES = "supersedes"

# Families and, for the store's prefilter, words one of their statements must contain.
_FAMILY_WORDS: dict[str, str] = {
    "home": r"live|lives|living|moved|moving|relocat|based in|settled",
    "job": r"work|job|position|joined|joining|hired|employ|quit|internship",
    "partner": r"girlfriend|boyfriend|partner|wife|husband|fianc|dating|seeing|going out|married|engaged|broke up|split up|divorced|single",  # noqa: E501
    "phone": r"phone|number|mobile|cell",
    "email": r"@",
    "address": r"address|live at",
    "favourite": r"favou?rite",
    "plan": r"trip|meeting|party|dinner|wedding|flight|appointment|vacation|holiday|visit|concert|lunch|reunion|interview|barbecue|picnic",  # noqa: E501
}
_ANY_CUE = re.compile("|".join(f"(?:{w})" for w in _FAMILY_WORDS.values()), re.IGNORECASE)

_ADVERBS = r"(?:\s+(?:have|has|had|just|finally|recently|now|officially|all|actually|am|are|is|currently|then|already|also|still|do|does|don't|doesn't|not|no|longer|never))*"  # noqa: E501
_SUBJECT = r"(?P<s>\bI\b|\b[Ww]e\b|\b[A-Z][a-z]+\b)(?:'m|'re|'ve)?"
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (family, re.compile(pattern))
    for family, pattern in (
        ("home", _SUBJECT + _ADVERBS + r"\s+(?:live|lives|living)\s+(?:now\s+)?in\b"),
        (
            "home",
            _SUBJECT
            + _ADVERBS
            + r"\s+(?:moved|moving|relocated|relocating)\s+(?:back\s+)?(?:to|into)\b",  # noqa: E501
        ),
        ("home", _SUBJECT + _ADVERBS + r"\s+(?:based|settled)\s+in\b"),
        ("home", r"\b(?P<s>[Mm]y|[Oo]ur) (?:new )?home is (?:now )?(?:in\b)?"),
        ("job", _SUBJECT + _ADVERBS + r"\s+(?:work|works|working)\s+(?:now\s+)?(?:at|for)\b"),
        (
            "job",
            _SUBJECT
            + _ADVERBS
            + r"\s+(?:got|started|start|starting|took|accepted|landed|began)\s+(?:a|my|the|an)\s+(?:new\s+)?(?:job|position|role|internship)\s+(?:at|with)\b",  # noqa: E501
        ),
        ("job", _SUBJECT + _ADVERBS + r"\s+(?:joined|joining|started at|starting at)\b"),
        ("job", _SUBJECT + _ADVERBS + r"\s+(?:was |got |been )?(?:hired|employed) by\b"),
        ("job", r"\b(?P<s>[Mm]y) (?:new )?(?:employer|company|job) is (?:now )?(?:at\b)?"),
        (
            "job",
            _SUBJECT + _ADVERBS + r"\s+(?:quit|left|lost)\s+(?:my|the|our)\s+job\b(?P<none>)",
        ),
        (
            "partner",
            r"\b(?P<s>[Mm]y) (?:new )?(?:girlfriend|boyfriend|partner|wife|husband|fianc[ée]e?)(?:'s name)? is\b",  # noqa: E501
        ),
        (
            "partner",
            _SUBJECT
            + _ADVERBS
            + r"\s+(?:dating|seeing|married to|engaged to|going out with|married)\b",  # noqa: E501
        ),
        (
            "partner",
            _SUBJECT
            + _ADVERBS
            + r"\s+(?:broke up|split up|got divorced|divorced|separated|single)\b(?P<none>)",  # noqa: E501
        ),
        ("phone", r"\b(?P<s>[Mm]y) (?:new )?(?:phone|mobile|cell)(?: number)? is\b"),
        ("phone", r"\b(?P<s>[Mm]y) (?:new )?number is\b"),
        ("email", r"\b(?P<s>[Mm]y) (?:new )?e-?mail(?: address)? is\b"),
        ("address", r"\b(?P<s>[Mm]y|[Oo]ur) (?:new )?(?:home |postal |mailing )?address is\b"),
        (
            "favourite",
            r"\b(?P<s>[Mm]y) (?:new |all-time |absolute )?favou?rite (?P<x>[a-z]+(?: [a-z]+)?) (?:is|are|has become|is now)\b",  # noqa: E501
        ),
    )
)
# A favourite named first: "Blue is my favourite colour now."
_FAVOURITE_FIRST = re.compile(
    r"^(?P<v>[\w' -]{1,40}?) (?:is|are) (?:now |still )?(?P<s>my) (?:new )?favou?rite (?P<x>[a-z]+)\b"  # noqa: E501
)
_FAVOURITE = re.compile(_FAMILY_WORDS["favourite"], re.IGNORECASE)
_PLAN_NOUNS = _FAMILY_WORDS["plan"]
_PLAN_NOUN = re.compile(rf"\b(?:{_PLAN_NOUNS})\b", re.IGNORECASE)
_CHANGE_VERB = (
    r"cancel\w*|called off|call(?:ing)? off|postpon\w*|reschedul\w*|pushed back|push(?:ing)? back"
    r"|moved|moving|changed|changing"
)
# A change said of the plan's noun: "we cancelled the Porto trip", "the dinner is postponed",
# "the party is off".
_PLAN_CHANGES = (
    re.compile(
        rf"\b(?:{_CHANGE_VERB})\s+(?:(?:the|our|my|this|that|their)\s+)?"
        rf"(?:(?!(?:to|on|from|in|into|out|for|at|back|away)\b)[\w-]+\s+)?(?P<noun>{_PLAN_NOUNS})\b",
        re.IGNORECASE,
    ),
    re.compile(
        rf"\b(?P<noun>{_PLAN_NOUNS})\s+(?:is|was|has been|got|were|'s)\s+(?:\w+\s+)?"
        rf"(?:cancel\w*|called off|postpon\w*|reschedul\w*|pushed back|moved to|not happening)\b",
        re.IGNORECASE,
    ),
    re.compile(rf"\b(?P<noun>{_PLAN_NOUNS})\s+(?:is|'s)\s+off\b(?!\s+to)", re.IGNORECASE),
)
# What makes a mention of a trip, dinner, ... a plan that a later change can replace.
_PROSPECTIVE = re.compile(
    r"\b(?:plan\w*|book\w*|schedul\w*|going to|gonna|will|are going|am going|is on|are on|"
    r"next|tomorrow|leaves? on|coming up|upcoming|throwing|organi[sz]\w*|arrang\w*|have an?)\b"
    r"|'ll\b|'re going|'m going",
    re.IGNORECASE,
)
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_DIGITS = re.compile(r"\+?\d[\d\s().-]{4,}\d")
# Said just before a statement: it does not say what holds now.
_NOT_CURRENT = re.compile(
    r"(?:\b(?:if|might|maybe|perhaps|considering|thinking (?:about|of)|want to|wants to|"
    r"would like|would love|dream|hope|hoping|wish|should|could|used to|planning to|plan to|"
    r"going to|will|lived|worked|when I was|before I)\b|'d like|'d love|'ll\b)",
    re.IGNORECASE,
)
# Anywhere in a sentence: a second one of a kind, not a replacement.
_ADDITION = re.compile(
    r"\b(?:also|too|as well|another|second|part-time|side job|one of my|besides)\b", re.IGNORECASE
)
_NEGATED = re.compile(r"\b(?:not|no longer|never)\b|n't\b", re.IGNORECASE)
_VALUE_LABELS = {
    "home": {"GPE", "LOC", "FAC"},
    "job": {"ORG", "GPE", "FAC", "PRODUCT", "PERSON", "NORP"},
    "partner": {"PERSON"},
}
_SPEAKER = re.compile(r"^(?P<speaker>[^:\n]{1,40}): (?P<said>.*)$", re.DOTALL)
_STOP_NAMES = {"the", "so", "then", "now", "yesterday", "today", "actually", "well", "and", "but"}


@dataclass(frozen=True, slots=True)
class Slot:
    """What one statement says of someone: ``family`` ("home", "job", "favourite colour",
    "plan trip", ...) of ``subject`` is ``value``; ``change`` marks a changed plan."""

    subject: str
    family: str
    value: str
    change: bool = False


def split_speaker(text: str) -> tuple[str | None, str]:
    """A stored chat fact ("Ana: I live in Berlin.") as its speaker and what was said."""
    found = _SPEAKER.match(text)
    return (found["speaker"], found["said"]) if found else (None, text)


#: The slots of texts read before, by text. Every retain reads again the stored facts it may
#: supersede (those naming its subjects with a word of the family), and a recurring subject
#: is named by a share of the whole bank: read anew each time, they made each retain cost
#: more as the bank grew. Cleared when it holds :data:`_PARSED_KEPT` texts.
_PARSED: dict[str, tuple[Slot, ...]] = {}
_PARSED_KEPT = 200_000


def slots_of(texts: Sequence[str]) -> list[list[Slot]]:
    """The slots each stored fact text fills (most fill none; those are not parsed)."""
    found = {text: _PARSED.get(text) for text in texts}
    split = {text: split_speaker(text) for text, slots in found.items() if slots is None}
    wanted = [text for text, (_, said) in split.items() if _may_fill_a_slot(said)]
    found.update(dict.fromkeys(split, ()))
    docs = load_nlp().pipe(split[text][1] for text in wanted) if wanted else ()
    for text, doc in zip(wanted, docs, strict=True):
        found[text] = _doc_slots(doc, split[text][0])
    _keep({text: found[text] for text in split})
    return [list(found[text] or ()) for text in texts]


def remember_parsed(text: str, doc: Any) -> None:  # noqa: ANN401
    """Keep the slots of a fact text whose statement (the text less its speaker) spaCy has
    parsed already as ``doc`` (the offline extractor's parse of a chat turn), so that
    :func:`slots_of` does not parse it again. spaCy's parse does not depend on the texts
    parsed beside it, so the slots are those :func:`slots_of` would find."""
    speaker, said = split_speaker(text)
    if said == doc.text and text not in _PARSED:
        _keep({text: _doc_slots(doc, speaker) if _may_fill_a_slot(said) else ()})


def _doc_slots(doc: Any, speaker: str | None) -> tuple[Slot, ...]:  # noqa: ANN401
    return tuple(slot for sentence in doc.sents for slot in _sentence_slots(sentence, speaker, doc))


def _keep(parsed: dict[str, tuple[Slot, ...]]) -> None:
    if len(_PARSED) + len(parsed) > _PARSED_KEPT:
        _PARSED.clear()
    _PARSED.update(parsed)


def _may_fill_a_slot(text: str) -> bool:
    """Whether a text matches a slot's words at all: only those are parsed."""
    if not _ANY_CUE.search(text):
        return False
    if any(pattern.search(text) for _, pattern in _PATTERNS) or _FAVOURITE.search(text):
        return True
    return bool(_PLAN_NOUN.search(text)) and bool(
        _PROSPECTIVE.search(text) or any(p.search(text) for p in _PLAN_CHANGES)
    )


def _sentence_slots(sentence: Any, speaker: str | None, doc: Any) -> list[Slot]:  # noqa: ANN401
    text = sentence.text.strip()
    if not text or text.endswith("?"):
        return []
    offset = sentence.start_char
    slots: list[Slot] = []
    plan = _plan_slot(text, speaker)
    if plan is not None:
        slots.append(plan)
    for family, pattern in _PATTERNS:
        for found in pattern.finditer(text):
            subject = _subject(found["s"], speaker)
            before = text[max(0, found.start() - 30) : found.end()]
            if subject is None or _NOT_CURRENT.search(before) or _ADDITION.search(text):
                continue
            value = _value(family, text, found, doc, offset)
            if value is None:
                continue
            if family == "favourite":
                family = _favourite(found["x"])
            elif _NEGATED.search(text[: found.end()]) and value != "none":
                value = f"not {value}"
            slots.append(Slot(subject, family, value))
            break
    favourite = _FAVOURITE_FIRST.match(text)
    if favourite and speaker and not _NOT_CURRENT.search(text) and not _ADDITION.search(text):
        slots.append(Slot(speaker.casefold(), _favourite(favourite["x"]), _norm(favourite["v"])))
    return list(dict.fromkeys(slots))


def _favourite(thing: str) -> str:
    """The family of a favourite: "favourite colour" for "favorite colors" too."""
    thing = thing.casefold().replace("color", "colour")
    return f"favourite {thing.removesuffix('s')}"


def _subject(word: str, speaker: str | None) -> str | None:
    """Who a statement is about: the speaker for "I", "we", "my"; else the name said."""
    if word.casefold() in {"i", "we", "my", "our"}:
        return speaker.casefold() if speaker else None
    if word.casefold() in _STOP_NAMES or not word[:1].isupper():
        return None
    return word.casefold()


def _value(family: str, text: str, found: re.Match[str], doc: Any, offset: int) -> str | None:  # noqa: ANN401
    if found.groupdict().get("none") is not None:
        return "none"
    rest = text[found.end() :]
    if family == "email":
        email = _EMAIL.search(rest)
        return email[0].casefold() if email else None
    if family == "phone":
        digits = _DIGITS.search(rest)
        return re.sub(r"\D", "", digits[0]) if digits else None
    if family in ("favourite", "address"):
        value = re.split(r"[.,;!]| and | but | now\b", rest.strip(), maxsplit=1)[0]
        return _norm(value) or None
    start = offset + found.end()
    for entity in doc.ents:
        near = entity.start_char >= start and entity.start_char - start <= 25
        if near and entity.label_ in _VALUE_LABELS[family]:
            return _norm(entity.text)
    name = re.match(r"\s+(?:the\s+)?(?P<v>[A-Z][\w&'-]*(?:\s+[A-Z][\w&'-]*)*)", rest)
    return _norm(name["v"]) if name else None


def _plan_slot(text: str, speaker: str | None) -> Slot | None:
    """A plan ("we're planning a trip to Porto") or a change to it ("the trip is off")."""
    if speaker is None:
        return None
    change = next((m for p in _PLAN_CHANGES if (m := p.search(text))), None)
    noun = change["noun"] if change else (m[0] if (m := _PLAN_NOUN.search(text)) else None)
    if noun is None:
        return None
    if change is None and not _PROSPECTIVE.search(text):
        return None  # a trip told of, not one planned
    names = " ".join(sorted(_names(text)))
    return Slot(speaker.casefold(), f"plan {noun.casefold()}", names, change=change is not None)


def _names(text: str) -> set[str]:
    """Capitalised words past the first word: what tells one trip from another."""
    words = re.findall(r"(?<=\s)[A-Z][a-z]+", text)
    common = {"I", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}
    months = {"January", "February", "March", "April", "May", "June", "July", "August"}
    months |= {"September", "October", "November", "December"}
    return {w.casefold() for w in words if w not in common | months}


def _norm(value: str) -> str:
    return " ".join(re.sub(r"^(?:the|a|an)\s+", "", value.strip(), flags=re.I).split()).casefold()


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


def supersession_links(
    cur: Any,  # noqa: ANN401
    bank_id: str,
    new: Sequence[tuple[str, int, datetime, str]],
) -> list[tuple[str, str, str, float]]:
    """``supersedes`` links between new memories ``(id, seq, mentioned_at, text)`` and the
    bank's (read through ``cur``, the retain transaction), later mention → earlier."""
    slots = slots_of([text for *_, text in new])
    statements = [
        Statement(memory_id, seq, when, tuple(found))
        for (memory_id, seq, when, _), found in zip(new, slots, strict=True)
        if found
    ]
    if not statements:
        return []
    older = _stored_statements(cur, bank_id, statements)
    links: list[tuple[str, str, str, float]] = []
    everyone = sorted([*older, *statements], key=lambda s: (s.mentioned_at, s.seq))
    new_ids = {s.id for s in statements}
    new_before: list[Statement] = []  # the new statements met so far, in order
    for later_index, later in enumerate(everyone):
        # Two stored statements were linked (or not) when the later one was retained.
        earlier_ones = everyone[:later_index] if later.id in new_ids else new_before
        for earlier in earlier_ones:
            if any(supersedes(n, o) for n in later.slots for o in earlier.slots):
                links.append((later.id, earlier.id, SUPERSEDES, 1.0))
        if later.id in new_ids:
            new_before.append(later)
    return links


def _stored_statements(
    cur: Any,  # noqa: ANN401
    bank_id: str,
    statements: Sequence[Statement],
) -> list[Statement]:
    """The bank's facts that may fill the same slots as ``statements`` (same subject named,
    a word of the family), parsed."""
    wanted = sorted(
        {(slot.subject, slot.family.split()[0]) for s in statements for slot in s.slots}
    )
    # One scan of the bank for every (subject, family) wanted: the bank's texts are read once.
    either = " OR ".join(
        f"(contains(lower(text), $subject{n}) AND {regex_search(cur, 'text', f'words{n}')})"
        for n in range(len(wanted))
    )
    params: dict[str, object] = {"bank": bank_id, "new": [s.id for s in statements]}
    for n, (subject, family) in enumerate(wanted):
        params.update({f"subject{n}": subject, f"words{n}": _FAMILY_WORDS[family]})
    rows = cur.execute(
        "SELECT id, seq, mentioned_at, text FROM memories WHERE bank_id = $bank "
        f"AND fact_type IN ('world', 'experience') AND NOT list_contains($new, id) AND ({either})",
        params,
    ).fetchall()
    found = {memory_id: (seq, when, text) for memory_id, seq, when, text in rows}
    ids = list(found)
    parsed = slots_of([found[i][2] for i in ids])
    return [
        Statement(i, found[i][0], _aware(found[i][1]), tuple(slots))
        for i, slots in zip(ids, parsed, strict=True)
        if slots
    ]


def _aware(value: datetime) -> datetime:
    return from_db_time(value)  # type: ignore[return-value]
