"""Synthetic conversations for scale benchmarks: realistic chat facts with entities and dates.

Deterministic for a seed. Each session is a list of chat messages (one memory each with the
offline extractor) between a user with a recurring cast of people, places, organisations and
codes, so the entity resolver, the keyword index and the vector index all see realistic,
growing vocabularies rather than repeated strings. Every session also yields probe queries
whose answer is a known message, so recall is exercised on questions that have answers.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any


def _choices(text: str, sep: str | None = None) -> tuple[str, ...]:
    return tuple(text.split(sep))


_FIRST = _choices(
    "Alice Bob Carol David Emma Farid Grace Hiro Isabel Jonas Keiko Liam Maya Nadia Omar Priya "
    "Quentin Rosa Sven Tara Umar Vera Wei Xavier Yara Zoe Aaron Bianca Carlos Dmitri Elena "
    "Fatima Gabriel Hannah Ivan Julia Kenji Lucia Mateo Nina Oscar Paula Rahul Sofia Tomas "
    "Ursula Viktor Wendy Yusuf Zara Anton Beatrice Colin Diana Ethan Fiona George Helen Isaac "
    "Jasmine Kevin Laura Marco Noor Olivia Pedro Rachel Samuel Theo Valentina William"
)
_LAST = _choices(
    "Chen Novak Okafor Haddad Lindqvist Moreau Tanaka Kowalski Fernandes Ibrahim Schmidt "
    "Rossi Petrov Nakamura Garcia Svensson Dubois Yilmaz Kaur Mensah Olsen Brennan Castillo "
    "Nguyen Fischer Romano Sato Ivanova Lopez Andersen Mbeki Varga Costa Jensen Weber"
)
_CITIES = _choices(
    "Berlin Lisbon Osaka Toronto Nairobi Krakow Porto Seattle Montreal Melbourne Reykjavik "
    "Valencia Hamburg Kyoto Dublin Prague Tallinn Bergen Marseille Austin Denver Boston Oslo "
    "Seville Gdansk Ljubljana Bologna Helsinki Edinburgh Vancouver Brisbane Lyon Zagreb"
)
_ORGS = _choices(
    "Acme Corp|Globex|Initech|Umbrella Health|Stark Logistics|Wayne Analytics|Hooli|Vandelay "
    "Imports|Cyberdyne Labs|Soylent Foods|Tyrell Systems|Wonka Confections|Oscorp Energy|"
    "Massive Dynamic|Pied Piper|Monarch Bank|Gringotts Credit|Nakatomi Trading|Dunder Paper|"
    "Blue Sun Retail|Aperture Science|Black Mesa Research|Bluth Development|Sterling Partners",
    "|",
)
_RELATIONS = _choices(
    "sister brother cousin manager colleague neighbour friend aunt uncle mentor roommate "
    "dentist doctor landlord teammate"
)
_JOBS = _choices(
    "data engineer|nurse|architect|product manager|teacher|accountant|chef|pilot|"
    "physiotherapist|lawyer|graphic designer|electrician|researcher|journalist",
    "|",
)
_PETS = _choices("dog cat parrot rabbit hamster tortoise ferret")
_PET_NAMES = _choices(
    "Biscuit Pepper Mochi Luna Waffles Ziggy Nori Pickles Olive Rusty Tofu Juniper"
)
_HOBBIES = _choices(
    "bouldering|watercolour painting|sourdough baking|salsa dancing|chess|trail running|"
    "pottery|birdwatching|Japanese|the cello|woodworking|sailing|photography|Italian cooking",
    "|",
)
_FOODS = _choices(
    "ramen|tapas|pho|falafel|dumplings|paella|tacos|sushi|curry|pierogi|bibimbap|risotto", "|"
)
_BOOKS = _choices(
    "The Left Hand of Darkness|Middlemarch|Piranesi|The Overstory|Beloved|Dune|"
    "The Remains of the Day|Circe|Klara and the Sun|The Name of the Rose|Solaris",
    "|",
)
_MONTHS = _choices(
    "January February March April May June July August September October November December"
)
_WEEKDAYS = _choices("Monday Tuesday Wednesday Thursday Friday Saturday Sunday")
_WHEN = _choices(
    "yesterday|last week|last weekend|two days ago|this morning|last month|in March|"
    "last summer|over Christmas|on Friday|three weeks ago|earlier this year",
    "|",
)
_ACKS = _choices(
    "That sounds great!|Good to know, I'll remember that.|Oh nice, how did it go?|"
    "Thanks for telling me.|Noted. Anything else on your mind?|Wow, congratulations!|"
    "That must have been stressful.|Let me know if you want a reminder.",
    "|",
)


@dataclass(frozen=True, slots=True)
class Probe:
    """A query whose answer is known: the text of one retained message."""

    query: str
    answer: str


@dataclass(frozen=True, slots=True)
class Session:
    """One synthetic conversation: retain it with one call (bulk) or message by message."""

    document_id: str
    mentioned_at: datetime
    messages: list[dict[str, Any]]
    probes: list[Probe]


class ConversationGenerator:
    """Makes sessions of a user talking to an assistant about their life.

    Args:
        seed: Random seed; the same seed gives the same sessions.
        turns_per_session: Messages per session (user and assistant alternate).
        start: Date of the first session; sessions are spread over the following years.
    """

    def __init__(
        self,
        seed: int = 7,
        *,
        turns_per_session: int = 20,
        start: datetime = datetime(2022, 1, 3, 9, 0, tzinfo=UTC),
    ) -> None:
        self._rng = random.Random(seed)
        self._turns = turns_per_session
        self._start = start
        self._serial = 0
        # A finite cast, as in a real user's life: people recur across sessions.
        rng = self._rng
        self._people = [f"{rng.choice(_FIRST)} {rng.choice(_LAST)}" for _ in range(400)]

    def sessions(self, n_messages: int) -> Iterator[Session]:
        """Sessions until ``n_messages`` messages have been produced (the last may be short)."""
        produced = 0
        index = 0
        while produced < n_messages:
            size = min(self._turns, n_messages - produced)
            yield self._session(index, size)
            produced += size
            index += 1

    def _session(self, index: int, size: int) -> Session:
        rng = self._rng
        when = self._start + timedelta(hours=index * 7 + rng.randint(0, 5))
        messages: list[dict[str, Any]] = []
        probes: list[Probe] = []
        for turn in range(size):
            if turn % 2 == 0:
                text, probe = self._user_fact()
                messages.append(
                    {"role": "user", "name": "Sam", "content": text, "metadata": {"turn": turn}}
                )
                if probe is not None:
                    probes.append(Probe(probe, f"Sam: {text}"))
            else:
                messages.append(
                    {"role": "assistant", "content": rng.choice(_ACKS), "metadata": {"turn": turn}}
                )
        return Session(f"session-{index}", when, messages, probes)

    def _code(self, prefix: str) -> str:
        self._serial += 1
        return f"{prefix}-{self._serial * 7919 % 900000 + 100000}"

    def _user_fact(self) -> tuple[str, str | None]:
        rng = self._rng
        person = rng.choice(self._people)
        first = person.split()[0]
        city, org = rng.choice(_CITIES), rng.choice(_ORGS)
        kind = rng.randrange(12)
        if kind == 0:
            return (
                f"My {rng.choice(_RELATIONS)} {person} moved to {city} {rng.choice(_WHEN)}.",
                f"Where did {person} move to?",
            )
        if kind == 1:
            return (
                f"{first} started a new job at {org} as a {rng.choice(_JOBS)}.",
                f"Where does {first} work now?",
            )
        if kind == 2:
            code = self._code("INV")
            amount = rng.randint(40, 9000)
            return (
                f"Invoice {code} from {org} for {amount} euros is due on "
                f"{rng.choice(_MONTHS)} {rng.randint(1, 28)}.",
                f"invoice {code}",
            )
        if kind == 3:
            return (
                f"I had {rng.choice(_FOODS)} with {person} in {city} {rng.choice(_WHEN)}.",
                f"What did I eat with {person}?",
            )
        if kind == 4:
            pet, name = rng.choice(_PETS), rng.choice(_PET_NAMES)
            return (
                f"We adopted a {pet} called {name} {rng.choice(_WHEN)}; {first} helped us.",
                f"What is the name of our {pet}?",
            )
        if kind == 5:
            hobby = rng.choice(_HOBBIES)
            return f"I started learning {hobby} {rng.choice(_WHEN)}.", f"When did I start {hobby}?"
        if kind == 6:
            return (
                f"{person}'s birthday is on {rng.choice(_MONTHS)} {rng.randint(1, 28)}.",
                f"When is {person}'s birthday?",
            )
        if kind == 7:
            book = rng.choice(_BOOKS)
            return (f"{first} recommended {book} to me.", f"Who recommended {book}?")
        if kind == 8:
            code = self._code("TKT")
            return (
                f"Support ticket {code} about the {org} account is still open; "
                f"the meeting moved to {rng.choice(_WEEKDAYS)}.",
                f"status of ticket {code}",
            )
        if kind == 9:
            return (
                f"We're planning a trip to {city} in {rng.choice(_MONTHS)} with {first}.",
                f"trip to {city}",
            )
        if kind == 10:
            room = rng.randint(100, 999)
            return (
                f"The {org} office moved to room {room} on the {rng.randint(2, 30)}th floor.",
                f"which room is the {org} office",
            )
        return (
            f"I'm feeling a bit tired after {rng.choice(_WHEN)}, work at {org} was intense.",
            None,
        )
