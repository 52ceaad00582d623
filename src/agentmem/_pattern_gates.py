"""Which words every match of a pattern holds, so that a text without any of them is not
searched at all.

Most texts a chat retains name no time and give no reason ("That sounds great!"), yet each
was searched with every rule of ``temporal/expressions.py`` (~45 patterns, ~125 µs a text)
and every cue of ``retain/causes.py``. Every match of a pattern holds one of a few words
("yesterday", "today" or "tomorrow"; a month's name; "because"; a digit), read here from the
compiled pattern itself, so a gate cannot drift from its pattern: a text that holds none of
them (casefolded, as a substring) cannot match, and the pattern is skipped. A pattern this
reading cannot vouch for (a match made only of letter classes) has no gate and is always
searched.
"""

from __future__ import annotations

import itertools
import re
import re._constants as sre  # the parsed form of a pattern: stable within a Python release
import re._parser as sre_parse
from collections.abc import Mapping
from typing import Any

__all__ = ["IGNORECASE_TWINS", "Gates"]

#: The four letters beyond ASCII that IGNORECASE matches with ASCII ones ("ſince" and
#: "sınce" match "since", the Kelvin sign matches "k"), mapped one for one to those, so
#: offsets stay: the Kelvin sign (written as its escape, which no editor normalises away) to
#: the "k" it casefolds to, so that the tagger too reads "wee\u212as" as "weeks".
IGNORECASE_TWINS = str.maketrans({"ſ": "s", "\u212a": "k", "İ": "I", "ı": "i"})

#: A requirement that stands for "a digit".
_DIGIT = "\0digit"
_REPEATS = (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT)


class Gates:
    """The gates of named patterns: which of them a text may match."""

    def __init__(self, patterns: Mapping[str, re.Pattern[str]]) -> None:
        required = {
            name: _required(sre_parse.parse(p.pattern, p.flags)) for name, p in patterns.items()
        }
        self._open = frozenset(name for name, words in required.items() if words is None)
        self._gated = {name: frozenset(w) for name, w in required.items() if w is not None}
        self._words = sorted({w for words in self._gated.values() for w in words} - {_DIGIT})

    def admitted(self, text: str) -> frozenset[str]:
        """The names of the patterns ``text`` may match: each holds one of its words, as a
        substring of the text casefolded with its IGNORECASE twins read as ASCII ("sınce"
        holds "since", as the patterns read it)."""
        folded = text.translate(IGNORECASE_TWINS).casefold()
        present = {word for word in self._words if word in folded}
        if any(c.isdigit() for c in text):
            present.add(_DIGIT)
        return self._open | {
            name for name, words in self._gated.items() if not words.isdisjoint(present)
        }


def _required(items: Any) -> set[str] | None:  # noqa: ANN401 - re's parsed form
    """One set of strings every match of the sequence ``items`` holds one of (the most
    telling such set among its parts), or None when no part requires any."""
    best: set[str] | None = None
    run: list[str] = []
    for op, av in [*items, (None, None)]:
        if op is sre.LITERAL:
            run.append(chr(av))
            continue
        if run and op is sre.BRANCH:
            # re's parser takes the letters alternatives share out in front ("march|may" is
            # "ma" + "rch|y"): each alternative's own first letters complete the word.
            best = _better(best, _words_through(run, av[1]))
        if run:
            best = _better(best, {"".join(run).casefold()})
            run = []
        if op is not None:
            best = _better(best, _item_required(op, av))
    return best


def _words_through(run: list[str], branches: list[Any]) -> set[str] | None:
    """The words a literal ``run`` and the first letters of each of ``branches`` after it
    spell, or None when a branch does not open with a letter."""
    words = set()
    for branch in branches:
        head = [
            chr(av) for op, av in itertools.takewhile(lambda item: item[0] is sre.LITERAL, branch)
        ]
        if not head:
            return None
        words.add("".join(run + head).casefold())
    return words


def _item_required(op: Any, av: Any) -> set[str] | None:  # noqa: ANN401, PLR0911
    if op is sre.SUBPATTERN:
        return _required(av[3])
    if op is sre.ATOMIC_GROUP:
        return _required(av)
    if op is sre.BRANCH:
        alternatives = [_required(branch) for branch in av[1]]
        if any(a is None for a in alternatives):
            return None
        return set().union(*alternatives)  # type: ignore[arg-type]
    if op in _REPEATS:
        return _required(av[2]) if av[0] >= 1 else None
    if op is sre.IN and all(_is_digits(kind, value) for kind, value in av):
        return {_DIGIT}  # "\d", "[0-9]", "[12]"
    return None


def _is_digits(kind: Any, value: Any) -> bool:  # noqa: ANN401
    if kind is sre.CATEGORY:
        return value is sre.CATEGORY_DIGIT
    if kind is sre.RANGE:
        return 48 <= value[0] <= value[1] <= 57
    return kind is sre.LITERAL and 48 <= value <= 57


def _better(a: set[str] | None, b: set[str] | None) -> set[str] | None:
    """The more telling of two requirements: the one whose rarest-looking word is longest
    (a one-letter run like "s" is in nearly every text)."""
    if a is None or b is None:
        return a if b is None else b
    return a if _strength(a) >= _strength(b) else b


def _strength(words: set[str]) -> int:
    return min(
        3 if w == _DIGIT else 1 if w.strip() in _EVERYWHERE else len(w.strip()) for w in words
    )


# Words in nearly every text, however long: a gate on them admits all ("in" before "3 wks").
_EVERYWHERE = frozenset({"in", "on", "at", "to", "of", "the", "and", "by", "for", "is", "it"})
