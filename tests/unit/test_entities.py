"""Entity recognition (real spaCy output) and resolution (a labelled merge / no-merge table)."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass, field, replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentmem.errors import InvalidInputError, NotFoundError
from agentmem.retain.entities import (
    ENTITY_KINDS,
    recognize_entities,
    recognize_entities_in_text,
)
from agentmem.retain.entity_kinds import SPACY_WEIGHT
from agentmem.retain.facts import EntityMention
from agentmem.retain.name_prior import NAME_PRIOR_WEIGHT, name_prior
from agentmem.retain.resolve import (
    FIRM_KIND,
    NICKNAMES,
    EntityIndex,
    EntityResolver,
    KnownEntity,
)


def entity(
    id: str, name: str, kind: str = "person", aliases: tuple[str, ...] = (), neighbors: Any = ()
) -> KnownEntity:
    return KnownEntity(id=id, name=name, kind=kind, aliases=aliases, neighbors=frozenset(neighbors))


# -- resolution: the labelled table ----------------------------------------------------------


@dataclass(frozen=True)
class Case:
    id: str
    mention: str
    kind: str
    known: tuple[KnownEntity, ...]
    expected: str | None  # id of the entity it must resolve to, None for "new entity"
    context: tuple[str, ...] = ()
    resolver: dict[str, Any] = field(default_factory=dict)
    confidence: float = 1.0  # of the mention's kind


def firm(known: KnownEntity) -> KnownEntity:
    """The entity with settled evidence for its kind."""
    return replace(known, kind_votes=((known.kind, FIRM_KIND),))


ALICE_CHEN = entity("alice-chen", "Alice Chen")
ALICE_WONG = entity("alice-wong", "Alice Wong")
ROBERT_CHEN = entity("robert-chen", "Robert Chen", neighbors={"google", "mountain view"})
ROBERT_MILES = entity("robert-miles", "Robert Miles", neighbors={"stanford", "palo alto"})
APPLE_INC = entity("apple-inc", "Apple Inc.", "org")
NYC = entity("nyc", "New York City", "place")
ACME = entity("acme", "Acme", "org")

CASES = [
    # Persons: first name, initial, full name.
    Case("first-name-to-full-name", "Alice", "person", (ALICE_CHEN,), "alice-chen"),
    Case("initial-surname-to-full-name", "Alice C.", "person", (ALICE_CHEN,), "alice-chen"),
    Case("full-name-to-first-name", "Alice Chen", "person", (entity("a", "Alice"),), "a"),
    Case("initial-surname-to-first-name", "Alice C.", "person", (entity("a", "Alice"),), "a"),
    Case("initial-first-name-to-full", "A. Chen", "person", (ALICE_CHEN,), "alice-chen"),
    Case("only-initials-prove-nothing", "A. C.", "person", (ALICE_CHEN,), None),
    Case("different-surnames-never-merge", "Alice Wong", "person", (ALICE_CHEN,), None),
    Case(
        "different-surname-not-through-a-bare-alias",
        "Alice Wong",
        "person",
        (entity("alice-chen", "Alice Chen", aliases=("Alice",)),),
        None,
    ),
    Case("initial-conflicts-with-surname", "Alice C.", "person", (ALICE_WONG,), None),
    Case(
        "middle-names-conflict",
        "John Paul Smith",
        "person",
        (entity("jms", "John Mark Smith"),),
        None,
    ),
    Case(
        "bare-surname-is-not-a-first-name", "Smith", "person", (entity("js", "John Smith"),), None
    ),
    Case("titled-surname", "Dr. Smith", "person", (entity("js", "John Smith"),), "js"),
    Case("titles-differ", "Mrs. Smith", "person", (entity("ms", "Mr. Smith"),), None),
    Case("same-title-other-spelling", "Dr Smith", "person", (entity("ds", "Dr. Smith"),), "ds"),
    Case("title-ignored-with-full-name", "Dr. Alice Chen", "person", (ALICE_CHEN,), "alice-chen"),
    # Persons: nicknames and co-occurrence.
    Case("nickname-to-full-name", "Bob", "person", (ROBERT_CHEN,), "robert-chen"),
    Case("nickname-with-surname", "Bob Chen", "person", (ROBERT_CHEN,), "robert-chen"),
    Case("two-nicknames-one-formal-name", "Rob", "person", (entity("b", "Bob Chen"),), "b"),
    Case("formal-name-to-bare-nickname", "Robert", "person", (entity("b", "Bob"),), "b"),
    Case(
        "nickname-of-several-picked-by-context",
        "Bob",
        "person",
        (ROBERT_CHEN, ROBERT_MILES),
        "robert-chen",
        context=("google",),
    ),
    Case(
        "nickname-of-several-other-context",
        "Bob",
        "person",
        (ROBERT_CHEN, ROBERT_MILES),
        "robert-miles",
        context=("stanford", "coffee"),
    ),
    Case("ambiguous-nickname-no-context", "Bob", "person", (ROBERT_CHEN, ROBERT_MILES), None),
    Case(
        "ambiguous-nickname-unrelated-context",
        "Bob",
        "person",
        (ROBERT_CHEN, ROBERT_MILES),
        None,
        context=("berlin",),
    ),
    Case(
        "ambiguous-nickname-tied-context",
        "Bob",
        "person",
        (ROBERT_CHEN, ROBERT_MILES),
        None,
        context=("google", "stanford"),
    ),
    Case("ambiguous-first-name", "Alice", "person", (ALICE_CHEN, ALICE_WONG), None),
    Case(
        "first-name-picked-by-context-through-an-alias",
        "Alice",
        "person",
        (
            entity("alice-chen", "Alice Chen", neighbors={"robert chen"}),
            entity("alice-wong", "Alice Wong", neighbors={"google"}),
            entity("robert-chen", "Robert Chen", aliases=("Bob",)),
        ),
        "alice-chen",
        context=("bob",),  # "bob" is an alias; neighbors hold the canonical "robert chen"
    ),
    Case("nickname-is-not-a-different-name", "Mike", "person", (entity("m", "Michelle Li"),), None),
    Case(
        "shared-nickname-ambiguous",
        "Chris",
        "person",
        (entity("ct", "Christina Lee"), entity("cr", "Christopher Park")),
        None,
    ),
    # Exact names and aliases short-circuit.
    Case(
        "exact-name-beats-first-name-ambiguity",
        "Alice",
        "person",
        (ALICE_CHEN, ALICE_WONG, entity("a", "Alice")),
        "a",
    ),
    Case(
        "exact-alias",
        "Bobby",
        "person",
        (entity("rc", "Robert Chen", aliases=("Bobby",)),),
        "rc",
    ),
    Case("exact-short-name", "Iran", "place", (entity("iran", "Iran", "place"),), "iran"),
    Case("exact-ignores-case", "ROOM 101", "place", (entity("r", "Room 101", "place"),), "r"),
    Case("exact-org-place-swap", "Stanford", "org", (entity("s", "Stanford", "place"),), "s"),
    Case("exact-concept-matches-any-kind", "Apple", "concept", (entity("a", "Apple", "org"),), "a"),
    # Kinds: a person is never an org, when the evidence for both kinds is firm.
    Case("person-apple-is-not-apple-inc", "Apple", "person", (APPLE_INC,), None),
    Case(
        "firm-person-apple-is-not-firm-org-apple",
        "Apple",
        "person",
        (firm(entity("a", "Apple", "org")),),
        None,
        confidence=FIRM_KIND,
    ),
    Case(
        "firm-org-jordan-is-not-firm-person-jordan",
        "Jordan",
        "org",
        (firm(entity("j", "Jordan")),),
        None,
        confidence=FIRM_KIND,
    ),
    # A conflict the evidence does not settle joins the entity (and votes on its kind).
    Case(
        "weak-person-joins-org",
        "Quixotrix",
        "person",
        (firm(entity("q", "Quixotrix", "org")),),
        "q",
    ),
    Case(
        "firm-person-joins-weak-place",
        "Giulia",
        "person",
        (entity("g", "Giulia", "place"),),
        "g",
        confidence=FIRM_KIND,
    ),
    Case(
        "fuzzy-needs-same-kind",
        "San Fransisco",
        "org",
        (entity("sf", "San Francisco", "place"),),
        None,
    ),
    # Short names and numbers.
    Case("tigran-is-not-iran", "Tigran", "place", (entity("iran", "Iran", "place"),), None),
    Case("iran-is-not-iraq", "Iraq", "place", (entity("iran", "Iran", "place"),), None),
    Case("room-101-is-not-102", "Room 102", "place", (entity("r", "Room 101", "place"),), None),
    Case(
        "iphone-14-is-not-15",
        "iPhone 15",
        "product",
        (entity("i", "iPhone 14", "product"),),
        None,
    ),
    Case(
        "windows-10-is-not-11",
        "Windows 11",
        "product",
        (entity("w", "Windows 10", "product"),),
        None,
    ),
    Case("short-typo-not-merged", "Googel", "org", (entity("g", "Google", "org"),), None),
    # Orgs: corporate suffixes, designators, prefixes.
    Case("org-inc-to-bare", "ACME Inc.", "org", (ACME,), "acme"),
    Case("org-bare-to-corp", "Acme", "org", (entity("ac", "Acme Corp", "org"),), "ac"),
    Case(
        "org-corp-to-corporation",
        "Acme Corporation",
        "org",
        (entity("ac", "Acme Corp", "org"),),
        "ac",
    ),
    Case("org-apple-to-apple-inc", "Apple", "org", (APPLE_INC,), "apple-inc"),
    Case("org-leading-the", "The Hilton", "org", (entity("h", "Hilton", "org"),), "h"),
    Case("org-designator", "Acme Group", "org", (ACME,), "acme"),
    Case(
        "org-university-prefix",
        "Stanford",
        "org",
        (entity("su", "Stanford University", "org"),),
        "su",
    ),
    Case("org-other-word-is-another-org", "Acme Robotics", "org", (ACME,), None),
    Case(
        "org-prefix-ambiguous",
        "Acme",
        "org",
        (entity("a1", "Acme Group", "org"), entity("a2", "Acme Holdings", "org")),
        None,
    ),
    # Acronyms: places and orgs only.
    Case("acronym-to-expansion", "NYC", "place", (NYC,), "nyc"),
    Case("expansion-to-acronym", "New York City", "place", (entity("n", "NYC", "place"),), "n"),
    Case(
        "acronym-skips-small-words",
        "MIT",
        "org",
        (entity("mit", "Massachusetts Institute of Technology", "org"),),
        "mit",
    ),
    Case("two-letter-acronym", "UK", "place", (entity("uk", "United Kingdom", "place"),), "uk"),
    Case("wrong-acronym", "NYC", "place", (entity("la", "Los Angeles", "place"),), None),
    Case(
        "acronym-not-for-concepts",
        "ML",
        "concept",
        (entity("ml", "Machine Learning", "concept"),),
        None,
    ),
    # Spelling variants.
    Case("typo-concept", "Kubernetis", "concept", (entity("k", "Kubernetes", "concept"),), "k"),
    Case(
        "typo-multiword",
        "Standford University",
        "org",
        (entity("su", "Stanford University", "org"),),
        "su",
    ),
    Case("typo-place", "San Fransisco", "place", (entity("sf", "San Francisco", "place"),), "sf"),
    Case(
        "one-word-differs",
        "Golden Gate Park",
        "place",
        (entity("gg", "Golden Gate Bridge", "place"),),
        None,
    ),
    Case("one-letter-word-differs", "Team A", "org", (entity("tb", "Team B", "org"),), None),
    # User corrections win over every rule.
    Case(
        "override-alias",
        "the boss",
        "concept",
        (entity("ml", "Maria Lopez"),),
        "ml",
        resolver={"overrides": {"The Boss": "Maria Lopez"}},
    ),
    Case(
        "override-beats-kind-rule",
        "Apple",
        "person",
        (APPLE_INC,),
        "apple-inc",
        resolver={"overrides": {"apple": "Apple Inc."}},
    ),
    Case(
        "override-beats-different-surname",
        "Alice Wong",
        "person",
        (ALICE_CHEN,),
        "alice-chen",
        resolver={"overrides": {"Alice Wong": "Alice Chen"}},
    ),
    Case(
        "override-target-unknown",
        "the boss",
        "concept",
        (entity("ml", "Maria Lopez"),),
        None,
        resolver={"overrides": {"the boss": "Dana Kim"}},
    ),
    Case(
        "split-beats-first-name-rule",
        "Alice",
        "person",
        (ALICE_CHEN,),
        None,
        resolver={"splits": [("alice", "Alice Chen")]},
    ),
    Case(
        "split-beats-exact-alias",
        "Alice",
        "person",
        (entity("alice-chen", "Alice Chen", aliases=("Alice",)),),
        None,
        resolver={"splits": [("Alice Chen", "Alice")]},
    ),
    Case(
        "split-beats-org-suffix-rule",
        "Acme Inc",
        "org",
        (ACME,),
        None,
        resolver={"splits": [("Acme Inc", "Acme")]},
    ),
    Case(
        "split-beats-override",
        "the boss",
        "concept",
        (entity("ml", "Maria Lopez"),),
        None,
        resolver={
            "overrides": {"the boss": "Maria Lopez"},
            "splits": [("the boss", "Maria Lopez")],
        },
    ),
    Case(
        "unrelated-split-changes-nothing",
        "Alice",
        "person",
        (ALICE_CHEN,),
        "alice-chen",
        resolver={"splits": [("Alice", "Alice Wong")]},
    ),
    Case("empty-bank", "Alice", "person", (), None),
    Case("blank-mention", "  ", "person", (ALICE_CHEN,), None),
]


def test_table_is_large_and_balanced() -> None:
    merges = [c for c in CASES if c.expected is not None]
    assert len(CASES) >= 40
    assert len({c.id for c in CASES}) == len(CASES)
    assert len(merges) >= 15 and len(CASES) - len(merges) >= 15


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_resolution_table(case: Case) -> None:
    resolver = EntityResolver(**case.resolver)
    mention = EntityMention(case.mention, case.kind, case.confidence)

    with_index = resolver.resolve(mention, EntityIndex(case.known), case.context)
    with_list = resolver.resolve(mention, list(case.known), case.context)

    assert (with_index.id if with_index else None) == case.expected
    assert with_list == with_index


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_resolution_does_not_depend_on_insertion_order(case: Case) -> None:
    resolver = EntityResolver(**case.resolver)
    found = resolver.resolve(
        EntityMention(case.mention, case.kind, case.confidence),
        EntityIndex(reversed(case.known)),
        case.context,
    )
    assert (found.id if found else None) == case.expected


# -- resolution: canonical names, absorbing mentions, the index ------------------------------


@pytest.mark.parametrize(
    ("mention", "kind", "known", "expected"),
    [
        ("Alice Chen", "person", entity("a", "Alice"), "Alice Chen"),
        ("Alice", "person", ALICE_CHEN, "Alice Chen"),
        ("Alice Chen", "person", entity("a", "Alice C."), "Alice Chen"),
        ("Alice C.", "person", ALICE_CHEN, "Alice Chen"),
        ("Bob", "person", ROBERT_CHEN, "Robert Chen"),
        ("Dr. Smith", "person", entity("js", "John Smith"), "John Smith"),
        ("Acme Corporation", "org", ACME, "Acme"),
        ("New York City", "place", entity("n", "NYC", "place"), "NYC"),
    ],
)
def test_canonical_name_prefers_fuller_person_names(
    mention: str, kind: str, known: KnownEntity, expected: str
) -> None:
    assert EntityResolver().canonical_name(EntityMention(mention, kind), known) == expected


def test_canonical_name_for_new_entities_and_overrides() -> None:
    resolver = EntityResolver(overrides={"the boss": "Maria Lopez"})
    assert resolver.canonical_name(EntityMention("  Dana   Kim ", "person"), None) == "Dana Kim"
    assert resolver.canonical_name(EntityMention("The Boss", "concept"), None) == "Maria Lopez"


def test_with_mention_renames_and_keeps_old_names_as_aliases() -> None:
    alice = entity("a", "Alice", neighbors={"google"})
    merged = alice.with_mention("Alice C.", canonical="Alice Chen", neighbors=["Stanford", "alice"])
    assert merged.name == "Alice Chen"
    assert merged.aliases == ("Alice", "Alice C.")
    assert merged.neighbors == {"google", "stanford", "alice"}
    again = merged.with_mention("alice chen", canonical="Alice Chen")
    assert again.aliases == ("Alice", "Alice C.")


def test_index_add_update_remove() -> None:
    index = EntityIndex([ALICE_CHEN])
    resolver = EntityResolver()
    with pytest.raises(InvalidInputError):
        index.add(entity("alice-chen", "Someone Else"))
    with pytest.raises(NotFoundError):
        index.update(entity("missing", "Nobody"))

    index.update(ALICE_CHEN.with_mention("Al", canonical="Alice Chen"))
    assert resolver.resolve(EntityMention("Al", "person"), index).id == "alice-chen"

    index.update(entity("alice-chen", "Alicia Chen"))  # a rename drops the old keys
    assert resolver.resolve(EntityMention("Al", "person"), index) is None
    assert resolver.resolve(EntityMention("Alice Chen", "person"), index) is None
    assert resolver.resolve(EntityMention("Alicia", "person"), index).id == "alice-chen"

    index.remove("alice-chen")
    index.remove("alice-chen")  # unknown ids are ignored
    assert len(index) == 0 and "alice-chen" not in index
    assert resolver.resolve(EntityMention("Alicia", "person"), index) is None


def test_index_fuzzy_choices_follow_updates() -> None:
    index = EntityIndex([entity("k", "Kubernetes", "concept")])
    resolver = EntityResolver()
    assert resolver.resolve(EntityMention("Kubernetis", "concept"), index).id == "k"
    index.update(entity("k", "Terraform", "concept"))
    assert resolver.resolve(EntityMention("Kubernetis", "concept"), index) is None
    assert resolver.resolve(EntityMention("Teraform", "concept"), index).id == "k"


def resolve_stream(mentions: list[tuple[str, str, list[str]]]) -> dict[str, KnownEntity]:
    """Feed mentions through resolver and index the way the retain pipeline does."""
    index = EntityIndex()
    resolver = EntityResolver()
    for n, (name, kind, context) in enumerate(mentions):
        mention = EntityMention(name, kind)
        match = resolver.resolve(mention, index, context)
        canonical = resolver.canonical_name(mention, match)
        if match is None:
            index.add(
                KnownEntity(id=f"e{n}", name=canonical, kind=kind, aliases=()).with_mention(
                    name, canonical=canonical, neighbors=context
                )
            )
        else:
            index.update(match.with_mention(name, canonical=canonical, neighbors=context))
    return {e.name: e for e in index}


def test_stream_of_mentions_builds_one_entity_per_real_subject() -> None:
    entities = resolve_stream(
        [
            ("Alice", "person", ["google"]),
            ("Alice Chen", "person", ["google"]),
            ("Alice C.", "person", []),
            ("Robert Chen", "person", ["alice chen"]),
            ("Bob", "person", ["alice"]),
            ("Alice Wong", "person", ["stanford"]),
            ("Apple", "person", []),
            ("Apple Inc.", "org", []),
            ("ACME Inc.", "org", []),
            ("Acme", "org", []),
            ("Room 101", "place", []),
            ("Room 102", "place", []),
            ("Iran", "place", []),
            ("Tigran", "place", []),
        ]
    )
    assert sorted(entities) == [
        "ACME Inc.",
        "Alice Chen",
        "Alice Wong",
        "Apple",
        "Apple Inc.",
        "Iran",
        "Robert Chen",
        "Room 101",
        "Room 102",
        "Tigran",
    ]
    assert set(entities["Alice Chen"].aliases) == {"Alice", "Alice C."}
    assert entities["Robert Chen"].aliases == ("Bob",)
    assert entities["ACME Inc."].aliases == ("Acme",)


def test_resolution_among_many_distractors() -> None:
    surnames = [f"Surname{chr(97 + i % 26)}{i}" for i in range(3000)]
    known = [entity(f"p{i}", f"Person{i} {s}") for i, s in enumerate(surnames)]
    known += [entity(f"o{i}", f"Company {i} Holdings", "org") for i in range(2000)]
    known += [ALICE_CHEN, entity("k", "Kubernetes", "concept"), entity("acme", "Acme", "org")]
    index = EntityIndex(known)
    resolver = EntityResolver()
    assert resolver.resolve(EntityMention("Alice", "person"), index).id == "alice-chen"
    assert resolver.resolve(EntityMention("Kubernetis", "concept"), index).id == "k"
    assert resolver.resolve(EntityMention("ACME Ltd", "org"), index).id == "acme"
    assert resolver.resolve(EntityMention("Company 17", "org"), index).id == "o17"
    assert resolver.resolve(EntityMention("Company 18 Group", "org"), index) is None
    assert resolver.resolve(EntityMention("Person5 Surnamef5", "person"), index).id == "p5"


def test_custom_nickname_table_replaces_the_builtin_one() -> None:
    known = [entity("m", "Margaret Hale")]
    default = EntityResolver()
    custom = EntityResolver(nicknames={**NICKNAMES, "margaret": ("maggie", "daisy")})
    assert default.resolve(EntityMention("Daisy", "person"), known) is None
    assert custom.resolve(EntityMention("Daisy", "person"), known).id == "m"
    assert (
        EntityResolver(nicknames={}).resolve(EntityMention("Bob", "person"), [ROBERT_CHEN]) is None
    )


@pytest.mark.parametrize("threshold", [-1, 100.5])
def test_threshold_outside_range_is_rejected(threshold: float) -> None:
    with pytest.raises(InvalidInputError):
        EntityResolver(threshold=threshold)


@given(st.text(max_size=60), st.sampled_from(ENTITY_KINDS))
@settings(max_examples=200, deadline=None)
def test_resolve_never_raises_on_odd_names(name: str, kind: str) -> None:
    known = [ALICE_CHEN, APPLE_INC, NYC, entity("r", "Room 101", "place")]
    found = EntityResolver().resolve(EntityMention(name, kind), known, [name])
    assert found is None or found in known


# -- recognition on real spaCy output --------------------------------------------------------


@pytest.fixture(scope="module")
def nlp() -> Any:
    from agentmem.models.nlp import load_nlp

    return load_nlp()


def found(text: str, speaker: str | None = None) -> list[tuple[str, str]]:
    return [(m.name, m.kind) for m in recognize_entities_in_text(text, speaker=speaker)]


@pytest.mark.parametrize(
    ("text", "names"),
    [
        # A hyphen with no space around it joins what the tokenizer cut.
        ("Switched from Verizon to T-Mobile.", {"Verizon", "T-Mobile"}),
        ("We bought a Rolls-Royce.", {"Rolls-Royce"}),
        ("Seo-yeon is visiting her parents.", {"Seo-yeon"}),
        ("Ji-woo and I went to Busan.", {"Ji-woo", "Busan"}),
        # A capital letter before a hyphen and a word is a compound noun, no name.
        ("My X-ray was fine.", set()),
        ("I got a T-shirt and an E-mail.", set()),
        # A hyphen between spaces is a dash.
        ("Anna - my sister - called.", {"Anna"}),
    ],
)
def test_a_hyphen_inside_a_word_keeps_the_name_whole(text: str, names: set[str]) -> None:
    assert {name for name, _ in found(text)} == names


@pytest.mark.parametrize(
    ("text", "name", "kind"),
    [
        # A name someone owns, heading its phrase, is a thing.
        ("Haruki lent me his Switch.", "Switch", "product"),
        ("I miss my Tesla.", "Tesla", "product"),
        ("My Peloton arrived today.", "Peloton", "product"),
        # Not a name modifying what is owned, a child's name or a family name.
        ("My Lisbon trip was great.", "Lisbon", "place"),
        ("Our Jamie started school.", "Jamie", "person"),
        ("My Mum says hi.", "Mum", "person"),
    ],
)
def test_a_name_someone_owns_is_a_thing(text: str, name: str, kind: str) -> None:
    assert (name, kind) in found(text)


def test_a_language_someone_studies_is_no_thing() -> None:
    assert ("English", "product") not in found("I had a tough time with my English lit class.")


def test_speaker_is_always_the_first_person() -> None:
    assert found("The weather was nice today.", speaker="Alice") == [("Alice", "person")]
    assert found("", speaker="Alice") == [("Alice", "person")]
    assert found("I met Bob in Paris.", speaker="Dana")[0] == ("Dana", "person")


def test_mention_equal_to_speaker_is_that_person() -> None:
    assert found("Tigran booked the flight.", speaker="Tigran") == [("Tigran", "person")]


def test_role_names_are_not_speakers() -> None:
    assert found("The weather was nice.", speaker="user") == []
    assert found("The weather was nice.", speaker="assistant") == []


def test_lone_first_name_is_a_person() -> None:
    assert found("Alice") == [("Alice", "person")]
    assert found("Went running with Jake yesterday.") == [("Jake", "person")]


@pytest.mark.parametrize("label", ["ORG", "GPE", "NORP"])
def test_first_name_mislabelled_by_spacy_is_a_person(nlp: Any, label: str) -> None:
    from spacy.tokens import Span

    doc = nlp("Alice")
    doc.ents = [Span(doc, 0, 1, label=label)]
    assert recognize_entities(doc) == [EntityMention("Alice", "person")]


def test_unknown_name_tagged_org_is_a_person_when_it_is_the_speaker(nlp: Any) -> None:
    from spacy.tokens import Span

    doc = nlp("Zorblat")
    doc.ents = [Span(doc, 0, 1, label="ORG")]
    assert recognize_entities(doc) == [EntityMention("Zorblat", "org")]
    assert recognize_entities(doc, speaker="Zorblat") == [EntityMention("Zorblat", "person")]


def test_batched_docs(nlp: Any) -> None:
    texts = ["Alice joined Google.", "Bob moved to Berlin."]
    results = [recognize_entities(doc) for doc in nlp.pipe(texts)]
    assert results == [
        [EntityMention("Alice", "person"), EntityMention("Google", "org")],
        [EntityMention("Bob", "person"), EntityMention("Berlin", "place")],
    ]


def test_possessives_are_stripped() -> None:
    assert found("Alice's dog is sick.") == [("Alice", "person")]
    assert ("James", "person") in found("I visited James' house and Dr. Smith's office.")
    assert ("Dr. Smith", "person") in found("I visited James' house and Dr. Smith's office.")


@pytest.mark.parametrize(
    "text",
    [
        "I met Bob on Monday in May.",
        "See you on Tuesday, or Friday in March at the latest.",
        "Over Christmas and in September we rested.",
    ],
)
def test_months_weekdays_and_dates_are_not_entities(text: str) -> None:
    names = {name.casefold() for name, _ in found(text)}
    assert names <= {"bob"}


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("ugh my car broke down AGAIN, had to call a tow truck", set()),
        ("I NEVER said that to Tom", {"Tom"}),
        ("I ALWAYS forget my keys at Sam's", {"Sam"}),
        # Acronyms that spell a short word of grammar stay what they were.
        ("The WHO warned about the virus in Geneva", {"WHO", "Geneva"}),
    ],
)
def test_a_word_of_grammar_shouted_in_capitals_is_no_name(text: str, names: set[str]) -> None:
    assert {name for name, _ in found(text)} == names


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("April said she'd come.", "April"),  # the subject of a verb of saying
        ("August thinks it's a bad idea.", "August"),
        ("May said so.", "May"),  # read as a modal
        ("May and I went hiking.", "May"),  # conjoined with "I"
        ("Me and April went out.", "April"),
        ("June is my sister.", "June"),  # a copula and a family noun
        ("My sister June lives in Ohio.", "June"),
        ("I met August at the gym.", "August"),  # the object of meeting, telling, calling
        ("I texted June about dinner.", "June"),
        ("I told May the news.", "May"),
        ("I called April yesterday.", "April"),
        ("Tell June I said hi.", "June"),
        ("April's dog is so cute.", "April"),  # a possessive with a family noun or a pet
        ("June's husband is a chef.", "June"),
        ("Jan is coming over tonight.", "Jan"),  # what only a person does
        ("Jan is coming to the wedding.", "Jan"),  # a traveller: motion with a destination
        ("June is flying to Lisbon on Friday.", "June"),
        ("I'm seeing June on Friday.", "June"),  # the object of "seeing"
        # A season's name too (spaCy labels it a date).
        ("Summer moved to Denver last year.", "Summer"),
        ("Autumn and I went hiking.", "Autumn"),
        ("Summer is my sister.", "Summer"),
        # Read as a modal, but a verb's past or third person follows: no modal is so followed.
        ("May called me yesterday.", "May"),
        ("May starts her new job tomorrow.", "May"),
        ("May told me she is moving.", "May"),
        ("Will called me.", "Will"),
        # Joined to a first name by "and".
        ("June and Ana are twins.", "June"),
        ("I saw Ana and April at the party.", "April"),
    ],
)
def test_a_month_word_used_as_a_first_name_is_a_person(text: str, name: str) -> None:
    assert (name, "person") in found(text)


@pytest.mark.parametrize(
    "text",
    [
        "In April we moved.",
        "May 5th works for me.",
        "See you in June.",
        "I was born in August 1990.",
        "May I ask?",
        "May we come in?",
        "We're going on the first of May.",
        "March is my favourite month.",
        "May is a busy month.",
        "June was hot.",
        "August flew by.",  # a verb of motion: a month goes by too
        "May is coming to an end.",  # ... and comes, but to no place or occasion
        "June is going to be busy.",
        "Jan is going to be busy in Jan.",
        "The deadline is Sept. 5 and the party is on Fri.",  # an abbreviation's period
        "April came and went.",
        "April and May were wet.",
        "June's weather was awful.",
        "I met Bob in May.",
        "The festival is called May Day.",
        "Summer is coming.",
        "Summer was great this year.",
        "Winter came early this year.",
        "Winter is coming to an end.",
        "Summer flew by.",
        "May has been rainy.",  # nothing after it says someone
        "May marks the start of summer.",
        "May brings warmer weather.",
        "Between June and August we travelled.",
    ],
)
def test_a_month_word_that_is_a_date_stays_a_date(text: str) -> None:
    months = {"april", "may", "june", "august", "march", "jan", "jan.", "sept.", "fri"}
    months |= {"summer", "winter"}
    assert not {name.casefold() for name, _ in found(text)} & months


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Jordan is coming over tonight.", "Jordan"),  # a visit
        ("Jordan's coming over tonight.", "Jordan"),
        ("Shanelle is coming with us to Mexico.", "Shanelle"),
        ("Marta got the job!", "Marta"),  # what a person gets or is
        ("Carolina got married in June.", "Carolina"),
        ("Paris is pregnant with twins!", "Paris"),
        ("Sydney has been feeling down lately.", "Sydney"),  # after auxiliaries
        ("Georgia said she would call.", "Georgia"),
        ("I told Savannah the news.", "Savannah"),  # the object of telling or meeting
        ("I invited Indiana to dinner.", "Indiana"),
        ("I'm meeting Brooke for drinks later.", "Brooke"),
        ("Had coffee with Ines and her husband Rui.", "Ines"),  # "X and her husband"
    ],
)
def test_a_name_spacy_reads_as_a_place_is_a_person_when_grammar_says_so(
    text: str, name: str
) -> None:
    assert (name, "person") in found(text)


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Jordan is a country in the Middle East.", "Jordan"),
        ("Georgia is beautiful in spring.", "Georgia"),
        ("I flew to Jordan.", "Jordan"),
        ("We visited Georgia last summer.", "Georgia"),
        ("Victoria is freezing in winter.", "Victoria"),
        ("Houston is flooding again.", "Houston"),
        ("We visited Rome, Florence and Venice.", "Florence"),  # a list, no one addressed
    ],
)
def test_a_place_stays_a_place(text: str, name: str) -> None:
    assert (name, "place") in found(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # An unfamiliar name the tagger reads as an interjection or an adverb.
        ("Raj and his wife moved to Toronto.", [("Raj", "person"), ("Toronto", "place")]),
        ("Raj said so.", [("Raj", "person")]),
        ("Finally got the job!", []),
        # A holiday is a time, whatever label spaCy gives it.
        ("Grandma is visiting for Easter.", [("Grandma", "person")]),
        # So is its greeting (spaCy: "Happy Diwali" a place, "Eid Mubarak" a person).
        ("Happy Diwali, Priya!", [("Priya", "person")]),
        ("Eid Mubarak, Yusuf!", [("Yusuf", "person")]),
        ("Happy Eid to you and your family!", []),
        ("We drove through Happy Valley last summer.", [("Happy Valley", "place")]),
        # "at X" after a word of a career is an employer.
        ("Tomas got promoted at Spotify.", [("Tomas", "person"), ("Spotify", "org")]),
    ],
)
def test_other_names_read_from_grammar(text: str, expected: list) -> None:
    assert sorted(found(text)) == sorted(expected)


@pytest.mark.parametrize(
    ("text", "name"),
    [
        # The subject of a verb of motion with a place or an occasion to go to: a place or a
        # month does not move anywhere (spaCy reads these as a common noun or a place).
        ("Florence is moving to Leeds.", "Florence"),
        ("my neighbour said Aurora is moving back to Denver.", "Aurora"),
        ("Shiloh went to the concert with her cousin.", "Shiloh"),
        # "make it": being there.
        ("Dakota can't make it tonight.", "Dakota"),
        ("Sorry, Brooklyn couldn't make it to the party.", "Brooklyn"),
        ("Phoenix made it home safely.", "Phoenix"),
        # The object of "seeing" after "be": meeting someone.
        ("I'm seeing Regina on Friday.", "Regina"),
        ("We're seeing Adelaide tomorrow for lunch.", "Adelaide"),
        ("Are you seeing Chelsea this weekend?", "Chelsea"),
        # The one a meal or a drink is shared with.
        ("Grabbed coffee with Dakota at Blue Bottle.", "Dakota"),
        ("Drinks with Orlando at Hawksmoor tonight.", "Orlando"),
        # The one spoken to, at the edge of the sentence.
        ("Thanks, Dakota!", "Dakota"),
        ("Thanks Dakota!", "Dakota"),
        ("Regina, did you get my text?", "Regina"),
        ("See you soon, Florence!", "Florence"),
        ("Dear Regina, thank you for the flowers.", "Regina"),
        ("I'm so glad you came, Dakota.", "Dakota"),
    ],
)
def test_a_person_is_read_from_what_they_do_or_are_told(text: str, name: str) -> None:
    assert (name, "person") in found(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # "with X at Y", read by spaCy as one name ("Tariq at Nobu", a work of art).
        ("We had dinner with Tariq at Nobu.", [("Tariq", "person"), ("Nobu", "org")]),
        ("Lunch with Savannah at Dishoom was fun.", [("Savannah", "person"), ("Dishoom", "org")]),
    ],
)
def test_a_companion_and_the_venue_are_two_names(text: str, expected: list) -> None:
    assert sorted(found(text)) == sorted(expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Mike & I are going to Cabo in Dec.", [("Mike", "person"), ("Cabo", "place")]),
        ("I met Sam & Priya at the bar.", [("Sam", "person"), ("Priya", "person")]),
        # A firm's name joined by "&" stays one.
        ("Procter & Gamble hired my sister.", [("Procter & Gamble", "org")]),
        ("AT&T raised prices again.", [("AT&T", "org")]),
        # spaCy reads two names joined by "and" as one (ORG or PERSON); no one person's
        # name holds "and", so a span that is a person is each of its names.
        (
            "Chidi and Olu went to Lagos.",
            [("Chidi", "person"), ("Olu", "person"), ("Lagos", "place")],
        ),
        (
            "Ngozi and Chidi went to Lagos.",
            [("Ngozi", "person"), ("Chidi", "person"), ("Lagos", "place")],
        ),
        (
            "Bram and Chidi went to Lagos.",
            [("Bram", "person"), ("Chidi", "person"), ("Lagos", "place")],
        ),
        # A name opening the sentence joined to another: the verb after both says who.
        (
            "Olu and Chidi went to Lagos.",
            [("Olu", "person"), ("Chidi", "person"), ("Lagos", "place")],
        ),
        ("Olu and Chidi are coming over tonight.", [("Olu", "person"), ("Chidi", "person")]),
        ("Apple and Google announced new phones.", [("Apple", "org"), ("Google", "org")]),
        # A firm's or a country's name joined by "and" stays one.
        ("Procter and Gamble hired my sister.", [("Procter and Gamble", "org")]),
        ("We visited Bosnia and Herzegovina last year.", [("Bosnia and Herzegovina", "place")]),
    ],
)
def test_people_joined_by_and_or_an_ampersand_are_each_a_name(text: str, expected: list) -> None:
    assert found(text) == expected


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Savannah is so humid in July.", "Savannah"),  # spaCy says PERSON
        ("Savannah's so humid in July.", "Savannah"),
        ("Leeds is always rainy.", "Leeds"),
        ("Houston was so muggy yesterday.", "Houston"),
        ("In summer, Miami gets really humid.", "Miami"),
    ],
)
def test_the_subject_of_a_weather_predicate_is_a_place(text: str, name: str) -> None:
    assert (name, "place") in found(text)


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Savannah is so tired today.", "Savannah"),
        # A degree word between "be" and a person's state (places before: spaCy's person
        # lost the tie to the name prior's place).
        ("Paris was very sick last week.", "Paris"),
        ("Austin is pretty hungover.", "Austin"),
    ],
)
def test_only_weather_makes_a_climate(text: str, name: str) -> None:
    assert found(text) == [(name, "person")]


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Stripe made it easy to pay.", "Stripe"),  # making something so, not being there
        ("Netflix is coming to India.", "Netflix"),  # a launch comes to a place, too
        ("We went to Rome, Florence.", "Florence"),  # no one spoken to
    ],
)
def test_no_person_without_a_person_cue(text: str, name: str) -> None:
    assert (name, "person") not in found(text)


def test_chat_names_are_stored_with_the_kind_their_sentence_gives(tmp_path: Any) -> None:
    import agentmem
    from agentmem.testing import HashEmbedder

    turns = [
        "Jan is coming to the wedding.",
        "Florence is moving to Leeds.",
        "Dakota can't make it tonight.",
        "I'm seeing Regina on Friday.",
        "We had dinner with Tariq at Nobu.",
        "Thanks, Priya!",
        "Omar, are you coming?",
        "Savannah is so humid in July.",
    ]
    with agentmem.AgentMemory(tmp_path / "store", embedder=HashEmbedder()) as mem:
        bank = mem.bank("chat")
        bank.retain(
            [{"role": "user", "name": "Sam", "content": turn} for turn in turns],
            mentioned_at="2025-03-04T09:00:00Z",
        )
        kinds = {e.name: e.kind for e in bank.entities()}
        tariq = next(m for m in bank.memories() if "Tariq" in m.text)
    assert kinds == {
        "Sam": "person",
        "Jan": "person",
        "Florence": "person",
        "Leeds": "place",
        "Dakota": "person",
        "Regina": "person",
        "Tariq": "person",
        "Nobu": "org",
        "Priya": "person",
        "Omar": "person",
        "Savannah": "place",
    }
    assert set(tariq.entities) == {"Sam", "Tariq", "Nobu"}


def test_labels_map_to_kinds() -> None:
    assert found("Alice Johnson flew to Boston to join Google.") == [
        ("Alice Johnson", "person"),
        ("Boston", "place"),
        ("Google", "org"),
    ]
    assert found("The New York Times covered the Olympics.") == [
        ("New York Times", "org"),
        ("Olympics", "event"),
    ]


def test_leading_the_is_stripped_from_orgs() -> None:
    # The bank is named after where it is: that place is a mention too.
    assert found("He works at the Bank of America.") == [
        ("Bank of America", "org"),
        ("America", "place"),
    ]


def test_capitalised_words_spacy_missed() -> None:
    assert found("My boss Priyanka approved the budget.") == [("Priyanka", "person")]
    assert ("Room 101", "concept") in found("We booked Room 101 at the Hilton.")
    assert found("Call Mom tomorrow") == [("Mom", "person")]
    assert ("iPhone 15 Pro", "product") in found("I upgraded to the iPhone 15 Pro yesterday.")
    assert ("Will", "person") in found("I met Will at the University of Michigan.")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # A title opening the sentence, then a name capitalised mid-sentence: a person.
        ("Nurse Joy checked on Tim.", [("Nurse Joy", "person"), ("Tim", "person")]),
        ("Aunt Linda sent a card.", [("Aunt Linda", "person")]),  # spaCy says ORG
        ("Detective Rao called again.", [("Detective Rao", "person")]),
        # The title alone is a role, no name.
        ("Doctor said Maya needs rest.", [("Maya", "person")]),
        ("I saw the doctor today.", []),
    ],
)
def test_a_title_before_a_name_makes_a_person(text: str, expected: list) -> None:
    assert found(text) == expected


def test_common_capitalised_words_are_not_entities() -> None:
    assert found("Meeting notes are ready. Thanks, everyone!") == []
    assert found("OK. Yes. Hello there.") == []
    assert found("Weekly Meeting Notes From The Board") == []
    assert found("I think I should go.") == []
    # Work chat's abbreviations name no one and nothing.
    assert found("Send it by EOD. I'm OOO until Monday, WFH today. TBH, ETA is 5pm.") == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Woah Joanna, I won an international tournament yesterday!", [("Joanna", "person")]),
        ("Congrats Joanna! That is huge.", [("Joanna", "person")]),
        ("Bye Caroline, see you soon", [("Caroline", "person")]),
        ("Awww that is so sweet", []),
        ("Glad Max is doing well!", [("Max", "person")]),
    ],
)
def test_chat_interjections_are_not_part_of_names(text: str, expected: list) -> None:
    assert found(text) == expected


def test_mentions_are_deduplicated_case_insensitively() -> None:
    result = found("Alice called Bob. Later Alice texted BOB again.", speaker="alice")
    names = [name.casefold() for name, _ in result]
    assert names.count("alice") == 1 and names.count("bob") == 1
    assert result[0] == ("alice", "person")


def test_very_long_text_is_parsed_in_pieces() -> None:
    text = "We talked about the weather for a while. " * 3000 + "Then Alice called from Berlin."
    assert len(text) > 100_000
    assert found(text) == [("Alice", "person"), ("Berlin", "place")]


@pytest.mark.parametrize(
    "text",
    [
        "héllo 😀 Zoë met José in São Paulo.",
        "\x00\x01Alice\u200b\x7f met \u202eBob\ufeff",
        "👩‍👩‍👧‍👦🏳️‍🌈" * 50,
        "'s ' ' the The THE",
        "Mr. Dr. Mrs.",
        "\n\n\t   \r\n",
    ],
)
def test_odd_text_gives_clean_names(text: str) -> None:
    for mention in recognize_entities_in_text(text, speaker="😀 Sam\x00"):
        assert mention.kind in ENTITY_KINDS
        assert mention.name == mention.name.strip() and mention.name
        assert any(c.isalpha() for c in mention.name)
        assert all(c.isprintable() for c in mention.name)


@given(
    st.text(
        alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)),
        max_size=200,
    ),
    st.one_of(st.none(), st.text(max_size=20)),
)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_recognition_never_raises(text: str, speaker: str | None) -> None:
    mentions = recognize_entities_in_text(text, speaker=speaker)
    keys = [m.name.casefold() for m in mentions]
    assert len(keys) == len(set(keys))
    for mention in mentions:
        assert mention.kind in ENTITY_KINDS
        assert mention.name and all(c.isprintable() for c in mention.name)


_NAME_TEMPLATES = [
    "{} fixed our boiler yesterday.",
    "Have you heard from {} lately?",
    "{} and I went to the market.",
    "Thanks, {}!",
    "My sister {} lives in Leeds.",
]


@given(st.data())
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_any_listed_first_name_gives_clean_mentions(data: st.DataObject) -> None:
    from agentmem.retain.entities import given_names

    name = data.draw(st.sampled_from(sorted(given_names()))).title()
    template = data.draw(st.sampled_from(_NAME_TEMPLATES))
    for mention in recognize_entities_in_text(template.format(name)):
        assert mention.kind in ENTITY_KINDS
        assert mention.name and all(c.isprintable() for c in mention.name)


@pytest.mark.parametrize(
    "name",
    # Drawn from the list (the tagger reads "Agathe" as a determiner, "Wojciech" as an
    # adjective); not every one of its 16,081 is found (a name spaCy reads as a nationality
    # or cuts in two, such as "Hakan" or "Marie-France").
    ["Agathe", "Wojciech", "Aoife", "Thandiwe", "Benedikt", "Ibrahim", "Ingrid", "Maja"],
)
def test_a_listed_first_name_after_a_family_noun_is_a_person(name: str) -> None:
    assert (name, "person") in found(f"My sister {name} lives in Leeds.")


def test_importing_does_not_load_spacy() -> None:
    code = (
        "import sys, agentmem.retain.entities, agentmem.retain.resolve; "
        "print('spacy' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# -- what a bare name is, when the words around it say nothing ------------------------------


@pytest.mark.parametrize(
    ("text", "name", "kind"),
    [
        # Each was wrong before the prior: a place, an org, an org.
        ("Jamal works at Deloitte now.", "Jamal", "person"),
        ("Paris Hilton was on TV last night.", "Paris Hilton", "person"),
        ("Lukas quit Siemens last month.", "Lukas", "person"),
        ("Jamal works at Deloitte now.", "Deloitte", "org"),
        ("Lukas quit Siemens last month.", "Siemens", "org"),
        ("Rosalind's flight from Montreal got delayed.", "Montreal", "place"),
    ],
)
def test_a_name_the_sentence_says_nothing_about_takes_the_kind_the_model_knows(
    text: str, name: str, kind: str
) -> None:
    assert (name, kind) in found(text)


def test_the_name_prior_and_spacy_agreeing_count_once_so_grammar_still_decides() -> None:
    # "Indiana" is a state to both spaCy and the embedding model; being invited makes it a
    # person, as it did before the prior.
    assert ("Indiana", "person") in found("I invited Indiana to dinner.")
    assert ("Savannah", "place") in found("Savannah is so humid in July.")


def test_the_name_prior_never_makes_a_word_opening_a_sentence_a_name() -> None:
    assert found("Dinner was great.") == []
    assert found("Aisle seats are better.") == []


def test_the_name_prior_is_one_vote_of_spacys_weight_or_none() -> None:
    assert name_prior("Deloitte") == ("org", NAME_PRIOR_WEIGHT)
    assert name_prior("DELOITTE") == name_prior("deloitte")
    assert name_prior("Weather") is None  # no description is clearly nearer
    assert NAME_PRIOR_WEIGHT == SPACY_WEIGHT


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("Florence and Harry got engaged.", ["Florence", "Harry"]),
        ("Marisol and Diego got married in Oaxaca.", ["Marisol", "Diego"]),
        ("Harry and Florence got engaged.", ["Harry", "Florence"]),
    ],
)
def test_a_name_joined_to_a_persons_name_by_and_is_a_person(text: str, names: list[str]) -> None:
    people = [name for name, kind in found(text) if kind == "person"]
    assert people == names


def test_a_list_of_places_joined_by_and_stays_places() -> None:
    kinds = dict(found("We visited Rome, Florence and Venice."))
    assert kinds == {"Rome": "place", "Florence": "place", "Venice": "place"}


def test_the_path_of_a_journey_is_a_place() -> None:
    assert ("Tuscany", "place") in found("We drove through Tuscany last summer.")
    assert ("Zurich", "place") in found("We flew via Zurich.")


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Ifeoma started her new job at Barclays.", "Ifeoma"),
        ("Ravi broke his ankle skiing in Verbier.", "Ravi"),
    ],
)
def test_a_name_opening_a_sentence_with_his_or_her_after_it_is_a_person(
    text: str, name: str
) -> None:
    assert (name, "person") in found(text)


def test_a_possessive_after_another_name_is_not_the_first_names() -> None:
    # "her" is Priya's here; Google gets no person vote from it.
    assert ("Google", "org") in found("Google hired Priya and her team.")


@pytest.mark.parametrize(
    "text",
    [
        'Heard of "The Name of the Wind"? It is a great novel.',
        "Have you read “The Name of the Wind” yet?",
    ],
)
def test_a_name_in_double_quotes_is_a_title(text: str) -> None:
    assert ("The Name of the Wind", "product") in found(text)


def test_a_name_after_a_closed_quote_is_no_title() -> None:
    assert ("Giulia", "person") in found('She said "hi" and my sister Giulia laughed.')


def test_the_given_names_are_the_rarer_ones_and_no_frequent_words() -> None:
    from agentmem.retain.entities import FIRST_NAMES, given_names

    names = given_names()
    assert {"wojciech", "aoife", "thandiwe", "magnus", "cal"} <= names
    # Frequent English words that some locale gives people, and a rare US name that is a
    # brand, are left out; the common first names vote on their own.
    assert not {"said", "can", "man", "chase", "porsche", "easter"} & names
    assert all(name == name.casefold() and len(name) >= 3 for name in names)
    assert "john" in FIRST_NAMES


def test_a_given_name_the_model_places_elsewhere_is_no_person() -> None:
    from agentmem.retain.name_prior import may_name_a_person

    assert may_name_a_person("Wojciech")
    assert not may_name_a_person("Bali")
    assert not may_name_a_person("Chelsea")


def test_kinds_are_decided_without_the_prior_when_its_model_fails(monkeypatch, caplog):
    from agentmem.errors import ModelError
    from agentmem.retain import name_prior as prior
    from agentmem.retain.name_prior import may_name_a_person

    def broken() -> None:
        raise ModelError("ONNX embedding model not found: '/nowhere/model.onnx'")

    monkeypatch.setattr(prior, "_model", broken)
    monkeypatch.setattr(prior, "_failed", False)
    prior._reading.cache_clear()
    try:
        with caplog.at_level("WARNING", logger="agentmem"):
            assert ("Priya", "person") in found("My boss Priya approved the budget.")
            assert name_prior("Deloitte") is None
            assert may_name_a_person("Bali")  # abstains: the list's vote stands
        assert [r.message for r in caplog.records].count(
            "entity kinds without the name prior: ONNX embedding model not found: "
            "'/nowhere/model.onnx'"
        ) == 1
    finally:
        prior._reading.cache_clear()


@pytest.mark.parametrize(
    ("text", "title"),
    [
        (
            'Yeah, "Harry Potter and the Philosopher\'s Stone" is special to me.',
            "Harry Potter and the Philosopher's Stone",
        ),
        ('I loved "The Lord of the Rings" as a kid.', "The Lord of the Rings"),
        ("Have you read “A Dance with Dragons” yet?", "A Dance with Dragons"),
    ],
)
def test_a_title_in_double_quotes_is_one_name_whatever_its_words(text: str, title: str) -> None:
    assert found(text) == [(title, "product")]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('My mantra is "Always look on the bright side of life".', []),
        ('I need some "me-time" this week.', []),
        ('She said "Thanks Mom" and left.', [("Mom", "person")]),
        ('We call him "Priya" at work.', [("Priya", "person")]),
        ('He typed "INV-20931" twice.', [("INV-20931", "concept")]),
    ],
)
def test_quoted_words_that_are_no_title_are_read_as_usual(
    text: str, expected: list[tuple[str, str]]
) -> None:
    assert found(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # A name inside a quoted saying is read as anywhere else, not as a title.
        ('My boss said "Great work on the Hartwell account".', [("Hartwell", "org")]),
        ('Mom texted "Jake is coming home tonight".', [("Mom", "person"), ("Jake", "person")]),
        ('I told him "Sarah will drive us to Denver".', [("Sarah", "person"), ("Denver", "place")]),
        # The first word of a quotation is capitalised as a sentence's first word is.
        ('He wrote "Happy birthday, Laura!" on the card.', [("Laura", "person")]),
        ('The sign said "Welcome to Portland".', [("Portland", "place")]),
        # Spoken to inside a quotation as at the edge of a sentence.
        ('She wrote "Welcome back, Tigran" on a card.', [("Tigran", "person")]),
        ('He yelled "Omar, are you coming?" from the car.', [("Omar", "person")]),
        # A name that is all its quotes hold is still a title.
        ('We watched "Encanto"!', [("Encanto", "product")]),
    ],
)
def test_a_quotation_is_a_saying_read_as_a_sentence(
    text: str, expected: list[tuple[str, str]]
) -> None:
    assert found(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # A proper noun opening a sentence and owning what follows is a name.
        ("Rashid's startup got funding.", [("Rashid", "person")]),
        ("Tupac's music got me through college.", [("Tupac", "person")]),
        ("Google's new phone is out.", [("Google", "org")]),
        # Common nouns the tagger reads as such are not, with "'s" or without.
        ("Today's weather is awful.", []),
        ("Life's good.", []),
        ("Everyone's tired.", []),
    ],
)
def test_a_proper_noun_opening_a_sentence_as_owner_or_subject(
    text: str, expected: list[tuple[str, str]]
) -> None:
    assert found(text) == expected


def test_a_short_phrase_of_place_may_stand_between_a_proper_subject_and_its_verb() -> None:
    # A name, whose kind its other mentions decide; "Dinner at home was great" names nothing.
    assert "Kofi" in [name for name, _ in found("Kofi from work invited us.")]
    assert found("Dinner at home was great.") == []
    assert found("Coffee in the morning helps.") == []


@pytest.mark.parametrize(
    "text",
    ["I bought a 4K TV.", "My phone has 5G now.", "I ran a 10K on Sunday.", "Meet me at 5PM."],
)
def test_a_letter_cut_off_a_number_is_no_name(text: str) -> None:
    # The tokenizer cuts "4K" into "4" + "K": no entity "K" (or "K TV") may come of it.
    assert found(text) == []


def test_shouted_text_keeps_the_names_not_the_words_spacy_labels() -> None:
    # In all capitals spaCy labels common words too (NEED, RESULTS as organisations).
    assert found("ALSO NEED TO CALL DR. PATEL ABOUT THE RESULTS") == [("PATEL", "person")]
    assert ("LONDON", "place") in found("MEETING WITH SARAH IN LONDON ON FRIDAY")


_FRAGMENTS = [
    "a",
    "an",
    "from",
    "the",
    "my",
    "next",
    "door",
    "accounting",
    "said",
    "is",
    "such",
    "what",
    "Prius",
    "Airbnb",
    "API",
    "Italian",
    "Nkechi",
    "Denver",
    "roll",
    "or",
    ",",
    ".",
    "'s",
    "to",
    "with",
    "Gemini",
    "texted",
    "me",
    "new",
    "team",
    "Ana",
    "in",
    "@sarah",
    "@mike_92",
    "@",
    "&",
    "AGAIN",
    "my",
    "bestie",
    "jen",
    "now",
    "again",
    "Jake",
    "dating",
    ",",
]


@given(st.lists(st.sampled_from(_FRAGMENTS), max_size=12), st.booleans())
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_articles_and_groups_at_any_edge_give_clean_names(words: list[str], cap: bool) -> None:
    """The rules that read past "from <group>" or the word after "a"/"an" meet the text's
    ends and each other anywhere: no error, and only clean, known-kind names."""
    text = " ".join(words)
    if cap:
        text = text[:1].upper() + text[1:]
    for mention in recognize_entities_in_text(text, speaker="Sam"):
        assert mention.kind in ENTITY_KINDS
        assert mention.name == mention.name.strip() and mention.name
        assert all(c.isprintable() for c in mention.name)


def test_only_text_all_in_lower_case_is_read_again_with_capitals() -> None:
    # A text with capitals of its own keeps them as they are: "seattle" is no name here.
    assert found("Jess flew to seattle.") == [("Jess", "person")]
    assert found("jess flew to seattle.") == [("Jess", "person"), ("Seattle", "place")]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("broke up w/ tom, dating Jake now", [("Jake", "person")]),
        ("ok so Priya now", [("Priya", "person")]),
        ("I saw Tom today", [("Tom", "person")]),
        ("Acme again", []),  # a word opening the text, nothing saying it is a name
    ],
)
def test_a_name_followed_only_by_adverbs_ends_the_text_cleanly(text: str, expected: list) -> None:
    # "dating Jake now" raised IndexError: the verb after a subject was looked for past the end.
    assert found(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("@sarah are you coming tonight?", [("Sarah", "person")]),
        ("Lol @mike_92 forgot his keys", [("Mike", "person")]),
        # A handle that is no first name names no one surely enough.
        ("cc @john.smith and follow @nytimes", []),
    ],
)
def test_a_chat_mention_of_a_first_name_is_a_person(text: str, expected: list) -> None:
    assert found(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("my bestie jen is getting married in june", [("Jen", "person")]),
        ("my hubby tom made dinner", [("Tom", "person")]),
        ("my fiance is from ohio", [("Ohio", "place")]),
    ],
)
def test_a_word_for_someone_after_my_is_no_name_in_lower_case_text(
    text: str, expected: list
) -> None:
    assert found(text) == expected


@given(
    st.lists(
        st.sampled_from(
            ["jess", "seattle", "i", "lol", "hope", "ß", "ŉ", "with", "from", "'s", "!", "mike"]
        ),
        max_size=10,
    )
)
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_lower_case_text_gives_clean_names(words: list[str]) -> None:
    """Capitalising a likely name keeps the text's length (a letter whose capital is two
    letters stays as it is), so every name read in the capitalised text is clean."""
    for mention in recognize_entities_in_text(" ".join(words)):
        assert mention.kind in ENTITY_KINDS
        assert mention.name == mention.name.strip() and mention.name
