"""The offline extractor: deterministic, LLM-free facts from chat turns and text.

* A chat turn of up to ``max_turn_chars`` is one fact, "Speaker: what was said", so a fact
  keeps its speaker and the whole thought; a longer turn is split at sentence boundaries into
  facts of about ``max_fact_chars``.
* Plain text is split into sentences; very short sentences are merged with the next one.
* A sentence that gives a cause for something in it ("The launch slipped because the
  vendor's API was down") also yields the cause clause as a fact of its own, right after it,
  that the sentence's fact is ``caused_by`` (``retain/causes.py``), unless an earlier fact of
  the call already says it. In plain text the clause is a fact like any other. A chat turn
  stays whole: its clause is a *part* of it (a ``part_of`` link, no entities or time of its
  own) that only the causal strategy returns, so the graph holds the cause without a second
  memory of the turn taking a place in the top hits; ``retain/relations.py`` also links a
  turn to an earlier memory that states its cause.
* Entities come from spaCy NER plus rules (``retain/entities.py``); the speaker is always one.
* ``keyword_context`` holds the neighbouring turns, indexed for keyword search only: a question
  is often phrased like the turn that asked it, while the answer sits in the reply.
* spaCy reads long content in bounded pieces: a message longer than ``SEGMENT_CHARS`` is cut
  into segments at paragraph, line or sentence ends, texts are parsed in batches of at most
  ``BATCH_CHARS`` and each parse is dropped once its facts are made. spaCy's working memory
  grows with the text it holds at once, so a maximum-size call stays within a bounded RSS.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from itertools import islice
from typing import TYPE_CHECKING

from agentmem.models.nlp import load_nlp
from agentmem.retain.causes import as_fact_text, cause_clauses, states_the_same
from agentmem.retain.entities import recognize_entities, truecased
from agentmem.retain.facts import EntityMention, ExtractedFact, Message, RetainInput
from agentmem.retain.slots import remember_parsed
from agentmem.temporal.expressions import may_read_tense
from agentmem.temporal.tense import remember_tags

if TYPE_CHECKING:
    from spacy.tokens import Doc

_GREETING = re.compile(
    r"^(hi|hey|hello|thanks|thank you|ok|okay|cool|great|bye|see you|lol|haha|yes|no|sure)"
    r"\b[\s!.,]*$",
    re.IGNORECASE,
)
_HAS_NUMBER = re.compile(r"\d")
#: Longest text spaCy parses at once; a longer message is cut into segments this long at most.
SEGMENT_CHARS = 10_000
#: Characters of text in one batch of spaCy's ``pipe``.
BATCH_CHARS = 20_000
#: Docs of lower-case text capitalised and parsed again together (``_with_capitals``).
_RECASED_BATCH = 64
# Where a long message is cut, best first: a paragraph, a line, a sentence end, a space.
_CUTS = ("\n\n", "\n", ". ", "? ", "! ", " ")
_WORD_CHARACTER = re.compile(r"\w")


class OfflineExtractor:
    """Deterministic extractor; the default when no LLM is configured.

    Args:
        max_turn_chars: A turn up to this length stays one fact.
        max_fact_chars: Target size of the pieces a longer turn or text is split into.
        min_sentence_chars: Shorter sentences of plain text are merged into the next one.
    """

    def __init__(
        self, *, max_turn_chars: int = 600, max_fact_chars: int = 400, min_sentence_chars: int = 20
    ) -> None:
        self.max_turn_chars = max_turn_chars
        self.max_fact_chars = max_fact_chars
        self.min_sentence_chars = min_sentence_chars

    def extract(self, content: RetainInput) -> list[ExtractedFact]:
        """Facts of one retain call, in content order."""
        messages = content.messages
        segments = [
            (index, segment)
            for index, message in enumerate(messages)
            for segment in split_segments(message.content, SEGMENT_CHARS)
        ]
        docs = _with_capitals(parse_in_batches(segment for _, segment in segments))
        facts: list[ExtractedFact] = []
        for (index, segment), (doc, name_doc) in zip(segments, docs, strict=True):
            message = messages[index]
            neighbours = " ".join(
                _speaker_text(messages[j]) for j in (index - 1, index + 1) if 0 <= j < len(messages)
            )
            entities = recognize_entities(
                name_doc, speaker=message.name, tentative=True, recased=name_doc is not doc
            )
            for piece in self._pieces(message, segment, doc, is_text=content.is_text):
                clauses = _new_causes(piece, [f.text for f in facts])
                causes = tuple(range(len(facts) + 1, len(facts) + 1 + len(clauses)))
                whole = None if content.is_text else len(facts)
                facts.append(_fact(content, message, index, piece, entities, neighbours, causes))
                if piece == segment:  # its slots and tense tags come from this parse
                    remember_parsed(facts[-1].text, doc)
                    if may_read_tense(facts[-1].text):
                        remember_tags(facts[-1].text, doc)
                # A part carries only its text: its entities and time are its whole's.
                facts.extend(
                    _fact(
                        content,
                        message,
                        index,
                        c,
                        [] if whole is not None else entities,
                        part_of=whole,
                    )
                    for c in clauses
                )
        return facts

    def texts_without_parsing(self, content: RetainInput) -> list[str] | None:
        """The texts :meth:`extract` will give, when they are known before spaCy runs.

        Chat turns that stay whole (none longer than ``max_turn_chars``) become one fact
        each, "Name: content", followed by the turn's cause clauses (found without spaCy), so
        retain can start embedding them while spaCy reads the messages. None for plain text
        and for turns that will be split.
        """
        messages = content.messages
        if content.is_text or any(len(m.content) > self.max_turn_chars for m in messages):
            return None
        texts: list[str] = []
        for message in messages:
            clauses = _new_causes(message.content, texts)
            texts.append(_speaker_text(message))
            texts.extend(_with_speaker(message, c) for c in clauses)
        return texts

    def _pieces(self, message: Message, text: str, doc: Doc, *, is_text: bool) -> Iterator[str]:
        """The facts' texts of one segment ``text`` of ``message``, parsed as ``doc``."""
        if not is_text and len(message.content) <= self.max_turn_chars:
            yield text
            return
        sentences = [s.text.strip() for s in doc.sents if s.text.strip()] or [text]
        if is_text:
            yield from self._sentence_facts(sentences)
            return
        buffer = ""
        for sentence in sentences:
            joined = f"{buffer} {sentence}".strip()
            if len(joined) > self.max_fact_chars and buffer:
                yield buffer
                buffer = sentence
            else:
                buffer = joined
        if buffer:
            yield buffer

    def _sentence_facts(self, sentences: list[str]) -> list[str]:
        """Plain text's facts: one per sentence, a fragment merged into the next sentence; one
        ending the text without a word in it goes with the sentence before ("Jake proposed
        last night!!! 💍" is one fact), a short last sentence stays one ("I grew up in
        Ohio.")."""
        facts: list[str] = []
        buffer = ""
        for sentence in sentences:
            buffer = f"{buffer} {sentence}".strip()
            if len(buffer) >= self.min_sentence_chars:
                facts.append(buffer)
                buffer = ""
        if buffer and facts and not _WORD_CHARACTER.search(buffer):
            facts[-1] = f"{facts[-1]} {buffer}"
        elif buffer:
            facts.append(buffer)
        return facts


def split_segments(text: str, max_chars: int) -> list[str]:
    """``text`` cut into segments of at most ``max_chars``, each at the best cut available
    (see ``_CUTS``) in the second half of its span; the text itself when it is short."""
    segments: list[str] = []
    start = 0
    while len(text) - start > max_chars:
        end = start + max_chars
        cut = next(
            (
                found + len(mark)
                for mark in _CUTS
                if (found := text.rfind(mark, start + max_chars // 2, end)) >= 0
            ),
            end,
        )
        segments.append(text[start:cut])
        start = cut
    segments.append(text[start:])
    return segments


def parse_in_batches(texts: Iterable[str]) -> Iterator[Doc]:
    """spaCy docs of ``texts``, in order, parsed ``BATCH_CHARS`` of text at a time."""
    nlp = load_nlp()
    batch: list[str] = []
    size = 0
    for text in texts:
        if batch and size + len(text) > BATCH_CHARS:
            yield from nlp.pipe(batch, batch_size=len(batch))
            batch, size = [], 0
        batch.append(text)
        size += len(text)
    if batch:
        yield from nlp.pipe(batch, batch_size=len(batch))


def _with_capitals(docs: Iterable[Doc]) -> Iterator[tuple[Doc, Doc]]:
    """Each doc and the doc its names are read in: itself, or for a text written all in
    lower case its likely names capitalised and parsed again (``entities.truecased``), a
    batch of :data:`_RECASED_BATCH` docs at a time."""
    docs = iter(docs)
    while batch := list(islice(docs, _RECASED_BATCH)):
        recased = [truecased(doc) for doc in batch]
        again = parse_in_batches(text for text in recased if text is not None)
        for doc, text in zip(batch, recased, strict=True):
            yield doc, doc if text is None else next(again)


def _speaker_text(message: Message) -> str:
    return _with_speaker(message, message.content)


def _with_speaker(message: Message, text: str) -> str:
    return f"{message.name}: {text}" if message.name else text


def _new_causes(piece: str, earlier: list[str]) -> list[str]:
    """The cause clauses of ``piece`` as fact texts, but those an earlier fact already says
    (relations then link the piece to that fact instead)."""
    return [
        text
        for text in map(as_fact_text, cause_clauses(piece))
        if text and not any(states_the_same(text, e) for e in earlier)
    ]


def _fact(
    content: RetainInput,
    message: Message,
    index: int,
    piece: str,
    entities: list[EntityMention],
    neighbours: str = "",
    caused_by: tuple[int, ...] = (),
    part_of: int | None = None,
) -> ExtractedFact:
    piece_entities = _entities_in(piece, entities, message.name)
    return ExtractedFact(
        text=_with_speaker(message, piece),
        fact_type="experience" if message.role == "assistant" else "world",
        mentioned_at=message.mentioned_at,
        message_index=index,
        entities=piece_entities,
        importance=estimate_importance(piece, piece_entities, message.name),
        occurred_start=content.occurred_start if part_of is None else None,
        occurred_end=content.occurred_end if part_of is None else None,
        metadata=dict(message.metadata),
        keyword_context=neighbours,
        caused_by=caused_by,
        part_of=part_of,
    )


def _entities_in(
    piece: str, entities: list[EntityMention], speaker: str | None
) -> tuple[EntityMention, ...]:
    """The message's entities that occur in this piece (the speaker always does)."""
    lowered = piece.lower()
    return tuple(
        e for e in entities if (speaker and e.name == speaker) or e.name.lower() in lowered
    )


def estimate_importance(
    text: str, entities: tuple[EntityMention, ...], speaker: str | None
) -> float:
    """A heuristic importance in [0.2, 0.8] centred on the documented default of 0.5.

    Chit-chat ("thanks!") scores low; facts that name things, carry numbers or say more score
    higher. A caller's explicit ``importance`` always replaces this.
    """
    if _GREETING.match(text.strip()):
        return 0.2
    score = 0.5
    if any(e.name != speaker and not e.tentative for e in entities):
        score += 0.1
    if _HAS_NUMBER.search(text):
        score += 0.1
    if len(text) >= 80:
        score += 0.1
    elif len(text) < 20:
        score -= 0.2
    return round(min(0.8, max(0.2, score)), 2)
