"""Slots and the supersedes rule (retain/supersession.py), on texts as they are stored."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentmem.retain.slots import FAMILY_WORDS, NARRATOR, Slot, slots_of, split_speaker
from agentmem.retain.supersession import supersedes


@pytest.mark.parametrize(
    ("text", "slot"),
    [
        ("Ana: I live in Berlin.", Slot("ana", "home", "berlin")),
        ("Ana: I don't live in Berlin anymore.", Slot("ana", "home", "not berlin")),
        ("Stan moved to Bergen.", Slot("stan", "home", "bergen")),
        ("Gus: I work at Quixotrix as a welder.", Slot("gus", "job", "quixotrix")),
        ("Kofi: I quit my job last week.", Slot("kofi", "job", "none")),
        ("Milo: We broke up last month.", Slot("milo", "partner", "none")),
        ("Rosa: My new phone number is 555-0199.", Slot("rosa", "phone", "5550199")),
        ("Uma: My email is uma@oldmail.com.", Slot("uma", "email", "uma@oldmail.com")),
        ("Abby: Green is my favorite color now.", Slot("abby", "favourite colour", "green")),
        ("Hugo: The Porto trip is cancelled.", Slot("hugo", "plan trip", "porto", change=True)),
        ("Sam: I quit Google and joined Stripe.", Slot("sam", "job", "stripe")),
        ("Tia: My new manager is Alice.", Slot("tia", "role manager", "alice")),
        ("Tia: Bob is my manager.", Slot("tia", "role manager", "bob")),
        ("Uli: Dr. Okafor is now my GP.", Slot("uli", "role gp", "okafor")),
        # Names of letters beyond ASCII are subjects too; the subject is casefolded.
        ("Zoë moved to Paris last week.", Slot("zoë", "home", "paris")),
        ("Ana: Strauß lives in Vienna.", Slot("strauss", "home", "vienna")),
        ("Jürgen Strauß: I work at Siemens now.", Slot("jürgen strauss", "job", "siemens")),
        ("Ana: I quit Ørsted and joined Équinor.", Slot("ana", "job", "équinor")),
        ("Ana: Élodie is my manager.", Slot("ana", "role manager", "élodie")),
        ("Ana: I moved to Île-de-France last week.", Slot("ana", "home", "île-de-france")),
        ("Ana: The Zürich trip is cancelled.", Slot("ana", "plan trip", "zürich", change=True)),
        # Without a speaker, "I", "we" and "my" are the one who writes to the bank.
        ("I live in Berlin.", Slot(NARRATOR, "home", "berlin")),
        ("Kenji is my manager.", Slot(NARRATOR, "role manager", "kenji")),
        # A name's phone, address or manager; "got" before a partner.
        ("Sara's new number is 555-9876.", Slot("sara", "phone", "5559876")),
        ("Kofi's manager is Bob.", Slot("kofi", "role manager", "bob")),
        ("Tom got engaged to Rita.", Slot("tom", "partner", "rita")),
        # A job started or lost in other words; a home moved back to; no one in a role.
        ("Ana: I started working at Meta last month.", Slot("ana", "job", "meta")),
        ("Ana: I just got hired at Meta.", Slot("ana", "job", "meta")),
        ("Ana: I got laid off from Google.", Slot("ana", "job", "none")),
        ("Ana: I moved back home to Dublin.", Slot("ana", "home", "dublin")),
        ("Ana: Sam is no longer my manager.", Slot("ana", "role manager", "none")),
        # Someone new in a role, named beside it.
        ("Ana: I switched to a new dentist, Dr. Kim.", Slot("ana", "role dentist", "kim")),
        ("Ana: I've got a new GP called Dr Rao.", Slot("ana", "role gp", "rao")),
        ("Ana: My new manager, Omar, starts Monday.", Slot("ana", "role manager", "omar")),
        # What someone works as.
        ("Ana: I work as a nurse at St Mary's.", Slot("ana", "occupation", "nurse")),
        ("Ana: I was promoted to team lead.", Slot("ana", "occupation", "team lead")),
        ("Ana: I got a job as a barista.", Slot("ana", "occupation", "barista")),
        # An age, a weight, an amount a thing of someone's costs, each as one value however
        # it is spelled.
        ("Ana: I'm 34.", Slot("ana", "age", "34")),
        ("Ana: Ben is 40 years old.", Slot("ben", "age", "40")),
        ("Lily turned 6 on Saturday.", Slot("lily", "age", "6")),
        ("Ana: I weigh about 80 kilos.", Slot("ana", "weight", "80 kg")),
        ("Ana: I weigh 80.0 kg.", Slot("ana", "weight", "80 kg")),
        ("Ana: They raised my rent to $1.5k.", Slot("ana", "amount rent", "$1500")),
        ("Ana: I'm down to 74 kg now.", Slot("ana", "weight", "74 kg")),
        ("Ana: My weight is 176 lbs.", Slot("ana", "weight", "176 lb")),
        ("Ana: My rent is $1,200.00 a month.", Slot("ana", "amount rent", "$1200")),
        ("Ana: The landlord raised my rent to $1,350.", Slot("ana", "amount rent", "$1350")),
        ("Ana: My monthly rent is now $1,300.", Slot("ana", "amount rent", "$1300")),
        ("Ana: My salary went up to 60k dollars.", Slot("ana", "amount salary", "60000 dollars")),
        ("Ana: Our budget has been cut to €500.", Slot("ana", "amount budget", "€500")),
        ("Ben's rent is $900.", Slot("ben", "amount rent", "$900")),
        # Two things of one family in one sentence are two slots.
        ("Ana: My rent is $900 and my salary is $4,000.", Slot("ana", "amount salary", "$4000")),
        (
            "Ana: My favourite colour is blue and my favourite food is pasta.",
            Slot("ana", "favourite food", "pasta"),
        ),
    ],
)
def test_a_statement_fills_its_slot(text, slot):
    assert slot in slots_of([text])[0]


# One statement for each way a slot is said. Each must pass the store's prefilter, the
# family's words (``FAMILY_WORDS``), or no stored statement would ever be offered to the rule:
# "I started at Meta", "My home is in Porto" and "I landed a role at Shopify" were not.
ONE_PER_RULE = [
    ("Ana: I live in Leeds.", "home"),
    ("Ana: We moved to Denver.", "home"),
    ("Ana: I'm based in Oslo.", "home"),
    ("Ana: My home is in Porto now.", "home"),
    ("Ana: I've been living in Cork since May.", "home"),
    ("Ana: I work at Google.", "job"),
    ("Ana: I started a new job at Klarna.", "job"),
    ("Ana: I landed a role at Shopify.", "job"),
    ("Ana: I joined Stripe.", "job"),
    ("Ana: I started at Meta this week.", "job"),
    ("Ana: I started working at Meta.", "job"),
    ("Ana: I quit Google and joined Stripe.", "job"),
    ("Ana: I was hired by Klarna.", "job"),
    ("Ana: I got laid off.", "job"),
    ("Ana: My employer is Spotify.", "job"),
    ("Ana: I quit my job.", "job"),
    ("Ana: I work as a nurse.", "occupation"),
    ("Ana: I got promoted to team lead.", "occupation"),
    ("Ana: My girlfriend is Sara.", "partner"),
    ("Ana: I'm dating Tom.", "partner"),
    ("Ana: I've been seeing Alex.", "partner"),
    ("Ana: We broke up.", "partner"),
    ("Ana: My phone number is 555-0101.", "phone"),
    ("Ana: I changed my number to 555-0199.", "phone"),
    ("Ana: My email is ana@example.com.", "email"),
    ("Ana: I changed my email to bo@example.com.", "email"),
    ("Ana: My address is 12 Elm Street.", "address"),
    ("Ana: I updated my address to 4 Oak Road.", "address"),
    ("Ana: My dentist is Dr. Shah.", "role"),
    ("Ana: I switched to a new dentist, Dr. Kim.", "role"),
    ("Ana: My new manager, Omar, starts Monday.", "role"),
    ("Ana: I'm 34.", "age"),
    ("Ana: I turned 35 yesterday.", "age"),
    ("Ana: I weigh 70 kg.", "weight"),
    ("Ana: My rent is $1,200.", "amount"),
    ("Ana: My salary was raised to €50,000.", "amount"),
    ("Ana: My favourite band is Radiohead.", "favourite"),
    ("Ana: The Porto trip is cancelled.", "plan"),
]


@pytest.mark.parametrize(("text", "family"), ONE_PER_RULE)
def test_each_way_of_saying_a_slot_passes_the_stores_prefilter(text: str, family: str) -> None:
    found = slots_of([text])[0]
    assert family in {slot.family.split()[0] for slot in found}, found
    assert re.search(FAMILY_WORDS[family], split_speaker(text)[1], re.IGNORECASE)


@pytest.mark.parametrize(
    "text",
    [
        "Ana: Do you live in Berlin?",
        "Ana: I lived in Rome for years.",
        "Ana: I'm thinking of moving to Madrid.",
        "Ana: My sister lives in Rome.",
        "Ana: I also work at a cafe.",
        "Ana: Our trip got off to a bad start.",
        "Ana: The trip to Porto was lovely.",
        "Ana: my sister's number is 555-1111.",  # someone not named
        # Numbers that are no age, weight or amount of someone's, and what does not hold now.
        "Ana: I'm 34 minutes late.",
        "Ana: Tom is 6 feet tall.",
        "Ana: I'm 100% sure.",
        "Ana: I am 2 weeks into my new job.",
        "Ana: My son is 4.",  # someone not named
        "Ana: It's 5.",
        "Ana: I turned 3 pages.",
        "Ana: I'm 500.",
        "Ana: I want to weigh 70 kg.",
        "Ana: My goal is to weigh 70 kg.",
        "Ana: My bag weighs 20 kg.",
        "Ana: My rent used to be $900.",
        "Ana: My rent was $700 back then.",
        "Ana: I raised my kids to be kind.",
        "Ana: My car is worth $5,000.",
        "Ana: Rent is $1,200 here.",
        "She moved to Leeds.",  # a pronoun names no one
        "Ana: I was fired up about it.",
        "Ana: I started working on a new project.",
        "Ana: I work as hard as I can.",
        "Ana: I work as part of a team.",
        "Ana: I worked as a waiter in college.",
        "Ana: My sister works as a nurse.",
        "Ana: I also have a new dentist, Dr. Lee.",
        "Ana: I might switch to a new dentist, Dr. Kim.",
        "Ana: I had been living in Rome before.",
        "Ana: I'd been working at Google.",
    ],
)
def test_what_does_not_say_what_holds_now_fills_no_slot(text):
    assert slots_of([text]) == [[]]


def test_split_speaker_reads_the_stored_chat_form():
    assert split_speaker("Ana: I live in Berlin.") == ("Ana", "I live in Berlin.")
    assert split_speaker("Stan lives in Oslo.") == (None, "Stan lives in Oslo.")


_PIECES = st.sampled_from(
    [
        "I ",
        "we ",
        "my ",
        "don't ",
        "live in ",
        "moved to ",
        "Berlin ",
        "work at ",
        "job ",
        "?",
        "favourite colour is ",
        "trip ",
        "cancelled ",
        "phone number is ",
        "Ana: ",
        "@x.io ",
        ".",
        "'m ",
        "34 ",
        "turned ",
        "weigh ",
        "kg ",
        "rent is ",
        "raised my ",
        " to ",
        "$1,2",
        "00.5 ",
        "k dollars",
        "9" * 40,
    ]
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(_PIECES | st.text(max_size=5), max_size=12).map("".join), max_size=4))
def test_any_text_reads_and_no_slot_supersedes_itself(texts):
    for slots in slots_of(texts):
        for slot in slots:
            assert slot.subject and slot.family
            assert not supersedes(slot, slot) or slot.family.startswith("plan ")
