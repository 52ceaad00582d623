"""Bank names on PostgreSQL, where each bank's partial HNSW index inlines its collection as a
literal: any string is either refused as a bank id before anything is written, or is a bank
with one well-formed index of its own that its vector searches use."""

from __future__ import annotations

import hashlib
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentmem
from agentmem.errors import InvalidInputError
from agentmem.memory import validate_bank_id
from agentmem.testing import HashEmbedder
from tests.conftest import T0

# Mostly the characters of valid ids, with quotes, backslashes, NUL, unicode letters,
# whitespace and SQL punctuation mixed in.
_NAMES = st.text(
    alphabet=st.sampled_from(
        list(string.ascii_letters + string.digits + "._:@-")
        + ["'", '"', "\\", "\x00", ";", " ", "\n", "é", "ß", "Ω", "/", "$", "%", "?"]
    ),
    min_size=0,
    max_size=140,
) | st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}", fullmatch=True)


@pytest.fixture(scope="module")
def mem(pg_cluster):  # noqa: ANN001, ANN201
    with agentmem.AgentMemory(pg_cluster.create_database(), embedder=HashEmbedder()) as memory:
        yield memory


def _indexes(mem: agentmem.AgentMemory) -> dict[str, str]:
    rows = mem._engine.db.fetchall(
        "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'vectors' "
        "AND indexdef LIKE '%hnsw%'"
    )
    return dict(rows)


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(name=_NAMES)
def test_any_name_is_refused_or_a_bank_with_its_own_index(mem, name):
    banks, indexes = mem.banks(), _indexes(mem)
    try:
        validate_bank_id(name)
    except InvalidInputError:
        with pytest.raises(InvalidInputError):
            mem.bank(name).retain("Alice moved to Berlin.", mentioned_at=T0)
        with pytest.raises(InvalidInputError):
            mem.delete_bank(name)
        assert mem.banks() == banks and _indexes(mem) == indexes
        return
    bank = mem.bank(name)
    bank.retain("Alice moved to Berlin.", mentioned_at=T0)
    collection = bank._collection
    index = "vectors_" + hashlib.sha256(collection.encode()).hexdigest()[:40]
    assert set(_indexes(mem)) - set(indexes) <= {index}
    assert f"WHERE (collection = '{collection}'::text)" in _indexes(mem)[index]
    assert bank.recall("Where is Alice?", strategies=["semantic"]).hits
    mem.delete_bank(name)
    assert name not in mem.banks() and index not in _indexes(mem)
    assert mem.check_integrity().ok
