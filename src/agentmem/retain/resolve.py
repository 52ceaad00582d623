"""Entity resolution: decide whether a mention names an entity the bank already knows.

The resolver is conservative on purpose: a duplicate entity costs a little recall, a wrong merge
("Tigran" into "Iran", "Room 101" into "Room 102", the person "Apple" into the company) silently
mixes two subjects' facts and is much harder to undo. When the evidence is not clear it returns
``None`` and the caller creates a new entity.

Usage from the retain pipeline::

    index = EntityIndex(entities_loaded_from_the_store)      # built once per bank
    resolver = EntityResolver(overrides=user_aliases, splits=user_splits)

    names = [m.name.casefold() for m in fact.entities]
    for mention in fact.entities:
        context = [n for n in names if n != mention.name.casefold()]
        match = resolver.resolve(mention, index, context)
        canonical = resolver.canonical_name(mention, match)
        if match is None:
            entity = KnownEntity(id=new_id(), name=canonical, kind=mention.kind, aliases=())
            index.add(entity.with_mention(mention.name, canonical=canonical, neighbors=context))
        else:
            index.update(match.with_mention(mention.name, canonical=canonical, neighbors=context))

``resolve`` also accepts a plain sequence of :class:`KnownEntity`, but then builds a throwaway
index on every call; keep an :class:`EntityIndex` when resolving more than a few mentions.
``EntityIndex`` is not thread-safe: guard it with a lock if several threads write to it.

Rules, in order (the first that applies decides):

1. **User corrections.** ``splits`` (never-merge name pairs) veto any candidate; ``overrides``
   (alias → canonical name) send a mention straight to the entity with that name.
2. **Exact name or alias** (case-insensitive) with a compatible kind: same kind, either side
   "concept", or two non-person kinds (NER often swaps org and place). A person never matches
   an org, place, product or event, even with the same name.
3. **Persons**: first names must agree (equal, a nickname of the other, or an initial), surnames
   must agree when both are given ("Alice Chen" vs "Alice Wong" never merge), and at least one
   full name part must match. A bare first name matches a full name with that first name.
4. **Everything else**, same kind only: equal after dropping "the" and corporate suffixes
   (Inc, Corp, Ltd, ...); acronyms of places and orgs ("NYC" ↔ "New York City"); an org name
   plus designators such as "Group" or "University"; else a rapidfuzz score at or above
   ``threshold``. Differing numbers never merge, names of five characters or fewer must match
   exactly, and every word of one name must closely match a word of the other.

When several entities qualify, the one whose ``neighbors`` share the most names with the
mention's ``context`` wins; a tie means ``None``.

Candidates are found by dictionary look-ups (exact key, first name, surname, org core words,
acronym initials) and one ``rapidfuzz.process.extract`` call per mention with a score cutoff,
so the cost per mention does not grow with pairwise Python comparisons over the whole bank.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from rapidfuzz import fuzz, process
from rapidfuzz.utils import default_process

from agentmem.errors import InvalidInputError, NotFoundError
from agentmem.retain.facts import EntityMention

__all__ = [
    "FIRM_KIND",
    "HONORIFICS",
    "NICKNAMES",
    "EntityIndex",
    "EntityResolver",
    "KnownEntity",
    "VOTED_KINDS",
]


def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Formal first name -> the nicknames it goes by. A nickname may serve several formal names
# ("alex", "sam", "chris"); it is then compatible with each of them.
NICKNAMES: Mapping[str, tuple[str, ...]] = {
    "abigail": ("abby", "abbie"),
    "albert": ("al", "bert"),
    "alexander": ("alex", "xander", "sasha"),
    "alexandra": ("alex", "lexi", "sasha"),
    "alfred": ("alfie", "al"),
    "allison": ("ally", "allie"),
    "amanda": ("mandy",),
    "andrew": ("andy", "drew"),
    "anthony": ("tony",),
    "barbara": ("barb", "babs"),
    "benjamin": ("ben", "benny", "benji"),
    "catherine": ("cathy", "kate", "katie", "cat"),
    "charles": ("charlie", "chuck", "chas"),
    "christina": ("chris", "tina", "chrissy"),
    "christine": ("chris", "tina", "chrissy"),
    "christopher": ("chris", "kit", "topher"),
    "cynthia": ("cindy",),
    "daniel": ("dan", "danny"),
    "david": ("dave", "davey"),
    "deborah": ("deb", "debbie"),
    "donald": ("don", "donnie"),
    "dorothy": ("dot", "dottie"),
    "douglas": ("doug",),
    "edward": ("ed", "eddie", "ted", "ned"),
    "eleanor": ("ellie", "nora"),
    "elizabeth": ("liz", "lizzie", "beth", "betty", "eliza", "libby"),
    "emily": ("em", "emmy"),
    "eugene": ("gene",),
    "evelyn": ("evie",),
    "frances": ("fran", "frankie"),
    "francis": ("frank", "frankie"),
    "frederick": ("fred", "freddie"),
    "gabriel": ("gabe",),
    "gabrielle": ("gabby", "gabi"),
    "geoffrey": ("geoff", "jeff"),
    "gerald": ("gerry", "jerry"),
    "gregory": ("greg",),
    "harold": ("harry", "hal"),
    "henry": ("harry", "hank", "hal"),
    "isabel": ("izzy", "bella"),
    "isabella": ("izzy", "bella"),
    "jacob": ("jake",),
    "jacqueline": ("jackie",),
    "james": ("jim", "jimmy", "jamie"),
    "jeffrey": ("jeff",),
    "jennifer": ("jen", "jenny"),
    "jessica": ("jess", "jessie"),
    "john": ("jack", "johnny"),
    "jonathan": ("jon", "jonny"),
    "joseph": ("joe", "joey"),
    "josephine": ("jo", "josie"),
    "joshua": ("josh",),
    "judith": ("judy",),
    "katherine": ("kate", "katie", "kathy", "kat", "kitty"),
    "kathryn": ("kate", "katie", "kathy"),
    "kenneth": ("ken", "kenny"),
    "kimberly": ("kim",),
    "lawrence": ("larry",),
    "leonard": ("leo", "len", "lenny"),
    "louis": ("lou",),
    "louise": ("lou",),
    "madeline": ("maddie",),
    "margaret": ("maggie", "meg", "peggy", "marge"),
    "matthew": ("matt",),
    "maxwell": ("max",),
    "maximilian": ("max",),
    "melissa": ("mel", "missy"),
    "michael": ("mike", "mikey", "mick"),
    "mitchell": ("mitch",),
    "natalie": ("nat",),
    "natasha": ("tasha",),
    "nathan": ("nate",),
    "nathaniel": ("nate", "nat"),
    "nicholas": ("nick", "nicky"),
    "nicole": ("nikki",),
    "olivia": ("liv",),
    "pamela": ("pam",),
    "patricia": ("pat", "patty", "trish"),
    "patrick": ("pat", "paddy"),
    "penelope": ("penny",),
    "peter": ("pete",),
    "philip": ("phil",),
    "raymond": ("ray",),
    "rebecca": ("becky", "becca"),
    "richard": ("rick", "ricky", "rich", "richie", "dick"),
    "robert": ("bob", "bobby", "rob", "robbie", "bert"),
    "ronald": ("ron", "ronnie"),
    "samantha": ("sam", "sammy"),
    "samuel": ("sam", "sammy"),
    "sandra": ("sandy",),
    "sophia": ("sophie",),
    "stanley": ("stan",),
    "stephen": ("steve",),
    "steven": ("steve",),
    "susan": ("sue", "susie"),
    "teresa": ("terry", "tess"),
    "terence": ("terry",),
    "theodore": ("ted", "teddy", "theo"),
    "thomas": ("tom", "tommy"),
    "timothy": ("tim", "timmy"),
    "victoria": ("vicky", "tori"),
    "vincent": ("vince", "vinny"),
    "walter": ("walt", "wally"),
    "william": ("bill", "billy", "will", "willy", "liam"),
    "zachary": ("zach", "zack"),
}

# Titles before and generational/degree suffixes after a person's name; they say nothing
# about who the person is, so they are dropped before names are compared.
HONORIFICS: frozenset[str] = _word_set(
    "mr mrs ms miss mx dr doc doctor prof professor sir dame lord lady rev reverend fr father "
    "sr sister br brother capt captain col gen lt sgt officer coach judge nurse detective "
    "inspector pastor rabbi imam aunt auntie uncle"
)
_NAME_SUFFIXES = _word_set("jr sr ii iii iv phd md esq dds")
# Dropped from the end of org names before comparison ("ACME Inc." is "Acme").
_CORPORATE_SUFFIXES = _word_set(
    "inc incorporated corp corporation co company ltd limited llc llp plc gmbh ag sa srl "
    "bv nv pty oy ab kk"
)
# Words an org name may gain or lose and still name the same org ("Acme" ↔ "Acme Group").
_ORG_DESIGNATORS = _CORPORATE_SUFFIXES | _word_set(
    "group holdings university college institute foundation labs lab technologies international"
)
# Skipped when forming acronyms ("MIT" ↔ "Massachusetts Institute of Technology").
_ACRONYM_SKIP = _word_set("of the and for de du la le at in on")
_NON_PERSON_KINDS = frozenset({"org", "place", "product", "event"})
#: Kinds a mention may vote for; an entity of another kind (a label) keeps it.
VOTED_KINDS = frozenset({"person", *_NON_PERSON_KINDS, "concept"})
#: Support at which a kind is taken as settled (about one strong cue: "Marco's sister",
#: "Fernwood Labs"); below it, a same-named mention of a conflicting kind joins the entity
#: and votes instead of founding a second one.
FIRM_KIND = 3.0
_SHORT_NAME_LEN = 5
# Per-word guard for fuzzy matches: each word needs a counterpart at least this similar.
_TOKEN_SIMILARITY = 80.0
_FUZZY_LIMIT = 20

_ACRONYM_RE = re.compile(r"(?:[A-Z]\.?){2,}")
_NAME_WORD_RE = re.compile(r"[^\W\d_]+(?:['’\-][^\W\d_]+)*")
_DIGITS_RE = re.compile(r"\d+")
# Surrounding punctuation that never belongs to a name; "+" and "#" stay for "C++" and "C#".
_EDGE_PUNCT = " \t\n.,;:!?\"'`()[]{}<>«»“”‘’"


@dataclass(frozen=True, slots=True)
class KnownEntity:
    """An entity the bank already holds, as the resolver sees it.

    Attributes:
        id: Stable entity id.
        name: Canonical name.
        kind: person, org, place, product, event or concept.
        aliases: Other names it has been mentioned by.
        neighbors: Lowercased canonical names of entities it co-occurs with; used to tell
            apart entities that share a first name.
        kind_votes: (kind, summed confidence) over the mentions resolved to it, by kind; the
            kind with the most support is ``kind``. Empty for an entity stored before votes
            were kept: its kind then counts as one weak vote.
    """

    id: str
    name: str
    kind: str
    aliases: tuple[str, ...]
    neighbors: frozenset[str] = frozenset()
    kind_votes: tuple[tuple[str, float], ...] = ()

    @property
    def votes(self) -> dict[str, float]:
        """Summed confidence per kind (the stored kind at weight 1 when nothing was voted)."""
        return dict(self.kind_votes) if self.kind_votes else {self.kind: 1.0}

    @property
    def kind_is_firm(self) -> bool:
        """Whether the evidence for the entity's kind is strong enough to keep it apart from
        a same-named entity of another kind (the person "Apple" and the company)."""
        return self.votes.get(self.kind, 0.0) >= FIRM_KIND

    @property
    def names(self) -> tuple[str, ...]:
        """The canonical name followed by the aliases."""
        return (self.name, *self.aliases)

    def with_mention(
        self,
        name: str,
        *,
        canonical: str | None = None,
        neighbors: Iterable[str] = (),
        vote: tuple[str, float] | None = None,
    ) -> KnownEntity:
        """Return a copy that has absorbed a resolved mention.

        Args:
            name: The mention's name; kept as an alias unless it equals the canonical name.
            canonical: The new canonical name (from :meth:`EntityResolver.canonical_name`); the
                previous canonical name becomes an alias. ``None`` keeps the current one.
            neighbors: Names of the entities mentioned alongside it; lowercased and added.
            vote: The mention's (kind, confidence), added to :attr:`kind_votes`; the entity
                takes the kind with the most support.
        """
        new_name = (canonical or self.name).strip() or self.name
        seen = {_exact_key(new_name)}
        aliases: list[str] = []
        for alias in (self.name, *self.aliases, name):
            key = _exact_key(alias)
            if key and key not in seen:
                seen.add(key)
                aliases.append(alias.strip())
        own = new_name.casefold()
        added = {n.casefold() for n in neighbors if n and n.casefold() != own}
        kind, votes = self.kind, self.kind_votes
        if vote is not None and vote[1] > 0 and vote[0] in VOTED_KINDS:
            tally = self.votes
            tally[vote[0]] = round(tally.get(vote[0], 0.0) + vote[1], 4)
            votes = tuple(sorted(tally.items()))
            if self.kind in VOTED_KINDS:
                kind = max(tally, key=lambda k: (tally[k], k == self.kind))
        return replace(
            self,
            name=new_name,
            aliases=tuple(aliases),
            neighbors=self.neighbors | added,
            kind=kind,
            kind_votes=votes,
        )


def _exact_key(name: str) -> str:
    """Case- and spacing-insensitive key; the unit of an exact match."""
    text = unicodedata.normalize("NFKC", name).casefold()
    return " ".join(text.split()).strip(_EDGE_PUNCT)


def _words(name: str) -> list[str]:
    """Lowercased alphanumeric words, punctuation removed (rapidfuzz's default processor)."""
    return default_process(unicodedata.normalize("NFKC", name)).split()


def _core_words(name: str, kind: str) -> tuple[str, ...]:
    """The words that identify a non-person name: no leading "the", no corporate suffix."""
    words = _words(name)
    if len(words) > 1 and words[0] == "the":
        words = words[1:]
    if kind == "org":
        while len(words) > 1 and words[-1] in _CORPORATE_SUFFIXES:
            words = words[:-1]
        if len(words) > 1 and words[-1] == "s":
            words = words[:-1]  # "McDonald's" (the shop) is "McDonald" ("McDonald's fries")
    if kind == "product" and len(words) > 1 and words[0] == "project":
        words = words[1:]  # "Project Lantern" is "Lantern"
    return tuple(words)


def _initials(words: Sequence[str]) -> set[str]:
    """Acronyms a multi-word name could be written as, with and without small words."""
    if len(words) < 2:
        return set()
    found = {"".join(w[0] for w in words)}
    kept = [w for w in words if w not in _ACRONYM_SKIP]
    if len(kept) >= 2:
        found.add("".join(w[0] for w in kept))
    return found


def _acronyms_of(name: str, core: Sequence[str]) -> set[str]:
    """Acronym keys of a name: its own letters if it is one, else its possible initials."""
    letters = _acronym_letters(name)
    return {letters} if letters else _initials(core)


def _acronym_letters(name: str) -> str | None:
    """The lowercase letters of an all-caps acronym ("NYC", "U.S."), else ``None``."""
    compact = name.strip()
    if _ACRONYM_RE.fullmatch(compact):
        return compact.replace(".", "").casefold()
    return None


@dataclass(frozen=True, slots=True)
class _PersonName:
    """A person's name split into comparable parts (lowercased, titles and suffixes dropped)."""

    parts: tuple[str, ...]
    title: str  # "" when the name had none

    @property
    def titled(self) -> bool:
        return bool(self.title)

    @property
    def first(self) -> str:
        return self.parts[0]

    @property
    def last(self) -> str:
        return self.parts[-1]


@lru_cache(maxsize=16384)
def _parse_person(name: str) -> _PersonName | None:
    words = _NAME_WORD_RE.findall(unicodedata.normalize("NFKC", name).casefold())
    title = ""
    while len(words) > 1 and words[0] in HONORIFICS:
        title, words = words[0], words[1:]
    while len(words) > 1 and words[-1] in _NAME_SUFFIXES:
        words = words[:-1]
    if not words:
        return None
    return _PersonName(parts=tuple(words), title=title)


class _Nicknames:
    """First-name equivalence through a nickname table."""

    def __init__(self, table: Mapping[str, Collection[str]]) -> None:
        formal_of: dict[str, set[str]] = {}
        for formal, nicks in table.items():
            formal_key = formal.casefold().strip()
            formal_of.setdefault(formal_key, set()).add(formal_key)
            for nick in nicks:
                formal_of.setdefault(nick.casefold().strip(), set()).add(formal_key)
        self._formal_of = {name: frozenset(forms) for name, forms in formal_of.items()}
        group: dict[str, set[str]] = {}
        for name, forms in formal_of.items():
            for formal in forms:
                group.setdefault(formal, set()).add(name)
        self._group = {formal: frozenset(names) for formal, names in group.items()}

    def keys(self, first: str) -> frozenset[str]:
        """The name itself and every formal name it may stand for.

        Two first names are compatible exactly when their key sets intersect.
        """
        return self._formal_of.get(first, frozenset()) | {first}

    def variants(self, first: str) -> frozenset[str]:
        """Every first name compatible with ``first`` (used to look up candidates)."""
        found = set(self.keys(first))
        for formal in self.keys(first):
            found |= self._group.get(formal, frozenset())
        return frozenset(found)

    def compatible(self, a: str, b: str) -> bool:
        if len(a) == 1 or len(b) == 1:
            return a[0] == b[0]
        return a == b or not self.keys(a).isdisjoint(self.keys(b))


def _persons_match(m: _PersonName, k: _PersonName, nicknames: _Nicknames) -> bool:
    """Whether two person names can denote the same person, without conflicting parts."""
    if len(m.parts) == 1 and len(k.parts) == 1:
        if m.titled or k.titled:
            # A bare surname is only as specific as its title: "Mr. Smith" is not "Mrs. Smith".
            return m.parts == k.parts and m.title == k.title
        a, b = m.first, k.first
        return a == b or (len(a) > 1 and len(b) > 1 and nicknames.compatible(a, b))
    if m.parts == k.parts:
        return True
    if len(m.parts) == 1 or len(k.parts) == 1:
        single, full = (m, k) if len(m.parts) == 1 else (k, m)
        word = single.first
        if len(word) == 1:
            return False
        if single.titled:
            return word == full.last
        return len(full.first) > 1 and nicknames.compatible(word, full.first)
    # Both have a first name and a surname.
    if not nicknames.compatible(m.first, k.first):
        return False
    if m.last != k.last and not ((len(m.last) == 1 or len(k.last) == 1) and m.last[0] == k.last[0]):
        return False
    m_mid, k_mid = m.parts[1:-1], k.parts[1:-1]
    if m_mid and k_mid and not nicknames.compatible(m_mid[0], k_mid[0]):
        return False
    first_full = len(m.first) > 1 and len(k.first) > 1
    last_full = len(m.last) > 1 and len(k.last) > 1
    # "A. C." against "Alice Chen" agrees everywhere but proves nothing.
    return first_full or last_full


def _digits(name: str) -> tuple[str, ...]:
    return tuple(sorted(d.lstrip("0") or "0" for d in _DIGITS_RE.findall(name)))


def _words_align(a: Sequence[str], b: Sequence[str]) -> bool:
    """Every word of each name has a close counterpart in the other; short words exactly."""

    def covered(xs: Sequence[str], ys: Sequence[str]) -> bool:
        for x in xs:
            if len(x) <= 3:
                if x not in ys:
                    return False
            elif not any(fuzz.ratio(x, y) >= _TOKEN_SIMILARITY for y in ys):
                return False
        return True

    return covered(a, b) and covered(b, a)


# A block key names one look-up table entry: ("exact", name), ("first", first name),
# ("last", surname), ("core", kind, core words), ("edge", kind, digits, first or last core
# word), ("acronym", kind, digits, letters). Non-person names match only with the same
# numbers ("Room 101" is not "Room 102"), so the edge and acronym tables, and the fuzzy
# tables, are split by them: a new "Invoice INV-2047" is compared with the invoices that carry
# its number, not with every invoice the bank has seen.
_BlockKey = tuple[str | tuple[str, ...], ...]
# An entity's name in the fuzzy tables: (entity id, position in ``KnownEntity.names``).
_Slot = tuple[str, int]


class EntityIndex:
    """Known entities with look-up tables for cheap candidate blocking.

    Build it once per bank from the stored entities and keep it current with :meth:`add` and
    :meth:`update` as the retain pipeline creates and merges entities. Not thread-safe.

    Args:
        entities: Initial entities; ids must be unique.
    """

    def __init__(self, entities: Iterable[KnownEntity] = ()) -> None:
        self._by_id: dict[str, KnownEntity] = {}
        self._blocks: dict[_BlockKey, set[str]] = {}
        self._block_keys: dict[str, set[_BlockKey]] = {}
        # (kind, digits) -> {slot: core name}, the choices of one rapidfuzz call per mention.
        self._fuzzy: dict[tuple[str, tuple[str, ...]], dict[_Slot, str]] = {}
        for entity in entities:
            self.add(entity)

    def __len__(self) -> int:
        return len(self._by_id)

    def __contains__(self, entity_id: object) -> bool:
        return entity_id in self._by_id

    def __iter__(self) -> Iterator[KnownEntity]:
        return iter(list(self._by_id.values()))

    def get(self, entity_id: str) -> KnownEntity | None:
        """Return the entity with this id, or ``None``."""
        return self._by_id.get(entity_id)

    def add(self, entity: KnownEntity) -> None:
        """Add a new entity.

        Raises:
            InvalidInputError: An entity with this id is already indexed.
        """
        if entity.id in self._by_id:
            raise InvalidInputError(f"entity {entity.id!r} is already in the index")
        self._insert(entity)

    def update(self, entity: KnownEntity) -> None:
        """Replace the indexed entity that has ``entity.id`` (after a merge or rename).

        Raises:
            NotFoundError: No entity with this id is indexed.
        """
        if entity.id not in self._by_id:
            raise NotFoundError(f"entity {entity.id!r} is not in the index")
        self.remove(entity.id)
        self._insert(entity)

    def remove(self, entity_id: str) -> None:
        """Remove an entity; unknown ids are ignored."""
        entity = self._by_id.pop(entity_id, None)
        if entity is None:
            return
        for key in self._block_keys.pop(entity_id, set()):
            ids = self._blocks.get(key)
            if ids is not None:
                ids.discard(entity_id)
                if not ids:
                    del self._blocks[key]
        for position, name in enumerate(entity.names):
            choices = self._fuzzy.get((entity.kind, _digits(name)), {})
            choices.pop((entity_id, position), None)

    def _insert(self, entity: KnownEntity) -> None:
        self._by_id[entity.id] = entity
        keys = self._block_keys.setdefault(entity.id, set())
        kind = entity.kind
        for position, name in enumerate(entity.names):
            exact = _exact_key(name)
            if not exact:
                continue
            keys.add(("exact", exact))
            if kind == "person":
                person = _parse_person(name)
                if person is None:
                    continue
                # Raw first names only, so the index does not depend on a nickname table;
                # look-ups expand the mention's first name instead.
                if len(person.parts) > 1 or not person.titled:
                    keys.add(("first", person.first))
                if len(person.parts) > 1 or person.titled:
                    keys.add(("last", person.last))
                continue
            core = _core_words(name, kind)
            if not core:
                continue
            digits = _digits(name)
            keys.add(("core", kind, " ".join(core)))
            if kind == "org":
                keys.update({("edge", kind, digits, core[0]), ("edge", kind, digits, core[-1])})
            if kind in ("org", "place"):
                keys.update(("acronym", kind, digits, a) for a in _acronyms_of(name, core))
            self._fuzzy.setdefault((kind, digits), {})[(entity.id, position)] = " ".join(core)
        for key in keys:
            self._blocks.setdefault(key, set()).add(entity.id)

    # Candidate look-ups used by EntityResolver; each returns entity ids.

    def _ids(self, key: _BlockKey) -> set[str]:
        return self._blocks.get(key, set())

    def _ids_person(self, person: _PersonName, nicknames: _Nicknames) -> set[str]:
        found: set[str] = set()
        if len(person.parts) > 1 or not person.titled:
            for first in nicknames.variants(person.first):
                found |= self._ids(("first", first))
        if len(person.parts) > 1 or person.titled:
            found |= self._ids(("last", person.last))
        return found

    def _ids_non_person(self, kind: str, name: str, threshold: float) -> set[str]:
        core = _core_words(name, kind)
        if not core:
            return set()
        digits = _digits(name)
        found = set(self._ids(("core", kind, " ".join(core))))
        if kind == "org":
            found |= self._ids(("edge", kind, digits, core[0]))
            found |= self._ids(("edge", kind, digits, core[-1]))
        if kind in ("org", "place"):
            for acronym in _acronyms_of(name, core):
                found |= self._ids(("acronym", kind, digits, acronym))
        choices = self._fuzzy.get((kind, digits))
        if choices:
            hits = process.extract(
                " ".join(core),
                choices,
                scorer=fuzz.token_sort_ratio,
                processor=None,
                score_cutoff=threshold,
                limit=_FUZZY_LIMIT,
            )
            found |= {slot[0] for _, _, slot in hits}
        return found


_DEFAULT_NICKNAMES = _Nicknames(NICKNAMES)


class EntityResolver:
    """Decides which known entity, if any, a mention refers to.

    Args:
        nicknames: Formal first name -> nicknames. ``None`` uses :data:`NICKNAMES`; to extend
            it pass ``{**NICKNAMES, "margaret": ("maggie", "daisy")}``.
        threshold: rapidfuzz score (0-100) a non-person name needs to count as a spelling
            variant of a known one. High by default: typos merge, different names do not.
        overrides: User corrections, alias -> canonical name ("the boss" -> "Maria Lopez").
            A mention with that alias resolves to the entity with that canonical name
            whatever its kind; if no such entity exists yet, the new entity gets that name.
        splits: User-declared pairs of names that never denote the same entity. They veto
            every rule, overrides included.

    Raises:
        InvalidInputError: ``threshold`` is outside [0, 100].
    """

    def __init__(
        self,
        *,
        nicknames: Mapping[str, Collection[str]] | None = None,
        threshold: float = 90.0,
        overrides: Mapping[str, str] | None = None,
        splits: Collection[tuple[str, str]] = (),
    ) -> None:
        if not 0.0 <= threshold <= 100.0:
            raise InvalidInputError(f"threshold must be in [0, 100], got {threshold}")
        self._nicknames = _DEFAULT_NICKNAMES if nicknames is None else _Nicknames(nicknames)
        self._threshold = float(threshold)
        self._overrides = {
            _exact_key(alias): target.strip()
            for alias, target in (overrides or {}).items()
            if _exact_key(alias) and target.strip()
        }
        self._splits = {
            frozenset((_exact_key(a), _exact_key(b))) for a, b in splits if _exact_key(a)
        }

    def resolve(
        self,
        mention: EntityMention,
        known: EntityIndex | Sequence[KnownEntity],
        context: Collection[str] = (),
    ) -> KnownEntity | None:
        """Return the known entity this mention refers to, or ``None`` for a new entity.

        Args:
            mention: The name and kind found in a fact.
            known: The bank's entities; pass an :class:`EntityIndex` when resolving many.
            context: Lowercased names of the other entities in the same fact or turn.

        Returns:
            The matching entity, or ``None`` when there is none or the choice is ambiguous.
        """
        index = known if isinstance(known, EntityIndex) else EntityIndex(known)
        key = _exact_key(mention.name)
        if not key or not len(index):
            return None
        context_names = self._expand_context(context, index)

        target = self._overrides.get(key)
        if target is not None:
            target_key = _exact_key(target)
            found = [
                e
                for e in self._entities(index, index._ids(("exact", target_key)))
                if not self._is_split(key, e)
            ]
            if found:
                named = [e for e in found if _exact_key(e.name) == target_key] or found
                same_kind = [e for e in named if e.kind == mention.kind] or named
                return self._pick(same_kind, context_names) or same_kind[0]
            return None

        exact = [
            e
            for e in self._entities(index, index._ids(("exact", key)))
            if _exact_kinds_compatible(mention, e) and not self._is_split(key, e)
        ]
        if exact:
            return self._pick_exact(exact, key, mention.kind, context_names)

        if mention.kind == "person":
            person = _parse_person(mention.name)
            if person is None:
                return None
            candidates = [
                e
                for e in self._entities(index, index._ids_person(person, self._nicknames))
                if e.kind == "person"
                and not self._is_split(key, e)
                and self._person_matches_entity(person, e)
            ]
        else:
            ids = index._ids_non_person(mention.kind, mention.name, self._threshold)
            candidates = [
                e
                for e in self._entities(index, ids)
                if e.kind == mention.kind
                and not self._is_split(key, e)
                and any(self._non_persons_match(mention.name, n, mention.kind) for n in e.names)
            ]
        if len(candidates) == 1:
            return candidates[0]
        return self._pick(candidates, context_names)

    def canonical_name(self, mention: EntityMention, match: KnownEntity | None) -> str:
        """The name to keep as canonical after resolving ``mention`` to ``match``.

        An override's target wins; a new entity takes the mention's name; a person keeps the
        fuller of the two names ("Alice Chen" over "Alice" or "Alice C.", "Robert Chen" over
        "Bob"); other kinds keep the established name.
        """
        target = self._overrides.get(_exact_key(mention.name))
        if target is not None:
            return target
        name = " ".join(mention.name.split())
        if match is None:
            return name
        if match.kind != "person" or mention.kind not in ("person", "concept"):
            return match.name
        return name if _name_fullness(name) > _name_fullness(match.name) else match.name

    # -- internals -------------------------------------------------------------------------

    @staticmethod
    def _entities(index: EntityIndex, ids: Iterable[str]) -> list[KnownEntity]:
        # Sorted so that ties and "first" choices do not depend on set iteration order.
        return [e for i in sorted(ids) if (e := index.get(i)) is not None]

    def _is_split(self, mention_key: str, entity: KnownEntity) -> bool:
        if not self._splits:
            return False
        return any(frozenset((mention_key, _exact_key(n))) in self._splits for n in entity.names)

    @staticmethod
    def _expand_context(context: Collection[str], index: EntityIndex) -> frozenset[str]:
        """Context names plus the canonical names of the entities they exactly name.

        Neighbors hold canonical names while context holds surface names; mapping one onto
        the other lets "bob" in a turn count as the neighbor "robert chen".
        """
        names: set[str] = set()
        for raw in context:
            key = _exact_key(raw)
            if not key:
                continue
            names.add(key)
            for entity_id in index._ids(("exact", key)):
                entity = index.get(entity_id)
                if entity is not None:
                    names.add(entity.name.casefold())
        return frozenset(names)

    @staticmethod
    def _pick(candidates: Sequence[KnownEntity], context: frozenset[str]) -> KnownEntity | None:
        """The candidate sharing the most neighbors with the context; ``None`` on a tie."""
        if not candidates or not context:
            return None
        scored = sorted(
            ((len(context & {n.casefold() for n in e.neighbors}), e) for e in candidates),
            key=lambda pair: pair[0],
            reverse=True,
        )
        best_score, best = scored[0]
        if best_score == 0 or (len(scored) > 1 and scored[1][0] == best_score):
            return None
        return best

    def _pick_exact(
        self,
        candidates: list[KnownEntity],
        key: str,
        kind: str,
        context: frozenset[str],
    ) -> KnownEntity | None:
        if len(candidates) == 1:
            return candidates[0]
        same_kind = [e for e in candidates if e.kind == kind] or candidates
        if len(same_kind) == 1:
            return same_kind[0]
        by_context = self._pick(same_kind, context)
        if by_context is not None:
            return by_context
        # Without context, an entity actually called this beats ones that merely alias it.
        named = [e for e in same_kind if _exact_key(e.name) == key]
        return named[0] if len(named) == 1 else None

    def _person_matches_entity(self, person: _PersonName, entity: KnownEntity) -> bool:
        """One of the entity's names fits the mention and none of its full names conflicts.

        The conflict check matters once an entity has collected aliases: "Alice Chen" known
        also as "Alice" must not take "Alice Wong" through the bare alias.
        """
        matched = False
        for name in entity.names:
            known = _parse_person(name)
            if known is None:
                continue
            if _persons_match(person, known, self._nicknames):
                matched = True
            elif len(person.parts) > 1 and len(known.parts) > 1:
                return False
        return matched

    def _non_persons_match(self, mention: str, known: str, kind: str) -> bool:
        if _digits(mention) != _digits(known):
            return False  # "Room 101" / "Room 102", "iPhone 14" / "iPhone 15"
        a, b = _core_words(mention, kind), _core_words(known, kind)
        if not a or not b:
            return False
        if a == b:
            return True
        if kind in ("org", "place"):
            for acronym, expanded in ((mention, b), (known, a)):
                letters = _acronym_letters(acronym)
                if letters and len(letters) >= 2 and letters in _initials(expanded):
                    return True
        if kind == "org" and len(a) != len(b):
            short, long_ = (a, b) if len(a) < len(b) else (b, a)
            n = len(short)
            if long_[:n] == short and set(long_[n:]) <= _ORG_DESIGNATORS:
                return True
            if long_[-n:] == short and set(long_[:-n]) <= _ORG_DESIGNATORS:
                return True
        if len(" ".join(a)) <= _SHORT_NAME_LEN or len(" ".join(b)) <= _SHORT_NAME_LEN:
            return False  # "Tigran" / "Iran", "Iran" / "Iraq": too short to judge spelling
        if len(a) != len(b):
            return False
        score = fuzz.token_sort_ratio(" ".join(a), " ".join(b), processor=None)
        return score >= self._threshold and _words_align(a, b)


def _exact_kinds_compatible(mention: EntityMention, entity: KnownEntity) -> bool:
    """Same kind, either side a concept, two non-person kinds, or a conflict that the
    evidence does not settle on both sides (then the mention votes on the entity's kind)."""
    a, b = mention.kind, entity.kind
    if a == b or "concept" in (a, b):
        return True
    if a in _NON_PERSON_KINDS and b in _NON_PERSON_KINDS:
        return True
    firm = mention.confidence >= FIRM_KIND and entity.kind_is_firm
    return not firm and a in VOTED_KINDS and b in VOTED_KINDS


def _name_fullness(name: str) -> tuple[int, int]:
    """How complete a person's name is: full name parts first, then length."""
    person = _parse_person(name)
    if person is None:
        return (0, 0)
    full = sum(1 for part in person.parts if len(part) > 1)
    return (full, len(" ".join(person.parts)))
