"""What a fact says of someone, read as *slots*: (subject, attribute family, value).

The families: home, job, occupation, partner, phone, email, address, favourite thing, the one
person in a role (manager, doctor, landlord...), plan, age, weight, an amount of money a thing
of theirs is ("my rent"). The subject is the speaker for first-person statements ("I", "we",
"my ...") or a person named as the subject; the value is the place, organisation or name the
statement gives (spaCy's entities, from the pipeline the offline extractor uses), an e-mail
address, digits, a number with its unit, what someone works as, or "none" ("we broke up", "I
quit my job").
Questions, hypotheticals ("thinking of moving to"), the past ("I lived in Rome") and additions
("I also work at ...") fill no slot. Supersession (``retain/supersession.py``) links the
statements of one slot.

The slots read in a fact are kept with it (``memories.statement_slots``, :func:`kept_slots`)
under a digest of this module's source and the spaCy model: a process reads them back
instead of parsing the text again, and a change of these rules parses again.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import astuple, dataclass
from decimal import Decimal, localcontext
from pathlib import Path
from typing import Any

from agentmem.models.nlp import MODEL_PACKAGE, load_nlp

# Families and, for the store's prefilter, words one of their statements must contain.
FAMILY_WORDS: dict[str, str] = {
    "home": r"live|lives|living|moved|moving|relocat|based in|settled|home is",
    "job": r"work|job|position|role|joined|joining|started at|starting at|hired|employ|quit|internship|laid off|fired|let go|redundant",  # noqa: E501
    "partner": r"girlfriend|boyfriend|partner|wife|husband|fianc|dating|seeing|going out|married|engaged|broke up|split up|divorced|single",  # noqa: E501
    "phone": r"phone|number|mobile|cell",
    "email": r"@",
    "address": r"address|live at",
    "favourite": r"favou?rite",
    # Roles one person holds for someone at a time: "Bob is my manager", "my new GP is Dr Rao".
    "role": r"manager|boss|supervisor|doctor|GP|dentist|therapist|landlord|landlady",
    "plan": r"trip|meeting|party|dinner|wedding|flight|appointment|vacation|holiday|visit|concert|lunch|reunion|interview|barbecue|picnic",  # noqa: E501
    # What someone works as: "I work as a nurse", "I was promoted to team lead".
    "occupation": r"work as|works as|working as|job as|promoted to",
    # How old someone is ("I'm 34", "Ana turned 35"), what they weigh, and an amount of
    # money a thing of theirs costs or pays ("my rent is $1,200", "raised my rent to ...").
    "age": r"turned|turns|years old|year old|'m [0-9]|’m [0-9]|am [0-9]|is [0-9]|'s [0-9]|’s [0-9]",
    "weight": r"weigh|[0-9] ?kg|[0-9] ?kilo|[0-9] ?lb|[0-9] ?pound|[0-9] ?stone",
    "amount": r"[$£€¥]|dollars|euros|bucks|[0-9]k",
}
ANY_FAMILY_WORDS = "|".join(f"(?:{w})" for w in FAMILY_WORDS.values())
_ANY_CUE = re.compile(ANY_FAMILY_WORDS, re.IGNORECASE)

_ADVERBS = r"(?:\s+(?:have|has|had|been|just|finally|recently|now|officially|all|actually|am|are|is|currently|then|already|also|still|do|does|don't|doesn't|not|no|longer|never))*"  # noqa: E501


def _letter_class(test: Callable[[str], bool]) -> str:
    """A regular-expression class of the Basic Multilingual Plane's characters passing
    ``test``: Python's ``re`` has no Unicode categories."""
    return "[" + "".join(re.escape(chr(c)) for c in range(0x10000) if test(chr(c))) + "]"


# Capital and small letters of any script (Ørsted, Élodie, Zürich), for the names below.
_UPPER = _letter_class(str.isupper)
_LOWER = _letter_class(str.islower)
# A name is any word of letters (Strauß, Σοφία too); :func:`_subject` keeps the capitalised.
_SUBJECT = r"(?P<s>\bI\b|\b[Ww]e\b|\b[^\W\d_]+\b)(?:'m|'re|'ve)?"
_ROLES = FAMILY_WORDS["role"]
# Whose phone, address or manager: "my", "our" or a name's ("Sara's new number is ...").
_OWNER = rf"\b(?P<s>[Mm]y|[Oo]ur|{_UPPER}[^\W\d_]*(?=['’]s\s))(?:['’]s)?"
_CHANGED_MY = _SUBJECT + _ADVERBS + r"\s+(?:changed|updated|switched)\s+(?:my|our)\s+"
# An age said of a person ("I'm 34", "Ana is 40 years old", "I turned 35 in May") ends there:
# not "I'm 34 minutes late", "Tom is 6 feet tall".
_AGE = r"(?P<n>\d{1,3})(?:\s+(?:years?|yrs?)(?:\s+old)?)?(?=\s*(?:$|[.!,;)]|(?:now|today|this|last|on|in|and|but|so|yesterday|recently)\b))"  # noqa: E501
# Someone and "is" or "am": "I'm", "Ana's", "Ana is".
_SUBJECT_IS = r"(?P<s>\bI\b|\b[^\W\d_]+\b)(?:['’]m|['’]s|\s+am|\s+is)"
_WEIGHT = r"(?:about\s+|around\s+|roughly\s+|just\s+|only\s+)?(?P<n>\d+(?:[.,]\d+)?)\s*(?P<u>kgs?|kilos?|kilograms?|lbs?|pounds|stone)\b"  # noqa: E501
# An amount of money, with its currency: "$1,200", "€45", "60k dollars", "1,350 euros".
_MONEY = r"(?P<m>[$£€¥]\s?\d[\d,]*(?:\.\d+)?(?:\s?(?:k|m|million|thousand)\b)?|\d[\d,]*(?:\.\d+)?\s?(?:k|million|thousand)?\s?(?:dollars|euros|bucks)\b)"  # noqa: E501
# What a thing of someone's amounts to, or a change of it: "my rent is", "our budget went up
# to", "my salary has been raised to".
_AMOUNT_IS = (
    r"(?:is|are|has gone (?:up|down) to|went (?:up|down) to|(?:has )?(?:risen|rose|dropped|fell|fallen|increased|decreased|jumped|climbed) to"  # noqa: E501
    r"|(?:has been|was|got|is being) (?:raised|increased|cut|lowered|reduced|bumped up) to)"
)
_THING = r"(?:new |current |monthly |weekly |yearly |annual |hourly )?(?P<x>[a-z]+)"
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (family, re.compile(pattern))
    for family, pattern in (
        ("home", _SUBJECT + _ADVERBS + r"\s+(?:live|lives|living)\s+(?:now\s+)?in\b"),
        (
            "home",
            _SUBJECT
            + _ADVERBS
            + r"\s+(?:moved|moving|relocated|relocating)\s+(?:back\s+)?(?:home\s+)?(?:to|into)\b",  # noqa: E501
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
        (
            "occupation",
            _SUBJECT
            + _ADVERBS
            + r"\s+(?:work|works|working|(?:got|started|took|landed) (?:a|my|the) (?:new )?job)"
            r"\s+as\s+an?\b",  # not "I work as hard as I can", "as part of a team"
        ),
        (
            "occupation",
            _SUBJECT + _ADVERBS + r"\s+(?:was|got|been|have been|has been)\s+promoted to\b",
        ),
        (
            "job",  # "I started working at Meta", "she began work for the BBC"
            _SUBJECT
            + _ADVERBS
            + r"\s+(?:started|starting|began|beginning)\s+(?:working|work)\s+(?:at|for)\b",
        ),
        (
            "job",  # "I quit Google and joined Stripe", "she left Acme to join Initech"
            _SUBJECT
            + _ADVERBS
            + rf"\s+(?:quit|left)\s+{_UPPER}[\w&'-]*(?:\s+{_UPPER}[\w&'-]*)*\s+(?:and|to)\s+"
            r"(?:join|joined|start at|started at)\b",
        ),
        ("job", _SUBJECT + _ADVERBS + r"\s+(?:was |got |been )?(?:hired|employed) (?:by|at)\b"),
        (
            "job",  # "I got laid off", "she was fired from Acme": no employer now
            _SUBJECT
            + _ADVERBS
            + r"\s+(?:was|were|got|been|have been|has been)\s+(?:laid off|fired(?! up)|let go|made redundant)\b(?P<none>)",  # noqa: E501
        ),
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
            + r"\s+(?:got\s+)?(?:dating|seeing|married to|engaged to|going out with|married)\b",
        ),
        (
            "partner",
            _SUBJECT
            + _ADVERBS
            + r"\s+(?:broke up|split up|got divorced|divorced|separated|single)\b(?P<none>)",  # noqa: E501
        ),
        ("phone", _OWNER + r" (?:new )?(?:phone|mobile|cell)(?: number)? is\b"),
        ("phone", _OWNER + r" (?:new )?number is\b"),
        ("email", _OWNER + r" (?:new )?e-?mail(?: address)? is\b"),
        ("address", _OWNER + r" (?:new )?(?:home |postal |mailing )?address is\b"),
        # "I changed my email to ...", "my number has changed to ...".
        ("phone", _CHANGED_MY + r"(?:phone |mobile |cell )?number to\b"),
        ("email", _CHANGED_MY + r"e-?mail(?: address)? to\b"),
        ("address", _CHANGED_MY + r"(?:home |postal |mailing )?address to\b"),
        ("phone", _OWNER + r" (?:phone |mobile |cell )?number (?:has )?changed to\b"),
        ("email", _OWNER + r" e-?mail(?: address)? (?:has )?changed to\b"),
        ("role", _OWNER + rf" (?:new )?(?P<x>{_ROLES}) is(?: now)?\b"),
        # Someone new in the role, named beside it: "I switched to a new dentist, Dr. Kim",
        # "I've got a new GP called Dr Rao", "My new manager, Omar, starts Monday".
        (
            "role",
            _SUBJECT
            + _ADVERBS
            + r"\s+(?:have|has|got|switched to|changed to|moved to|found|registered with)\s+"
            + rf"(?:a|an)\s+new\s+(?P<x>{_ROLES})(?:,|\s+called\b|\s+named\b)",
        ),
        ("role", _OWNER + rf" new (?P<x>{_ROLES}),"),
        ("age", rf"{_SUBJECT_IS}\s+(?:now\s+|only\s+|already\s+)?{_AGE}"),
        ("age", _SUBJECT + _ADVERBS + rf"\s+(?:turned|turns)\s+{_AGE}"),
        ("weight", _SUBJECT + _ADVERBS + rf"\s+(?:weigh|weighs)\s+{_WEIGHT}"),
        ("weight", rf"{_SUBJECT_IS}\s+(?:now\s+)?(?:down|up)\s+to\s+{_WEIGHT}"),
        ("weight", _OWNER + rf" weight is (?:now )?{_WEIGHT}"),
        (
            "amount",
            _OWNER + rf" {_THING} {_AMOUNT_IS}(?: now)? (?:about |around |just |only )?{_MONEY}",
        ),
        (
            "amount",
            r"\b(?:raised|increased|upped|bumped up|cut|lowered|reduced|slashed|hiked)\s+"
            + rf"{_OWNER}\s+{_THING}\s+to\s+{_MONEY}",
        ),
        (
            "favourite",
            r"\b(?P<s>[Mm]y) (?:new |all-time |absolute )?favou?rite (?P<x>[a-z]+(?: [a-z]+)?) (?:is|are|has become|is now)\b",  # noqa: E501
        ),
    )
)
# The person in a role named first, opening a sentence or a clause: "Bob is my manager", "Dr
# Rao is now my GP", "Kenji left, and Laura is my manager now".
_ROLE_FIRST = re.compile(
    r"(?:^|(?<=[,;] )|(?<=\band )|(?<=\bbut )|(?<=\bso ))"
    rf"(?P<v>(?:Dr\.? )?{_UPPER}[\w'-]*(?: {_UPPER}[\w'-]*)?) (?:is|'s) "
    rf"(?:now |still |(?P<no>no longer |not ))?(?P<s>my) (?:new )?(?P<x>{_ROLES})\b"
)
# A favourite named first: "Blue is my favourite colour now."
_FAVOURITE_FIRST = re.compile(
    r"^(?P<v>[\w' -]{1,40}?) (?:is|are) (?:now |still )?(?P<s>my) (?:new )?favou?rite (?P<x>[a-z]+)\b"  # noqa: E501
)
_FAVOURITE = re.compile(FAMILY_WORDS["favourite"], re.IGNORECASE)
_PLAN_NOUNS = FAMILY_WORDS["plan"]
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
    r"going to|will|lived|worked|when I was|before I|had been)\b|'d like|'d love|'d been|'ll\b)",
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
    "role": {"PERSON"},
}
_SPEAKER = re.compile(r"^(?P<speaker>[^:\n]{1,40}): (?P<said>.*)$", re.DOTALL)
_STOP_NAMES = {"the", "so", "then", "now", "yesterday", "today", "actually", "well", "and", "but"}
# Pronouns and words that point: a capitalised one opens a sentence, it names no one.
_STOP_NAMES |= {"it", "this", "that", "there", "here", "he", "she", "they", "what", "who"}
_STOP_NAMES |= {"which", "everything", "nothing", "everyone", "someone", "one", "mine"}


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


def slots_of(texts: Sequence[str], kept: Sequence[str | None] = ()) -> list[list[Slot]]:
    """The slots each stored fact text fills (most fill none; those are not parsed); with
    ``kept``, the slots the store keeps with each text (:func:`kept_slots`), which spare
    parsing it again."""
    found = {text: _PARSED.get(text) for text in texts}
    for text, value in zip(texts, kept, strict=False):
        if found[text] is None and value is not None:
            found[text] = _read_kept(value)
    split = {text: split_speaker(text) for text, slots in found.items() if slots is None}
    wanted = [text for text, (_, said) in split.items() if _may_fill_a_slot(said)]
    found.update(dict.fromkeys(split, ()))
    docs = load_nlp().pipe(split[text][1] for text in wanted) if wanted else ()
    for text, doc in zip(wanted, docs, strict=True):
        found[text] = _doc_slots(doc, split[text][0])
    _keep({text: found[text] for text in split})
    return [list(found[text] or ()) for text in texts]


def _rules_digest() -> str:
    """What the slots of a text depend on: these rules (this module's source) and the spaCy
    model that reads it."""
    return hashlib.sha256(Path(__file__).read_bytes() + MODEL_PACKAGE.encode()).hexdigest()[:16]


#: The form of :func:`kept_slots`: slots kept under other rules are read as none, and their
#: text parsed again.
_KEPT_FORM = _rules_digest()


def kept_slots(texts: Sequence[str]) -> list[str | None]:
    """What the store keeps with each new fact text (``memories.statement_slots``): its slots
    as JSON when it may fill one, else None. A process that reads the bank's statements for
    the first time then parses none of them: at 100k memories that was 16 of the 27 seconds
    its first 50 retains took."""
    return [kept_value(text, slots) for text, slots in zip(texts, slots_of(texts), strict=True)]


def kept_value(text: str, slots: Sequence[Slot]) -> str | None:
    """What :func:`kept_slots` keeps with ``text``, whose slots are ``slots``."""
    if not _may_fill_a_slot(split_speaker(text)[1]):
        return None
    return json.dumps([_KEPT_FORM, [astuple(slot) for slot in slots]])


def is_kept_current(value: str | None) -> bool:
    """Whether ``value`` is what :func:`kept_slots` keeps under these rules: then the slots
    :func:`slots_of` gives with it are read from it, and :func:`kept_value` would give it
    again (a bank's reads of statements skip that, ~0.1 ms a row)."""
    return value is not None and _read_kept(value) is not None


def _read_kept(value: str) -> tuple[Slot, ...] | None:
    """The slots :func:`kept_slots` wrote (None for a value it did not write)."""
    try:
        form, slots = json.loads(value)
        if form != _KEPT_FORM:
            return None
        return tuple(Slot(str(s), str(f), str(v), bool(c)) for s, f, v, c in slots)
    except (ValueError, TypeError):
        return None


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
    if _ROLE_FIRST.search(text):
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
            named = family
            if family == "favourite":
                named = _favourite(found["x"])
            elif family == "amount":
                named = f"amount {found['x']}"
            elif family == "role":
                named, value = _role(found["x"]), _untitled(value)
            elif _NEGATED.search(text[: found.end()]) and value != "none":
                value = f"not {value}"
            slots.append(Slot(subject, named, value))
            if found.groupdict().get("x") is None:
                break  # one value a family; a thing named ("my rent", "my GP") has its own
    if not _NOT_CURRENT.search(text) and not _ADDITION.search(text):
        # The value named first: "Bob is my manager", "Blue is my favourite colour now."
        for pattern, family_of, value_of in (
            (_ROLE_FIRST, _role, lambda name: _untitled(_norm(name))),
            (_FAVOURITE_FIRST, _favourite, _norm),
        ):
            if named := pattern.search(text):
                subject = _subject(named["s"], speaker)
                # "Sam is no longer my manager": no one is, as far as it says.
                value = "none" if named.groupdict().get("no") else value_of(named["v"])
                slots.append(Slot(subject, family_of(named["x"]), value))
    return list(dict.fromkeys(slots))


def _role(role: str) -> str:
    """The family of the person in a role: "role gp" for "GP"."""
    return f"role {role.casefold()}"


def _untitled(name: str) -> str:
    """A person's name without a title: "Dr. Rao" and "Rao" are one GP."""
    return re.sub(r"^(?:dr|mr|mrs|ms|prof)\.?\s+", "", name)


def _favourite(thing: str) -> str:
    """The family of a favourite: "favourite colour" for "favorite colors" too."""
    thing = thing.casefold().replace("color", "colour")
    return f"favourite {thing.removesuffix('s')}"


#: Who "I", "we", "my" are in text retained without a speaker: the one who writes to the
#: bank ("I live in Berlin", then "We moved to Lisbon"), as one name.
NARRATOR = "i"
#: The words whose subject is the speaker, or the narrator.
FIRST_PERSON = frozenset({"i", "we", "my", "our"})
#: One of them, as a word of a text.
FIRST_PERSON_WORD = re.compile(rf"\b(?:{'|'.join(FIRST_PERSON)})\b", re.IGNORECASE)


def _subject(word: str, speaker: str | None) -> str | None:
    """Who a statement is about: the speaker (else the narrator) for "I", "we", "my"; else
    the name said."""
    if word.casefold() in FIRST_PERSON:
        return speaker.casefold() if speaker else NARRATOR
    if word.casefold() in _STOP_NAMES or not word[:1].isupper():
        return None
    return word.casefold()


def _value(family: str, text: str, found: re.Match[str], doc: Any, offset: int) -> str | None:  # noqa: ANN401
    if found.groupdict().get("none") is not None:
        return "none"
    rest = text[found.end() :]
    if family == "age":
        return found["n"] if 0 < int(found["n"]) <= _OLDEST else None
    if family == "weight":
        return _weight(found["n"], found["u"])
    if family == "amount":
        return _money(found["m"])
    if family == "email":
        email = _EMAIL.search(rest)
        return email[0].casefold() if email else None
    if family == "phone":
        digits = _DIGITS.search(rest)
        return re.sub(r"\D", "", digits[0]) if digits else None
    if family == "occupation":
        value = re.split(
            r"[.,;!?(]| at | for | in | with | and | but | since | now\b", rest, maxsplit=1
        )[0]
        return _norm(value) if 0 < len(value.split()) <= 5 else None
    if family in ("favourite", "address"):
        value = re.split(r"[.,;!]| and | but | now\b", rest.strip(), maxsplit=1)[0]
        return _norm(value) or None
    start = offset + found.end()
    for entity in doc.ents:
        near = entity.start_char >= start and entity.start_char - start <= 25
        if near and entity.label_ in _VALUE_LABELS[family]:
            return _norm(entity.text)
    name = re.match(rf"\s+(?:the\s+)?(?P<v>{_UPPER}[\w&'-]*(?:\s+{_UPPER}[\w&'-]*)*)", rest)
    return _norm(name["v"]) if name else None


#: Ages above this are no one's ("I'm 500 percent sure" is no age anyway).
_OLDEST = 130
_WEIGHT_UNITS = {"kg": "kg", "kilo": "kg", "kilogram": "kg", "lb": "lb", "pound": "lb"}
_WEIGHT_UNITS |= {"stone": "st"}
_MONEY_SCALE = {"k": 1_000, "thousand": 1_000, "m": 1_000_000, "million": 1_000_000}


def _weight(number: str, unit: str) -> str:
    """A weight as one value whatever its spelling: "74 kg" for "74.0 kilos"."""
    unit = unit.casefold().removesuffix("s")
    return f"{_plain(number.replace(',', '.'))} {_WEIGHT_UNITS.get(unit, unit)}"


def _plain(digits: str, scale: int = 1) -> str:
    """A number written without trailing zeros or exponent, exact however long: "1350" for
    "1350.00"."""
    with localcontext(prec=len(digits) + 8):
        return f"{(Decimal(digits) * scale).normalize():f}"


def _money(amount: str) -> str:
    """An amount as one value whatever its spelling: "$1350" for "$1,350.00", "60000 dollars"
    for "60k dollars"."""
    folded = amount.casefold()
    currency = "" if amount[0].isdigit() else amount[0]
    number = re.search(r"\d[\d,]*(?:\.\d+)?", amount)
    assert number is not None  # _MONEY holds digits
    scale = re.search(r"\d\s?(k|m|million|thousand)\b", folded)
    value = _plain(number[0].replace(",", ""), _MONEY_SCALE[scale[1]] if scale else 1)
    words = re.search(r"\b(dollars|euros|bucks)\b", folded)
    unit = {"bucks": "dollars"}.get(words[1], words[1]) if words else ""
    return f"{currency}{value} {unit}".strip()


def _plan_slot(text: str, speaker: str | None) -> Slot | None:
    """A plan ("we're planning a trip to Porto") or a change to it ("the trip is off"): the
    speaker's, or in text without one the narrator's when it says "we", "I", "our" or "my"
    ("We cancelled the Porto trip")."""
    if speaker is None and not FIRST_PERSON_WORD.search(text):
        return None
    change = next((m for p in _PLAN_CHANGES if (m := p.search(text))), None)
    noun = change["noun"] if change else (m[0] if (m := _PLAN_NOUN.search(text)) else None)
    if noun is None:
        return None
    if change is None and not _PROSPECTIVE.search(text):
        return None  # a trip told of, not one planned
    names = " ".join(sorted(_names(text)))
    subject = speaker.casefold() if speaker else NARRATOR
    return Slot(subject, f"plan {noun.casefold()}", names, change=change is not None)


def _names(text: str) -> set[str]:
    """Capitalised words past the first word: what tells one trip from another."""
    words = re.findall(rf"(?<=\s){_UPPER}{_LOWER}+", text)
    common = {"I", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}
    months = {"January", "February", "March", "April", "May", "June", "July", "August"}
    months |= {"September", "October", "November", "December"}
    return {w.casefold() for w in words if w not in common | months}


def _norm(value: str) -> str:
    return " ".join(re.sub(r"^(?:the|a|an)\s+", "", value.strip(), flags=re.I).split()).casefold()
