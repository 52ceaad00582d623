"""Check a whole export file against the contract of retain, link and configure.

:func:`check_export` reads every line of a file written by :func:`~agentmem.store.transfer.
export_bank` and returns its rows, validated, before import writes anything. Each field goes
through the validator its verb uses (``validate_importance``, ``normalize_tags``,
``normalize_kind``, ``validate_weight``, ``BankConfig.from_mapping``, ``to_utc``, ...), and
text must be exactly what retain stores (no lone surrogate, no control character, not empty,
within retain's size limit). Then the lines must agree with each other and with the store:
ids unique, every episode, entity and memory a line refers to present in the file, every
entity used by a memory, vectors of the header's dimension, the counts of the header met.
A violation raises :class:`~agentmem.errors.InvalidInputError` naming the line and field.

The file's lines, by type, and their fields (unknown fields are refused too):

* header ``agentmem-export``: format, bank_id, embedder, dimension, config, created_at,
  counts, vectors;
* ``episode``: id, content, document_id, context, mentioned_at, metadata, created_at;
* ``entity``: id, name, kind, aliases, created_at, kind_votes (kind -> positive weight);
* ``memory``: id, episode_id, text, search_text, context_text, fact_type, occurred_start,
  occurred_end, mentioned_at, tags, importance, access_count, document_id, context, metadata,
  created_at, entity_ids, vector, pieces (the piece vectors as stored, with the vector);
* ``link``: src_id, dst_id, kind, weight, created_at;
* ``entity_correction``: op, name, target, created_at.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import numpy as np

from agentmem._time import optional_utc, to_utc, utc_now
from agentmem.config import BankConfig, Limits, as_path, normalize_tags
from agentmem.errors import InvalidInputError, NotFoundError, shown
from agentmem.links import STORED_KINDS, normalize_kind, validate_weight
from agentmem.retain.corrections import validate_name
from agentmem.retain.messages import (
    check_retain_size,
    clean_text,
    normalize_content,
    raw_episode,
    validate_importance,
    validate_json,
    validate_optional_str,
)
from agentmem.retain.pieces import decode_pieces
from agentmem.store.records import to_db_time
from agentmem.types import FACT_TYPES

FORMAT = 1
HEADER_TYPE = "agentmem-export"
# The memories table stores access_count as a 32-bit INTEGER that every recall increments.
MAX_ACCESS_COUNT = 1_000_000_000
MAX_ID_CHARS = 256
# Keyword-only texts (a fact's text with its entity names, its neighbouring turns) may be
# this many times as long as the content of a retain call.
_INDEXED_TIMES = 4

T = TypeVar("T")

_FIELDS: dict[str, frozenset[str]] = {
    HEADER_TYPE: frozenset(
        {"format", "bank_id", "embedder", "dimension", "config", "created_at", "counts", "vectors"}
    ),
    "episode": frozenset(
        {
            "id",
            "content",
            "document_id",
            "context",
            "mentioned_at",
            "metadata",
            "created_at",
            "content_hash",
        }
    ),
    "entity": frozenset({"id", "name", "kind", "aliases", "created_at", "kind_votes"}),
    "memory": frozenset(
        {
            "id",
            "episode_id",
            "text",
            "search_text",
            "context_text",
            "fact_type",
            "occurred_start",
            "occurred_end",
            "mentioned_at",
            "tags",
            "importance",
            "access_count",
            "document_id",
            "context",
            "metadata",
            "created_at",
            "content_hash",
            "entity_ids",
            "vector",
            "pieces",
        }
    ),
    "link": frozenset({"src_id", "dst_id", "kind", "weight", "created_at"}),
    "entity_correction": frozenset({"op", "name", "target", "created_at"}),
}
# Fields a line may leave out (they are then null / empty).
_OPTIONAL = frozenset(
    {
        "document_id",
        "context",
        "metadata",
        "episode_id",
        "occurred_start",
        "occurred_end",
        "tags",
        "aliases",
        "entity_ids",
        "vector",
        "pieces",
        "access_count",
        "kind_votes",
        "content_hash",
    }
)
_HEX = re.compile(r"[0-9a-f]{1,128}")
_COUNTED = ("episodes", "entities", "memories", "links")


class ImportedMemory(NamedTuple):
    """One memory line, validated; times are naive UTC as the DuckDB columns hold them."""

    id: str
    episode_id: str | None
    text: str
    search_text: str
    context_text: str
    fact_type: str
    occurred_start: datetime | None
    occurred_end: datetime | None
    mentioned_at: datetime
    tags: list[str]
    importance: float
    access_count: int
    document_id: str | None
    context: str | None
    metadata: str
    created_at: datetime
    content_hash: str | None
    entity_ids: list[str]


@dataclass(slots=True)
class CheckedExport:
    """Every row of an export file, validated, with the file's ids (nothing written yet).

    Rows are in their table's column order without ``bank_id`` (and, for memories, ``seq``).
    """

    path: Path
    header: dict[str, Any]
    config: BankConfig
    reuse_vectors: bool
    episodes: list[tuple[Any, ...]] = field(default_factory=list)
    entities: list[tuple[Any, ...]] = field(default_factory=list)
    memories: list[ImportedMemory] = field(default_factory=list)
    links: list[tuple[Any, ...]] = field(default_factory=list)
    corrections: list[tuple[Any, ...]] = field(default_factory=list)

    def ids(self) -> list[str]:
        """Every episode, entity and memory id of the file."""
        return [
            *(e[0] for e in self.episodes),
            *(e[0] for e in self.entities),
            *(m.id for m in self.memories),
        ]


class _Line:
    """One line of the file, read field by field; every error names the line and field."""

    def __init__(self, path: Path, number: int, obj: Mapping[str, Any]) -> None:
        self.path, self.number, self.obj = path, number, obj
        self.type = obj["type"]
        unknown = sorted(set(obj) - _FIELDS[self.type] - {"type"})
        if unknown:
            raise self.error(unknown[0], f"unknown field; a {self.type!r} line has {_known(self)}")

    def error(self, name: str, message: str) -> InvalidInputError:
        return InvalidInputError(
            f"line {self.number} of {self.path} ({self.type}), field {name!r}: {message}"
        )

    def get(self, name: str, validate: Callable[[Any], T]) -> T:
        """The field's value as ``validate`` returns it."""
        if name not in self.obj and name not in _OPTIONAL:
            raise self.error(name, "missing")
        try:
            return validate(self.obj.get(name))
        except InvalidInputError as exc:
            raise self.error(name, str(exc)) from None


def _content_hash(value: Any) -> str | None:
    """What makes a re-retain of the same content a no-op (retain/repeats.py): hex digits."""
    if value is None:
        return None
    if not isinstance(value, str) or not _HEX.fullmatch(value):
        raise InvalidInputError("expected up to 128 hexadecimal digits")
    return value


def _kind_votes(value: Any) -> str | None:
    """An entity's kind votes (kind -> summed positive confidence), as stored."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise InvalidInputError("expected an object of kind -> weight")
    for kind, weight in value.items():
        if len(kind) > 256:
            raise InvalidInputError("a kind is longer than 256 characters")
        number = isinstance(weight, int | float) and not isinstance(weight, bool)
        if not (number and math.isfinite(weight) and 0 < weight < 1e12):
            raise InvalidInputError(f"the weight of {kind!r} is not a positive finite number")
    return json.dumps(value)


def _known(line: _Line) -> str:
    return ", ".join(sorted(_FIELDS[line.type]))


def _exactly(validate: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``validate``, also refusing a value it would change (retain stores only its output)."""

    def check(value: Any) -> Any:
        result = validate(value)
        if result != value:
            raise InvalidInputError(
                "not as retain stores it (surrounding spaces, a control character such as NUL, "
                "or a lone surrogate)"
            )
        return result

    return check


def _string(max_len: int, *, optional: bool = False) -> Callable[[Any], str | None]:
    """A non-empty string as :func:`validate_optional_str` stores it."""

    def check(value: Any) -> str | None:
        if value is None and not optional:
            raise InvalidInputError("must be a non-empty string")
        return validate_optional_str(value, field="value", max_len=max_len)

    return _exactly(check)


def _text(max_len: int, *, allow_empty: bool = False) -> Callable[[Any], str]:
    """A text column: a string within ``max_len``, without what retain would clean."""

    def check(value: Any) -> str:
        if not isinstance(value, str):
            raise InvalidInputError(f"must be a string, got {type(value).__name__}")
        if len(value) > max_len:
            raise InvalidInputError(f"is longer than {max_len} characters")
        if not allow_empty and not value.strip():
            raise InvalidInputError("must not be empty")
        return _exactly(clean_text)(value)

    return check


def _time(value: Any) -> datetime:
    return to_db_time(to_utc(value, field="time"))  # type: ignore[return-value]


def _optional_time(value: Any) -> datetime | None:
    return to_db_time(optional_utc(value, field="time"))


def _list_of(item: Callable[[Any], T]) -> Callable[[Any], list[T]]:
    def check(value: Any) -> list[T]:
        if value is None:
            return []
        if not isinstance(value, list):
            raise InvalidInputError(f"must be a list, got {type(value).__name__}")
        return [item(v) for v in value]

    return check


def _tags(value: Any) -> list[str]:
    if value is not None and not isinstance(value, list):
        raise InvalidInputError(f"must be a list of strings, got {type(value).__name__}")
    return list(normalize_tags(value))


def _metadata(max_depth: int) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        validate = _exactly(lambda v: validate_json(v, field="metadata", max_depth=max_depth))
        return json.dumps(validate(value or {}), ensure_ascii=False)

    return check


def _one_of(allowed: tuple[str, ...] | frozenset[str]) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if value not in allowed:
            raise InvalidInputError(f"{value!r} is not one of {sorted(allowed)}")
        return str(value)

    return check


def _access_count(value: Any) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInputError(f"must be an integer, got {value!r}")
    if not 0 <= value <= MAX_ACCESS_COUNT:
        raise InvalidInputError(f"must be in [0, {MAX_ACCESS_COUNT}], got {value}")
    return value


def _importance(value: Any) -> float:
    if value is None:
        raise InvalidInputError("must be a number in [0, 1], got None")
    return validate_importance(value)  # type: ignore[return-value]


def _episode_content(limits: Limits) -> Callable[[Any], str]:
    """Content as retain keeps it: a string or chat messages retain accepts, cleaned."""

    def check(value: Any) -> str:
        if not isinstance(value, str | list):
            raise InvalidInputError(f"must be a string or a list of messages, got {shown(value)}")
        check_retain_size(value, max_chars=limits.retain_chars, max_messages=limits.retain_messages)
        normalize_content(value, mentioned_at=utc_now(), max_depth=limits.json_depth)
        text = raw_episode(value)
        if json.loads(text) != value:
            raise InvalidInputError("holds a lone surrogate, a control character or a non-number")
        return text

    return check


def _pieces(text: object, dimension: int) -> str:
    """Piece vectors as export writes them (``retain/pieces.py``): checked, kept as text."""
    if not isinstance(text, str):
        raise InvalidInputError("must be base64 text")
    decode_pieces(text, dimension)
    return text


def decode_vector(text: object, dimension: int) -> np.ndarray:
    """A vector written by export: base64 of ``dimension`` finite little-endian float32."""
    if not isinstance(text, str):
        raise InvalidInputError("must be base64 text")
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise InvalidInputError("is not base64") from None
    if len(raw) != 4 * dimension:
        raise InvalidInputError(f"has {len(raw) / 4:g} dimensions, not the header's {dimension}")
    vector = np.frombuffer(raw, dtype="<f4")
    if not np.isfinite(vector).all():
        raise InvalidInputError("holds a value that is not finite")
    return vector


def read_lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` of every non-empty line, the header included."""
    try:
        handle = path.open(encoding="utf-8")
    except OSError as exc:  # unreadable (permissions, or gone since it was checked)
        raise InvalidInputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    with handle:
        try:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise InvalidInputError(f"line {number} of {path} is not JSON: {exc}") from None
                if not isinstance(obj, dict) or obj.get("type") not in _FIELDS:
                    raise InvalidInputError(
                        f"line {number} of {path}: 'type' must be one of {sorted(_FIELDS)}"
                    )
                if (obj["type"] == HEADER_TYPE) != (number == 1):
                    raise InvalidInputError(
                        f"line {number} of {path}: the header must be the first line, and only it"
                    )
                yield number, obj
        except UnicodeDecodeError as exc:
            raise InvalidInputError(f"{path} is not UTF-8 text: {exc}") from None


def read_header(path: str | Path) -> dict[str, Any]:
    """The header line of an export file, checked (except for its counts).

    Raises:
        NotFoundError: No file at ``path``.
        InvalidInputError: Not a file, not an agentmem export of a known format, or a bad
            header field.
    """
    path = Path(path)
    if not path.exists():
        raise NotFoundError(f"no file {path}")
    if not path.is_file():
        raise InvalidInputError(f"{path} is not a file (an export is one JSON Lines file)")
    try:
        number, obj = next(read_lines(path))
    except StopIteration:
        raise InvalidInputError(f"{path} is not an agentmem export (it is empty)") from None
    except InvalidInputError as exc:
        raise InvalidInputError(f"{path} is not an agentmem export: {exc}") from None
    line = _Line(path, number, obj)
    line.get("format", _format)
    header = {
        "bank_id": line.get("bank_id", _string(MAX_ID_CHARS)),
        "embedder": line.get("embedder", _string(1024)),
        "dimension": line.get("dimension", _dimension),
        "config": line.get("config", lambda v: BankConfig.from_mapping(_mapping(v))),
        "created_at": line.get("created_at", _time),
        "counts": line.get("counts", _counts),
        "vectors": line.get("vectors", _flag),
    }
    return header


def _format(value: Any) -> int:
    if type(value) is not int or value != FORMAT:
        raise InvalidInputError(f"export format {value!r} is not {FORMAT}")
    return value


def _mapping(value: Any) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidInputError(f"must be an object, got {type(value).__name__}")
    return value


def _dimension(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= 65_536:
        raise InvalidInputError(f"must be a positive integer, got {value!r}")
    return value


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise InvalidInputError(f"must be true or false, got {value!r}")
    return value


def _counts(value: Any) -> dict[str, int]:
    counts = dict(_mapping(value))
    if set(counts) != set(_COUNTED):
        raise InvalidInputError(f"must count exactly {list(_COUNTED)}")
    for name, count in counts.items():
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise InvalidInputError(f"{name} must be a non-negative integer, got {count!r}")
    return counts


def check_export(
    path: str | Path, embedder_name: str, dimension: int, limits: Limits
) -> CheckedExport:
    """Read and check the whole file for a store whose embedder is ``embedder_name`` and
    whose calls are bounded by ``limits`` (as retain's are).

    Raises:
        InvalidInputError: The first violation found, naming its line and field.
    """
    path = as_path(path)
    header = read_header(path)
    if header["embedder"] == embedder_name and header["dimension"] != dimension:
        raise InvalidInputError(
            f"line 1 of {path} (header), field 'dimension': {header['dimension']}, but "
            f"{embedder_name!r} makes {dimension}-dimensional vectors"
        )
    checked = CheckedExport(
        path,
        header,
        header["config"],
        reuse_vectors=header["vectors"] and header["embedder"] == embedder_name,
    )
    refs = _References()
    for number, obj in read_lines(path):
        if number > 1:
            _check_line(_Line(path, number, obj), checked, refs, header["dimension"], limits)
    refs.check(path, checked)
    return checked


@dataclass(slots=True)
class _References:
    """The ids each line defines and uses, by line number, to check they agree at the end."""

    defined: dict[str, dict[str, int]] = field(
        default_factory=lambda: {"episode": {}, "entity": {}, "memory": {}}
    )
    used: list[tuple[_Line, str, str, str]] = field(default_factory=list)  # line, field, kind, id

    def define(self, line: _Line, kind: str, identifier: str) -> None:
        first = self.defined[kind].setdefault(identifier, line.number)
        if first != line.number:
            raise line.error("id", f"{identifier!r} is also the id of line {first}")

    def use(self, line: _Line, name: str, kind: str, identifier: str | None) -> None:
        if identifier is not None:
            self.used.append((line, name, kind, identifier))

    def check(self, path: Path, checked: CheckedExport) -> None:
        used_entities: set[str] = set()
        for line, name, kind, identifier in self.used:
            if identifier not in self.defined[kind]:
                raise line.error(name, f"no {kind} {identifier!r} in this file")
            if kind == "entity":
                used_entities.add(identifier)
        for identifier, number in self.defined["entity"].items():
            if identifier not in used_entities:
                raise InvalidInputError(
                    f"line {number} of {path} (entity): no memory of the file names entity "
                    f"{identifier!r}"
                )
        found = {
            "episodes": len(checked.episodes),
            "entities": len(checked.entities),
            "memories": len(checked.memories),
            "links": len(checked.links),
        }
        if found != checked.header["counts"]:
            raise InvalidInputError(
                f"line 1 of {path} (header), field 'counts': {checked.header['counts']}, but the "
                f"file holds {found} (truncated or edited?)"
            )


def _check_line(
    line: _Line, checked: CheckedExport, refs: _References, dimension: int, limits: Limits
) -> None:
    get = line.get
    if line.type == "episode":
        identifier = get("id", _string(MAX_ID_CHARS))
        refs.define(line, "episode", identifier)
        checked.episodes.append(
            (
                identifier,
                get("content", _episode_content(limits)),
                get("document_id", _string(512, optional=True)),
                get("context", _string(10_000, optional=True)),
                get("mentioned_at", _time),
                get("metadata", _metadata(limits.json_depth)),
                get("created_at", _time),
                get("content_hash", _content_hash),
            )
        )
    elif line.type == "entity":
        identifier = get("id", _string(MAX_ID_CHARS))
        refs.define(line, "entity", identifier)
        checked.entities.append(
            (
                identifier,
                get("name", _string(1024)),
                get("kind", _string(256)),
                get("aliases", _list_of(_string(1024))),
                get("created_at", _time),
                get("kind_votes", _kind_votes),
            )
        )
    elif line.type == "memory":
        checked.memories.append(_memory(line, refs, dimension, limits))
    elif line.type == "link":
        src, dst = get("src_id", _string(MAX_ID_CHARS)), get("dst_id", _string(MAX_ID_CHARS))
        if src == dst:
            raise line.error("dst_id", "a memory cannot link to itself")
        refs.use(line, "src_id", "memory", src)
        refs.use(line, "dst_id", "memory", dst)
        checked.links.append(
            (
                src,
                dst,
                get("kind", lambda v: normalize_kind(v, STORED_KINDS)),
                get("weight", validate_weight),
                get("created_at", _time),
            )
        )
    else:
        checked.corrections.append(
            (
                get("op", _one_of(("alias", "split"))),
                get("name", _exactly(lambda v: validate_name(v, "name"))),
                get("target", _exactly(lambda v: validate_name(v, "target"))),
                get("created_at", _time),
            )
        )


def _memory(line: _Line, refs: _References, dimension: int, limits: Limits) -> ImportedMemory:
    get = line.get
    identifier = get("id", _string(MAX_ID_CHARS))
    refs.define(line, "memory", identifier)
    episode = get("episode_id", _string(MAX_ID_CHARS, optional=True))
    refs.use(line, "episode_id", "episode", episode)
    entity_ids = get("entity_ids", _list_of(_string(MAX_ID_CHARS)))
    if len(set(entity_ids)) != len(entity_ids):
        raise line.error("entity_ids", "lists an entity twice")
    for entity in entity_ids:
        refs.use(line, "entity_ids", "entity", entity)
    start = get("occurred_start", _optional_time)
    end = get("occurred_end", _optional_time)
    if (start is None) != (end is None) or (start is not None and end < start):  # type: ignore[operator]
        raise line.error("occurred_end", "must be null with occurred_start, else not before it")
    get("vector", lambda v: v if v is None else decode_vector(v, dimension))
    get("pieces", lambda v: v if v is None else _pieces(v, dimension))
    return ImportedMemory(
        id=identifier,
        episode_id=episode,
        text=get("text", _text(limits.retain_chars)),
        # The text with its entities' names; the neighbouring turns.
        search_text=get("search_text", _text(_INDEXED_TIMES * limits.retain_chars)),
        context_text=get(
            "context_text", _text(_INDEXED_TIMES * limits.retain_chars, allow_empty=True)
        ),
        fact_type=get("fact_type", _one_of(FACT_TYPES)),
        occurred_start=start,
        occurred_end=end,
        mentioned_at=get("mentioned_at", _time),
        tags=get("tags", _tags),
        importance=get("importance", _importance),
        access_count=get("access_count", _access_count),
        document_id=get("document_id", _string(512, optional=True)),
        context=get("context", _string(10_000, optional=True)),
        metadata=get("metadata", _metadata(limits.json_depth)),
        created_at=get("created_at", _time),
        content_hash=get("content_hash", _content_hash),
        entity_ids=entity_ids,
    )
