"""Which way a clause points in time: the tense around a date that names no year.

"The invoice is due on March 3" said in February is about the coming March 3; "I paid it on
March 3" about the last one. :func:`clause_direction` reads the clause holding a date with
the fine-grained tags of the shared spaCy pipeline (``VBD`` past, ``MD`` modal, ``VBZ``
present, ``VBG`` progressive, ...) and tells the resolver which occurrence is meant:

- past: a past-tense verb ("went", "was planning", "had booked"), a perfect ("I've been to
  Kyoto in April"), a modal perfect ("would have gone"), a participle alone ("born in May");
- forward: a modal ("will", "'ll", "can", "should"), a progressive ("we're flying on March
  3", "I've been planning a trip for April"), a passive ("is scheduled for Q2"), an
  infinitive or imperative ("I want to visit in April", "call me on the 28th"), or a plan
  word anywhere in the clause ("due", "planning", "scheduled", "upcoming", "next", ...) with
  a verb that is not in the past;
- forward too: the day something is moved to ("we moved the demo to Friday", "the launch
  was pushed back until June"), whatever the tense of the move;
- forward as well: a simple present whose date tells when its event happens ("the wedding
  is in August", "she turns 30 on May 5"), unless the clause tells of a habit, and where
  someone is or whether they are free at a date ("I'm busy in March", "we're in Lisbon in
  April");
- present: the simple present of *be* or *have* ("my birthday is on May 12", "I have a
  meeting on the 28th", "the parks are lovely in spring"): timeless, so the resolver takes
  the next occurrence of a day and keeps the latest of a month or season, which such
  clauses name generically;
- otherwise (another present verb such as "I love the photos from June", or no verb at all)
  the clause does not say.

A timetable's present that the small model tags as a plural noun ("My flight leaves on
Monday", "My flight to Tokyo leaves on Friday", "Version 2.3 ships on 12/03") is read as the
verb it is (see :func:`_retag_verbs_read_as_nouns`). The verb that decides is the one nearest
before the date in its comma-delimited part of the sentence ("I love the painting I did in
May": *did*), else the first one after it ("On March 3, we will launch": *will launch*), else
the same in the whole sentence; a part or sentence is read at most :data:`_CLAUSE_REACH`
characters either side of the date, so a long text without punctuation costs each date its
neighbourhood.
"""

from __future__ import annotations

import itertools
import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from operator import itemgetter
from typing import Any, Literal

Direction = Literal["past", "forward", "present"]

_SENTENCE_END = re.compile(r"[.!?;\n]")
_PART_END = re.compile(r"[.!?;,:\n]|\s[-–—]\s")
_FINITE = frozenset({"MD", "VBD", "VBP", "VBZ"})
_VERB = _FINITE | {"VB", "VBG", "VBN"}
_HAVE = frozenset({"have", "has", "'ve", "’ve", "'s", "’s", "had", "'d", "’d"})
_HAD = frozenset({"had", "'d", "’d"})  # a pluperfect's "have"
_HAVE_NOW = _HAVE - _HAD  # a present perfect's "have"
# Participles of leaving or arriving: "for" an amount after them is the length of a stay.
_MOVES = frozenset(
    {"gone", "left", "come", "moved", "flown", "driven", "travelled", "traveled", "returned"}
    | {"arrived", "headed", "relocated"}
)
#: Verbs whose past is their present ("I quit", "we cut"): after "I", "we", "you" or "they" the
#: form alone does not say which.
_SAME_IN_THE_PAST_WORDS = (
    "bet bid burst cast cost cut fit hit hurt let put quit read set shed shut slit split spread "
    "thrust upset wed wet broadcast forecast"
)
_SAME_IN_THE_PAST = frozenset(_SAME_IN_THE_PAST_WORDS.split())
_WILL = frozenset({"will", "'ll", "’ll", "shall", "wo"})  # "wo" of "won't"
_BE = frozenset({"is", "are", "am", "'s", "’s", "'re", "’re", "'m", "’m", "be", "been"})
_BE_OR_HAVE = _BE | {"have", "has", "'ve", "’ve"}
_WHOM = r"(?:me|us|you|everyone|everybody|both\s+of\s+us)"
_SUITS = (
    rf"works\s+(?:best|better|(?:(?:well|fine)\s+)?(?=for\s+{_WHOM}))|suits?\s+{_WHOM}"
    rf"|(?:is|['’]s)\s+(?:best|better|good|fine|perfect|ideal)\s+for\s+{_WHOM}"
)
# Words that put a clause in the future whatever its verb ("Invoice due March 3").
_PLAN_CUE = re.compile(
    r"\b(?:due|plan(?:s|ned|ning)?|schedul(?:e|es|ed|ing)|upcoming|next|going\s+to|gonna|wanna"
    r"|can['’]?t\s+wait|cannot\s+wait|looking\s+forward|hop(?:e|es|ing)\s+to|about\s+to"
    r"|excited\s+(?:for|about)|booked|will|shall|off\s+to"
    # What suits whom is said of a time to come: "mid-March works best for the offsite",
    # "early April suits me", "May is good for us", "late May is when we launch".
    rf"|{_SUITS}|(?:is|['’]s)\s+when\s+(?:we|i|they|you|he|she)\s+[a-z]+)\b|\w['’]ll\b",
    re.IGNORECASE,
)

# The day something is moved to is ahead when it is said, whatever the tense of the move:
# "We moved the demo to Friday", "the launch was pushed back until June".
_MOVE = (
    r"\b(?:mov(?:e|es|ed|ing)|postpon(?:e|es|ed|ing)|push(?:es|ed|ing)?(?:\s+back)?"
    r"|reschedul(?:e|es|ed|ing)|delay(?:s|ed|ing)?|bump(?:s|ed|ing)?|shift(?:s|ed|ing)?"
    r"|slip(?:s|ped|ping)?"
    r"|put\s+off|brought\s+forward|bring(?:s|ing)?\s+forward)\b"
)
_MOVED_TO = re.compile(_MOVE + r"[^.;!?]{0,40}?\b(?:to|until|till|for)\s+(?:the\s+)?$", re.I)
# "... for (the) " just before the date, a few words after the verb that sets it for then.
_FOR_THE_DATE = r"[^.;!?]{0,40}?\bfor\s+(?:the\s+)?$"
# So is the day something is booked or set for: "I booked a table for the 3rd", "we reserved
# the hall for Saturday", "they had scheduled the call for Monday", "we set the date for June",
# "Keiko approved my leave for April", "I requested time off for May".
_BOOKED_FOR = re.compile(
    r"\b(?:book(?:s|ed|ing)?|reserv(?:e|es|ed|ing)|schedul(?:e|es|ed|ing)|arrang(?:e|es|ed|ing)"
    r"|set(?:s|ting)?|plan(?:s|ned|ning)?|slated|approv(?:e|es|ed|ing)|request(?:s|ed|ing)?"
    r"|confirm(?:s|ed|ing)?)\b" + _FOR_THE_DATE,
    re.I,
)
# And the day of what someone agreed, promised or arranged to do: a commitment is to a time
# to come, even told in the past ("We agreed to meet on Sunday", said on a Thursday, is the
# coming Sunday; "She promised to call on Monday"). A pluperfect tells of one before ("we
# had agreed to meet on Sunday"), as does a plan given up ("agreed to meet on Sunday, but").
_COMMITTED_TO = re.compile(
    r"(?<!had\s)\b(?:agreed|promised|arranged)\s+(?:\w+\s+)?to\s+[a-z]+\b"
    r"[^.;!?]{0,40}?\b(?:on|in|at|for|by)\s+(?:the\s+)?$",
    re.I,
)
# And the day what one wants or needs now is for: "my daughter wants an Xbox for Christmas",
# "I need the report for Monday" (not "I wanted a bike for Christmas": past).
_WANTED_FOR = re.compile(
    r"\b(?:want|wants|wanna|wish|wishes|need|needs|hoping|asking)\b" + _FOR_THE_DATE, re.I
)
#: "moved from Monday to Thursday": the old day and the new, not a period.
MOVED_FROM = re.compile(_MOVE + r"[^.;!?]{0,30}?\bfrom\s+$", re.I)

# Words of a habit: a simple present with them tells what recurs, not what is planned.
_HABIT = frozenset(
    {"usually", "always", "often", "sometimes", "never", "every", "each", "normally", "generally"}
)
# A habit's adverbs, and "every"/"each" before a unit of the calendar: a date without a year
# in their part of the sentence names a recurrence ("we usually go hiking in May", "every
# Saturday", "each year in June"), not one occurrence. "Every" alone is no habit: "I loved
# every minute of our trip in May".
_RECURRENCE = re.compile(
    r"\b(?:usually|always|often|sometimes|never|normally|generally|typically|regularly"
    r"|frequently|rarely|seldom|(?:every|each)\s+(?:other\s+|single\s+)?(?:time|day|night"
    r"|morning|afternoon|evening|week(?:end)?|month|year|season|spring|summer|autumn|fall"
    r"|winter|quarter|holiday|birthday|(?:mon|tues|wednes|thurs|fri|satur|sun)day"
    r"|jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b"
    # Days in the plural after "on"/"at" ("we go skiing on weekends in winter", "on Sundays
    # in summer"), and a count a unit ("twice a week in June").
    r"|(?:on|at)\s+(?:week(?:end|day)s|(?:mon|tues|wednes|thurs|fri|satur|sun)days)\b"
    r"|\b(?:once|twice|(?:\d+|two|three|four|five|six|several|a\s+few|many)\s+times)"
    r"\s+(?:a|an|per)\s+(?:day|week|month|year|fortnight)\b)",
    re.IGNORECASE,
)
# Verbs whose simple present tells of a state, not of an event the date schedules: "I miss
# the beaches in August", "I remember the storm in January".
_STATIVE = frozenset(
    form
    for verb in (
        "like", "love", "hate", "prefer", "enjoy", "adore", "dislike", "miss", "remember",
        "recall", "know", "believe", "think", "mean", "doubt", "regret", "appreciate",
        "imagine", "understand", "recognize", "recognise", "forget", "mind", "own",
    )
    for form in (verb, f"{verb}s", f"{verb}es")
)  # fmt: skip
# What may stand between a simple present and the date that schedules it: its object and a
# place ("starts school in", "meet the contractor on", "fly to Rome in"); a preposition of
# time or a noun's ("hurts since the long run on Sunday") makes the date the noun's.
_COMPLEMENT = frozenset(
    {"IN", "CD", "RP", "PRP", "PRP$", "RB", "DT", "TO", "JJ", "NN", "NNS", "NNP", "NNPS", "POS"}
)
_COMPLEMENT_PREPOSITIONS = frozenset({"to", "into", "at", "for", "with", "on", "from"})
_MAX_COMPLEMENT = 6
# What makes a noun one thing of its kind ("an exam", "our wedding"), and words of an amount
# ("a lot of rain", "a bit of snow"), which make it generic.
_ONE_OF = frozenset({"a", "an", "the", "my", "our", "your", "his", "her", "their"})
_AMOUNTS = frozenset({"lot", "lots", "bit", "few", "little", "couple", "ton", "bunch"})
# Things that take place, and so are had at a date ("I've got an exam in July"), unlike
# things obtained ("she's got her degree in May").
_EVENT_WORDS = (
    "exam test meeting appointment interview wedding party recital concert game match flight "
    "trip deadline surgery operation presentation conference reunion vacation holiday class "
    "lesson session shift date dinner lunch show gig race marathon tournament competition "
    "ceremony graduation checkup check-up visit call webinar workshop course audition"
)
_EVENTS = frozenset(_EVENT_WORDS.split())
#: Participles that say when something starts ("runs for six weeks starting on March 20").
STARTING = frozenset({"starting", "beginning", "commencing"})
# "Until June", "by Friday": the end of something that holds now lies ahead.
_UNTIL = re.compile(r"\b(?:until|till|til|by)\s+(?:the\s+)?$", re.IGNORECASE)
# ... and so does "through" it, unless a date before "through" makes it the end of a range
# ("Monday through Friday", "March 3 through 9": a capitalised word or a number before it).
_THROUGH = re.compile(r"(?:(?P<before>\S+)\s+)?\b(?:through|thru)\s+(?:the\s+)?$", re.IGNORECASE)

Token = tuple[int, int, str, str]  # start, end, fine-grained tag, lowercase text
_SPEAKER = re.compile(r"[^:\n]{1,80}: (?=\S)")  # "Ana: " before a chat turn's words
_SPEAKER_WORD = re.compile(r":|[^\s:]+")
_START = itemgetter(0)  # a token's start

#: Characters read on either side of a date for its clause (a sentence is rarely longer).
_CLAUSE_REACH = 300


#: The tags of texts read before; cleared when it holds :data:`_TAGS_KEPT` texts.
_TAGS: dict[str, tuple[Token, ...]] = {}
_TAGS_KEPT = 4096


def tag_texts(texts: Iterable[str]) -> None:
    """Tag the texts not tagged yet in one spaCy batch (several times cheaper than one at a
    time; a text's tags do not depend on the texts tagged beside it), so that
    :func:`clause_direction` finds their tags."""
    pending = [text for text in dict.fromkeys(texts) if text not in _TAGS]
    if pending:
        _tag(pending)


def remember_tags(text: str, doc: Any) -> None:  # noqa: ANN401
    """Keep the tags of ``text`` whose statement spaCy has parsed already as ``doc`` (the
    offline extractor's parse of a chat turn, whose fact is "Name: turn"), so that
    :func:`tag_texts` does not run the pipeline on it again: the same tags it would give."""
    start = _statement_start(text)
    if text not in _TAGS and text[start:] == doc.text:
        _keep_tags_of([text], [start], [doc])


def _tagged(text: str) -> tuple[Token, ...]:
    tokens = _TAGS.get(text)
    return tokens if tokens is not None else _tag([text])[0]


def _tag(texts: list[str]) -> list[tuple[Token, ...]]:
    """Tag each text's statement (less a speaker's "Name: "), whatever else is tagged beside
    it, so a text has the same tags whichever way it came (see :func:`remember_tags`)."""
    if not texts:
        return []
    from agentmem.models.nlp import load_nlp  # spaCy loads on first use, never at import

    starts = [_statement_start(text) for text in texts]
    statements = [text[start:] for text, start in zip(texts, starts, strict=True)]
    docs = load_nlp().pipe(statements, disable=["ner", "senter"])
    return _keep_tags_of(texts, starts, docs)


def _keep_tags_of(
    texts: list[str], starts: list[int], docs: Iterable[Any]
) -> list[tuple[Token, ...]]:
    """Keep and return the tags of ``texts`` from ``docs``, the parses of their statements
    (each text from its ``start`` on)."""
    docs = list(docs)
    said = [[(t.idx, t.idx + len(t.text), t.tag_, t.lower_) for t in doc] for doc in docs]
    _retag_verbs_read_as_nouns([doc.text for doc in docs], said)
    for tokens in said:
        _retag_is_read_as_possessive(tokens)
    return _keep_tags(
        texts, [_with_speaker(*parts) for parts in zip(texts, starts, said, strict=True)]
    )


def _statement_start(text: str) -> int:
    """Where what was said begins: after a speaker's "Name: ", else at 0."""
    found = _SPEAKER.match(text)
    return found.end() if found else 0


def _with_speaker(text: str, start: int, said: list[Token]) -> list[Token]:
    """The tags of the statement at ``text[start:]``, after the speaker's words: proper
    nouns, then ``:``, as the tagger tags them."""
    speaker = [
        (m.start(), m.end(), ":" if m[0] == ":" else "NNP", m[0].lower())
        for m in _SPEAKER_WORD.finditer(text, 0, start)
    ]
    return speaker + [(lo + start, hi + start, tag, lower) for lo, hi, tag, lower in said]


def _keep_tags(texts: list[str], tagged: list[list[Token]]) -> list[tuple[Token, ...]]:
    if len(_TAGS) + len(texts) > _TAGS_KEPT:
        _TAGS.clear()
    frozen = [tuple(tokens) for tokens in tagged]
    _TAGS.update(zip(texts, frozen, strict=True))
    return frozen


# A sentence with no verb that opens with a determiner, a noun and a plural noun followed by
# a preposition, a number or an adverb: where the small model reads a verb as a noun ("My
# flight leaves on Monday", "The train departs at 9"); "Movie marathons with friends" and
# "Any good games lately?" do not open so.
_OPENERS = frozenset({"DT", "PRP$"})
_NOUNS_BEFORE = frozenset({"NN", "NNP"})
_AFTER_A_VERB = frozenset({"IN", "TO", "CD", "RB"})
# What a short subject's words are tagged: nouns, and the numbers of versions ("Version 2.3",
# "iOS 18": the model tags "iOS" a number too).
_NAME_TAGS = _NOUNS_BEFORE | {"CD"}
_ENDS_A_NAME = _NAME_TAGS | {"NNPS"}  # "to Leeds leaves at": the model tags "Leeds" a plural
# A time said bare after a verb, ending its sentence: "leaves tomorrow", "lands Friday".
_BARE_TIME = frozenset({"NN", "NNP"})


def _retag_is_read_as_possessive(tokens: list[Token]) -> None:
    """Tag as ``VBZ`` an "'s" the model read as a possessive where no noun can follow it: a
    preposition or a determiner does ("My birthday's on the 9th", "Dinner's at 8", "Tom's the
    best"), so it is "is"; and before a participle no finite verb follows ("Tim's flying
    back on Friday", but "Mum's cooking is the best")."""
    for k in range(len(tokens) - 1):
        start, end, tag, lower = tokens[k]
        if tag != "POS" or lower not in ("'s", "’s"):
            continue
        following = tokens[k + 1][2]
        if following in ("IN", "DT") or (
            following == "VBG" and not any(t[2] in _FINITE for t in tokens[k + 2 :])
        ):
            tokens[k] = (start, end, "VBZ", lower)


def _plural_after_a_subject(tags: list[str]) -> int | None:
    """Where a sentence's plural noun stands right after a short subject and before what
    follows a verb: "The train departs at 9", "Version 2.3 ships on 12/03", "iOS 18 ships in
    September" (an opener or a noun, then nouns or a number); the subject may end in where
    it goes or comes from ("My flight to Tokyo leaves on Friday", "Our flight back lands
    Sunday"), and the verb may end the sentence with a bare time ("My flight leaves
    tomorrow")."""
    if not tags or (tags[0] not in _OPENERS and tags[0] not in _NAME_TAGS):
        return None
    at = _past(tags, 1, _NAME_TAGS, most=2)
    if at < 2:  # one word is no subject here ("Movie marathons with friends")
        return None
    if at < len(tags) and tags[at] == "RB":  # "flight back"
        at += 1
    elif at < len(tags) and tags[at] in ("IN", "TO"):  # "flight to Tokyo", "bus from the city"
        place = _past(tags, at + 1, _OPENERS, most=1)  # after its article, if any
        at = _past(tags, place, _ENDS_A_NAME, most=3)
        if at == place:
            return None  # a preposition with no name after it
    if at + 1 >= len(tags) or tags[at] != "NNS":
        return None
    after = tags[at + 1]
    if after in _AFTER_A_VERB or (after in _BARE_TIME and at + 2 == len(tags)):
        return at
    return None


def _past(tags: list[str], at: int, kinds: frozenset[str], *, most: int) -> int:
    """The index after at most ``most`` tags of ``kinds`` from ``at`` on."""
    end = at
    while end < len(tags) and end - at < most and tags[end] in kinds:
        end += 1
    return end


def _ends_a_subject(tags: list[str], at: int) -> bool:
    """Whether the words before ``at`` may end a subject that holds a clause: a name ("to Rome
    leaves") or a preposition left at its verb's end ("signed up for starts")."""
    before = tags[at - 1]
    return before in _ENDS_A_NAME or (before == "IN" and tags[at - 2] in (*_FINITE, "RP"))


def _plural_after_a_relative_clause(tags: list[str]) -> int | None:
    """Where a plural noun follows a subject that holds a clause of its own and comes before
    what follows a verb: "The flight I booked to Rome leaves at 7 pm" (an opener, a noun, a
    pronoun and its verb, then no other verb before or after it)."""
    if len(tags) < 6 or tags[0] not in _OPENERS or tags[1] not in ("NN", "NNS"):
        return None
    if tags[2] != "PRP" or tags[3] not in _FINITE:
        return None
    for at in range(4, len(tags) - 1):
        if tags[at] in _VERB:
            return None
        if tags[at] == "NNS" and tags[at + 1] in _AFTER_A_VERB and _ends_a_subject(tags, at):
            # The sentence's verb, unless one comes after ("... of boats in May are lovely").
            return None if any(tag in _VERB for tag in tags[at + 1 :]) else at
    return None


def subject_clause_end(text: str) -> int | None:
    """Where the verb of ``text``'s first sentence starts when its subject holds a clause of
    its own in the past ("The film we watched on Friday | comes out on DVD in March", "The
    doctor I saw yesterday | wants me back in two weeks"): a date before it tells of the
    subject, not of what the sentence says. None for any other sentence."""
    tokens = _tagged(text)
    tags = [token[2] for token in tokens]
    if len(tags) < 5 or tags[0] not in _OPENERS or tags[1] not in ("NN", "NNS"):
        return None
    if tags[2] not in ("PRP", "NNP") or tags[3] != "VBD":
        return None
    for start, _, tag, _ in tokens[4:]:
        if tag == ".":
            return None
        if tag in _FINITE:
            return start
    return None


def _retag_verbs_read_as_nouns(texts: list[str], tagged: list[list[Token]]) -> None:
    """Tag as ``VBZ`` the plural noun of a verbless sentence that opens as above, or of one
    whose only verb is its subject's own clause's, when the model tags the same word as a
    verb after "It" ("It leaves on Monday"): without it the sentence tells no tense (or the
    subject's clause's) and its weekday is read as the last one. "The beach photos from
    Monday" keeps its noun ("It photos from Monday" is no sentence to the model either)."""
    suspects: list[tuple[int, int]] = []  # (text, token) of plural nouns that may be verbs
    for n, tokens in enumerate(tagged):
        sentence: list[int] = []
        for i, token in enumerate([*tokens, (0, 0, ".", "")]):
            if token[2] != ".":
                sentence.append(i)
                continue
            tags = [tokens[k][2] for k in sentence]
            if token[3] != "?" and (  # "Any success stories lately?" asks, no timetable
                (
                    not any(tag in _VERB for tag in tags)
                    and (plural := _plural_after_a_subject(tags))
                )
                or (plural := _plural_after_a_relative_clause(tags))
            ):
                suspects.append((n, sentence[plural]))
            sentence = []
    if not suspects:
        return
    # The word and what follows it in its sentence, at most a few words: enough to tag it.
    probes = [
        "It " + texts[n][tagged[n][k][0] : tagged[n][min(k + 4, len(tagged[n]) - 1)][1]]
        for n, k in suspects
    ]
    from agentmem.models.nlp import load_nlp

    for (n, k), probe in zip(
        suspects, load_nlp().pipe(probes, disable=["ner", "senter"]), strict=True
    ):
        if len(probe) > 1 and probe[1].tag_ == "VBZ":
            start, end, _, lower = tagged[n][k]
            tagged[n][k] = (start, end, "VBZ", lower)


def clause_direction(text: str, start: int, end: int) -> Direction | None:
    """Whether the clause around ``text[start:end]`` (a date) speaks of the past or forward.

    None when it does not say; the caller then keeps its default reading.
    """
    if moved_to(text, start):
        return "forward"
    sentence = _bounds(text, start, end, _SENTENCE_END)
    part = _bounds(text, start, end, _PART_END)
    tokens = _tagged(text)
    until = _until_before(text, part[0], start)
    for lo, hi in (part, sentence):
        before = _tokens_within(tokens, lo, start)
        after = _tokens_within(tokens, end, hi)
        direction = _nearest_before(before) or _first_after(after)
        if direction == "past" or (direction is not None and not until):
            return direction
    if until or _PLAN_CUE.search(text, sentence[0], sentence[1]):
        return "forward"
    return None


def _until_before(text: str, lo: int, start: int) -> bool:
    """Whether "until", "by" or "through" (not a range's: "Monday through Friday") ends
    ``text[lo:start]``."""
    if _UNTIL.search(text, lo, start):
        return True
    through = _THROUGH.search(text, lo, start)
    if through is None:
        return False
    before = through["before"] or ""
    return not (before[:1].isupper() or before[:1].isdigit())


def asks_without_a_verb(text: str, start: int, end: int) -> bool:
    """Whether the sentence around ``text[start:end]`` is a question with no verb at all,
    which proposes rather than recalls: "Dinner at mine on Saturday?", "Drinks Friday?"."""
    lo, hi = _bounds(text, start, end, _SENTENCE_END)
    if text[hi : hi + 1] != "?":
        return False
    return not _verbs(_tokens_within(_tagged(text), max(lo, _statement_start(text)), hi))


def in_simple_present(text: str, start: int) -> bool:
    """Whether the verb nearest before ``text[start:]`` in its part of the sentence is a
    simple present of an event verb ("The shop opens at 9am", "The train leaves at 6pm"),
    not a progressive, a perfect or a modal's ("I'm meeting Zoe at 3pm", "I'll call at
    5pm"), nor "is" or "have" ("The party is at 8pm", "I have a meeting at 4pm"), whose
    direction :func:`clause_direction` reads from what is had or is."""
    verbs = _verbs(_part_before(text, start))
    finite = next((t for t in reversed(verbs) if t[2] in _FINITE), None)
    return (
        finite is not None
        and finite is verbs[-1]
        and finite[2] in ("VBZ", "VBP")
        and finite[3] not in _BE_OR_HAVE
    )


# One occasion someone has, as the subject of a clause: "my flight", "Zoe's interview", "the
# meeting". Its simple present tells when it next happens ("My flight leaves at 6:45 pm"),
# where a place's or a service's tells a habit ("The shop opens at 9am", "The train leaves
# at 6pm").
_AN_OCCASION = re.compile(
    r"\b(?:(?i:my|our|your|his|her|their|the)|[A-Z][a-z]+['’]s)\s+(?:[a-z]+\s+)?"
    r"(?:flight|meeting|appointment|interview|surgery|operation|exam|call|party|wedding"
    r"|ceremony|concert|match|game|show|presentation|demo|reservation|date|funeral)\s+"
    r"(?:[\w'’-]+\s+){0,5}$",
)
# A third person's present right before the time (the tagger may read "lands" as a noun).
_PRESENT_BEFORE = re.compile(r"\b[a-z]+[^s\W]s\s+$")


def an_occasion_is_due(text: str, start: int, *, tagged_present: bool = True) -> bool:
    """Whether the part of the sentence before ``text[start:]`` has one occasion for subject
    and a simple present for verb ("My flight leaves at", "The meeting starts at", "Zoe's
    flight from Toronto lands at"): a time of day after it is when that occasion next
    happens. Unless ``tagged_present`` (the tagger read the verb so), the word before must
    read as a present in "-s". No tags are read."""
    part_start = _bounds(text, start, start, _PART_END)[0]
    if _AN_OCCASION.search(text, part_start, start) is None:
        return False
    return tagged_present or _PRESENT_BEFORE.search(text, part_start, start) is not None


def says_it_is_to_come(text: str, start: int, end: int) -> bool:
    """Whether the sentence around the date at ``text[start:end]`` says in words that what it
    tells is to come ("I'll", "going to", "planning", "due"), not only by a present tense,
    which may be a state's or a timetable's ("my birthday is on May 12", "the exhibition runs
    until Sunday"). No tags are read."""
    lo, hi = _bounds(text, start, end, _SENTENCE_END)
    return _PLAN_CUE.search(text, lo, hi) is not None


def tells_of_a_plan(text: str, start: int, end: int) -> bool:
    """Whether the sentence around the date at ``text[start:end]`` tells what was planned,
    hoped or set out to do: in words (:func:`says_it_is_to_come`: "we planned a party this
    Saturday") or by an infinitive before the date ("I decided to go to Spain this summer"),
    so that a past tense in it need not date what it names."""
    if says_it_is_to_come(text, start, end):
        return True
    lo = _bounds(text, start, end, _SENTENCE_END)[0]
    before = _tokens_within(_tagged(text), lo, start)
    return any(a[2] == "TO" and b[2] == "VB" for a, b in itertools.pairwise(before))


def recurs(text: str, start: int, end: int) -> bool:
    """Whether the date at ``text[start:end]`` names a recurrence rather than one occurrence:
    a habit's adverb or "every"/"each" with a unit of the calendar in its part of the sentence
    ("we usually go hiking in May", "she volunteers every Saturday"). No tags are read."""
    lo, hi = _bounds(text, start, end, _PART_END)
    return _RECURRENCE.search(text, lo, hi) is not None


def moved_to(text: str, start: int) -> bool:
    """Whether the date at ``text[start:]`` is the day something is moved or booked to ("we
    moved the demo to Friday", "I booked a table for the 3rd"), what one wants now is for
    ("she wants an Xbox for Christmas") or what someone agreed to do ("we agreed to meet on
    Sunday"): ahead whatever the tense, so no tags are read."""
    part_start = _bounds(text, start, start, _PART_END)[0]
    return any(
        pattern.search(text, part_start, start) is not None
        for pattern in (_MOVED_TO, _BOOKED_FOR, _WANTED_FOR, _COMMITTED_TO)
    )


def lasts_until_now(text: str, start: int) -> bool:
    """Whether the duration at ``text[start:]`` ("for three months") follows a present perfect
    in its part of the sentence: "I've been running every day for three months", "we have
    lived here for two years" hold from that long ago up to the time of speaking; "I lived
    there for two years", "I had known her for a decade" or "I've got the car for a week" say
    how long, not when. Nor after a move to a place: "she has gone to Spain for a month", "I've
    been to Paris for a week" tell how long the stay lasts or lasted, not since when."""
    tokens = _part_before(text, start)
    verbs = _verbs(tokens)
    finite = next((i for i in range(len(verbs) - 1, -1, -1) if verbs[i][2] in _FINITE), None)
    if finite is None or finite + 1 >= len(verbs):
        return False
    have, participle = verbs[finite], verbs[finite + 1]
    following = tokens[tokens.index(participle) + 1 :]
    return (
        have[2] in ("VBP", "VBZ")
        and have[3] in _HAVE_NOW
        and participle[2] == "VBN"
        and not _has_got([have, participle])
        and participle[3] not in _MOVES
        and not (participle[3] == "been" and following and following[0][3] == "to")
    )


# What held for longer than a told episode ("for years", "for two decades", "since", "used
# to") or came after it ("after that", "afterwards", "later", "eventually").
_BEYOND_THE_EPISODE = re.compile(
    r"\bfor\s+(?:\w+\s+)?(?:years|decades|ages|generations)\b|\bsince\b|\bused\s+to\b"
    r"|\ball\s+(?:my|his|her|their|our|your)\s+li(?:fe|ves)\b"
    r"|\bafter\s+that\b|\bafterwards?\b|\blater\b|\beventually\b",
    re.IGNORECASE,
)
# What follows "was" or "were" when it says what someone or something was ("He was a
# teacher", "My parents were doctors"), not how or where it was then ("It was packed").
_WHAT_ONE_WAS = frozenset({"DT", "PRP$", "NN", "NNS", "NNP", "NNPS", "CD"})


def may_narrate(text: str) -> bool:
    """Whether :func:`narrates` may find a direction in ``text``, read without tags: not a
    question, a habit, what held for years or came after."""
    return not (
        text.rstrip().endswith("?") or _RECURRENCE.search(text) or _BEYOND_THE_EPISODE.search(text)
    )


def narrates(text: str) -> Direction | None:
    """Which way a sentence that names no time of its own goes on from a dated one before it
    in the same message: "past" for events told in the simple past ("Last summer we drove to
    Santa Fe. We stayed three nights at a motel."), "forward" for one told with "will" or
    "going to" ("Next week we fly to Rome. We'll stay near the Pantheon."), so it happened in
    the same period. None when its first verb is not finite or it says otherwise: a present, a
    pluperfect ("We had been there before"), a habit, a question, what held for years
    ("He worked there for decades") or came after ("Later I moved to Leeds"), what someone
    was ("My grandfather was a sailor")."""
    if not may_narrate(text):
        return None
    start = _statement_start(text)
    tokens = [t for t in _tagged(text) if t[0] >= start]
    verbs = _verbs(tokens)
    if not verbs or verbs[0][2] not in _FINITE:
        return None
    first = verbs[0]
    following = [t for t in tokens[tokens.index(first) + 1 :] if t[2] != "RB"]
    after = following[0] if following else None
    if first[3] in _BE and [t[3] for t in following[:2]] == ["going", "to"]:
        return "forward"
    if first[2] == "MD":
        perfect = after is not None and after[3] in ("have", "'ve", "’ve")
        return "forward" if first[3] in _WILL and not perfect else None
    if first[2] != "VBD" or after is None or any(t[2] in ("VBZ", "VBP") for t in verbs):
        return None  # a present anywhere says what holds now
    if first[3] in _HAD and after[2] == "VBN":
        return None  # a pluperfect: before the time told
    if first[3] in ("was", "were") and after[2] in _WHAT_ONE_WAS:
        return None
    return "past"


#: "just" as chats use it of what was done a moment ago ("I just landed", "Just got engaged!").
JUST = re.compile(r"\bjust\b", re.IGNORECASE)
# Past forms of what one wants, feels, thinks or is ("I just wanted to say hi" tells of
# now), and of what goes on ("It's just been hectic lately").
_NOT_DONE_JUST_NOW = frozenset(
    {"wanted", "needed", "felt", "thought", "wished", "hoped", "wondered", "meant", "knew"}
    | {"liked", "loved", "hated", "missed", "believed", "figured", "had", "was", "were"}
    | {"been"}
)
# Before "just": a habit ("I've always just stayed away").
_HABIT_BEFORE_JUST = frozenset({"always", "usually", "often", "sometimes", "never", "normally"})
# "had" is what was done when what follows is had once: "I just had a picnic", "she just had
# her baby", "we just had lunch" (not "I just had to go").
_HAD_ONCE = frozenset(
    {"a", "an", "the", "my", "our", "his", "her", "their", "your", "some", "another"}
    | {"lunch", "dinner", "breakfast", "brunch", "surgery", "twins", "coffee"}
)
# A sentence that says "recently" or "lately" tells of weeks, not of a moment ago ("my
# cousin just had a tough time recently").
_A_WHILE = re.compile(r"\b(?:recently|lately)\b", re.IGNORECASE)


def done_just_now(text: str) -> bool:
    """Whether ``text`` tells of something done a moment before it was said: "just" right
    before a verb in the past ("I just landed in Denver", "We've just moved", "Just got
    engaged!", "The results were just released"). Not a pluperfect ("I had just left when
    she called": before another past), a habit ("I always just stayed away"), a question
    ("Did you just get back?"; a question after it in the text does not count), a sentence
    that says "recently" or "lately", a past of wanting, feeling, being or having ("I just
    wanted to say hi", "It was just perfect"; but "I just had a picnic" was done), a
    form that is also a present ("they just put them on for fun"), nor "just" as "simply" in
    a story told in the past ("We played games, ate good food, and just hung out": a past
    and then "and" before it in its sentence). Tags are read as :func:`clause_direction`
    reads them (:func:`tag_texts` first for many texts)."""
    if not JUST.search(text):
        return False
    start = _statement_start(text)
    tokens = [t for t in _tagged(text) if t[0] >= start]
    for i, (just, verb) in enumerate(zip(tokens, tokens[1:], strict=False)):
        if just[3] != "just" or verb[2] not in ("VBD", "VBN"):
            continue
        before = tokens[i - 1][3] if i else None
        after = tokens[i + 2][3] if i + 2 < len(tokens) else None
        if (
            (verb[3] in _NOT_DONE_JUST_NOW and not (verb[3] == "had" and after in _HAD_ONCE))
            or (verb[3], after) == ("got", "ta")  # "gotta", split by the tokenizer
            or verb[3] in _STATIVE
            or (verb[2] == "VBD" and verb[3] in _SAME_IN_THE_PAST)
            or before in _HAD
            or before in _HABIT_BEFORE_JUST
        ):
            continue
        sentence_start, sentence_end = _bounds(text, just[0], just[0], _SENTENCE_END)
        asked = text.startswith("?", sentence_end)  # "I just got back! You?" tells it
        a_while = _A_WHILE.search(text, sentence_start, sentence_end) is not None
        if not (asked or a_while or _in_a_story_told(text, sentence_start, just)):
            return True
    return False


def _in_a_story_told(text: str, sentence_start: int, just: Token) -> bool:
    """Whether a past verb and then "and" come before ``just`` in its sentence (from
    ``sentence_start``)."""
    before = _tokens_within(_tagged(text), sentence_start, just[0])
    past = next((i for i, t in enumerate(before) if t[2] == "VBD"), None)
    return past is not None and any(t[3] == "and" for t in before[past + 1 :])


def _part_before(text: str, start: int) -> list[Token]:
    """The tokens of the part of the sentence before ``text[start:]`` (from its last comma,
    colon, dash or sentence end)."""
    part_start = _bounds(text, start, start, _PART_END)[0]
    return _tokens_within(_tagged(text), part_start, start)


def _bounds(text: str, start: int, end: int, boundary: re.Pattern[str]) -> tuple[int, int]:
    """The span of text around ``start:end`` between two boundaries, at most
    :data:`_CLAUSE_REACH` characters on either side: a clause is read from the words near its
    date, and a text without punctuation costs each date its neighbourhood, not the text."""
    reach_start = max(0, start - _CLAUSE_REACH)
    starts = [b.end() for b in boundary.finditer(text, reach_start, start)]
    stop = boundary.search(text, end, end + _CLAUSE_REACH)
    return (
        starts[-1] if starts else reach_start,
        stop.start() if stop else min(len(text), end + _CLAUSE_REACH),
    )


def _tokens_within(tokens: tuple[Token, ...], lo: int, hi: int) -> list[Token]:
    """The tokens wholly inside ``text[lo:hi]`` (tokens are in text order)."""
    first = bisect_left(tokens, lo, key=_START)
    last = bisect_right(tokens, hi, key=_START)
    return [t for t in tokens[first:last] if t[1] <= hi]


def _verbs(tokens: list[Token]) -> list[Token]:
    """The verbs, less participles used as adjectives ("the signed forms")."""
    return [
        t
        for t, following in zip(tokens, [*tokens[1:], None], strict=False)
        if t[2] in _VERB
        and not (t[2] == "VBN" and following is not None and following[2].startswith("NN"))
    ]


def _nearest_before(tokens: list[Token]) -> Direction | None:
    verbs = _verbs(tokens)
    if not verbs:
        return None
    main = verbs[-1]
    finite = next((t for t in reversed(verbs) if t[2] in _FINITE), None)
    # "Flying to Kyoto on May 3" is a plan; "a family posing on a track in the fall"
    # describes a noun and says nothing of when.
    if (
        finite is None
        and main[2] == "VBG"
        and any(t[2].startswith(("NN", "PRP")) for t in tokens[: tokens.index(main)])
    ):
        return None
    if _has_got(verbs[-2:]):
        # "I've got an exam in July" is the present "I have an exam in July".
        return "forward" if _holds_an_event(tokens, main) else "present"
    if main is finite and main[2] == "VBP" and main[3] in _SAME_IN_THE_PAST:
        # "I hurt my back on Monday", "I quit smoking on New Year's Day": the tagger has to
        # guess between a present and a past of one form, and with a date a chat tells of
        # what happened far more often than of a scheduled hurt.
        return "past"
    chain = verbs[verbs.index(finite) :] if finite is not None else [main]
    if _starts_on_the_date(chain, tokens):
        return "forward"
    direction = _direction(chain, " ".join(t[3] for t in tokens))
    if direction in (None, "present") and main is finite and _dates_the_verb(tokens, main):
        return "forward"
    return direction


def _starts_on_the_date(chain: list[Token], tokens: list[Token]) -> bool:
    """Whether a simple present's event starts on the date that follows: "the course runs
    for six weeks starting on March 20", "we have classes beginning March 20" (a timetable,
    so the coming date); not a habit ("I walk every day starting at 6")."""
    first, main = chain[0], chain[-1]
    return (
        len(chain) == 2
        and first[2] in ("VBZ", "VBP")
        and first[3] not in _BE
        and main[2] == "VBG"
        and main[3] in STARTING
        and all(t[3] in ("on", "from", "in") for t in tokens[tokens.index(main) + 1 :])
        and not any(t[3] in _HABIT for t in tokens)
    )


def _has_got(verbs: list[Token]) -> bool:
    """Whether two verbs are the present "have got" ("I've got", "she's got": possession, not
    a past, whether the tagger reads "got" as a participle or a past)."""
    return (
        len(verbs) == 2
        and verbs[0][2] in ("VBP", "VBZ")
        and verbs[0][3] in _HAVE
        and verbs[1][3] == "got"
        and verbs[0][1] + 1 >= verbs[1][0] - 1  # adjacent: "'s got", "have got"
    )


def _holds_an_event(tokens: list[Token], verb: Token) -> bool:
    """Whether the present "have" ``verb`` holds one event that the date that follows places:
    "I have an exam in July", "we've got our wedding in August" — not something generic ("we
    have snow in January", "a lot of rain in April")."""
    after = tokens[tokens.index(verb) + 1 :]
    if len(after) < 3 or after[-1][3] not in ("in", "on", "at"):
        return False
    head, noun = after[0], after[-2]
    return (
        head[3] in _ONE_OF
        and noun[3] in _EVENTS
        and len(after) <= 5
        and all(t[2] in ("JJ", "NN", "NNP", "POS") for t in after[1:-1])
        and not any(t[3] in _AMOUNTS for t in after)
    )


_PEOPLE = frozenset({"i", "we", "you", "he", "she", "they"})
_WHERE_OR_FREE = frozenset({"IN", "DT", "RB", "NNP", "NNPS", "CD"})
# Whether someone can be reached or met: "busy", "free", "away", "off", "around".
_AVAILABILITY_WORDS = (
    "busy free away off available unavailable around home back out abroad gone booked "
    "swamped slammed travelling traveling"
)
_AVAILABILITY = frozenset(_AVAILABILITY_WORDS.split())
# What completes a verb of moving or arriving before its date ("come back", "move out").
_PARTICLES = frozenset({"back", "out", "up", "off", "over", "down", "away", "home"})


def _is_a_person(subject: Token | None) -> bool:
    """Whether the word right before a verb ("is", "'m") is a personal pronoun."""
    return subject is not None and subject[2] == "PRP" and subject[3] in _PEOPLE


def _is_an_event(subject: Token | None) -> bool:
    """Whether the noun right before a verb is a thing that takes place ("the conference
    is", "our wedding's")."""
    return subject is not None and subject[2] in ("NN", "NNS") and subject[3] in _EVENTS


def _dates_the_verb(tokens: list[Token], verb: Token) -> bool:
    """Whether the date that follows ``tokens`` tells when the simple-present ``verb`` happens:
    "the wedding is in August", "she turns 30 on May 5", "the course starts in September".
    Such a present speaks of a scheduled event, so of the coming date. Not when the date
    describes a noun ("I love the photos from June"), a quality sits between ("the parks are
    lovely in spring"), or the clause tells of a habit ("we usually go hiking in May")."""
    at = tokens.index(verb)
    subject = tokens[at - 1] if at > 0 else None  # the word right before the verb
    after = tokens[at + 1 :]
    if after and all((t[2] == "RP" or t[3] in _PARTICLES) and t[3] not in _DATING for t in after):
        after = []  # "the results come back Friday": a verb's particle, then its date
    dating = _DATING
    if (start := _range_start(after)) is not None:
        after, dating = start, _RANGE_OPENERS  # "runs from March 3 to": "runs from"
    # The date follows an event verb at once ("starts the first week of April"), "is" after
    # an event ("the conference is the first week of March"; not "today is the 3rd"), or
    # one of the words that put a date on it.
    if verb[2] not in ("VBZ", "VBP") or (
        after[-1][3] not in dating
        if after
        else verb[3] in _BE_OR_HAVE and not (verb[3] in _BE and _is_an_event(subject))
    ):
        return False
    if any(t[3] in _HABIT for t in tokens):
        return False
    if verb[3] in _BE_OR_HAVE:
        # The date is what "is" says ("is in August", "is on the 3rd"), not a quality's time;
        # or when an event "I have" takes place.
        if verb[3] in _BE:
            if _is_a_person(subject):
                # "I'm busy in March", "we're in Lisbon on the 3rd", "she's 30 in July":
                # where someone is or whether they are free at a date is planned; how they
                # feel then ("I'm happy in the summer") and a thing's quality at a time of
                # year ("the parks are lovely in spring") are generic.
                return _where_or_free(after)
            return all(t[2] in ("IN", "DT", "RB") for t in after)
        return _holds_an_event(tokens, verb)
    # An event verb and its time, at most its object and a place between ("turns 30 on",
    # "starts school in", "flies to Rome in"), unless the verb tells of a state.
    return verb[3] not in _STATIVE and len(after) <= _MAX_COMPLEMENT and _a_complement(after[:-1])


def _where_or_free(words: list[Token]) -> bool:
    """Whether the words after "is" say where someone is or whether they are free ("in
    Lisbon", "busy", "off")."""
    return all(t[2] in _WHERE_OR_FREE or t[3] in _AVAILABILITY for t in words)


def _a_complement(words: list[Token]) -> bool:
    """Whether the words after a verb are at most its object and a place ("school", "the
    contractor", "to Rome")."""
    return all(t[2] in _COMPLEMENT for t in words) and all(
        t[2] != "IN" or t[3] in _COMPLEMENT_PREPOSITIONS for t in words
    )


# The words that put a date on a simple present's event: "starts in", "is on", "at",
# "reopens after", "closes over"; and for a range, "runs from ... to", "is closed between ...
# and".
_DATING = frozenset({"in", "on", "at", "after", "before", "during", "over"})
_RANGE_OPENERS = frozenset({"from", "between"})
#: What joins the two ends of a range: "from May 3 to May 5", "between 3 and 5 May", "3–5 May".
RANGE_JOINS = frozenset({"to", "and", "until", "till", "through", "thru", "-", "–", "—"})


def _range_start(after: list[Token]) -> list[Token] | None:
    """When the date after these words is the second end of a range, the words up to its
    opener ("runs from March 3 to" → "runs from": a range has one direction); else None."""
    if after and after[-1][3] in RANGE_JOINS:
        opener = next((k for k, t in enumerate(after) if t[3] in _RANGE_OPENERS), None)
        if opener is not None:
            return after[: opener + 1]
    return None


def _first_after(tokens: list[Token]) -> Direction | None:
    verbs = _verbs(tokens)
    if not verbs:
        return None
    first = tokens.index(verbs[0])
    if verbs[0][2] == "VBP" and verbs[0][3] in _SAME_IN_THE_PAST:
        return "past"  # "Within a month she quit", as before a date (_nearest_before)
    chain = [verbs[0]]
    for token in tokens[first + 1 :]:
        if token[2] in _VERB:
            chain.append(token)
        elif token[2] not in ("RB", "TO", "PRP", "NNP", "NN"):
            break
    direction = _direction(chain, " ".join(t[3] for t in tokens))
    if direction in (None, "present") and len(chain) == 1 and _scheduled_after(tokens, first):
        return "forward"
    return direction


# Verbs of how something seems ("look great"), no event of their own.
_LINKING = frozenset(
    {"look", "looks", "seem", "seems", "sound", "sounds", "feel", "feels", "appear", "appears"}
)
# What may stand between a date opening a clause and its verb: the subject ("On Friday we",
# "In March my sister").
_SUBJECT_TAGS = frozenset({"PRP", "PRP$", "NNP", "NNPS", "DT", "NN", "NNS", "POS", ","})


def _scheduled_after(tokens: list[Token], at: int) -> bool:
    """Whether the simple present at ``tokens[at]``, right after a date that opens its clause
    and its subject, is a scheduled event, so the coming date: "On Friday we fly to Rome",
    "In March we move to Leeds", "In April we're in Lisbon" (where someone is, as in
    :func:`_dates_the_verb`); not a state ("In June I love the garden"), a habit ("On
    Sundays we usually cook") or how a thing is then ("In spring the parks are lovely")."""
    verb, subject = tokens[at], tokens[at - 1] if at > 0 else None
    if (
        verb[2] not in ("VBZ", "VBP")
        or verb[3] in _LINKING
        or not 1 <= at <= 3
        or tokens[0][2] in ("NN", "NNS")  # "The Q3 numbers look great": the date is a noun's
        or not all(t[2] in _SUBJECT_TAGS for t in tokens[:at])
        or any(t[3] in _HABIT for t in tokens)
    ):
        return False
    rest = [t for t in tokens[at + 1 :] if t[2] not in (".", ",", ":")]
    if verb[3] in _BE:
        return _is_a_person(subject) and _where_or_free(rest)
    # Its object and a place, as in _dates_the_verb; no adverb of how ("works well").
    return (
        verb[3] not in _BE_OR_HAVE
        and verb[3] not in _STATIVE
        and len(rest) <= _MAX_COMPLEMENT
        and _a_complement(rest)
        and all(t[2] != "RB" or t[3] in _PARTICLES for t in rest)
    )


def _direction(chain: list[Token], words: str) -> Direction | None:
    """The direction of a verb chain: its finite verb (if any) first, its main verb last."""
    first, main = chain[0], chain[-1]
    tag, word = first[2], first[3]
    planned = _PLAN_CUE.search(words) is not None
    perfect = any(t[3] in ("have", "'ve", "’ve") for t in chain[1:]) and main[2] == "VBN"
    if tag == "MD":
        # "would/should/must have gone" look back; "will have finished by Friday" ahead.
        return "past" if perfect and word.lower() not in _WILL else "forward"
    if tag == "VBD":
        return "past"
    if main[2] == "VBG" and (tag == "VBG" or any(t[3] in _BE for t in chain)):
        return "forward"  # a progressive ("we're flying"), or a bare one ("Flying on May 3")
    if tag in ("VBZ", "VBP"):
        if main is first or main[2] == "VBG":  # "is", "have", "love", "enjoy watching"
            if planned:
                return "forward"
            return "present" if word in _BE_OR_HAVE and main is first else None
        if main[2] == "VBN":
            # "she's getting married", "it's being fixed": "'s" before a progressive is
            # "is", not a perfect's "has".
            progressive = any(t[2] == "VBG" for t in chain[1:-1])
            return "past" if word in _HAVE and not planned and not progressive else "forward"
        return "forward"  # "want to visit", "do you meet"
    if tag == "VBN":
        return "forward" if planned else "past"
    return "forward"  # an infinitive or imperative: "to visit in April", "call me on the 28th"
