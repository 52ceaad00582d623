"""Entity recognition: the people, organisations, places and things a fact mentions.

:func:`recognize_entities` reads a spaCy ``Doc`` that :func:`agentmem.models.nlp.load_nlp`
has already parsed, so callers batch many facts through ``nlp.pipe`` and pay for the
pipeline once; :func:`recognize_entities_in_text` parses a single text itself.

spaCy's small English model proposes names (its labels map to our kinds: PERSON → person,
ORG → org, GPE/LOC/FAC → place, PRODUCT/WORK_OF_ART → product, EVENT → event,
NORP/LAW/LANGUAGE → concept; dates, times and amounts are not entities). It is noisy on short
chat text, so rules complete and correct it:

- Capitalised words spaCy skipped ("my boss Priyanka", "Room 101", "INV-20931") become
  candidates unless they are stopwords, "I", months, weekdays or chat filler; proper nouns
  just before a spaCy entity join it ("Veridia Pharma"), and a name spaCy swept into a date
  comes back ("the Porto 10k"). These rules are skipped for title-cased or all-caps text,
  where capitals carry no signal. "with Tariq at Nobu", which spaCy reads as one name, is two:
  the companion and the venue.
- Text written all in lower case ("omg just got back from seattle with jess") has its likely
  names capitalised and is parsed again (:func:`truecased`), so its names are read as in
  any text; a text with capitals of its own keeps them as written.
- A month word (or "Summer", "Autumn", "Winter") is a first name when grammar says it
  names a person and nothing makes it a date: "April said", "June is my sister", "May and
  I", "I met August", "Jan is coming to the wedding", "Summer moved to Denver", but "In April
  we moved", "May 5th", "See you in June", "May I ask?", "May is coming to an end"
  (``reads_as_person`` in ``retain/entity_kinds.py``; no number or preposition, determiner
  or adjective before it). An abbreviation is a date with or without its period ("Jan.",
  "Sept.").
- An unfamiliar word the tagger reads as an interjection or adverb is a name when grammar
  says it is a person's ("Raj and his wife moved"); a holiday, or its greeting, is a time,
  never a name, whatever spaCy labels it ("visiting for Easter", "Happy Diwali").
- A word opening a sentence (or a quotation) is capitalised anyway: it is a name when a cue
  says so ("Tigran flew to ...", "Emeka's manager"), a known first name, or a proper noun
  doing or owning something ("Amara started ...", "Rashid's startup"); otherwise the mention
  is *tentative* and only joins an entity the bank already knows. So is a one-word name used
  as a common noun ("an API", "Aisle seats ...").
- A title-case title that is all its double quotes hold is one name, a product, whatever
  spaCy makes of its words ("Harry Potter and the Philosopher's Stone"); a longer quotation
  is a saying, read as a sentence ("he wrote “Happy birthday, Laura!”").
- The kind is the best-supported one of spaCy's label (a weak vote), the speaker, titles,
  known first names (common ones, and rarer ones of many locales as a weak vote), the cues of
  ``retain/entity_kinds.py`` and what the embedding model knows of the bare name
  (``retain/name_prior.py``, counted once with spaCy's label when they agree); each mention
  carries the weight of its kind as ``confidence``, which the bank sums over all mentions of
  an entity.
- Names lose possessives ("Alice's" → "Alice"; a business keeps the "'s" of its name when
  it owns nothing: "lunch at McDonald's"), a leading "the" (except for titles of works),
  a sentence-opening adjective ("New Lantern launch date"), trailing lower-case words
  ("Zvartnots airport"), stray punctuation, emoji and control characters; mentions are
  de-duplicated case-insensitively within one fact, keeping the best-supported kind.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import replace
from importlib import resources
from typing import TYPE_CHECKING

from agentmem.models.nlp import coarse_pos
from agentmem.retain.entity_kinds import (
    CODE_RE,
    CUE_WEIGHT,
    DETERMINERS,
    FIRST_NAME_WEIGHT,
    GIVEN_NAME_WEIGHT,
    JOB_NOUNS,
    NATIONALITY_LABELS,
    POSSESSIVES,
    QUOTES,
    RACE_RE,
    SHAPE_WEIGHT,
    SPACY_WEIGHT,
    STRONG_CUE_WEIGHT,
    decide_kind,
    describes_someone,
    is_a_breed,
    is_climbed,
    is_common_noun_use,
    is_common_word_start,
    is_name_suffix,
    is_qualification,
    is_used_thing,
    kind_evidence,
    opens_a_quote,
    reads_as_person,
)
from agentmem.retain.facts import EntityMention
from agentmem.retain.name_prior import may_name_a_person, name_prior
from agentmem.retain.resolve import HONORIFICS, NICKNAMES
from agentmem.temporal.expressions import holiday_spans

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

__all__ = [
    "ENTITY_KINDS",
    "FIRST_NAMES",
    "LABEL_KINDS",
    "recognize_entities",
    "recognize_entities_in_text",
    "truecased",
]

ENTITY_KINDS: tuple[str, ...] = ("person", "org", "place", "product", "event", "concept")

LABEL_KINDS: dict[str, str] = {
    "PERSON": "person",
    "ORG": "org",
    "GPE": "place",
    "LOC": "place",
    "FAC": "place",
    "PRODUCT": "product",
    "WORK_OF_ART": "product",
    "EVENT": "event",
    "NORP": "concept",
    "LAW": "concept",
    "LANGUAGE": "concept",
}


def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


_COMMON_FIRST_NAMES = _word_set(
    """
    aaron abby adam adrian aiden aisha alan albert alex alexa alexis alice alicia alison
    allison amanda amber amelia amir amit amy ana andre andrea andrew andy angela anita ann
    anna anne annie anthony anton arjun arthur arya asha ashley audrey ava barbara beatrice
    ben benjamin bernard beth betty bianca bill billy blake bob bobby bonnie brad bradley
    brandon brenda brian bridget brittany bruce bryan caleb cameron camila carl carla carlos
    carmen carol caroline carter catherine cecilia chad charles charlie chen chloe chris
    christian christina christine christopher claire clara colin connor craig cynthia daisy
    dan daniel daniela danny darren dave david dean deborah debra denise dennis derek diana
    diane diego dmitri dominic donald donna doris dorothy douglas dylan eddie edith edward
    elena eli elijah elizabeth ella ellen elliot emily emma eric erica erin ethan eva evan
    evelyn fatima felix fernando fiona frank gabriel gabriela gary gavin george gerald gina
    giovanni gloria grace greg gregory hailey hannah harold harper harry hassan hazel heather
    hector helen henry holly howard hugo ian irene isaac isabel isabella ivan jack jackson
    jacob jade jake james jamie jane janet janice jasmine jason javier jay jean jeff jeffrey
    jen jenna jennifer jeremy jerry jesse jessica jill jim jimmy joan joe joel john johnny
    jon jonathan jordan jorge jose joseph josh joshua joy joyce juan judith judy julia julian
    julie justin karen karl kate katherine kathleen kathy katie kayla keith kelly ken kenji
    kenneth kevin kim kimberly kyle laura lauren leah lee leo leon leonardo liam lily linda
    lisa logan lois louis lucas lucy luis luke lydia madison maggie maria mariana marie
    marilyn mario mark martha martin mary mason matt matthew maya megan mei melanie melissa
    mia michael michelle miguel mike mila miles mohammed mohammad muhammad monica nadia
    nancy naomi natalie nathan neil nicholas nick nicole nina noah noor nora olga oliver
    olivia omar oscar owen pablo pamela patricia patrick paul paula pedro peggy peter philip
    phillip priya priyanka rachel rafael rahul raj ralph ramon randy raquel ravi ray raymond
    rebecca riley rita rob robert robin roger ron ronald rosa rose ross roy ruby russell
    ruth ryan sakura sally sam samantha samuel sandra sara sarah scott sean sebastian sergei
    shannon sharon shawn sofia sophia sophie stanley stella stephanie stephen steve steven
    susan sven tanya tara taylor ted teresa terry theo theresa thomas tiffany tim timothy
    tina todd tom tommy tony tracy travis tyler valentina vanessa vera victor victoria
    vikram vincent violet virginia walter wei wendy william willow xavier yara yasmin yuki
    yusuf zachary zara zoe zoey hope faith
    """
)
# Known first names, nicknames included. A single one of these that spaCy files under another
# label is taken as a person.
FIRST_NAMES: frozenset[str] = (
    _COMMON_FIRST_NAMES
    | frozenset(NICKNAMES)
    | frozenset(n for ns in NICKNAMES.values() for n in ns)
)


@functools.cache
def given_names() -> frozenset[str]:
    """First names of people in some 80 locales, lower case (``data/given_names.txt``, from
    Faker): "wojciech", "aoife", "thandiwe". Many are words or places as well ("summer",
    "florence"), so such a name is a weak vote, never a name by itself."""
    text = resources.files("agentmem.data").joinpath("given_names.txt").read_text("utf-8")
    return frozenset(line for line in text.splitlines() if line and not line.startswith("#"))


# First names that are also well-known places: spaCy's place label wins for these.
_PLACE_LIKE_NAMES = _word_set(
    "paris jordan georgia austin sydney florence victoria chelsea dallas phoenix madison "
    "charlotte virginia carolina lincoln houston savannah brooklyn india israel kenya asia "
    "dakota aurora orlando denver cleveland eugene regina adelaide alexandria"
)
_MONTHS_AND_DAYS = _word_set(
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday "
    "friday saturday sunday mon tue tues wed thu thur thurs fri sat sun "
    "mondays tuesdays wednesdays thursdays fridays saturdays sundays"  # "on Mondays"
)
_MONTHS = _word_set(
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec"
)
# Month and season words that are also first names ("April", "June", "Summer", "Autumn").
_CALENDAR_NAMES = _MONTHS | _word_set("summer autumn winter")
# Tags of the word before a month that make it a date: "in April", "the first of May", "next
# June", "this March", "Tuesday, May".
_DATE_OPENER_TAGS = frozenset({"IN", "TO", "DT", "JJ", "CD", "PRP$", "POS", ","})
# Holidays spaCy files as dates, or now and then as a place ("visiting for Easter").
_HOLIDAYS = _word_set(
    "christmas easter thanksgiving halloween ramadan eid diwali hanukkah passover"
)
_HOLIDAYS |= {w + ("es" if w.endswith("s") else "s") for w in _HOLIDAYS}  # "two Easters ago"
_CALENDAR_WORDS = _HOLIDAYS | _word_set(
    "new year years eve day night morning weekend spring summer autumn fall winter"
)
# A holiday's greeting is no name: "Happy Diwali", "Eid Mubarak", "Merry Christmas".
_HOLIDAY_GREETINGS = _word_set("happy merry mubarak blessed joyous")
# Capitalised in chat without naming anything.
_CHAT_WORDS = _word_set(
    "ok okay yes yeah yep no nope hi hello hey thanks thank please sorry lol omg btw fyi "
    "asap tbd todo re fwd dear madam sir am pm today tomorrow yesterday tonight everyone "
    "anyone someone nobody everybody somebody god oh ah wow hmm um uh "
    # Interjections chat capitalises at the start of a turn ("Congrats Joanna!", "Woah").
    "bye goodbye welcome cheers congrats congratulations glad awesome nah wanna gonna gotta "
    "ya yay yup woah whoa woohoo aww awww bummer looky perfect haha hehe oops ugh yikes gosh "
    # Work chat's abbreviations: "by EOD", "I'm OOO", "WFH today", "TBH".
    "eod eow eom eoy cob ooo wfh pto eta imo imho tbh idk rsvp"
)
_JOB_TITLES = _word_set("ceo cto cfo coo cmo cio ciso cpo vp svp evp avp gp pa")
# Capitalised kinship words used as names ("Call Mom") refer to a person.
_KINSHIP_NAMES = _word_set(
    "mom mum mommy mummy mother dad daddy father mama papa grandma grandpa granny nana "
    "grandmother grandfather"
)
# First names that are also everyday words: in text written all in lower case they are read
# as the words ("lost hope", "a rose", "miles away").
_WORD_NAMES = _word_set(
    "hope faith joy grace rose ray rob bill mark jack frank will may june april august summer "
    "autumn dawn eve ivy holly heather hazel ruby jade amber violet willow lily daisy robin "
    "pearl crystal angel sandy chase hunter mason carter taylor cooper parker baker miles max "
    "nick drew pat sue art dean christian sally olive iris penny sky river storm rain honey "
    "sunny rocky buddy cash king earl destiny harmony liberty patience charity melody"
)
# spaCy labels that name someone or somewhere, read in lower-case text too ("london").
_NAME_LABELS = frozenset({"PERSON", "GPE", "LOC", "FAC", "ORG"})
#: spaCy's small model labels a capitalised word opening a chat sentence PERSON whatever it
#: names ("Lisbon was amazing", "Heathrow was chaos this morning"); a place's name is what
#: the embedding model places most surely. When the two alone disagree so, the place wins
#: the tie (ties otherwise go to a person). On chat turns the rules were not written on, kind
#: precision .926 → .937; the labelled set unchanged (docs/entities-and-causes.md).
_PLACE_OVER_PERSON = 0.01
# A capitalised word right after one of these is a person ("my sister Kate").
_RELATION_WORDS = _word_set(
    "friend buddy pal colleague coworker co-worker teammate boss manager mentor mentee "
    "partner wife husband girlfriend boyfriend fiance fiancee fiancé fiancée spouse son "
    "daughter brother sister sibling mom mum mother dad father aunt uncle cousin niece nephew "
    "grandma grandpa grandmother grandfather grandson granddaughter neighbor neighbour "
    "roommate flatmate classmate teacher tutor student doctor dentist therapist coach client "
    "landlord intern assistant"
)
# Adjectives that open a sentence before a name without being part of it.
_SENTENCE_ADJECTIVES = _word_set("new old big little next last our my your their")
# Role names a chat speaker may carry that are not a person's name.
_ROLE_NAMES = _word_set("user assistant system human ai bot tool model me you")
# Reporting periods spaCy sometimes labels PERSON ("Q3").
_PERIOD_RE = re.compile(r"q[1-4]|h[12]|fy\s?\d{2,4}", re.IGNORECASE)
# Lowercase-first brand names written with an inner capital: iPhone, eBay, macOS.
_INNER_CAPITAL_RE = re.compile(r"[a-z]{1,4}[A-Z][A-Za-z]*")
_POSSESSIVE_RE = re.compile(r"(?:['’]s|(?<=s)['’])\Z", re.IGNORECASE)
# Parts of speech a capitalised word in a name can have.
_NAME_POS = frozenset({"PROPN", "NOUN", "ADJ", "X"})
# Control, format, separator, surrogate, private-use and unassigned characters: none of them
# can be part of a name a user would type or read back.
_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
_MAX_NAME_CHARS = 80
_MAX_NAME_WORDS = 8
# Longer texts are parsed in pieces; spaCy's parser memory grows with document length.
_CHUNK_CHARS = 100_000


def recognize_entities(
    doc: Doc, *, speaker: str | None = None, tentative: bool = False, recased: bool = False
) -> list[EntityMention]:
    """Return the entities mentioned in a parsed fact, in order of first mention.

    Args:
        doc: A ``Doc`` produced by the pipeline from :func:`agentmem.models.nlp.load_nlp`.
        speaker: Name of who said it; always returned first, as a person. Role names such as
            "user" or "assistant" are not names and are ignored.
        tentative: Also return tentative mentions (capitalised words opening a sentence with
            nothing else saying they are names), for a caller that can check them against the
            names it already knows.
        recased: ``doc`` is the parse of :func:`truecased` text, whose names may hold words
            it left in lower case ("new York"): they are capitalised as the name's.

    Returns:
        De-duplicated mentions (case-insensitive), each with the kind its evidence supports
        best (``retain/entity_kinds.py``).
    """
    speaker_mention = _speaker_mention(speaker)
    speaker_key = speaker_mention.name.casefold() if speaker_mention else ""
    found = [speaker_mention] if speaker_mention else []

    covered: set[int] = set()
    # "Valentine's Day", "New Year's Eve" are times, whatever spaCy makes of their words.
    for start, end in holiday_spans(doc.text):
        span = doc.char_span(start, end, alignment_mode="expand")
        if span is not None:
            greeting = span.start > 0 and doc[span.start - 1].lower_ in _HOLIDAY_GREETINGS
            covered.update(range(span.start - greeting, span.end))  # "Merry Christmas"
    located: list[tuple[int, EntityMention]] = []  # (token position, mention)
    # A title in double quotes is one name, whatever spaCy makes of its words ("Harry Potter
    # and the Philosopher's Stone" is not Harry Potter).
    for start, end in _quoted_titles(doc):
        name = _clean_name(doc[start:end].text, keep_the=True)
        if name:
            covered.update(range(start, end))
            located.append((start, EntityMention(name, "product", STRONG_CUE_WEIGHT)))
    named = [
        (ent, None if _is_a_date(ent) else LABEL_KINDS.get(ent.label_))
        for ent in doc.ents
        if not covered.intersection(range(ent.start, ent.end))
    ]
    for ent, kind in named:
        if _joins_companion_and_venue(ent) or _joins_two_people(ent):
            continue  # the capitalised-word pass reads both names
        if kind is None:
            # Dates and amounts are not entities, but their words must not come back as
            # capitalised-word candidates ("Christmas", "Monday"); bare numbers may still
            # complete a name ("Room 101", "iPhone 15"), and a proper noun spaCy swept into
            # a date is still a name ("the Porto 10k").
            covered.update(
                t.i
                for t in ent
                if not (t.like_num or _is_name_in_date(t) or _is_month_read_as_name(t))
            )
        elif not any(CODE_RE.match(t.text) for t in ent):
            covered.update(range(ent.start, ent.end))
    shouted = _capitals_are_uninformative(doc)
    joined: set[int] = set()  # entities taken into the one before ("St Peter's" + "Basilica")
    for ent, kind in named:
        if kind is None or ent.start not in covered or ent.start in joined:
            # A code inside an entity ("Invoice INV-20931" as ORG) is a name of its own;
            # the capitalised-word pass below reads the words of such an entity.
            continue
        if shouted and not _a_name_when_shouted(doc, ent.start, ent.end):
            continue
        start = ent.start
        # "Veridia Pharma" read as "Veridia" + PERSON "Pharma": the proper nouns just before
        # an entity belong to it.
        while start > 0 and start - 1 not in covered and _is_proper_noun(doc[start - 1]):
            start -= 1
            covered.add(start)
        # "221B Baker Street" read as PERSON "Baker": the capitalised word after an entity
        # that says what kind of name it is ("Street", "Labs", "Festival") belongs to it.
        end = ent.end
        while end < len(doc) and end not in covered and is_name_suffix(doc[end]):
            covered.add(end)
            end += 1
        # "St Peter's Basilica" read as "St Peter's" + "Basilica": a building or body named
        # after its owner or saint is one name with the word that says what it is.
        if doc[end - 1].tag_ == "POS" and end < len(doc) and is_name_suffix(doc[end]):
            joined.add(end)
            end += 1
        # "Google Assistant" read as ORG "Google": a proper noun the model left out right
        # after an entity is the rest of its name, as one just before it is; after a
        # company's name, the name of something it makes. Not after a nationality: "a German
        # Shepherd" is a description.
        named_end = end
        while (
            ent.label_ not in NATIONALITY_LABELS
            and end < len(doc)
            and end not in covered
            and not doc[end].ent_type_
            and _is_proper_noun(doc[end])
            and not doc[end].is_sent_start
        ):
            covered.add(end)
            end += 1
        if kind == "org" and end > named_end:
            kind = "product"
        # "Apollo 13", "Mario Kart 8" read as ORG "Apollo" and a cardinal: the name's number
        # (not a label's: "Zorblat 4: the weather was grey").
        if (
            end < len(doc)
            and end not in covered
            and _is_names_number(doc, end, doc[start].lower_)
            and not (end + 1 < len(doc) and doc[end + 1].text == ":")
        ):
            covered.add(end)
            end += 1
        located.extend(_from_spacy_entity(doc, start, end, kind, speaker_key))

    if not shouted:
        located.extend(_from_capitalised_words(doc, covered, speaker_key))
    located.extend(_mentioned_handles(doc, covered))
    located.extend(
        (position, place)
        for position, mention in list(located)
        if (place := _place_named_in(mention, speaker_key)) is not None
    )
    located.sort(key=lambda pair: pair[0])
    found.extend(mention for _, mention in located)
    if recased:
        found = [replace(m, name=_capitalised(m.name)) for m in found]
    mentions = _dedupe(found)
    return mentions if tentative else [m for m in mentions if not m.tentative]


def _capitalised(name: str) -> str:
    """A name read in lower-case text with each word capitalised but a title's small words
    ("new York" → "New York", "bank of america" → "Bank of America")."""
    words = name.split(" ")
    return " ".join(
        word
        if (k and word in _TITLE_SMALL_WORDS) or not word[:1].islower()
        else word[:1].upper() + word[1:]
        for k, word in enumerate(words)
    )


def truecased(doc: Doc) -> str | None:
    """The text of a doc written all in lower case ("omg just got back from seattle with
    jess"), with the words likely to be names capitalised, and "i": parsed again and given to
    :func:`recognize_entities`, its names are found as in any text (same length: the spans
    stay where they were). None when the text has capitals of its own, or no such word.

    A likely name is a proper noun by spaCy's tag or label, a known first name used as a
    noun, or a word after a preposition read as a verb ("to seattle"), that the embedding
    model places near a person, a place or an organisation
    (``retain/name_prior.py``): not "tmrw", "lol" or "party"; never an everyday word that is
    also a first name ("lost hope").
    """
    words = [t for t in doc if t.is_alpha]
    if not words or not all(t.is_lower for t in words):
        return None
    chars = list(doc.text)
    named = False
    for token in words:
        if token.text == "i" or _likely_name(token):
            first = chars[token.idx].upper()
            if len(first) == 1:  # the text keeps its length: spans stay where they were
                chars[token.idx] = first
                named = named or token.text != "i"
    return "".join(chars) if named else None


def _likely_name(token: Token) -> bool:
    word = token.lower_
    if (
        len(word) < 2
        or token.is_stop
        or word in _CHAT_WORDS
        or word in _WORD_NAMES
        or word in _CALENDAR_WORDS
        or word in _MONTHS_AND_DAYS
    ):
        return False
    prior_kinds: tuple[str, ...] = ("person", "place", "org")
    if not (
        token.tag_ in ("NNP", "NNPS")
        or token.ent_type_ in _NAME_LABELS
        or (word in FIRST_NAMES and token.tag_.startswith("NN"))
    ):
        # "flew to seattle": after "to" the tagger reads a verb; only a place is taken there
        # ("to manage" is no name), and a common noun stays one.
        after_preposition = token.i > 0 and token.doc[token.i - 1].tag_ in ("IN", "TO")
        if not (after_preposition and token.tag_ in ("VB", "FW")):
            return False
        prior_kinds = ("place",)
    prior = name_prior(word)
    if prior is not None and prior[0] == "person" and _after_a_possessive(token):
        # "my bestie jen", "her hubby": a word for someone after "my" is what they are to
        # the speaker, unless it is a first name.
        return _a_first_name(word)
    return prior is not None and prior[0] in prior_kinds


def _after_a_possessive(token: Token) -> bool:
    return token.i > 0 and token.doc[token.i - 1].lower_ in POSSESSIVES


def recognize_entities_in_text(text: str, *, speaker: str | None = None) -> list[EntityMention]:
    """Parse ``text`` with the shared pipeline and return its entities.

    Prefer :func:`recognize_entities` over many texts, parsing them with ``nlp.pipe``.

    Args:
        text: Any text; control characters are ignored and very long texts are parsed in
            pieces.
        speaker: As for :func:`recognize_entities`.

    Raises:
        ModelError: The spaCy model is not installed.
    """
    from agentmem.models.nlp import load_nlp

    clean = _strip_control(text)
    speaker_mention = _speaker_mention(speaker)
    found = [speaker_mention] if speaker_mention else []
    if clean.strip():
        nlp = load_nlp()
        for doc in nlp.pipe(_chunks(clean, _CHUNK_CHARS)):
            capitalised = truecased(doc)
            if capitalised is not None:
                doc = nlp(capitalised)
            found.extend(recognize_entities(doc, speaker=speaker, recased=capitalised is not None))
    return _dedupe(found)


# Words a title leaves lower-case: "The Lord of the Rings", "A Dance with Dragons".
_TITLE_SMALL_WORDS = _word_set(
    "a an the and or but nor of in on at to for with from by as vs via into onto upon 's ’s"
)


def _quoted_titles(doc: Doc) -> list[tuple[int, int]]:
    """The token spans of titles in double quotes: title case ("The Name of the Wind"), at
    most :data:`_MAX_NAME_WORDS` words, inside one sentence. A quoted saying ("Always look on
    the bright side") or a lower-case word ("me-time") is no title."""
    spans = []
    opened: int | None = None
    for token in doc:
        if token.text not in QUOTES:
            if token.is_sent_start:
                opened = None
            continue
        if opened is None:
            opened = token.i + 1
            continue
        words = [t for t in doc[opened : token.i] if not t.is_punct or t.text in ("'", "’")]
        if _names_a_work(words):
            spans.append((opened, token.i))
        opened = None
    return spans


def _names_a_work(words: list[Token]) -> bool:
    """Whether quoted words are the title of a work: title case, a few words, not a greeting
    ("Thanks Mom"), a person's or a family name ("Mom", "Priya") or a code ("INV-20931")."""
    if not words or len(words) > _MAX_NAME_WORDS or not words[0].text[:1].isupper():
        return False
    first = words[0].lower_
    if first in _CHAT_WORDS or (
        len(words) == 1
        and (first in FIRST_NAMES or first in _KINSHIP_NAMES or CODE_RE.match(words[0].text))
    ):
        return False
    return all(t.text[:1].isupper() or t.like_num or t.lower_ in _TITLE_SMALL_WORDS for t in words)


def _speaker_mention(speaker: str | None) -> EntityMention | None:
    name = _clean_name(speaker or "", keep_the=True)
    if not name or name.casefold() in _ROLE_NAMES:
        return None
    return EntityMention(name, "person")


# -- spaCy entities ------------------------------------------------------------------------


# Penn tags of words that never open a name: prepositions, "to", adverbs, conjunctions,
# pronouns, interjections.
_NOT_NAME_OPENERS = frozenset({"IN", "TO", "RB", "CC", "PRP", "PRP$", "UH", "WRB", "WP"})


def _opens_no_name(token: Token) -> bool:
    """A word spaCy took into an entity that cannot be its first word."""
    if token.is_sent_start and token.tag_ == "MD" and not _is_name_read_as_modal(token):
        return True  # a modal opening a question: "Will" in "Will Sam come?"
    return (
        token.tag_.startswith("VB") or token.tag_ in _NOT_NAME_OPENERS
    ) and token.lower_ not in FIRST_NAMES  # "Rob Stark", "Will Byers"


def _gerund_before_a_name(doc: Doc, i: int) -> bool:
    """Whether ``doc[i]`` opens a sentence as an -ing verb before a first name, whatever the
    tagger reads it as: chat drops the subject ("Meeting Zoe at 3", "Calling Priya later"),
    so the name starts after it. Not when a finite verb follows: then the words are the
    subject ("Sterling Archer is a cartoon")."""
    word = doc[i].lower_
    return (
        _opens_a_sentence(doc, i)
        and word.endswith("ing")
        and len(word) > 5
        and not _a_first_name(word)
        and i + 1 < len(doc)
        and _a_first_name(doc[i + 1].lower_)
        and not any(t.tag_ in _FINITE_VERB_TAGS for t in doc[i + 1 : doc[i].sent.end])
    )


# Penn tags of what follows a verb whose subject chat drops: its object or its clause.
_OBJECT_OPENERS = frozenset({"PRP", "PRP$", "DT"})
# Verbs of hoping and guessing, which open a clause and which chat says without "I" ("Hope
# all is good", "Guess we'll see"); the tagger reads them there as a name.
_CLAUSE_VERBS = frozenset({"hope", "wish", "guess", "bet", "reckon", "suppose"})


def _is_a_verb_without_its_subject(doc: Doc, i: int) -> bool:
    """A word that opens a sentence as a verb's base form (or a verb of hoping or guessing),
    right before a pronoun or a determiner: chat drops the subject ("Catch you later!",
    "Cherish those moments!", "Chase those dreams", "Hope all is good"). A name is not
    followed so ("Maria, you rock": the tagger reads a name as a proper noun)."""
    token = doc[i]
    return (
        _opens_a_sentence(doc, i)
        and (token.tag_ == "VB" or token.lower_ in _CLAUSE_VERBS)
        and i + 1 < len(doc)
        and doc[i + 1].tag_ in _OBJECT_OPENERS
    )


def _opens_a_clause_about(doc: Doc, i: int) -> bool:
    """A verb of hoping or guessing opening a sentence before a first name, which chat says
    without "I" ("Hope Gerda feels better", "Guess Tomasz won't come"): the tagger reads
    both as one name."""
    following = doc[i + 1].lower_
    return _opens_a_sentence(doc, i) and doc[i].lower_ in _CLAUSE_VERBS and _a_first_name(following)


def _joins_companion_and_venue(ent: Span) -> bool:
    """Whether spaCy read "with Tariq at Nobu" as one entity ("Tariq at Nobu"): after
    "with", or after a first name, a lower-case "at" between capitalised words parts the one
    a meal or a drink is shared with, or someone, from where it was ("drinks with Ana at
    Hawksmoor", "proposed to Lily at Lake Como")."""
    doc = ent.doc
    if ent.start == 0:
        return False
    after_with = doc[ent.start - 1].lower_ == "with"
    return any(
        t.text == "at"
        and ent.start < t.i < ent.end - 1
        and doc[t.i + 1].text[:1].isupper()
        # "proposed to Lily at Lake Como": a first name before "at" is someone somewhere
        # ("Breakfast at Tiffany's" stays one title).
        and (after_with or doc[t.i - 1].lower_ in FIRST_NAMES)
        for t in ent
    )


def _joins_two_people(ent: Span) -> bool:
    """Whether spaCy read "invited Harry and Florence" as one title or person: an "and"
    between names, one of them a known first name, parts two people, unless what holds
    them is used as a work is ("watched Romeo and Juliet"); a company's name keeps its
    "and" ("Marks and Spencer")."""
    doc = ent.doc
    if ent.label_ not in ("WORK_OF_ART", "PERSON") or is_used_thing(doc, ent.start):
        return False
    return any(
        t.lower_ == "and"
        and ent.start < t.i < ent.end - 1
        and doc[t.i + 1].text[:1].isupper()
        and (_a_first_name(doc[t.i - 1].lower_) or _a_first_name(doc[t.i + 1].lower_))
        for t in ent
    )


def _a_first_name(word: str) -> bool:
    return word in FIRST_NAMES or word in given_names()


def _from_spacy_entity(
    doc: Doc, start: int, end: int, kind: str, speaker_key: str
) -> Iterator[tuple[int, EntityMention]]:
    # Trim what spaCy sometimes includes: determiners, punctuation, possessive markers.
    while start < end and (
        doc[start].is_punct
        or doc[start].is_space
        or (kind != "product" and doc[start].lower_ in ("the", "a", "an"))  # "a German"
    ):
        start += 1
    shop_end = _shop_name_end(doc, start, end) if kind == "org" else None
    shop = shop_end is not None
    owned = end > start and doc[end - 1].tag_ == "POS"  # "Ben & Jerry's": a firm's name
    if shop:
        end = shop_end
    else:
        while end > start and (
            doc[end - 1].is_punct
            or doc[end - 1].is_space
            or doc[end - 1].tag_ == "POS"
            or doc[end - 1].text.islower()  # "Zvartnots airport": the noun is context
        ):
            end -= 1
        if _ends_in_a_score(doc, start, end):
            end -= 3  # "beat Federer 6-4": the score is no part of the name
    start = _with_glued_number(doc, start)
    if start is None:
        return
    # "Going to Lake Tahoe": no name but a title begins with a verb, a preposition or an
    # adverb; spaCy sometimes takes the words that open a sentence into the entity.
    while (
        end - start > 1
        and kind != "product"
        and (_opens_no_name(doc[start]) or _gerund_before_a_name(doc, start))
    ):
        start += 1
    if end - start == 1 and _is_a_verb_without_its_subject(doc, start):
        return
    if end - start > 1 and _opens_a_clause_about(doc, start):
        start += 1  # "Hope Gerda feels better": the hope is the speaker's, Gerda the name
    # "New Lantern launch date": an adjective opening the sentence is no part of the name,
    # unless the whole is a place ("New York").
    if (
        end - start > 1
        and doc[start].is_sent_start
        and doc[start].lower_ in _SENTENCE_ADJECTIVES
        and kind != "place"
    ):
        start += 1
    if start > 0 and _is_name_read_as_modal(doc[start - 1]):
        start -= 1
    if start == end:
        return
    words = [t for t in doc[start:end] if not t.is_space]
    lowered = [t.lower_ for t in words]

    # "Grace and Hope" as one ORG, "Sam & Priya" or "Mike & I" as one PERSON: people joined
    # by "and" or "&" (not a firm's "Ben & Jerry's", nor names spaCy read as a person's
    # whole name, "Grace and Hope" labelled PERSON).
    joiners = _JOINED_PERSONS if kind == "person" else _JOINED_NAMES
    if not (shop or owned) and not joiners.isdisjoint(lowered):
        parts = [w for w in lowered if w not in _NO_PART_OF_A_PAIR]
        with_speaker = len(parts) < len(lowered) - 1  # "Mike & I"
        if (len(parts) >= 2 or with_speaker) and all(_a_first_name(p) for p in parts):
            for token in words:
                if token.lower_ not in _NO_PART_OF_A_PAIR:
                    name = _clean_name(token.text)
                    if name:
                        yield token.i, EntityMention(name, "person", FIRST_NAME_WEIGHT)
            return

    # "Priya 3" tagged LAW: a first name followed only by a number.
    if len(words) > 1 and lowered[0] in FIRST_NAMES and all(t.like_num for t in words[1:]):
        end = start + 1
        kind = "person"

    titled = start > 0 and _is_title(doc[start - 1])
    if titled:
        start -= 1  # keep "Dr." with "Smith": "Dr. Smith" is how the user names them
    # A title spaCy took into the entity says the same: "Aunt Linda" is a person.
    title_inside = not titled and end - start > 1 and _is_title(doc[start])

    name = _clean_name(doc[start:end].text, keep_the=kind == "product", keep_possessive=shop)
    if not name:
        return
    key = name.casefold()
    if _is_not_a_name_here(doc, start, end, key):
        return
    votes = kind_evidence(doc, start + titled, end)
    if shop:
        votes["org"] += SHAPE_WEIGHT  # no person's name ends in "'s"
    first_word = doc[start].lower_
    # A name only if the bank already knows it by that name: what someone is ("She's a New
    # Yorker"), or a word opening a sentence and modifying the noun after it ("Aisle seats
    # are better").
    tentative = describes_someone(doc, start, end) or (
        not _is_cued(votes)
        and first_word not in FIRST_NAMES
        and (
            (_opens_a_sentence(doc, start) and is_common_word_start(doc, start, end))
            or is_common_noun_use(doc, start, end)
        )
    )
    votes[kind] += SPACY_WEIGHT
    _name_votes(votes, key, first_word, end - start, titled or title_inside, speaker_key, kind)
    if _is_given_name(doc, start, end):
        votes["person"] += GIVEN_NAME_WEIGHT
    _family_vote(doc, start, end, votes)
    _prior_vote(votes, name, kind)
    no_person = _no_article_for_a_person(doc, start, end, votes) or _has_digits(name, votes)
    found, confidence = decide_kind(votes, "concept" if no_person and kind == "person" else kind)
    if is_qualification(name):
        found = "concept"
    people = _joined_people(words) if found == "person" else []
    if people:  # "Chidi and Olu went to Lagos": no one person's name holds "and"
        for token in people:
            yield token.i, EntityMention(token.text, "person", confidence, tentative=tentative)
        return
    yield start, EntityMention(name, found, confidence, tentative=tentative)


def _joined_people(words: list[Token]) -> list[Token]:
    """The one-word names of a span that is people joined by "and" or "&" ("Chidi and Olu",
    "Ngozi, Bram and Tunde"); empty for any other span."""
    names = words[::2]
    joiners = {w.lower_ for w in words[1::2]}
    if len(words) < 3 or len(words) % 2 == 0 or not joiners <= {"and", "&", ","}:
        return []
    if words[-2].lower_ not in ("and", "&") or not all(_is_capitalised(w.text) for w in names):
        return []
    return [w for w in names if w.lower_ not in _NO_PART_OF_A_PAIR]  # "Mike and I": Mike


# What joins two people spaCy read as one name: "and" or "&" in any entity, only "&" in one
# labelled PERSON ("Grace and Hope" may be one person's name); and the words no part is.
_JOINED_NAMES = frozenset({"and", "&"})
_JOINED_PERSONS = frozenset({"&"})
_NO_PART_OF_A_PAIR = frozenset({"and", "&", "i", "me"})
_AFTER_WHAT_OWNS_NOTHING = frozenset({"IN", "CC", "TO"})
_VERBS_AFTER_A_SUBJECT = frozenset({"is", "was", "are", "were", "has", "had"})
_TIMES = frozenset({"DATE", "TIME"})


def _shop_name_end(doc: Doc, start: int, end: int) -> int | None:
    """Where an organisation's name ends when it ends in an "'s" that owns nothing, the "'s"
    inside it ("at Trader Joe's yesterday", "lunch at McDonald's with Priya", whether or not
    spaCy took the "'s" into the entity); None otherwise. Such a name is the business's whole
    name ("McDonald" names nothing); "McDonald's fries" is a possessive, "Pottery's so
    relaxing" a verb, and "at Sarah's" (a person's, spaCy's label) keeps the person."""
    marker = end - 1 if doc[end - 1].tag_ == "POS" else end
    if marker <= start or marker >= len(doc) or doc[marker].tag_ != "POS":
        return None
    if doc[marker].text not in ("'s", "’s"):
        return None
    after = doc[marker + 1] if marker + 1 < len(doc) else None
    # What may follow a name that owns nothing: the sentence's end, a preposition or "and",
    # a time ("at Trader Joe's yesterday") or a verb. Anything else reads "'s" as "is" or "has"
    # ("Pottery's so relaxing", "Toby's been great") or as owning what follows.
    owns_nothing = (
        after is None
        or after.is_punct
        or after.tag_ in _AFTER_WHAT_OWNS_NOTHING
        or after.ent_type_ in _TIMES
        or after.lower_ in _VERBS_AFTER_A_SUBJECT  # "Denny's was fine": the "'s" is no verb
    )
    return marker + 1 if owns_nothing else None


def _is_given_name(doc: Doc, start: int, end: int) -> bool:
    """Whether ``doc[start:end]`` is one word read as a rarer first name that some locale gives
    people ("Wojciech fixed our boiler", "Magnus is training for an Ironman"), where spaCy's
    small model labels such names almost at random: a weak vote for a person.

    Not a common first name, which votes already, nor a word after a determiner ("my
    Mercedes", "the Chelsea match": no one says "the Sarah"), a verb of using ("playing
    Zelda") or of climbing ("hiked Snowdon"), one spaCy labels a nationality or language
    ("German"), or one the embedding model clearly places elsewhere ("Bali", "Chelsea",
    ``name_prior.may_name_a_person``).
    """
    if end - start != 1:
        return False
    token = doc[start]
    word = token.lower_
    if word in FIRST_NAMES or word not in given_names() or token.ent_type_ in NATIONALITY_LABELS:
        return False
    if start > 0 and doc[start - 1].lower_ in DETERMINERS:
        return False
    if is_used_thing(doc, start) or is_climbed(doc, start, end):
        return False
    return may_name_a_person(word)


def _family_vote(doc: Doc, start: int, end: int, votes: dict[str, float]) -> None:
    """ "The Sharmas invited us", "dinner with the Joneses": "the" and the plural of what the
    embedding model knows as a person's name is a family, so people; unless the words around
    say what it is ("watched the Simpsons", a team: "the Lakers lost")."""
    word = doc[start].text
    if end - start != 1 or start < 1 or doc[start - 1].lower_ != "the" or _is_cued(votes):
        return
    if not word.endswith("s") or word.endswith("ss"):
        return
    singulars = [word[:-1]] + ([word[:-2]] if word.endswith("es") else [])
    if any((name_prior(s) or ("",))[0] == "person" for s in singulars):
        votes["person"] += CUE_WEIGHT


def _no_article_for_a_person(doc: Doc, start: int, end: int, votes: dict[str, float]) -> bool:
    """ "The Louvre was packed", "we saw the Hulk": a single person's name takes no article,
    so after "the" a singular name is no person whatever the votes (a family is plural).
    Unless the article is a noun's that the name modifies ("the Frank Ocean tour"). Whether
    it took the person's votes away."""
    if start < 1 or doc[start - 1].lower_ != "the" or doc[end - 1].text.endswith("s"):
        return False
    if end < len(doc) and doc[end].tag_ in ("NN", "NNS"):
        return False
    votes["person"] = 0.0
    return True


def _has_digits(name: str, votes: dict[str, float]) -> bool:
    """ "Q3", "Room 101", "Apollo 13": no person's name has digits, whatever its first word
    says; whether it has (the person's votes are then gone)."""
    if not any(c.isdigit() for c in name):
        return False
    votes["person"] = 0.0
    return True


def _prior_vote(votes: dict[str, float], name: str, spacy_kind: str | None) -> None:
    """The embedding model's vote on what the bare name is (``retain/name_prior.py``); added
    after the cues are read, so it never makes a word opening a sentence a name.

    spaCy's label is read from the same word, so the two are one vote when they agree:
    the grammar around the name still outweighs them ("I invited Indiana to dinner"). A code
    ("TKT-176803") is an identifier the model knows nothing of, and its cue decides anyway.
    """
    if CODE_RE.match(name):
        return
    prior = name_prior(name)
    if prior is not None and prior[0] != spacy_kind:
        tie_break = _PLACE_OVER_PERSON if (prior[0], spacy_kind) == ("place", "person") else 0
        votes[prior[0]] += prior[1] + tie_break


def _opens_a_sentence(doc: Doc, i: int) -> bool:
    """Whether token ``i`` is capitalised as the first word of a sentence or a quotation."""
    return doc[i].is_sent_start or opens_a_quote(doc, i)


def _is_cued(votes: dict[str, float]) -> bool:
    return any(w >= CUE_WEIGHT for w in votes.values())


def _is_proper_noun(token: Token) -> bool:
    return (
        token.tag_ in ("NNP", "NNPS")
        and token.text[:1].isupper()
        and not token.is_stop
        and _is_name_word(token)
    )


def _is_name_in_date(token: Token) -> bool:
    """A name inside a date entity: a proper noun that is no calendar word ("Porto" in "the
    Porto 10k", but not "Christmas", "Monday" or "Jan."), a code or a race."""
    lower = token.lower_.rstrip(".")
    if CODE_RE.match(token.text) or RACE_RE.match(token.text):
        return True
    return token.tag_ == "NNP" and lower not in _MONTHS_AND_DAYS and lower not in _CALENDAR_WORDS


_DAY_NUMBERS = re.compile(r"\d[\d/.–—-]*(?:st|nd|rd|th)?", re.IGNORECASE)


def _is_a_date(ent: Span) -> bool:
    """A date spaCy files as a name ("9–11 March 2026" as ORG): numbers and calendar words
    only, with at least one of each."""
    words = [t for t in ent if not t.is_punct]
    numbers = sum(bool(_DAY_NUMBERS.fullmatch(t.text)) for t in words)
    calendar = sum(t.lower_.rstrip(".") in _MONTHS_AND_DAYS for t in words)
    return numbers > 0 and calendar > 0 and numbers + calendar == len(words)


def _is_month_read_as_name(token: Token) -> bool:
    """A month or season word naming a person: "April said she'd come", "May and I went
    hiking", "June is my sister", "I met August at the gym", "April's dog", "Summer moved to
    Denver".

    A date has a number beside it ("May 5th", "August 1990") or a preposition, determiner
    or adjective before it ("in June", "the first of May", "next April"), and its other
    month beside it ("April and May"); what is left is a name only when grammar says it is a
    person's (``reads_as_person``), which a modal opening a question never is ("May I ask?"),
    or when it is joined to a first name ("June and Ana are twins").
    """
    if token.lower_ not in _CALENDAR_NAMES or not token.text.istitle():
        return False
    doc = token.doc
    i = token.i
    neighbours = [doc[j] for j in (i - 2, i - 1, i + 1, i + 2) if 0 <= j < len(doc)]
    if any(t.like_num or any(c.isdigit() for c in t.text) for t in neighbours):
        return False
    if any(t.lower_ in _CALENDAR_NAMES for t in neighbours):
        return False
    if i > 0 and doc[i - 1].tag_ in _DATE_OPENER_TAGS:
        return False
    return reads_as_person(doc, i, i + 1) or _conjoined_with_a_first_name(doc, i)


def _conjoined_with_a_first_name(doc: Doc, i: int) -> bool:
    """Whether ``doc[i]`` and a first name are joined by "and": "June and Ana are twins",
    "Ana and April went out" (a month is joined so only to another month)."""
    after = i + 2 < len(doc) and doc[i + 1].lower_ == "and" and doc[i + 2].text.istitle()
    before = i >= 2 and doc[i - 1].lower_ == "and" and doc[i - 2].text.istitle()
    return (after and _a_first_name(doc[i + 2].lower_)) or (
        before and _a_first_name(doc[i - 2].lower_)
    )


def _name_votes(
    votes: dict[str, float],
    key: str,
    first_word: str,
    n_words: int,
    titled: bool,
    speaker_key: str,
    spacy_kind: str | None,
) -> None:
    """Votes from who the name is: the speaker, a titled name, a known first name."""
    if key == speaker_key or titled:
        votes["person"] += SHAPE_WEIGHT
    elif first_word in FIRST_NAMES and n_words <= 4:
        if not (spacy_kind == "place" and first_word in _PLACE_LIKE_NAMES):
            votes["person"] += FIRST_NAME_WEIGHT
    elif n_words == 1 and key in _KINSHIP_NAMES:
        votes["person"] += SHAPE_WEIGHT


# -- capitalised words spaCy missed --------------------------------------------------------


def _capitals_are_uninformative(doc: Doc) -> bool:
    """True for headline-style or shouted text, where most words are capitalised.

    Only words that neither start a sentence nor belong to a spaCy entity count, nor "I":
    those are capitalised in ordinary prose too. A short sentence may be mostly a name ("We
    binged Severance on Apple TV"), so under six words all must be capitalised.
    """
    words = [
        t for t in doc if t.is_alpha and not t.is_sent_start and not t.ent_type_ and t.text != "I"
    ]
    if len(words) < 3:
        return False
    share = sum(1 for t in words if t.text[0].isupper()) / len(words)
    return share == 1 or (len(words) >= _SHOUTED_MIN_WORDS and share >= 0.6)


_SHOUTED_MIN_WORDS = 6


def _a_name_when_shouted(doc: Doc, start: int, end: int) -> bool:
    """Whether a span spaCy labels in shouted or headline text is a name: there spaCy labels
    common words too ("ALSO NEED TO CALL DR. PATEL ABOUT THE RESULTS": NEED, RESULTS), so a
    single word must be a title's or one the embedding model knows as a name."""
    words = [t for t in doc[start:end] if t.is_alpha]
    if len(words) != 1 or (start > 0 and _is_title(doc[start - 1])):
        return bool(words)
    return name_prior(words[0].text) is not None


def _is_title(token: Token) -> bool:
    return token.lower_.rstrip(".") in HONORIFICS and token.text[:1].isupper()


def _is_capitalised(text: str) -> bool:
    return text[:1].isupper() or bool(_INNER_CAPITAL_RE.fullmatch(text))


def _is_name_word(token: Token) -> bool:
    """Whether a token can be part of a name spaCy did not label."""
    text = token.text
    lower = token.lower_
    if not _is_capitalised(text) or not any(c.isalpha() for c in text):
        return False
    if CODE_RE.match(text):
        return True  # "INV-20931", whatever the tagger makes of it
    if lower in _CALENDAR_NAMES:
        return _is_month_read_as_name(token)
    if text == "I" or lower in _MONTHS_AND_DAYS or lower in _CHAT_WORDS or _is_title(token):
        return False
    if lower in FIRST_NAMES and (coarse_pos(token) == "PROPN" or not token.is_sent_start):
        # A capitalised "Will" or "Mark" inside a sentence is a name whatever the tagger says.
        return True
    if lower in given_names() and not token.is_sent_start and not token.is_stop:
        return True  # so is "Agathe", which the tagger may read as a determiner
    if lower in FIRST_NAMES and _opens_a_statement(token) and _prior_says_person(text):
        return True  # "Sven is allergic to peanuts": the tagger read "Sven" as an adverb
    if token.tag_ == "UH" or (token.tag_ == "RB" and not lower.endswith("ly")):
        # The tagger reads an unfamiliar word opening a sentence as an interjection or an
        # adverb ("Raj and his wife moved", "Raj said so"): a name if grammar says it is
        # someone's. An -ly word is a real adverb ("Finally got the job").
        return not token.is_stop and reads_as_person(token.doc, token.i, token.i + 1)
    return coarse_pos(token) in _NAME_POS and not token.is_stop


def _opens_a_statement(token: Token) -> bool:
    """Whether ``token`` opens its sentence right before a finite verb, as a subject does."""
    after = token.i + 1
    return (
        token.is_sent_start
        and after < len(token.doc)
        and token.doc[after].tag_ in _FINITE_VERB_TAGS
    )


def _prior_says_person(word: str) -> bool:
    """Whether the embedding model reads the bare word as a person's name (not "Hope", "Will")."""
    prior = name_prior(word)
    return prior is not None and prior[0] == "person"


def _can_start_name(token: Token) -> bool:
    return _is_name_word(token) or _is_name_read_as_modal(token)


# Tags of a finite verb: what follows the subject of a statement.
_FINITE_VERB_TAGS = frozenset({"VBD", "VBZ", "VBP", "MD"})


def _is_name_read_as_modal(token: Token) -> bool:
    """A first name the tagger read as a modal verb because it opens the sentence: "Will Byers
    went home", "Can Yilmaz moved to Berlin". A modal opening a question is followed by its
    subject and a bare verb ("Will Sam come?"); a name is followed by the rest of the name
    and a finite verb, or by a verb in the past or third person at once ("Will is my best
    friend", "Will said so", "May called me": no modal is)."""
    if not (token.is_sent_start and token.tag_ == "MD" and token.text[:1].isupper()):
        return False
    doc = token.doc
    j = token.i + 1
    # A month is a name when what follows says someone ("May called me", not "May has been
    # rainy").
    named = token.lower_ in FIRST_NAMES or (
        token.lower_ in _CALENDAR_NAMES
        and kind_evidence(doc, token.i, token.i + 1).get("person", 0.0) > 0
    )
    if j < len(doc) and doc[j].tag_ in ("VBD", "VBZ", "VBN") and named:
        return True  # no modal is followed by a verb's past or third person
    while j < len(doc) and doc[j].tag_ in ("NNP", "NNPS") and doc[j].text[:1].isupper():
        j += 1
    return token.i + 1 < j < len(doc) and doc[j].tag_ in _FINITE_VERB_TAGS


# A chat's @-mention of someone by first name: "@sarah are you coming?", "ask @tom_92".
_HANDLE_RE = re.compile(r"@(?P<name>[^\W\d_]{2,})[\d_]*")


def _mentioned_handles(doc: Doc, covered: set[int]) -> Iterator[tuple[int, EntityMention]]:
    """The people a chat @-mentions by a first name, however the handle is written (spaCy
    labels "@Priya" but not "@sarah"); other handles ("@john.smith", "@nytimes") name no one
    surely enough."""
    if "@" not in doc.text:
        return
    for token in doc:
        match = _HANDLE_RE.fullmatch(token.text)
        if match is None or token.i in covered or token.ent_type_:
            continue
        word = match["name"].lower()
        if _a_first_name(word):
            yield token.i, EntityMention(word.capitalize(), "person", FIRST_NAME_WEIGHT)


def _from_capitalised_words(
    doc: Doc, covered: set[int], speaker_key: str
) -> Iterator[tuple[int, EntityMention]]:
    n = len(doc)
    i = 0
    while i < n:
        if i in covered or not _can_start_name(doc[i]) or _is_letter_compound(doc, i):
            i += 1
            continue
        first = doc[i].lower_
        j = i + 1
        while j < n and j not in covered and not doc[j].is_sent_start:
            token = doc[j]
            if CODE_RE.match(token.text) or CODE_RE.match(doc[i].text):
                break  # a code is a name of its own: "Invoice INV-20931"
            if _is_name_word(token):
                j += 1
            elif token.lower_ in ("of", "&") and _continues_name(doc, j + 1, covered):
                j += 2  # "University of Michigan", "Ben & Jerry"
            elif _joins_by_hyphen(doc, j, covered):
                j += 2  # "T-Mobile", "Rolls-Royce", "Seo-yeon": one word the tokenizer cut
            elif _is_names_number(doc, j, first):
                j += 1  # "Room 101", "iPhone 15 Pro"
            else:
                break
        if j - i > 1 or not _is_a_verb_without_its_subject(doc, i):
            yield from _capitalised_mention(doc, i, j, speaker_key)
        i = j


def _joins_by_hyphen(doc: Doc, j: int, covered: set[int]) -> bool:
    """Whether ``doc[j]`` is a hyphen with no space on either side between a name's word and a
    word that continues it: capitalised ("T-Mobile", "Spider-Man"), or lower-case after a
    capitalised word of two letters or more ("Seo-yeon", "Ji-woo"; see
    :func:`_is_letter_compound` for one letter)."""
    if not _is_glued_hyphen(doc, j) or j + 1 >= len(doc):
        return False
    after = doc[j + 1]
    if j + 1 in covered or not after.is_alpha:
        return False
    before = doc[j - 1].text
    return _is_capitalised(after.text) or (
        after.text.islower() and before.istitle() and len(before) > 1
    )


def _is_letter_compound(doc: Doc, i: int) -> bool:
    """Whether ``doc[i]`` is the capital letter of a compound noun ("X-ray", "T-shirt",
    "E-mail", "K-pop"): no name."""
    return (
        len(doc[i].text) == 1
        and i + 2 < len(doc)
        and _is_glued_hyphen(doc, i + 1)
        and doc[i + 2].text.islower()
    )


def _is_glued_hyphen(doc: Doc, k: int) -> bool:
    """Whether ``doc[k]`` is a hyphen with no space on either side: inside one word the
    tokenizer cut ("T-Mobile", "X-ray"), not a dash between words ("Anna - my sister")."""
    return doc[k].text == "-" and k > 0 and not doc[k - 1].whitespace_ and not doc[k].whitespace_


def _proper_subject(doc: Doc, start: int, end: int) -> bool:
    """Whether ``doc[start:end]``, opening its sentence, is a proper noun that a finite verb
    follows ("Amara started a new job", "Stripe declined the card", after a short phrase of
    place: "Kofi from work invited us") or that owns what follows ("Rashid's startup got
    funding"): the tagger reads a common noun there as NN ("Dinner was great", "Life's
    good"), so a proper noun doing or owning something is a name."""
    proper = all(
        t.tag_ in ("NNP", "NNPS") or (t.i == start and _is_name_read_as_modal(t))  # "May said"
        for t in doc[start:end]
    )
    if end >= len(doc) or not proper:
        return False
    end = _past_a_short_phrase(doc, end)  # "Kofi from work invited us"
    if end >= len(doc):
        return False
    after = doc[end]
    if after.tag_ == "POS":
        return end + 1 < len(doc) and doc[end + 1].tag_ in ("NN", "NNS", "JJ", "VBG")
    return after.tag_ in ("VBD", "VBZ", "MD") and after.text.isalpha() and after.text.islower()


def _ends_in_a_score(doc: Doc, start: int, end: int) -> bool:
    """Whether ``doc[start:end]`` ends in a score or range after a name ("Federer 6-4")."""
    if end - start < 4:
        return False
    last, dash, first = doc[end - 1], doc[end - 2], doc[end - 3]
    return last.is_digit and first.is_digit and dash.text in ("-", "–", "—")


def _is_names_number(doc: Doc, j: int, first: str) -> bool:
    """Whether ``doc[j]``, right after a name, is a number of the name ("Room 101", "Apollo
    13", "iPhone 15 Pro", "the Porto 10k"). Not after a first name ("Priya 3 times"), nor a
    number counting what follows ("Hamilton 3 times"), a date ("moved to Berlin 2019", "in
    Crete 28 April") or a score or range ("Madrid 3-1")."""
    token = doc[j]
    race = RACE_RE.match(token.text)  # spaCy reads "the Porto 10k" as a date
    if not (token.like_num or race) or not any(c.isdigit() for c in token.text):
        return False
    if first in FIRST_NAMES or (token.ent_type_ in _TIMES and not race):
        return False
    after = doc[j + 1] if j + 1 < len(doc) else None
    if after is None:
        return True
    counts = after.tag_ == "NNS" and token.text.isdigit()  # not "Version 2.3 ships"
    day = after.lower_.rstrip(".") in _MONTHS_AND_DAYS  # "in Crete 28 April"
    return not (counts or day or _a_score_from(doc, j))


def _a_score_from(doc: Doc, j: int) -> bool:
    """Whether ``doc[j]`` opens a score or range ("3-1", "2:0"), not a label ("Step 5: ...")."""
    if j + 2 >= len(doc) or doc[j].whitespace_ or doc[j + 1].text not in ("-", "–", "—", ":"):
        return False
    return doc[j + 2].is_digit


def _with_glued_number(doc: Doc, start: int) -> int | None:
    """Where a name starting at ``start`` really starts: at the number the tokenizer cut off
    its word ("1Password", "23andMe"); None when the word is a number and one letter, a
    measure or a standard rather than a name ("4K", "5G", "a 10K run")."""
    if start == 0 or start >= len(doc) or doc[start - 1].whitespace_:
        return start
    if not doc[start - 1].is_digit:
        return start
    return None if len(doc[start].text) == 1 else start - 1


def _past_a_short_phrase(doc: Doc, i: int) -> int:
    """Past a short phrase of place that may stand between a subject and its verb ("from
    work", "at the office", "from my gym"): a preposition, a determiner or possessive at
    most, and one common noun; else ``i``."""
    if doc[i].tag_ != "IN":
        return i
    j = i + 1
    if j < len(doc) and doc[j].tag_ in ("DT", "PRP$"):
        j += 1
    if j < len(doc) and doc[j].tag_ == "NN" and doc[j].is_lower:
        return j + 1
    return i


def _continues_name(doc: Doc, j: int, covered: set[int]) -> bool:
    return j < len(doc) and j not in covered and not doc[j].is_sent_start and _is_name_word(doc[j])


def _capitalised_mention(
    doc: Doc, start: int, end: int, speaker_key: str
) -> Iterator[tuple[int, EntityMention]]:
    glued = _with_glued_number(doc, start)
    if glued is None:
        return
    start = glued
    name = _clean_name(doc[start:end].text)
    if not name:
        return
    key = name.casefold()
    if _is_not_a_name_here(doc, start, end, key):
        return
    words = doc[start:end]
    previous = doc[start - 1] if start > 0 else None
    titled = previous is not None and _is_title(previous)
    votes = kind_evidence(doc, start, end)
    if key in _CALENDAR_NAMES and _conjoined_with_a_first_name(doc, start):
        votes["person"] += SHAPE_WEIGHT  # "June and Ana are twins"
    given = _is_given_name(doc, start, end)
    # Every sentence starts with a capital: there a word needs a cue to be a name ("Tigran
    # flew to ...", "Mateus thinks ...") or must be a known first name; else it names
    # something only if the bank already knows it by that name. A capital inside the
    # sentence is no such accident: "Nurse Joy checked on Tim" names Nurse Joy.
    # A lone word in -s the tagger reads as a common plural there is no name, whatever it
    # does: "Users loved it", "Parents complained" (not a known first name: "Georges").
    common_plural = (
        end - start == 1 and words[0].tag_ == "NNS" and words[0].lower_.endswith("s") and not given
    )
    tentative = (
        _opens_a_sentence(doc, start)
        and (common_plural or not _is_cued(votes))
        and words[0].lower_ not in FIRST_NAMES
        and not CODE_RE.match(key)
        and not any(_is_capitalised(t.text) for t in words[1:])
        and not (words[0].tag_ == "NNP" and given)
    )
    if tentative and _proper_subject(doc, start, end):
        tentative = False  # a name, but of whom or what the verb alone does not say
    tentative = tentative or describes_someone(doc, start, end)  # "She's a New Yorker"
    if previous is not None and previous.lower_ in _RELATION_WORDS:
        votes["person"] += SHAPE_WEIGHT
    _name_votes(votes, key, words[0].lower_, len(words), titled, speaker_key, None)
    if given:
        votes["person"] += GIVEN_NAME_WEIGHT
    _family_vote(doc, start, end, votes)
    _prior_vote(votes, name, None)
    _no_article_for_a_person(doc, start, end, votes)
    _has_digits(name, votes)
    kind, confidence = decide_kind(votes)
    if is_qualification(name):
        kind = "concept"
    if titled and kind == "person" and previous is not None:
        name = _clean_name(doc[start - 1 : end].text) or name
    yield start, EntityMention(name, kind, confidence, tentative=tentative)


# -- names -----------------------------------------------------------------------------------


def _is_not_a_name(key: str) -> bool:
    words = key.split()
    if (
        words
        and any(w in _HOLIDAYS for w in words)
        and all(w in _CALENDAR_WORDS or w in _HOLIDAY_GREETINGS for w in words)
    ):
        return True  # "Easter", "Christmas Eve", "Happy Diwali": a time, whatever spaCy says
    return (
        key.rstrip(".") in _MONTHS_AND_DAYS  # "Jan.", "Sept."
        or key in _CHAT_WORDS
        or bool(_PERIOD_RE.fullmatch(key))
        # "promoted to VP", "the new CFO", "the VP of Sales": a role someone holds
        or (bool(words) and words[0] in _JOB_TITLES and (len(words) == 1 or words[1] == "of"))
    )


def _is_not_a_name_here(doc: Doc, start: int, end: int, key: str) -> bool:
    """``_is_not_a_name``, except for a month word used as a first name ("April said"); and
    a job written in capitals is none."""
    if end - start == 1 and (
        _is_month_read_as_name(doc[start]) or _is_name_read_as_modal(doc[start])
    ):
        return False  # "April said", "May called me"
    return (
        _is_not_a_name(key)
        or _is_shouted_word(doc, start, end)
        or _is_a_job_title(doc, start, end)
        or is_a_breed(doc, start, end)
    )


def _is_shouted_word(doc: Doc, start: int, end: int) -> bool:
    """Whether the mention is one word of grammar written in capitals for emphasis: "my car
    broke down AGAIN", "I NEVER said that" ("WILL" too: the first name is written "Will").
    Not under four letters, where acronyms spell such words: "US", "WHO", "IT"."""
    token = doc[start]
    return end - start == 1 and token.text.isupper() and len(token.text) >= 4 and token.is_stop


# What stands before a job someone has or gets: "as a Financial Analyst", "promoted to
# Product Manager", "our new Head Chef".
_BEFORE_A_JOB = _word_set("a an the as to my our his her their your")


def _is_a_job_title(doc: Doc, start: int, end: int) -> bool:
    """Whether the capitalised words ``doc[start:end]`` are a job, not a name: the last a job
    noun, none a first name ("Kate Baker" is someone), after an article, a possessive, "as"
    or "to" (adjectives and the title's other capitalised words between), and not modifying
    a noun after it ("the Google Assistant app")."""
    if doc[start].lower_ in ("a", "an"):  # spaCy's "a Registered Nurse"
        start += 1
    words = doc[start:end]
    if not words or words[-1].lower_ not in JOB_NOUNS:
        return False
    if any(t.lower_ in FIRST_NAMES or not t.text[:1].isupper() for t in words):
        return False
    if end < len(doc) and doc[end].tag_ in ("NN", "NNS") and doc[end].is_lower:
        return False
    k = start - 1
    while k >= 0 and (
        doc[k].tag_ == "JJ" or (doc[k].text[:1].isupper() and not doc[k].is_sent_start)
    ):
        if doc[k].lower_ in FIRST_NAMES:
            return False
        k -= 1
    return k >= 0 and doc[k].lower_ in _BEFORE_A_JOB


def _strip_control(text: str) -> str:
    """Replace characters that cannot belong to a name with spaces."""
    return "".join(" " if unicodedata.category(c) in _INVISIBLE_CATEGORIES else c for c in text)


def _clean_name(text: str, *, keep_the: bool = False, keep_possessive: bool = False) -> str:
    """Normalise a raw name; returns "" when nothing name-like is left. ``keep_possessive``
    keeps a final "'s" that is part of the name ("Trader Joe's")."""
    name = " ".join(_strip_control(unicodedata.normalize("NFC", text)).split())
    # Emoji, quotes and brackets around a name are not part of it.
    start, end = 0, len(name)
    while start < end and not name[start].isalnum():
        start += 1
    while end > start and not (name[end - 1].isalnum() or name[end - 1] in ".+#"):
        end -= 1
    name = name[start:end]
    if not keep_possessive:
        name = _POSSESSIVE_RE.sub("", name).rstrip(" '’")
    # A trailing period belongs to abbreviations ("Inc.", "Alice C.", "U.S."), not to words,
    # nor to an acronym or a word with capitals inside ("PhD.", "NYC.", "iPhone.").
    if name.endswith("."):
        last = (name.split() or [""])[-1].rstrip(".")
        if "." not in last and (len(last) > 4 or any(c.isupper() for c in last[1:])):
            name = name.rstrip(".")
    if not keep_the and name[:4].casefold() == "the " and len(name) > 4:
        name = name[4:].lstrip()
    # "Bye Caroline", "ya, Melanie": the greeting is not part of the name.
    words = name.split()
    while len(words) > 1 and words[0].strip(",!.").casefold() in _CHAT_WORDS:
        words = words[1:]
    name = " ".join(words)
    if (
        not any(c.isalpha() for c in name)
        or len(name) > _MAX_NAME_CHARS
        or len(name.split()) > _MAX_NAME_WORDS
    ):
        return ""
    return name


# Institutions that take the name of where they are: "the University of Melbourne",
# "Melbourne University", "Bank of America", "the Museum of London".
_NAMED_AFTER_A_PLACE = _word_set(
    "university college institute academy school hospital clinic museum library zoo aquarium "
    "bank airport cathedral orchestra symphony opera"
)
# Words for a kind of place or a direction: the model reads them as places, but alone they
# name none ("City Sports Clinic", "Central Hospital", "Bank of the West").
_NO_PLACE_ALONE = _word_set(
    "city town village county state country region regional metro metropolitan island "
    "beach harbour harbor river bay lake valley mountain park capital downtown uptown midtown "
    "central north south east west northern southern eastern western "
    # words of reach, not places: "the World Bank", "National Theatre", "Royal Hospital"
    "world national international global royal federal"
)
_OF_A_PLACE_RE = re.compile(
    r"\b(?P<inst>\w+)\s+of\s+(?:the\s+)?(?P<place>\w[\w'’-]*(?:\s+\w[\w'’-]*)*)\Z"
)
_BEFORE_ITS_KIND_RE = re.compile(
    r"\A(?:the\s+)?(?P<place>\w[\w'’-]*(?:\s+\w[\w'’-]*)*?)\s+(?P<inst>\w+)\Z"
)


def _place_named_in(mention: EntityMention, speaker_key: str) -> EntityMention | None:
    """The place an institution's name says it is in ("Melbourne" of "the University of
    Melbourne" and of "Melbourne University"), when the name prior reads that name as a
    place: the institution is then a mention of it too (a question for the city or country
    of someone's studies finds the turn about the university; a turn about living in
    Melbourne links to it)."""
    if mention.kind not in ("org", "place") or mention.tentative:
        return None
    if found := _OF_A_PLACE_RE.search(mention.name):
        words = found["place"].split()
        openings = [words]
    elif found := _BEFORE_ITS_KIND_RE.search(mention.name):
        # More of the name may stand between the place and the institution's word
        # ("Toronto General Hospital", "New York Public Library"): its longest opening.
        words = found["place"].split()
        openings = [words[:n] for n in range(len(words), 0, -1)]
    else:
        return None
    if found["inst"].casefold() not in _NAMED_AFTER_A_PLACE or not all(
        word[:1].isupper() for word in words
    ):
        return None  # "Bank of Mum and Dad": not every word of a name
    if any(_POSSESSIVE_RE.search(word) for word in words):
        return None  # "St Mary's Hospital" is named after someone: "St" is no place
    for opening in openings:
        if all(word.casefold() in _NO_PLACE_ALONE for word in opening):
            continue
        place = " ".join(opening)
        prior = name_prior(place)
        if place.casefold() != speaker_key and prior is not None and prior[0] == "place":
            return EntityMention(place, "place", prior[1])
    return None


def _dedupe(mentions: Iterable[EntityMention]) -> list[EntityMention]:
    """Keep the first mention of each name, with the best-supported kind of its mentions."""
    position: dict[str, int] = {}
    result: list[EntityMention] = []
    for mention in mentions:
        key = mention.name.casefold()
        if key not in position:
            position[key] = len(result)
            result.append(mention)
            continue
        kept = result[position[key]]
        if kept.tentative and not mention.tentative:
            result[position[key]] = mention
        elif mention.confidence > kept.confidence or (
            kept.kind == "concept" and mention.kind != "concept"
        ):
            result[position[key]] = EntityMention(
                kept.name, mention.kind, mention.confidence, tentative=kept.tentative
            )
    return result


def _chunks(text: str, size: int) -> Iterator[str]:
    """Split ``text`` into pieces of at most ``size`` characters, at whitespace when possible."""
    start = 0
    while start < len(text):
        end = min(start + size, len(text))
        if end < len(text):
            cut = text.rfind(" ", start + size // 2, end)
            if cut > start:
                end = cut
        yield text[start:end]
        start = end
