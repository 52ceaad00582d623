"""Import checks the whole file before it writes anything.

A valid export is mutated in one field of one line into a value outside the contract of
retain / link / configure; every such file must be refused with an InvalidInputError naming
the line and the field, and leave the store exactly as it was: same banks, same rows, whole.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentmem
from agentmem.cli import main
from agentmem.store.import_check import MAX_CONTENT_CHARS
from agentmem.testing import HashEmbedder
from tests.conftest import CONVERSATION, T0, T1

TABLES = ("banks", "episodes", "entities", "memories", "memory_entities", "links", "meta")


def _vector(values: list[float]) -> str:
    return base64.b64encode(np.asarray(values, dtype="<f4").tobytes()).decode("ascii")


GOOD_VECTOR = _vector([0.5] * 256)
OVERFLOW = "9999-12-31T23:00:00-05:00"  # valid ISO, but past year 9999 in UTC
TOO_EARLY = "0001-01-01T00:30:00+01:00"

# (line type, field, out-of-contract values). "∅" removes the field.
BAD_VALUES: list[tuple[str, str, list[Any]]] = [
    ("agentmem-export", "format", [2, "1", None, True]),
    ("agentmem-export", "bank_id", [None, 5, ""]),
    ("agentmem-export", "embedder", [None, "", 3]),
    ("agentmem-export", "dimension", [0, -1, "256", None, 7, 2.5]),
    (
        "agentmem-export",
        "config",
        [{"bogus": 1}, {"temporal_sigma_days": -1}, {"extraction_mode": "loud"}, "x", [1]],
    ),
    ("agentmem-export", "created_at", [OVERFLOW, "yesterday", None]),
    (
        "agentmem-export",
        "counts",
        [
            {"episodes": 1, "entities": 0, "memories": 0, "links": 0},
            {"memories": 1},
            {"episodes": -1, "entities": 0, "memories": 0, "links": 0},
            None,
        ],
    ),
    ("agentmem-export", "vectors", ["yes", 1, None]),
    ("agentmem-export", "bogus", [1]),
    ("episode", "id", [None, 5, "", " pad "]),
    ("episode", "content", ["", "a\x00b", "\ud800", 5, None, [], [{"role": 1}], {"a": 1}]),
    ("episode", "document_id", ["", 5, "a\x00b", "x" * 513]),
    ("episode", "context", ["", 5, "x" * 10_001]),
    ("episode", "mentioned_at", [OVERFLOW, TOO_EARLY, "never", None, "∅"]),
    ("episode", "metadata", ["x", [1], {"n": float("nan")}, {"s": "\ud800"}]),
    ("episode", "created_at", [OVERFLOW, None, True]),
    ("episode", "extra", [1]),
    ("entity", "id", [None, 7, ""]),
    ("entity", "name", ["", None, "\ud800", "a\x00b", 5]),
    ("entity", "kind", ["", None, 3]),
    ("entity", "aliases", ["Bobby", [1], [""]]),
    ("entity", "created_at", [OVERFLOW, "∅"]),
    ("memory", "id", [None, 3, ""]),
    ("memory", "episode_id", ["no-such-episode", 5, ""]),
    (
        "memory",
        "text",
        ["", "   ", "a\x00b", "\ud800 lone", "x" * (MAX_CONTENT_CHARS + 1), 5, None],
    ),
    ("memory", "search_text", [None, 5, "", "\ud800"]),
    ("memory", "context_text", [None, 5, "a\x00b"]),
    ("memory", "fact_type", ["bogus", None, 1]),
    ("memory", "occurred_start", [OVERFLOW, "later", 1e20]),
    ("memory", "occurred_end", [OVERFLOW, "1900-01-01T00:00:00Z"]),
    ("memory", "mentioned_at", [OVERFLOW, TOO_EARLY, None, "∅", float("inf")]),
    ("memory", "tags", ["billing", [""], [1], ["a\x00"]]),
    ("memory", "importance", [7, -3, float("nan"), float("inf"), "0.5", None, True, "∅"]),
    ("memory", "access_count", [2**31 - 1, -1, 1.5, "3", True]),
    ("memory", "document_id", ["", 5]),
    ("memory", "context", ["", 5]),
    ("memory", "metadata", ["x", {"n": float("inf")}]),
    ("memory", "created_at", [OVERFLOW, None]),
    ("memory", "entity_ids", ["abc", [1], ["entity-of-another-bank"], [""]]),
    (
        "memory",
        "vector",
        [
            _vector([0.5] * 10),
            _vector([0.5] * 257),
            _vector([float("nan")] * 256),
            "!!not base64!!",
            12,
            "",
        ],
    ),
    ("memory", "bogus", [1]),
    ("link", "src_id", ["no-such-memory", None, 4]),
    ("link", "dst_id", ["no-such-memory", None]),
    ("link", "kind", ["bogus", "entity", None, 3]),
    ("link", "weight", [2, -0.5, float("nan"), "1", None, True]),
    ("link", "created_at", [OVERFLOW, None]),
    ("entity_correction", "op", ["merge", None]),
    ("entity_correction", "name", ["", None, "a\x00b"]),
    ("entity_correction", "target", ["", 5]),
    ("entity_correction", "created_at", [OVERFLOW]),
]
CASES = [(kind, name, value) for kind, name, values in BAD_VALUES for value in values]


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> tuple[agentmem.AgentMemory, list[dict[str, Any]]]:
    """A store holding bank "alice" (every kind of line) and the lines of its export."""
    root = tmp_path_factory.mktemp("import-validation")
    mem = agentmem.AgentMemory(root / "store", embedder=HashEmbedder())
    bank = mem.bank("alice")
    bank.retain(CONVERSATION, mentioned_at=T0, document_id="session-1", context="chat")
    bank.retain(
        "Bob moved to Paris in 2020.",
        mentioned_at=T1,
        occurred_at=("2020-01-01", "2020-12-31"),
        tags=["travel"],
        metadata={"source": "email"},
        importance=0.9,
    )
    memories = bank.memories()
    bank.link(memories[0].id, memories[-1].id, "caused_by", 0.25)
    bank.add_alias("Bob", "Bobby")
    path = root / "alice.jsonl"
    bank.export(path)
    lines = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    yield mem, lines
    mem.close()


def _state(mem: agentmem.AgentMemory) -> dict[str, Any]:
    db = mem._engine.db
    counts = {t: db.fetchall(f"SELECT count(*) FROM {t}")[0][0] for t in TABLES}
    return {"banks": mem.banks(), "counts": counts}


def _write(path: Path, lines: list[dict[str, Any]]) -> Path:
    # ensure_ascii: a lone surrogate travels as the escape \ud800, as JSON allows.
    path.write_text("".join(json.dumps(obj) + "\n" for obj in lines), encoding="utf-8")
    return path


def _mutated(lines: list[dict[str, Any]], kind: str, name: str, value: Any, pick: int):
    """The lines with field ``name`` of one line of type ``kind`` set to ``value``."""
    numbers = [i for i, obj in enumerate(lines) if obj["type"] == kind]
    assert numbers, f"the fixture export has no {kind!r} line"
    index = numbers[pick % len(numbers)]
    changed = [dict(obj) for obj in lines]
    if value == "∅":
        changed[index].pop(name)
    else:
        changed[index][name] = value
    return changed, index + 1


@settings(
    max_examples=150,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=st.sampled_from(CASES), pick=st.integers(0, 50))
def test_a_file_with_one_bad_field_is_refused_and_writes_nothing(exported, tmp_path, case, pick):
    mem, lines = exported
    kind, name, value = case
    changed, number = _mutated(lines, kind, name, value, pick)
    path = _write(tmp_path / "bad.jsonl", changed)
    before = _state(mem)
    with pytest.raises(agentmem.InvalidInputError) as raised:
        mem.import_(path, bank_id="copy")  # a new bank: refused for the field, not as taken
    message = str(raised.value)
    assert f"line {number} " in message and f"'{name}'" in message, message
    assert _state(mem) == before
    report = mem.check_integrity()
    assert report.ok, report.problems


def test_the_unmutated_file_imports_exactly(exported, tmp_path):
    """The control: the same file, unchanged, is accepted (so the refusals above are real)."""
    mem, lines = exported
    path = _write(tmp_path / "good.jsonl", lines)
    copy = mem.import_(path, bank_id="control")
    assert [m.text for m in copy.memories()] == [m.text for m in mem.bank("alice").memories()]
    assert mem.check_integrity().ok
    mem.delete_bank("control")


def test_the_error_names_line_and_field(exported, tmp_path):
    mem, lines = exported
    changed, number = _mutated(lines, "memory", "importance", 7, 0)
    with pytest.raises(agentmem.InvalidInputError, match=rf"line {number} .*'importance'"):
        mem.import_(_write(tmp_path / "bad.jsonl", changed), bank_id="x")
    assert "x" not in mem.banks()


def test_an_entity_no_memory_names_and_a_duplicate_id_are_refused(exported, tmp_path):
    mem, lines = exported
    extra = {**next(o for o in lines if o["type"] == "entity"), "id": "lonely"}
    counts = {**lines[0]["counts"], "entities": lines[0]["counts"]["entities"] + 1}
    orphan = [{**lines[0], "counts": counts}, *lines[1:], extra]
    with pytest.raises(agentmem.InvalidInputError, match="no memory of the file names"):
        mem.import_(_write(tmp_path / "a.jsonl", orphan), bank_id="x")
    memory = next(o for o in lines if o["type"] == "memory")
    counts = {**lines[0]["counts"], "memories": lines[0]["counts"]["memories"] + 1}
    twice = [{**lines[0], "counts": counts}, *lines[1:], memory]
    with pytest.raises(agentmem.InvalidInputError, match="also the id of line"):
        mem.import_(_write(tmp_path / "b.jsonl", twice), bank_id="x")
    truncated = lines[:-2]
    with pytest.raises(agentmem.InvalidInputError, match="truncated"):
        mem.import_(_write(tmp_path / "c.jsonl", truncated), bank_id="x")
    assert mem.banks() == ["alice"]


def test_a_file_of_another_embedder_is_checked_against_its_own_header(exported, tmp_path):
    """Vectors of another embedder are not used, but must still match their header."""
    mem, lines = exported
    header = {**lines[0], "embedder": "other-model", "dimension": 3}
    changed = [header, *lines[1:]]
    with pytest.raises(agentmem.InvalidInputError, match="'vector'.*not the header's 3"):
        mem.import_(_write(tmp_path / "a.jsonl", changed), bank_id="x")
    # Without vectors, the file of another embedder is re-embedded with this store's.
    bare = [header, *({k: v for k, v in o.items() if k != "vector"} for o in lines[1:])]
    copy = mem.import_(_write(tmp_path / "b.jsonl", bare), bank_id="reembedded")
    ids = [m.id for m in copy.memories()]
    stored = mem._engine.vectors.get_vectors(copy._collection, ids)
    assert len(stored) == len(ids) and all(v.shape == (256,) for v in stored.values())
    assert mem.check_integrity().ok
    mem.delete_bank("reembedded")


def test_settings_of_the_file_are_the_banks_after_import(exported, tmp_path):
    mem, lines = exported
    header = {**lines[0], "config": {**lines[0]["config"], "temporal_sigma_days": 3.0}}
    copy = mem.import_(_write(tmp_path / "a.jsonl", [header, *lines[1:]]), bank_id="tuned")
    assert copy.config.temporal_sigma_days == 3.0
    assert mem.bank("tuned").config.temporal_sigma_days == 3.0
    mem.delete_bank("tuned")


def test_an_import_into_a_bank_with_memories_keeps_the_bank(exported, tmp_path):
    mem, lines = exported
    before = _state(mem)
    with pytest.raises(agentmem.InvalidInputError, match="import needs it empty"):
        mem.import_(_write(tmp_path / "a.jsonl", lines))
    assert _state(mem) == before


@pytest.mark.parametrize(
    ("kind", "name", "value"),
    [
        ("memory", "importance", float("nan")),
        ("memory", "vector", _vector([0.5] * 10)),
        ("agentmem-export", "config", {"bogus": 1}),
        ("link", "kind", "bogus"),
    ],
)
def test_cli_import_refuses_a_bad_file_in_one_line_and_creates_nothing(
    exported, tmp_path, capsys, kind, name, value
):
    _, lines = exported
    changed, number = _mutated(lines, kind, name, value, 0)
    path = _write(tmp_path / "bad.jsonl", changed)
    target = tmp_path / "target"
    assert main(["import", "--path", str(target), "--bank", "copy", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"line {number} " in err and f"'{name}'" in err and "Traceback" not in err
    with agentmem.AgentMemory(target) as mem:
        assert mem.banks() == []
        assert mem.check_integrity().ok
