"""Entity recognition measured on hand-labelled mentions (``tests/data/entity_mentions.json``).

Each text is read the way the offline extractor reads a turn (one spaCy pass, the speaker given)
and its mentions are scored against the labels:

* name recall: labelled names found (case-insensitive, exact name or a listed alternative);
* kind precision: of the labelled names found, those given an acceptable kind;
* name precision: of the names found, those labelled (reported, not asserted: the labels list
  names, not every word that could fairly be one).
"""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentmem.models.nlp import load_nlp
from agentmem.retain.entities import ENTITY_KINDS, recognize_entities
from agentmem.retain.entity_kinds import voted_kind

DATA = Path(__file__).parent.parent / "data" / "entity_mentions.json"
NAME_RECALL = 0.95
KIND_PRECISION = 0.9
#: Chat turns written after the rules: a floor that says how far they carry to text they
#: were not written on (kind precision .79 before the name prior of retain/name_prior.py and
#: its cues, .85 with them, .89 with the rarer first names; docs/entities-and-causes.md).
UNSEEN = DATA.with_name("entity_mentions_unseen.json")
UNSEEN_NAME_RECALL = 0.9
UNSEEN_KIND_PRECISION = 0.85


@dataclass(frozen=True)
class Scores:
    labelled: int
    found: int
    kind_right: int
    predicted: int
    predicted_labelled: int
    misses: tuple[str, ...]
    wrong_kinds: tuple[str, ...]

    @property
    def name_recall(self) -> float:
        return self.found / self.labelled if self.labelled else 1.0

    @property
    def kind_precision(self) -> float:
        return self.kind_right / self.found if self.found else 1.0

    @property
    def name_precision(self) -> float:
        return self.predicted_labelled / self.predicted if self.predicted else 1.0

    def summary(self) -> str:
        return (
            f"{self.labelled} labelled: name recall {self.name_recall:.3f}, "
            f"kind precision {self.kind_precision:.3f}, name precision {self.name_precision:.3f}"
        )


def load_texts(source: str | None = None, *, path: Path = DATA) -> list[dict]:
    texts = json.loads(path.read_text("utf-8"))["texts"]
    return [t for t in texts if source is None or t["source"] == source]


def _key(name: str) -> str:
    return name.casefold().rstrip(".")  # "Helping Hands Ltd." ends a sentence


def recognised(texts: list[dict], *, bank_vote: bool) -> list[dict[str, str]]:
    """Name key -> kind found in each text.

    Without ``bank_vote``, each text alone: tentative mentions do not count. With it, the
    texts of one source are one bank, as the retain pipeline keeps it: a tentative mention
    counts once an earlier text named that entity, and every mention shows the kind voted by
    all mentions of its name.
    """
    docs = load_nlp().pipe(t["text"] for t in texts)
    found: list[dict[str, str]] = []
    tallies: dict[str, dict[str, defaultdict[str, float]]] = defaultdict(dict)
    for text, doc in zip(texts, docs, strict=True):
        speaker = text["speaker"]
        tally = tallies[text["source"]]
        kinds: dict[str, str] = {}
        for m in recognize_entities(doc, speaker=speaker, tentative=True):
            key = _key(m.name)
            if m.name == speaker and speaker not in text["text"]:
                continue
            if m.tentative and not (bank_vote and key in tally):
                continue
            kinds[key] = m.kind
            tally.setdefault(key, defaultdict(float))[m.kind] += m.confidence
        found.append(kinds)
    if bank_vote:
        for text, kinds in zip(texts, found, strict=True):
            tally = tallies[text["source"]]
            for key, kind in kinds.items():
                kinds[key] = voted_kind(tally[key], kind)
    return found


def score(texts: list[dict], *, bank_vote: bool = False) -> Scores:
    """Recognise the entities of every text and score them against its labels."""
    counts: Counter[str] = Counter()
    misses: list[str] = []
    wrong: list[str] = []
    for text, found in zip(texts, recognised(texts, bank_vote=bank_vote), strict=True):
        accounted: set[str] = set()
        for names, kinds in text["entities"].items():
            alternatives = [_key(n) for n in names.split("|")]
            accounted.update(alternatives)
            if kinds == "ignore":
                continue
            counts["labelled"] += 1
            hit = next((n for n in alternatives if n in found), None)
            if hit is None:
                misses.append(f"{names!r} in {text['text']!r}")
                continue
            counts["found"] += 1
            if found[hit] in kinds.split("|"):
                counts["kind_right"] += 1
            else:
                wrong.append(f"{names!r} as {found[hit]} (not {kinds}) in {text['text']!r}")
        counts["predicted"] += len(found)
        counts["predicted_labelled"] += len(found.keys() & accounted)
    return Scores(
        labelled=counts["labelled"],
        found=counts["found"],
        kind_right=counts["kind_right"],
        predicted=counts["predicted"],
        predicted_labelled=counts["predicted_labelled"],
        misses=tuple(misses),
        wrong_kinds=tuple(wrong),
    )


def test_the_labelled_set_is_large_and_covers_every_source() -> None:
    texts = load_texts()
    sources = Counter(t["source"] for t in texts)
    assert set(sources) == {"chat", "narrative", "demo", "synthetic"}
    assert score(texts).labelled >= 300


@pytest.mark.parametrize("bank_vote", [False, True], ids=["per-text", "bank-vote"])
def test_names_are_found_and_kinds_are_right_on_the_labelled_set(bank_vote: bool) -> None:
    result = score(load_texts(), bank_vote=bank_vote)
    report = "\n".join([result.summary(), *result.misses, *result.wrong_kinds])
    assert result.name_recall >= NAME_RECALL, report
    assert result.kind_precision >= KIND_PRECISION, report


def test_names_and_kinds_hold_up_on_chat_turns_the_rules_were_not_written_on() -> None:
    result = score(load_texts(path=UNSEEN), bank_vote=True)
    report = "\n".join([result.summary(), *result.misses, *result.wrong_kinds])
    assert result.labelled >= 190, report
    assert result.name_recall >= UNSEEN_NAME_RECALL, report
    assert result.kind_precision >= UNSEEN_KIND_PRECISION, report


@pytest.mark.parametrize("source", ["chat", "narrative", "demo", "synthetic"])
def test_no_source_is_far_below_the_targets_once_the_bank_has_voted(source: str) -> None:
    result = score(load_texts(source), bank_vote=True)
    report = "\n".join([result.summary(), *result.misses, *result.wrong_kinds])
    assert result.name_recall >= NAME_RECALL - 0.05, report
    assert result.kind_precision >= KIND_PRECISION - 0.05, report


_WORDS = st.sampled_from(
    [
        "Giulia",
        "'s",
        "sister",
        "is",
        "a",
        "the",
        "in",
        "to",
        "from",
        "flew",
        "Labs",
        "Inc",
        "Project",
        "API",
        "an",
        ",",
        ".",
        "and",
        "I",
        "said",
        "INV-20931",
        "10k",
        "New",
        "Aisle",
        "seats",
        "called",
        "vendor",
        "because",
        "since",
        "so",
        "Dr.",
        ":",
        "’s",
        '"',
        "“",
        "”",
        "Thanks",
        "of",
    ]
)


@given(st.lists(st.one_of(_WORDS, st.text(max_size=8)), max_size=40), st.booleans())
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_kind_evidence_holds_on_any_word_sequence(words: list[str], tentative: bool) -> None:
    doc = load_nlp()(" ".join(words))
    mentions = recognize_entities(doc, speaker="Ann", tentative=tentative)
    keys = [m.name.casefold() for m in mentions]
    assert len(keys) == len(set(keys))
    for mention in mentions:
        assert mention.kind in ENTITY_KINDS
        assert math.isfinite(mention.confidence) and mention.confidence >= 0
        assert tentative or not mention.tentative
        assert mention.name.strip() == mention.name and mention.name
