"""The offline default reranker: a calibrated relevance from the arms' raw scores.

:class:`~agentmem.recall.rerank.ScoreFusionReranker` gives a weighted mean of scores
normalised per query, so the best keyword match of any query scores near 1 however weak it
is. :class:`CalibratedReranker` instead estimates the probability that a memory is evidence
for the query, with a logistic model over signals that mean the same in every query:

* BM25 relative to the query's best, and the raw BM25 (log-scaled: rare terms matched),
* the share of the query's content words the memory contains (coverage), and its product
  with relative BM25 (the best match *and* most of the query),
* the raw cosine similarity (MiniLM: unrelated text sits near 0.1), of every candidate: one
  only another arm returned has it measured on its stored vector (``Candidate.cosine``),
* how much closer the query is to the memory's closest piece than to the whole memory (a
  turn that carries several pieces of news has one vector that blurs them; its sentences are
  embedded alone at retain, ``retain/pieces.py``): the gain, never a loss, so a memory of one
  piece is not penalised,
* the temporal arm's closeness (inside the period the query names), and whether the
  memory's own words date it inside that period ("I finished the project last week" for
  "What was Jolene working on in early January 2023?"),
* whether the memory's speaker is named in the query ("What does Melanie do to destress?"
  is answered by what Melanie said, not by her friend's replies that address her),
* whether the memory is a first-person statement ("I signed up for a pottery class") rather
  than a reply about the listener ("You'd be a great counselor!"): what a person does, owns
  and plans is said in the first person,
* whether the memory names an entity of the kind the question asks for (its expected answer
  type, :data:`ANSWER_KINDS`), other than its speaker and the entities the question names:
  "Which cities has John been to?" wants a place, "What books has Tim read?" a work (kind
  "product"), "Who ..." a person or an organisation; only for memories above MiniLM's
  unrelated cosine (a place named in a turn about something else answers no "Where ...?"),
* the graph arm's activation, and graph support: a memory the walk reached from a likely
  hit through a specific entity ("Marco's sister is Giulia." → Giulia → "Giulia is a marine
  biologist in Naples.") gets that hit's probability relative to the query's best candidate,
  times the share of activation that arrived, added to its log-odds (:func:`graph_support`),
* session support: evidence clusters in a conversation, so a memory whose session (its
  document, else the retain call it came from) holds other likely evidence among the
  candidates is likelier evidence itself; the model adds the other members' probabilities,
  each relative to the query's best candidate, times :data:`W_SESSION`, to its log-odds.

The two yes/no signals that can hold for most of a query's candidates, the answer kind and
the period's dating, are weighed by their :func:`selectivity` in that query: a place named
says nothing when nearly every candidate names one. Support reads relative probabilities so
that it does not depend on the model's base rate.

When no word the candidates share with the query is telling (weighed by idf in the bank's own
keyword statistics, ``Candidate.informative_coverage``), the semantic arm's best match keeps a
place in the top 10 (:func:`semantic_floor`).

The coefficients were fit jointly on LoCoMo conversations 1–5 (the top 50 fused candidates
of each question, labelled by whether they cover a gold evidence turn; each evidence against
the question's other candidates, through session and graph support), the intercept set so
that the mean estimated probability is the share of evidence; the graph support weight was
chosen by leave-one-conversation-out. Relevance is the model's odds against those of an
average candidate (:data:`PRIOR_SHIFT`), a fixed, query-independent map, so a relevance
means the same in every query (``agentmem bench locomo`` writes the reliability table,
relevance band → share of evidence, into its report). How each weight was chosen, with its
figures, is in docs/benchmarks.md.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from agentmem.config import FusionWeights
from agentmem.recall.candidates import Candidate
from agentmem.recall.rerank import ScoreFusionReranker, arm_weights
from agentmem.retain.causes import cause_clauses
from agentmem.types import Memory

# Logistic coefficients (see the module docstring).
INTERCEPT = -10.14
#: The share of evidence among the candidates the model was fit on: the intercept makes the
#: mean estimated probability equal to it.
BASE_RATE = 0.0243
#: Added to the log-odds of the relevance returned: the prior log-odds of a candidate removed,
#: so relevance reads the model's odds against those of an average candidate (a candidate as
#: likely as the average one gets 0.5). Probabilities near the 2 % base rate would otherwise
#: let recency decide under the default composite weights. A fixed, query-independent map.
PRIOR_SHIFT = -math.log(BASE_RATE / (1 - BASE_RATE))
W_KEYWORD_RELATIVE = 1.14
W_KEYWORD_RAW = 0.35  # times log(1 + bm25)
#: For cosines of the query without the people it names (the semantic arm's query).
W_COSINE = 4.15
#: Per unit of the best piece's cosine above the whole memory's (chosen on conversations 1-5,
#: one store: fit R@10 .8222 without, .8246 at 1.5 and 2, .8238 at 3; see docs/benchmarks.md).
W_BEST_PIECE = 2.0
W_TEMPORAL = 3.50
#: For a fact dated inside the period the query names, times the signal's selectivity.
W_IN_PERIOD = 0.53
W_COVERAGE = -0.05
W_KEYWORD_X_COVERAGE = 2.68
W_SPEAKER_NAMED = 2.80
W_FIRST_PERSON = 0.58
#: For a memory naming an entity of the kind asked for, times the signal's selectivity.
W_ANSWER_KIND = 2.14
#: Per unit of graph activation.
W_GRAPH = 1.08
#: Log-odds per unit of session support: the other same-session candidates' estimated
#: probabilities, each relative to the query's most likely candidate.
W_SESSION = 1.22
#: Log-odds per unit of graph support: the relative probability of the candidate the walk
#: carried activation from through an entity, times the share that arrived (see
#: :func:`graph_support`).
W_GRAPH_SUPPORT = 5.0
#: Logit per unit of normalised score, times the arm's fusion weight, for arms the model was
#: not fit on (uncalibrated until they are).
W_OTHER_ARM = 2.0
#: Cosine assumed for a candidate without one (no semantic arm ran): MiniLM's unrelated level.
UNRELATED_COSINE = 0.1
#: The rank the semantic arm's best match is kept at when lexical evidence says nothing (see
#: :func:`semantic_floor`), and the share of the query's idf weight below which it says nothing.
SEMANTIC_FLOOR_RANK = 10
UNINFORMATIVE_LEXICAL = 0.2
_CALIBRATED_ARMS = frozenset({"keyword", "semantic", "temporal", "graph"})
#: The arms the model needs results from (see :class:`CalibratedReranker`).
_MODEL_ARMS = frozenset({"keyword", "semantic"})

_WORD = re.compile(r"[^\W_]+")
#: The stopwords the coefficients were fit with (also what no name of a person can be).
_STOPWORD_TEXT = (
    "a an the of to in on and or is are was were be been do does did what which who "
    "whom whose when where why how that this these those it its for with about at by from as "
    "has have had i you he she they we my your his her their our me him them us not can could "
    "would should will shall may might there here than then so if into over after before up "
    "down out any some"
)
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_FIRST_PERSON = frozenset(
    ["i", "me", "my", "mine", "myself", "we", "us", "our", "ours", "ourselves"]
)
_SECOND_PERSON = frozenset(["you", "your", "yours", "yourself", "yourselves"])
# A five-letter prefix is a crude stem: "painting"/"paints"/"painted" all match "paint".
_STEM = 5
#: Texts whose content words and person are kept (pure functions of the text: a memory met
#: again in a later recall, or twice in one, is read once).
_TEXTS_KEPT = 16_384


def content_tokens(text: str) -> list[str]:
    """A text's words, lower-cased, without stopwords (what :func:`content_words` stems)."""
    return [word for word in _WORD.findall(text.lower()) if word not in STOPWORDS]


@lru_cache(maxsize=_TEXTS_KEPT)
def content_words(text: str) -> frozenset[str]:
    """A text's content words: lower-cased, stopwords dropped, cut to a five-letter stem."""
    return frozenset(word[:_STEM] for word in content_tokens(text))


def word_weights(query: str, idfs: Mapping[str, float]) -> dict[str, float]:
    """The query's content words (stems), each weighted by the idf of its words in the bank
    (``idfs``, by word; a word without one, such as a keyword stopword, weighs 0)."""
    weights: dict[str, float] = {}
    for word in content_tokens(query):
        stem = word[:_STEM]
        weights[stem] = max(weights.get(stem, 0.0), idfs.get(word, 0.0))
    return weights


def weighted_coverage(weights: Mapping[str, float], text: str) -> float:
    """The share of the query's word weight (see :func:`word_weights`) that a text holds."""
    total = sum(weights.values())
    if total <= 0:
        return 0.0
    return sum(weights[stem] for stem in content_words(text) if stem in weights) / total


def speaker_named(query_words: frozenset[str], memory: Memory) -> bool:
    """Whether the memory is a "Name: ..." turn whose speaker the query names.

    ``query_words`` are the query's lower-cased words; the speaker is the entity whose name
    prefixes the text (the offline extractor writes chat turns so).
    """
    head, colon, _ = memory.text.partition(":")
    if not colon or head not in memory.entities:
        return False
    return all(word in query_words for word in _WORD.findall(head.lower()))


#: What a question asks for, read from its wording, and the entity kinds that answer it.
ANSWER_KINDS: tuple[tuple[re.Pattern[str], frozenset[str]], ...] = tuple(
    (re.compile(rf"\b({words})\b"), frozenset(kinds))
    for words, kinds in (
        (
            r"cit(y|ies)|countr(y|ies)|places?|where|states?|towns?|locations?|destinations?",
            ["place"],
        ),
        (r"books?|novels?|movies?|films?|songs?|albums?|shows?|series|games?|titles?", ["product"]),
        (r"names?|who|authors?|bands?|players?|artists?|musicians?|friends?", ["person", "org"]),
        (r"events?|festivals?|concerts?|conferences?|tournaments?|parades?", ["event"]),
        (r"compan(y|ies)|organi[sz]ations?|teams?|brands?|charit(y|ies)", ["org"]),
    )
)


def answer_kinds(query: str) -> frozenset[str]:
    """The entity kinds a question asks for: "Which cities has John been to?" → place,
    "What books has Tim read?" → product (works), "Who ..." → person or org; empty if none."""
    lowered = query.lower()
    return frozenset(
        kind for pattern, kinds in ANSWER_KINDS if pattern.search(lowered) for kind in kinds
    )


#: A question that asks for a cause: "Why ...?", "How come ...?", "What led to ...?".
_ASKS_WHY = re.compile(
    r"\b(?:why|how come|what (?:is|was|were|are) the reasons?|what (?:caused|led to|made))\b"
)


def asks_for_cause(query: str) -> bool:
    """Whether a question asks for a cause; a memory that states one then answers its kind."""
    return _ASKS_WHY.search(query.lower()) is not None


@lru_cache(maxsize=_TEXTS_KEPT)
def stated_cause(text: str) -> str | None:
    """The first cause a memory's text states ("... because the vendor's API was down"), as
    retain reads it (:func:`~agentmem.retain.causes.cause_clauses`); None if it states none."""
    return next(iter(cause_clauses(text)), None)


def answer_entity(
    kinds: frozenset[str], query_words: frozenset[str], candidate: Candidate
) -> tuple[str, str] | None:
    """The first ``(name, kind)`` the memory names of a kind the question asks for, other than
    its speaker and those the question names itself (the answer is what the question lacks)."""
    if not kinds:
        return None
    speaker = candidate.memory.text.partition(":")[0].lower()
    return next(
        (
            (name, kind)
            for name, kind in candidate.entity_kinds
            if kind in kinds
            and name.lower() != speaker
            and not frozenset(_WORD.findall(name.lower())) <= query_words
        ),
        None,
    )


@lru_cache(maxsize=_TEXTS_KEPT)
def first_person(text: str) -> bool:
    """Whether a text speaks more in the first person than to its listener."""
    words = _WORD.findall(text.lower())
    first = sum(word in _FIRST_PERSON for word in words)
    return first > sum(word in _SECOND_PERSON for word in words)


def _session(memory: Memory) -> str | None:
    """What a memory's conversation is: its document, else the retain call it came from."""
    if memory.document_id is not None:
        return f"document:{memory.document_id}"
    return None if memory.episode_id is None else f"episode:{memory.episode_id}"


@dataclass(frozen=True, slots=True)
class _Question:
    """What the model reads of a query: its content words, all its words, the kinds it asks
    for, and whether it asks for a cause."""

    content: frozenset[str]
    words: frozenset[str]
    kinds: frozenset[str]
    cause: bool = False


class _Signals(NamedTuple):
    """One candidate's log-odds without the signals weighed by their selectivity in the query,
    and those signals: the share of the period's dating, whether it names the answer's kind
    (a tuple: one per candidate of every recall, several times faster to build than a frozen
    dataclass)."""

    base: float
    in_period: float
    answer: bool

    def logit(self, in_period_selectivity: float, answer_selectivity: float) -> float:
        """The candidate's log-odds, alone (before session and graph support)."""
        return (
            self.base
            + W_IN_PERIOD * in_period_selectivity * self.in_period
            + W_ANSWER_KIND * answer_selectivity * self.answer
        )


def _reasons(
    said_by_named: bool, in_first_person: bool, answer: tuple[str, str] | None, in_period: float
) -> list[str]:
    """The model's yes/no signals that held for a memory, in words."""
    reasons = []
    if said_by_named:
        reasons.append("said by the person the query names")
    if in_first_person:
        reasons.append("a first-person statement")
    if answer is not None and answer[1] == "cause":
        reasons.append(f"states the cause asked for: {answer[0]}")
    elif answer is not None:
        reasons.append(f"names the {answer[1]} asked for: {answer[0]}")
    if in_period:
        reasons.append("dated inside the period asked about")
    return reasons


def graph_support(candidate: Candidate, relative: Mapping[str, float]) -> float:
    """How much the graph walk says a memory is evidence because a likely hit leads to it.

    The walk records the memory it carried activation from (``from``: say "Marco's sister is
    Giulia.") and the share that arrived (``carried``: through Giulia, a specific entity, much;
    through a name on every other memory, little). Support is that memory's estimated
    probability relative to the query's most likely candidate (``relative``), times the share,
    so "Giulia is a marine biologist in Naples." is supported by the hit naming her, while
    facts that merely repeat the query's name get none. Relative, because what makes the
    origin a good lead is that it is among the query's best, whatever the model's base rate.
    Only a last hop through an entity counts: a link (a session's next turn, a near-duplicate)
    tells no more than session support and the memory's own cosine already do.
    """
    graph = candidate.hits.get("graph")
    origin = graph.details.get("from") if graph else None
    if origin is None or origin == candidate.memory.id or origin not in relative:
        return 0.0
    if "entity" not in graph.details["path"][-2]:
        return 0.0
    return relative[origin] * float(graph.details["carried"])


def selectivity(fired: Sequence[bool]) -> float:
    """How much a yes/no signal says about one query: 1 − the share of candidates it holds for.

    "Which country is Priya studying in?" over a chat where most turns name some place: a
    place named is no clue there, while the one turn of a hundred dated inside the period asked
    about is."""
    return 1.0 - sum(fired) / len(fired) if fired else 0.0


def semantic_floor(
    query_content: frozenset[str], candidates: Sequence[Candidate], relevance: list[float]
) -> list[float]:
    """Keep the semantic arm's best match in the top :data:`SEMANTIC_FLOOR_RANK` when no
    lexical evidence can speak for the query.

    "How long is your commute?" against a bank where many turns say "long": the words the
    candidates share with the query are the uninformative ones (the best candidate holds less
    than :data:`UNINFORMATIVE_LEXICAL` of the query's idf weight), and the answer ("The drive
    to the office takes me forty minutes") shares none of them. The keyword signals then rank
    turns that only repeat "long" first; the model cannot tell, from coverage alone, that
    those words say nothing here. So the semantic arm's best match, when it shares no content
    word with the query, gets at least the relevance of the candidate at that rank (a floor,
    not an estimate: its reason says so). ``relevance`` is changed in place and returned.
    """
    lexical = [c.informative_coverage for c in candidates if c.informative_coverage is not None]
    if len(candidates) <= SEMANTIC_FLOOR_RANK or not lexical:
        return relevance
    if max(lexical) >= UNINFORMATIVE_LEXICAL:
        return relevance
    best = next(
        (i for i, c in enumerate(candidates) if (hit := c.hits.get("semantic")) and hit.rank == 1),
        None,
    )
    if best is None or query_content & content_words(candidates[best].memory.text):
        return relevance
    others = sorted((r for i, r in enumerate(relevance) if i != best), reverse=True)
    floor = others[SEMANTIC_FLOOR_RANK - 1]
    if relevance[best] <= floor:
        relevance[best] = min(1.0, math.nextafter(floor, math.inf))
        candidates[best].reasons.append("the closest in meaning, where no shared word is telling")
    return relevance


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, x))))


class CalibratedReranker:
    """Relevance = estimated probability that the memory is evidence for the query.

    The model reads the keyword and the semantic arm together. A recall where one of them
    returned nothing (a single strategy such as ``strategies=["semantic"]``, or a query no
    memory shares a word with) gets the score fusion of the arms that did instead
    (:class:`~agentmem.recall.rerank.ScoreFusionReranker`): the model would otherwise rate
    every candidate near "unlikely" and leave the order to recency and importance.

    Args:
        weights: Fusion weights; used only for arms without calibrated coefficients (such
            as a causal arm), which add ``2 × weight × normalised score`` to the logit.
    """

    name = "calibrated"

    def __init__(self, weights: FusionWeights | Mapping[str, float] | None = None) -> None:
        self._weights = arm_weights(weights)
        self._fallback = ScoreFusionReranker(self._weights)

    def rerank(self, query: str, candidates: Sequence[Candidate]) -> list[float]:
        """One calibrated relevance in [0, 1] per candidate, in the candidates' order."""
        arms = {name for candidate in candidates for name in candidate.hits}
        if not arms >= _MODEL_ARMS:
            return self._fallback.rerank(query, candidates)
        question = _Question(
            content_words(query),
            frozenset(_WORD.findall(query.lower())),
            answer_kinds(query),
            asks_for_cause(query),
        )
        signals = [self._signals(question, candidate) for candidate in candidates]
        in_period = selectivity([s.in_period > 0 for s in signals])
        answer_kind = selectivity([s.answer for s in signals])
        logits = [s.logit(in_period, answer_kind) for s in signals]
        alone = [_sigmoid(logit) for logit in logits]
        best = max(alone)
        relative = {c.memory.id: p / best for c, p in zip(candidates, alone, strict=True)}
        sessions = [_session(candidate.memory) for candidate in candidates]
        totals: dict[str, float] = {}
        for session, candidate in zip(sessions, candidates, strict=True):
            if session is not None:
                totals[session] = totals.get(session, 0.0) + relative[candidate.memory.id]
        relevance = [
            _sigmoid(
                logit
                + PRIOR_SHIFT
                + W_SESSION * (totals[session] - relative[c.memory.id] if session else 0.0)
                + W_GRAPH_SUPPORT * graph_support(c, relative)
            )
            for c, logit, session in zip(candidates, logits, sessions, strict=True)
        ]
        return semantic_floor(question.content, candidates, relevance)

    def _signals(self, question: _Question, candidate: Candidate) -> _Signals:
        hits = candidate.hits
        keyword = hits.get("keyword")
        relative = keyword.normalized if keyword else 0.0
        raw = max(0.0, keyword.score) if keyword else 0.0
        cosine = UNRELATED_COSINE if candidate.cosine is None else candidate.cosine
        temporal = hits["temporal"].normalized if "temporal" in hits else 0.0
        in_period = hits["temporal"].details.get("in_period", 0.0) if "temporal" in hits else 0.0
        said_by_named = speaker_named(question.words, candidate.memory)
        in_first_person = first_person(candidate.memory.text)
        # A place named in a turn about something else is no answer to "Where ...?".
        answer = (
            answer_entity(question.kinds, question.words, candidate)
            if cosine > UNRELATED_COSINE
            else None
        )
        if answer is None and question.cause and cosine > UNRELATED_COSINE:
            cause = stated_cause(candidate.memory.text)
            answer = None if cause is None else (cause, "cause")
        candidate.reasons = _reasons(said_by_named, in_first_person, answer, in_period)
        wanted = question.content
        coverage = (
            len(wanted & content_words(candidate.memory.text)) / len(wanted) if wanted else 0.0
        )
        graph = hits.get("graph")
        activation = graph.normalized if graph else 0.0
        piece_gain = (
            max(0.0, candidate.piece_cosine - cosine) if candidate.piece_cosine is not None else 0.0
        )
        logit = (
            INTERCEPT
            + W_KEYWORD_RELATIVE * relative
            + W_KEYWORD_RAW * math.log1p(raw)
            + W_COSINE * cosine
            + W_BEST_PIECE * piece_gain
            + W_TEMPORAL * temporal
            + W_COVERAGE * coverage
            + W_KEYWORD_X_COVERAGE * relative * coverage
            + W_SPEAKER_NAMED * said_by_named
            + W_FIRST_PERSON * in_first_person
            + W_GRAPH * activation
        )
        for arm, hit in hits.items():
            if arm not in _CALIBRATED_ARMS:
                logit += W_OTHER_ARM * self._weights.get(arm, 0.5) * hit.normalized
        return _Signals(logit, in_period, answer is not None)
