"""Cause clauses found inside one sentence (retain/causes.py): which cues count, which do not."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentmem.retain.causes import as_fact_text, cause_clauses, states_the_same

CAUSES = [
    (
        "Because the supplier missed its deadline, the product launch was delayed.",
        "the supplier missed its deadline",
    ),
    ("The launch slipped because the vendor's API was down", "the vendor's API was down"),
    ("Since the trains were on strike, we drove to Leeds.", "the trains were on strike"),
    ("I moved to Lyon since my job changed.", "my job changed"),
    # "now that": what has come about, and what follows from it.
    ("Now that the kids are at school, I finally have time to paint.", "the kids are at school"),
    ("I've been painting more now that the kids are at school.", "the kids are at school"),
    ("We can finally relax now that the exams are over.", "the exams are over"),
    # A dash after the cause starts a clause of its own.
    ("It has paid off now that I'm a manager- it's a stepping stone.", "I'm a manager"),
    ("We stayed in because the roads were icy — nobody could drive.", "the roads were icy"),
    ("It rained all day, so we stayed in.", "It rained all day"),
    # A bare noun after ", so", known as the subject by the verb of what happened after it.
    ("The roads flooded, so school was cancelled.", "The roads flooded"),
    ("The printer jammed again, so nothing got printed.", "The printer jammed again"),
    ("The server crashed, which is why the site was down.", "The server crashed"),
    ("The vendor was late and as a result the launch slipped.", "The vendor was late"),
    ("The outage led to a week of delays.", "The outage"),
    ("A burst pipe caused the flooding in the basement.", "A burst pipe"),
    ("Bad news: the vendor was late, so we slipped.", "the vendor was late"),
    # The cause ends where a consequence or a contrast of it begins.
    (
        "The launch slipped because the vendor's API was down, so we moved the demo to Friday.",
        "the vendor's API was down",
    ),
    ("We left because the kids were tired, but the band played on.", "the kids were tired"),
    ("I quit because the job was boring which made me sad.", "the job was boring"),
    # A clause before a participle or a "which" of consequence.
    ("The app crashed, causing us to lose the draft.", "The app crashed"),
    (
        "Sales dropped after the price hike, which forced us to cut staff.",
        "Sales dropped after the price hike",
    ),
    ("The river flooded the valley, leading to weeks of repairs.", "The river flooded the valley"),
    # A cause named by a noun phrase, as before "caused" (no cause before).
    ("The flight was cancelled due to the storm over Iceland.", "the storm over Iceland"),
    ("Because of the rain, we stayed in.", "the rain"),
    ("I'm exhausted as a result of the night shift.", "the night shift"),
    ("Prices rose as a consequence of the drought.", "the drought"),
    ("The road was icy. As a result of the storm, the bus was late.", "the storm"),
    ("The game was called off owing to rain, so we went home.", "rain"),
    # What someone was rewarded or punished for; what a pain or tiredness comes from.
    ("He got promoted for fixing the outage.", "fixing the outage"),
    ("She was fined for speeding on the M4.", "speeding on the M4"),
    ("My knee hurts from running.", "running"),
    ("I'm exhausted from the flight.", "the flight"),
    # "because" as chats write it.
    ("I'm so tired cuz the baby cried all night.", "the baby cried all night"),
    ("I skipped the gym bc my knee hurt.", "my knee hurt"),
    ("I left early 'cause my head was killing me.", "my head was killing me"),
    ("She quit becuase her boss kept yelling at her.", "her boss kept yelling at her"),
    ("We cancelled the trip b/c the flights got too expensive.", "the flights got too expensive"),
    ("Bc the car broke down, we missed the wedding.", "the car broke down"),
    ("Cuz of the snow, school was closed.", "the snow"),
    # What a thing meant, when a clause follows, is its consequence.
    ("The power cut meant we lost all the food in the freezer.", "The power cut"),
    ("The strike meant that the trains were cancelled.", "The strike"),
    ("The new job meant we had to move to Leeds.", "The new job"),
    # ... its subject then a past tense, no auxiliary.
    ("The delay meant my sister missed her connection.", "The delay"),
    ("The rain meant our team lost the final.", "The rain"),
    # A clause stated as the cause says more than what it is "from".
    ("They look tired from all the walking, so they rest.", "They look tired from all the walking"),
]
NO_CAUSE = [
    "I have lived in Oslo since 2019.",
    "She has been happier since she moved to Porto.",
    "We have known each other since we were kids.",
    "I haven't seen him since the funeral in January.",  # a perfect, negated
    "She hasn't called since the argument at the party.",
    "Since last summer the office is quieter.",
    "Since we last spoke, I took my kids to the park.",
    "Since our last chat, a lot of things happened to me.",
    "Since I first met her, I admired her courage.",
    # "now that" of the talk itself, of what is known, or "now" as when.
    "Now that I think about it, you're right.",
    "Now that you mention it, I did see her at the gym.",
    "I know now that she was right about him.",
    "I realize now that the job was wrong for me.",
    "At the office right now that project is on hold.",
    "I was so happy to see you!",
    "Thanks so much for the help.",
    # "so" + an adjective, or a purpose: no consequence.
    "It's amazing how something so small can have such a big impact.",
    "We're about to release a demo soon so others can try it out.",
    "The plan worked, so far it is fine.",
    "I saved money so that we could travel.",
    "I love painting because it relaxes me.",  # the clause says nothing on its own
    # "due to" after "is" also says what is owed or planned; a cause with no content.
    "The rent is due to the landlord on Friday.",
    "She is due to arrive in May.",
    "I stayed home because of you.",
    "We cancelled because of that.",
    "The launch is on May 6.",
    "She smiled, causing nothing.",  # the cause says too little on its own
    "I met Ana, who caused a stir at the party.",  # "who": a person, not the clause
    # How long or how often, not why; where one was away from.
    "He was fired for the third time.",
    "He was suspended for two weeks.",
    "She was banned for life.",
    "I was off sick from work on Monday.",
    "It must feel great to be recognized for your gaming skills.",  # what would be, not was
    # What one meant to do, or what something meant to someone.
    "The city was founded in 500 BC by Greek settlers.",  # a year, not "bc"
    "The COS team shipped the new model on Monday.",
    "I meant to call you.",
    "Her words meant the world to me.",
    "Her visit meant the red carpet treatment for us.",
    "That trip meant everything to my dad.",
    "It meant we could finally relax.",  # "it" names nothing here
    "My grandma meant well.",
]


@pytest.mark.parametrize(("sentence", "cause"), CAUSES)
def test_a_causal_cue_gives_the_cause_clause(sentence: str, cause: str) -> None:
    assert cause_clauses(sentence) == [cause]


@pytest.mark.parametrize("sentence", NO_CAUSE)
def test_time_since_intensifier_so_and_empty_clauses_give_none(sentence: str) -> None:
    assert cause_clauses(sentence) == []


def test_each_sentence_of_a_turn_is_read_and_repeats_are_dropped() -> None:
    text = (
        "Bad news. The launch slipped because the vendor's API was down. "
        "It slipped because the vendor's API was down!"
    )
    assert cause_clauses(text) == ["the vendor's API was down"]


def test_a_clause_becomes_a_sentence_and_near_repeats_are_recognised() -> None:
    assert as_fact_text("the supplier missed its deadline") == "The supplier missed its deadline."
    assert states_the_same(
        "The vendor shipped the parts late.", "The vendor shipped the parts three weeks late."
    )
    assert not states_the_same("The vendor shipped the parts late.", "The launch was delayed.")


@given(st.text(max_size=400))
def test_any_text_gives_clauses_taken_from_it(text: str) -> None:
    flat = " ".join(text.split()).casefold()
    for clause in cause_clauses(text):
        assert clause and clause.casefold() in flat
        assert as_fact_text(clause)
