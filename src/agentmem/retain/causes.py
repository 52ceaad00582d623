"""Cause clauses inside one sentence: "Because the supplier missed its deadline, the launch
was delayed" states a cause and its effect at once.

:func:`cause_clauses` finds them by cue phrase, offline and conservatively:

- "because" + clause before or after the effect ("The launch slipped because the vendor's API
  was down", "Because the supplier missed its deadline, ...");
- "because of", "due to", "owing to", "thanks to", "as a result of" + what caused it, before
  or after the effect ("The concert was postponed due to heavy rain", "Because of the
  strike, we drove"): a noun phrase is a cause as it is before "caused" or "led to"; not
  "due to" right after "is" or "was", which also says what is owed or planned ("The rent is
  due to the landlord", "She is due to arrive"), unless a happening was due to it ("The
  delay was due to heavy rain");
- "now that" + what has come about ("Now that the kids are at school, I paint more"), not of
  the talk itself ("now that I think about it", "now that you mention it"), after a verb
  whose "that" opens what is known or said ("I know now that she was right") or with "now"
  as when ("right now that project is on hold");
- "since" only as a cause: not before a time ("since 2019", "since last summer", "since I was
  a kid"), not with a clause that dates something ("since we last spoke", "since I first met
  her", "since our last chat") and not with a perfect main clause ("I have lived here since we
  married");
- "as" before how someone or something was or what they had ("We missed the train as the
  taxi was late", "As we had no car, ..."): not what was going on then ("as I was leaving"),
  "such as", "as well as", "as soon as" or a comparison ("as good as her father was");
- how someone or something was before "so ... that" and what it made happen ("I was so
  tired that I fell asleep"), not a feeling whose "that" clause is its reason ("so happy
  that you came");
- ", so" followed by a clause ("It rained, so we stayed in", "The roads flooded, so school was
  cancelled"), never "so that" or "so much";
- "as a result", "which is why", "that's why" after the cause, in its sentence or opening the
  next one ("The road was icy. As a result, the bus crashed.": the sentence before is the
  cause);
- what someone was rewarded or punished for ("He got promoted for fixing the outage", "She
  was fined for speeding") and what a pain or tiredness is from ("My knee hurts from
  running", "I'm exhausted from the flight"; not "off sick from work");
- "X led to / caused / resulted in Y", and "X meant" a clause ("The power cut meant we lost
  the food"): X is the cause, as is Z of "Y was caused by Z"; so
  is the clause before ", causing", ", leading to", ", resulting in", ", forcing" or ",
  which led to / caused / forced / meant".

A cause clause says something by itself (a named cause, as a noun phrase before "caused":
one content word): two content words, or one that is what someone was, had
or did ("I was exhausted", "he had the flu", "we overslept"; after "since" only what someone
was or had: "since we talked" tells when) or what the weather did ("it was raining"); not
"it was cheap", whose "it" stands for something said elsewhere.

The extractor stores each cause clause as a fact of its own, right after the whole sentence's
fact, which is ``caused_by`` it (``retain/extract.py``), unless an earlier fact of the same
call already says it.
Pure text functions: the clauses are known before spaCy runs, so early embedding still works.
"""

from __future__ import annotations

import re

from agentmem._pattern_gates import Gates

__all__ = ["EFFECT_OPENERS", "as_fact_text", "cause_clauses", "states_the_same"]

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'“‘(])")
_SUBJECT = (
    r"(?:i|we|you|he|she|they|it|the|my|our|your|his|her|their|this|that|these|those|there|"
    r"everyone|nobody|someone|[A-Z][\w'’-]*)\b"
)
_TIME_AFTER_SINCE = re.compile(
    r"^(?:\d|then\b|last\b|yesterday\b|childhood\b|birth\b|forever\b|college\b|high school\b|"
    r"school\b|university\b|the (?:start|beginning|day|time|age|summer|winter|spring|autumn|"
    r"war|pandemic|\d)|(?:early|late|mid)\b|(?:january|february|march|april|may|june|july|"
    r"august|september|october|november|december|monday|tuesday|wednesday|thursday|friday|"
    r"saturday|sunday|spring|summer|autumn|fall|winter|christmas|easter)\b|"
    r"(?:i|we|he|she|they|you) (?:was|were) (?:a |little|young|small|kids?|children|\d)"
    # "since she was born", "since Tom got married": an event of a life dates a start.
    r"|(?:[\w'’]+\s+){1,3}(?:was|were|got|had\s+been)\s+(?:born|married|engaged|divorced"
    r"|hired|promoted|diagnosed|pregnant|retired|widowed|adopted)\b)",
    re.IGNORECASE,
)
# "since we last spoke", "since I first saw it", "since two weeks ago": a point in time.
_DATING = re.compile(r"\b(?:last|first|ago)\b", re.IGNORECASE)
_PERFECT = re.compile(
    r"\b(?:(?:have|has|had)(?:n['’]t)?|'ve|’ve|'d|’d)\s+(?:not\s+|never\s+|always\s+|been\s+)?"
    r"\w+(?:ed|en|wn|ne)\b"
    r"|\b(?:have|has|had)\s+been\b|\b(?:'ve|’ve|'s|’s) been\b",
    re.IGNORECASE,
)
#: A sentence or fact that opens with one of these is the effect of what was said before it.
EFFECT_OPENERS = re.compile(
    r"^(?:(?:as a result|as a consequence)(?!\s+of\b)|consequently|therefore|thus(?!\s+far\b)"
    r"|hence"
    r"|because of (?:that|this)"
    r"|that'?s why|that is why|this is why|which is why|so that'?s why|that led to|this led to"
    r"|thanks to (?:that|this)|for that reason)\b",
    re.IGNORECASE,
)
_CLAUSE_END = r"(?P<end>[^.;!?]*)"
# "because" as chats write it: "tired cuz the baby cried all night", "skipped the gym bc my
# knee hurt", "'cause", and its common misspellings ("becuase"). Lower-case "bc" and "cos"
# only: "500 BC" is a year, "COS" an acronym.
BECAUSE = (
    r"(?:because|becuase|beacuse|becasue|becouse|bcause|becuz|bcuz|b?cuz|coz|['’]cause"
    r"|(?-i:bc|Bc|cos|Cos)|b/c)"
)
# (pattern, which group is the cause); each finds one cause in one sentence.
_OPENING = re.compile(
    rf"^(?P<cue>{BECAUSE}|since|now\s+that)\s+(?!of\b)(?P<cause>[^,;]{{8,200}}),\s*"
    r"(?P<effect>.+)$",
    re.IGNORECASE,
)
_TRAILING = re.compile(
    rf"^(?P<effect>.{{6,}}?),?\s+(?P<cue>{BECAUSE}|since|now\s+that)\s+(?!of\b)"
    r"(?P<cause>[^.;!?]{8,200})",
    re.IGNORECASE,
)
# "Now that I think about it", "now that you mention it": the talk itself, no cause.
_ABOUT_THE_TALK = re.compile(
    r"^(?:i|you|we)\s+(?:come\s+to\s+)?(?:think|thought|mention(?:ed)?|say|said|ask(?:ed)?"
    r"|put|look|looked)\b(?:\s+[\w'’]+){0,3}$",
    re.IGNORECASE,
)
# Where an effect's end makes "now that" no cue: "I know now that she was right" ("that"
# opens what is known, said or seen), "right now that project is on hold" ("now" is when).
_NOW_THAT_IS_NO_CUE_AFTER = re.compile(
    r"\b(?:know|knew|reali[sz]ed?|see|saw|understand|understood|think|thought|believe|feel"
    r"|felt|say|said|admit|guess|remember|hope|agree|notice|noticed|learn(?:ed|t)?|hear"
    r"|heard|get|got)s?\s*$"
    r"|\b(?:right|just|until|till|by|for|from|even)\s*$",
    re.IGNORECASE,
)
# "We missed the train as the taxi was late", "As it was cold, we stayed in": "as" before a
# subject and how it was or what it had (not what was going on then: "as I was leaving"),
# never "such as", "as well as", "as soon as", "as long as" or a comparison ("as tall as").
_AS_CAUSE = (
    r"(?P<cause>(?:the|my|our|your|his|her|their|its|this|that|i|we|you|he|she|they|it"
    r"|(?-i:[A-Z])[\w'’-]*)(?:\s+[\w'’-]+){0,3}?\s+(?:was|were|is|are|had|had\s+no"
    r"|wasn['’]t|weren['’]t|isn['’]t|aren['’]t|didn['’]t|couldn['’]t|could\s+not|did\s+not)"
    r"\s+(?!\w+ing\b|about\b|going\b|to\b|as\b|just\b|still\b)[^.;!?,]{2,150})"
)
_AS_OPENING = re.compile(rf"^as\s+{_AS_CAUSE},\s*(?P<effect>.+)$", re.IGNORECASE)
_AS_TRAILING = re.compile(
    rf"^(?P<effect>.{{6,}}?)(?<!\bsuch)(?<!\bwell)(?<!\bsoon)(?<!\blong)(?<!\bjust)"
    rf"(?<!\bsame)(?<!\bmuch),?\s+as\s+{_AS_CAUSE}",
    re.IGNORECASE,
)
# "as tall", "as passionate about" of "as tall as ...": a comparison, no cause.
_COMPARED = re.compile(r"\bas\s+\w+(?:\s+\w+){0,2}$", re.IGNORECASE)
_SO = re.compile(rf"^(?P<cause>.{{8,}}?),?\s+so\s+(?!that\b)(?P<effect>{_SUBJECT}[^.;!?]{{4,}})")
# After ", so", a bare noun is the subject when a verb of what happened follows: "The roads
# flooded, so school was cancelled" (not "so easy can", "so others can try": no comma, or
# what may be, which is a purpose).
_SO_NOUN = re.compile(
    r"^(?P<cause>.{8,}?),\s+so\s+(?!much\b|many\b|far\b|well\b)"
    r"(?P<effect>[a-z]+\s+(?:was|were|is|are|got|gets|had|has|did|wasn['’]t|weren['’]t"
    r"|isn['’]t|aren['’]t|didn['’]t)\s[^.;!?]{4,})"
)
_RESULT = re.compile(
    # "as a result of the storm" names its cause as "due to" does (not stated as a fact).
    r"^(?P<cause>.{8,}?)(?:,\s*|\s+)(?:and\s+)?(?:(?:as a result|as a consequence)(?!\s+of\b)"
    r"|which is why|that'?s why|that is why|this is why)\b,?\s*(?P<effect>[^.;!?]{4,})",
    re.IGNORECASE,
)
# "Because of the strike, we drove" / "The concert was postponed due to heavy rain": a
# cause named, not stated. "because of that/this" opens an effect (EFFECT_OPENERS).
_NAMED_CUE = (
    rf"(?:{BECAUSE}\s+of|due\s+to|owing\s+to|thanks\s+to"
    r"|(?:as\s+a\s+(?:result|consequence)|in\s+consequence)\s+of)"
)
_NAMED_OPENING = re.compile(
    rf"^(?P<cue>{_NAMED_CUE})\s+(?P<cause>[^,;]{{3,120}}),\s*(?P<effect>.+)$", re.IGNORECASE
)
_NAMED_TRAILING = re.compile(
    rf"^(?P<effect>.{{6,}}?),?\s+(?P<cue>{_NAMED_CUE})\s+(?P<cause>[^.;!?]{{3,160}})",
    re.IGNORECASE,
)
# "is due to arrive", "the rent was due to the landlord": what is owed or planned.
_OWED = re.compile(r"\b(?:is|was|are|were|be|been|'s|’s|'re|’re)\s*$", re.IGNORECASE)
# ... unless what "was due to" something is a happening, which has causes, not a debt or a
# plan: "The delay was due to heavy rain", "Most of the outages were due to one bad disk".
_HAPPENING_WAS = re.compile(
    r"\b(?:delays?|outages?|crash(?:es)?|fires?|floods?|failures?|cancellations?|problems?"
    r"|issues?|accidents?|drops?|falls?|rises?|increases?|decreases?|loss(?:es)?|shortages?"
    r"|success|changes?|slowdowns?|spikes?|errors?|bugs?|breakdowns?|leaks?|injur(?:y|ies)"
    r"|absences?|closures?|damage|declines?|surges?|backlogs?|mistakes?|dip|growth)"
    r"\s+(?:is|was|are|were|has\s+been|had\s+been|might\s+be|may\s+be)"
    r"(?:\s+(?:mainly|mostly|partly|largely|probably|likely|entirely|all|simply))?\s*$",
    re.IGNORECASE,
)
_VERB = re.compile(
    r"^(?P<cause>[^,;]{6,120}?)(?<!\bwas)(?<!\bwere)(?<!\bis)(?<!\bare)(?<!\bbeen)(?<!\bbe)"
    r"\s+(?:led to|leads to|caused|causes|resulted in|results in)\s+(?P<effect>[^.;!?]{4,})",
    re.IGNORECASE,
)
# "The power cut meant we lost all the food", "The strike meant that the trains were
# cancelled": what a thing meant is its consequence when a clause follows (not "I meant to
# call", "it meant a lot to me"; a pronoun's "it meant" names nothing).
_MEANT = re.compile(
    r"^(?P<cause>(?:the|my|our|your|his|her|their|this|that)\s[^,;]{2,80}?)\s+meant\s+"
    r"(?:that\s+)?(?P<effect>(?:i|we|you|he|she|they)\s+(?!to\b)\w+[^.;!?]*"
    r"|(?:the|my|our|your|his|her|their)\s+(?:\w+\s+){0,3}?"
    r"(?:was|were|had|got|could|couldn['’]t|would|wouldn['’]t|didn['’]t|did|is|are|has|have"
    # or a past tense: "The delay meant my sister missed her connection".
    r"|\w{3,}ed|lost|went|came|left|took|ran|fell|spent|paid|sold|broke)"
    r"\b[^.;!?]*)",
    re.IGNORECASE,
)
# What someone was rewarded or punished for, and what a pain or tiredness comes from: "He
# got promoted for fixing the outage", "She was fined for speeding", "My knee hurts from
# running", "I'm exhausted from the flight". Not "off sick from work" (away from it).
_FOR_A_DEED = re.compile(
    # Said as what happened ("was fired for"), not what would ("to be recognized for").
    r"^(?P<effect>.{2,}?\b(?:was|were|got|gets|get|is|are|been|'s|’s|'re|’re)\s+"
    r"(?:\w+ly\s+)?(?:promoted|fired|sacked|dismissed|expelled|suspended|grounded"
    r"|banned|arrested|fined|ticketed|punished|blamed|sued|praised|thanked|rewarded"
    r"|congratulated|critici[sz]ed|honou?red|recogni[sz]ed))\s+for\s+"
    # How long or how often, not why: "suspended for two weeks", "fired for the third time".
    r"(?!(?:the\s+)?(?:first|second|third|fourth|fifth|last|next|\d+\w*)\s+time\b"
    r"|(?:an?|one|two|three|four|five|six|several|a\s+few|a\s+couple\s+of|\d+)\s+(?:\w+\s+)?"
    r"(?:minutes?|hours?|days?|nights?|weeks?|months?|years?|games?|matches?|seasons?|times?)\b"
    r"|life\b|good\b|ever\b|now\b|a\s+while\b)"
    r"(?P<cause>[^.;!?]{3,120})",
    re.IGNORECASE,
)
_FROM_A_STRAIN = re.compile(
    r"^(?P<effect>.{2,}?(?<!\boff)\s(?:hurts?|hurting|aches?|aching|sore|tired|exhausted|sick"
    r"|stiff|sunburn[te]d|drained|wiped\s+out|worn\s+out|hoarse|dizzy|bruised|jet-?lagged))"
    r"\s+from\s+(?!(?:work|school|home|college|class|the\s+office)\b)(?P<cause>[^.;!?]{3,120})",
    re.IGNORECASE,
)
# "The outage was caused by a bad config push": the cause named after the passive's "by".
_CAUSED_BY = re.compile(
    r"^(?P<effect>[^,;]{6,160}?)\s+(?:was|were|is|are|has\s+been|had\s+been|got)\s+"
    r"(?:(?:probably|likely|mainly|partly|actually)\s+)?caused\s+by\s+(?P<cause>[^.;!?]{3,160})",
    re.IGNORECASE,
)
# "The app crashed, causing us to lose the draft", "Sales fell, which forced us to cut
# staff": the clause before the comma is the cause of what follows it.
_CONSEQUENCE = re.compile(
    r"^(?P<cause>[^;]{6,160}?),\s*(?:causing|leading to|resulting in|forcing"
    r"|which (?:led to|leads to|caused|causes|forced|forces|resulted in|results in|meant))\s+"
    r"(?P<effect>[^.;!?]{4,})",
    re.IGNORECASE,
)
_NEXT_CLAUSE = re.compile(
    r",\s*(?:and\s+)?(?:so|but|yet)\s+(?!that\b|much\b)"
    r"|,\s*and\s+(?:then\s+)?(?=(?:i|we|he|she|they)\s)"  # ", and I watched a film": a new clause
    # what came next, with its own subject: "because it rained, and then Ana called"
    r"|,?\s+and\s+then\s+(?=(?-i:[A-Z])[\w'’-]*\s|(?:i|we|he|she|they)\s)"
    r"|,?\s+(?:which|whereas|while|although|though)\s+"
    r"|\s*[-–—]+\s+",  # "now that I'm a manager- it's a stepping stone": a new clause
    re.IGNORECASE,
)
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")
_SMALL_WORDS = frozenset(
    re.findall(
        r"\S+",
        "a an the of to in on at for and or but so is was are were be been being am do did does "
        "have has had it its this that these those i me my we us our you your he him his she "
        "her they them their there here what really very just also too much many lot lots",
    )
)
# A cause worth a fact of its own says something by itself: "it relaxes me" does not.
_MIN_CAUSE_CONTENT_WORDS = 2
# One word does when it is what a person was or had ("I was exhausted", "Tom was ill", "he
# had the flu") or, for any cue but "since", did ("we overslept": "since we talked" tells
# when), not a modal or auxiliary left alone ("because we could"); or what the weather did
# ("it rained", "it was snowing"). "It" of anything else ("it was cheap") needs what it
# stands for.
_PERSON = r"(?:(?i:i|we|he|she|they|you)|(?!(?:It|This|That|There|These|Those)\b)[A-Z][a-z]+)"
_STATE_OF_SOMEONE = re.compile(
    rf"^{_PERSON}\s+(?:(?:was|were|is|are|am|got|get|felt|feel|seemed|'m|’m|'re|’re|'s|’s)\s+"
    r"(?:(?:so|too|really|very|completely|totally|super|pretty|quite|a\s+bit|kind\s+of)\s+)?"
    # or what ails someone: "he had the flu", "she has a cold"
    r"|(?:had|has|have)\s+(?:(?:the|a|an)\s+)?)[a-z]{3,}$",
)
_DEED_OF_SOMEONE = re.compile(
    r"^(?i:i|we|he|she|they|you)\s+"
    r"(?!(?:could|would|should|might|must|shall|can|will|did|does|do|had|have|has|was|were"
    r"|wanted|want|needed|need|said|asked|told|tried)\b)[a-z]{3,}"
    # how much or when, which adds no content: "because I practised a lot", "we left early"
    r"(?:\s+(?:a\s+lot|hard|too\s+much|so\s+much|all\s+(?:night|day)|late|early|again))?$",
)
_WEATHER = re.compile(
    r"^it\s+(?:(?:was|is|had\s+been|has\s+been|kept|started)\s+)?"
    r"(?:rain|snow|pour|hail|drizzl|sleet|storm|freez)[a-z]*$",
    re.IGNORECASE,
)


def cause_clauses(text: str) -> list[str]:
    """The cause clauses stated inside the sentences of ``text``, in order.

    Each is a clause that the sentence gives as the reason for something else in it; the
    sentence itself is the effect. A sentence with no causal cue, or whose cue is no cause
    ("since 2019", "so much"), gives none.
    """
    found: list[str] = []
    sentences = [s.strip() for s in _SENTENCE.split(text.strip())]
    for before, sentence in zip(["", *sentences], sentences, strict=False):
        if not _CUES.admitted(sentence):
            continue  # no cue pattern can match: most sentences name no cause
        cause = _cause_in(sentence) or _cause_before(before, sentence)
        if cause and cause.casefold() not in (c.casefold() for c in found):
            found.append(cause)
    return found


def as_fact_text(clause: str) -> str:
    """A cause clause written as a sentence of its own: capitalised, with a full stop."""
    clause = clause.strip().rstrip(",:;-— ")
    if not clause:
        return clause
    text = clause[0].upper() + clause[1:]
    return text if text[-1] in ".!?" else f"{text}."


def states_the_same(a: str, b: str) -> bool:
    """Whether two texts say nearly the same thing (most content words shared)."""
    wa, wb = _content_words(a), _content_words(b)
    if not wa or not wb:
        return False
    return len(wa & wb) / min(len(wa), len(wb)) >= 0.75


# "I was so tired that I fell asleep": how someone was, and what it made happen; not a
# feeling whose "that" says what caused it ("I was so happy that you came").
_SO_THAT = re.compile(
    r"^(?P<state>.{1,60}?\b(?:was|were|is|are|am|got|felt|'m|’m|'re|’re)\s+)so\s+"
    r"(?!(?:happy|glad|sad|sorry|relieved|grateful|thankful|proud|pleased|surprised|shocked"
    r"|excited|upset|angry|mad|disappointed|afraid|scared|worried|sure|certain|thrilled"
    r"|lucky|blessed)\b)(?P<how>[a-z]{3,})\s+that\s+(?P<effect>[^.;!?]{4,})",
    re.IGNORECASE,
)


def _content_words(text: str) -> set[str]:
    return {w for w in (m.casefold() for m in _WORD.findall(text)) if w not in _SMALL_WORDS}


#: Each way of finding a cause starts with one of these patterns matching the sentence, so
#: a sentence that holds none of the words their matches need names no cause.
_CUE_PATTERNS = {
    "opening": _OPENING,
    "trailing": _TRAILING,
    "named_opening": _NAMED_OPENING,
    "named_trailing": _NAMED_TRAILING,
    "caused_by": _CAUSED_BY,
    "as_opening": _AS_OPENING,
    "as_trailing": _AS_TRAILING,
    "so_that": _SO_THAT,
    "result": _RESULT,
    "so": _SO,
    "so_noun": _SO_NOUN,
    "verb": _VERB,
    "meant": _MEANT,
    "consequence": _CONSEQUENCE,
    "for_a_deed": _FOR_A_DEED,
    "from_a_strain": _FROM_A_STRAIN,
    "effect_openers": EFFECT_OPENERS,
}
_CUES = Gates(_CUE_PATTERNS)


def _cause_in(sentence: str) -> str | None:
    match = _OPENING.match(sentence)
    if match and _is_cause(match.group("cue"), match.group("cause"), match.group("effect")):
        return _clean(match.group("cause"))
    match = _TRAILING.match(sentence)
    if match:
        # "... because the API was down, so we moved the demo": the cause ends before the
        # next clause that is a consequence, a contrast or a new subject's ", and I ...".
        cause = _NEXT_CLAUSE.split(match.group("cause"), maxsplit=1)[0]
        if _is_cause(match.group("cue"), cause, match.group("effect")):
            return _clean(cause)
    named = _named_cause(sentence) or _passive_cause(sentence) or _as_cause(sentence)
    if named:
        return named
    so_that = _SO_THAT.match(sentence)
    if so_that and _words(so_that["effect"]) >= 2:
        state = _after_speaker(so_that["state"] + so_that["how"])
        if _says_something(state):
            return _clean(state)
    for pattern in (_RESULT, _SO, _SO_NOUN, _VERB, _MEANT, _CONSEQUENCE):
        match = pattern.match(sentence)
        cause = _after_speaker(match.group("cause")) if match else ""
        # "The outage led to ...": a noun phrase may name the cause in one content word.
        enough = _says_something(cause) or (pattern in (_VERB, _MEANT) and _content_words(cause))
        if match and enough and _words(match.group("effect")) >= 2:
            return _clean(cause)
    # Last: a clause stated as the cause ("tired from all the walking, so ...") says more.
    return _reason_cause(sentence)


def _named_cause(sentence: str) -> str | None:
    """The cause a sentence names after "because of", "due to" and the like."""
    match = _NAMED_OPENING.match(sentence) or _NAMED_TRAILING.match(sentence)
    if match is None:
        return None
    cue = match.group("cue").casefold()
    before = sentence[: match.start("cue")]
    if cue.startswith("due") and _OWED.search(before) and not _HAPPENING_WAS.search(before):
        return None
    return _noun_phrase_cause(match)


def _as_cause(sentence: str) -> str | None:
    """The cause a sentence states after "as": how someone or something was ("as the taxi
    was late")."""
    match = _AS_OPENING.match(sentence) or _AS_TRAILING.match(sentence)
    if match is None or _COMPARED.search(match["effect"].rstrip(", ")):
        return None
    cause = _NEXT_CLAUSE.split(match["cause"], maxsplit=1)[0]
    if not _says_something(cause) or _words(match["effect"]) < 2:
        return None
    return _clean(cause)


def _reason_cause(sentence: str) -> str | None:
    """The cause a sentence names after what someone was rewarded or punished for, or after
    a pain or tiredness "from" ("fired for being late", "sore from the gym")."""
    match = _FOR_A_DEED.match(sentence) or _FROM_A_STRAIN.match(sentence)
    return None if match is None else _noun_phrase_cause(match)


def _passive_cause(sentence: str) -> str | None:
    """The cause a passive names after "caused by"."""
    match = _CAUSED_BY.match(sentence)
    return None if match is None else _noun_phrase_cause(match)


def _noun_phrase_cause(match: re.Match[str]) -> str | None:
    """The cause a match names (up to its next clause), when it holds a content word and the
    effect says enough."""
    cause = _NEXT_CLAUSE.split(match["cause"], maxsplit=1)[0]
    if not _content_words(cause) or _words(match["effect"]) < 2:
        return None
    return _clean(cause)


def _cause_before(before: str, sentence: str) -> str | None:
    """The sentence ``before`` as the cause of ``sentence`` when this one opens with an effect
    marker ("The road was icy. As a result, the bus crashed.")."""
    opener = EFFECT_OPENERS.match(sentence)
    cause = _after_speaker(before.rstrip(".!? "))
    if opener is None or not _says_something(cause) or _words(sentence[opener.end() :]) < 2:
        return None
    return _clean(cause)


def _is_cause(cue: str, cause: str, effect: str) -> bool:
    since = cue.casefold() == "since"
    if not _says_something(cause, deed=not since) or _words(effect) < 2:
        return False
    if cue.casefold().startswith("now"):
        return not (
            _ABOUT_THE_TALK.match(cause.strip()) or _NOW_THAT_IS_NO_CUE_AFTER.search(effect)
        )
    if not since:
        return True
    return (
        not _TIME_AFTER_SINCE.match(cause.strip())
        and not _DATING.search(cause)
        and not _PERFECT.search(effect)
    )


def _says_something(clause: str, *, deed: bool = True) -> bool:
    """Whether ``clause`` says enough for a fact of its own; ``deed``: whether what someone
    did in one word does (not after "since", where it tells when)."""
    clause = clause.strip()
    return (
        len(_content_words(clause)) >= _MIN_CAUSE_CONTENT_WORDS
        or _STATE_OF_SOMEONE.match(clause) is not None
        or _WEATHER.match(clause) is not None
        or (deed and _DEED_OF_SOMEONE.match(clause) is not None)
    )


def _words(text: str) -> int:
    return len(_WORD.findall(text))


def _after_speaker(text: str) -> str:
    """The clause without a leading discourse opener ("Bad news: ...", "Well, ...")."""
    parts = re.split(r"(?<=[:—])\s+|^(?:well|honestly|anyway|so|and|but),\s+", text, flags=re.I)
    return parts[-1] if parts else text


def _clean(clause: str) -> str:
    return " ".join(clause.split()).strip(" ,:;-—\"'“”")
