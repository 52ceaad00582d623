"""agentmem's schema in PostgreSQL's dialect, and the functions that let shared SQL run on it.

Tables and columns match the DuckDB store's (``store/database.py``) in name and order, so the
same ``INSERT ... VALUES`` by position works on both. JSON columns are ``text``: the code reads
and writes them as JSON text on both backends and never queries into them.

The functions below give PostgreSQL the few DuckDB list functions the shared SQL uses, with
DuckDB's meaning, as inlinable SQL functions (the planner sees ``x = ANY(list)``, so indexes
still apply). Lists of strings are all the shared SQL binds; other lists are refused by type.
"""

from __future__ import annotations

from agentmem.store.changes import SCHEMA as CHANGES_SCHEMA
from agentmem.store.jobs import SCHEMA as JOBS_SCHEMA

SCHEMA_VERSION = "5"

#: A key for ``pg_advisory_xact_lock``: schema creation and migrations run under it, so
#: replicas opening one database at once do not race.
SCHEMA_LOCK = 0x6167656E746D656D  # "agentmem"

FUNCTIONS = r"""
CREATE OR REPLACE FUNCTION list_contains(text[], text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS 'SELECT $2 = ANY($1)';
CREATE OR REPLACE FUNCTION list_has_any(text[], text[]) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS 'SELECT $1 && $2';
CREATE OR REPLACE FUNCTION list_has_all(text[], text[]) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS 'SELECT $1 @> $2';
CREATE OR REPLACE FUNCTION list_sort(text[]) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS 'SELECT coalesce(array_agg(x ORDER BY x COLLATE "C"), ''{}'') FROM unnest($1) AS u(x)';
CREATE OR REPLACE FUNCTION contains(text, text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS 'SELECT strpos($1, $2) > 0';
-- Microseconds since the epoch of a UTC timestamp, exact (a double, as DuckDB's bigint
-- becomes in the arithmetic store/dated_facts.py does with it).
CREATE OR REPLACE FUNCTION epoch_us(timestamp) RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS 'SELECT (extract(epoch FROM $1) * 1000000)::double precision';
-- A list bound as JSON text (store/records.py json_list), as DuckDB's from_json(x, '["VARCHAR"]').
-- A NUL (escaped \u0000) cannot be text here; it becomes U+0001, which no stored text holds
-- either (agentmem stores no control characters), so such a value still matches nothing.
CREATE OR REPLACE FUNCTION from_json(text, text) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    SELECT coalesce(array_agg(x), '{}') FROM json_array_elements_text(
        CASE WHEN strpos($1, '\u0000') = 0 THEN $1
             ELSE regexp_replace($1, '(?<!\\)((?:\\\\)*)\\u0000', '\1\\u0001', 'g')
        END::json
    ) AS j(x)
    $$;
"""

# {text} is text in the collation of code points (DuckDB's order of strings, so ORDER BY
# agrees): pg_c_utf8 where the server has it (PostgreSQL 17+, which also lower-cases beyond
# ASCII), else "C".
TABLES = """
CREATE TABLE IF NOT EXISTS meta (key {text} PRIMARY KEY, value {text});
CREATE TABLE IF NOT EXISTS banks (
    bank_id {text} PRIMARY KEY,
    collection {text} NOT NULL,
    embedder {text} NOT NULL,
    dimension integer NOT NULL,
    config {text},
    created_at timestamp NOT NULL
);
CREATE TABLE IF NOT EXISTS episodes (
    id {text} PRIMARY KEY,
    bank_id {text} NOT NULL,
    content {text} NOT NULL,
    document_id {text},
    context {text},
    mentioned_at timestamp NOT NULL,
    metadata {text},
    created_at timestamp NOT NULL,
    content_hash {text}
);
CREATE SEQUENCE IF NOT EXISTS memory_seq START 1;
CREATE TABLE IF NOT EXISTS memories (
    id {text} PRIMARY KEY,
    seq bigint NOT NULL,
    bank_id {text} NOT NULL,
    episode_id {text},
    text {text} NOT NULL,
    search_text {text} NOT NULL,
    context_text {text} NOT NULL,
    fact_type {text} NOT NULL,
    occurred_start timestamp,
    occurred_end timestamp,
    mentioned_at timestamp NOT NULL,
    tags {texts} NOT NULL,
    importance double precision NOT NULL,
    access_count integer NOT NULL,
    document_id {text},
    context {text},
    metadata {text},
    created_at timestamp NOT NULL,
    content_hash {text},
    piece_vectors {text},
    statement_slots {text}
);
CREATE TABLE IF NOT EXISTS entities (
    id {text} PRIMARY KEY,
    bank_id {text} NOT NULL,
    name {text} NOT NULL,
    kind {text} NOT NULL,
    aliases {texts} NOT NULL,
    created_at timestamp NOT NULL,
    kind_votes {text}
);
CREATE TABLE IF NOT EXISTS memory_entities (
    memory_id {text} NOT NULL,
    entity_id {text} NOT NULL,
    bank_id {text} NOT NULL,
    t timestamp NOT NULL
);
CREATE TABLE IF NOT EXISTS links (
    bank_id {text} NOT NULL,
    src_id {text} NOT NULL,
    dst_id {text} NOT NULL,
    kind {text} NOT NULL,
    weight double precision NOT NULL,
    created_at timestamp NOT NULL
);
CREATE TABLE IF NOT EXISTS entity_corrections (
    bank_id {text} NOT NULL,
    op {text} NOT NULL,
    name {text} NOT NULL,
    target {text} NOT NULL,
    created_at timestamp NOT NULL
);
-- Kept (always empty) so the shared reconcile and integrity code reads the same tables:
-- vectors live in this database, written in the caller's transaction, with no journal.
CREATE TABLE IF NOT EXISTS vector_journal (
    memory_id {text} NOT NULL,
    bank_id {text} NOT NULL,
    op {text} NOT NULL
);
CREATE INDEX IF NOT EXISTS memories_bank ON memories (bank_id);
CREATE INDEX IF NOT EXISTS memories_seq ON memories (seq);
CREATE INDEX IF NOT EXISTS memories_document ON memories (document_id);
CREATE INDEX IF NOT EXISTS memory_entities_memory ON memory_entities (memory_id);
CREATE INDEX IF NOT EXISTS memory_entities_entity ON memory_entities (entity_id, t);
CREATE INDEX IF NOT EXISTS memory_entities_bank ON memory_entities (bank_id);
CREATE INDEX IF NOT EXISTS links_src ON links (src_id);
CREATE INDEX IF NOT EXISTS links_dst ON links (dst_id);
CREATE INDEX IF NOT EXISTS links_bank ON links (bank_id);
CREATE INDEX IF NOT EXISTS entities_bank ON entities (bank_id);
CREATE INDEX IF NOT EXISTS episodes_bank ON episodes (bank_id);
CREATE INDEX IF NOT EXISTS memories_content_hash ON memories (content_hash);
CREATE INDEX IF NOT EXISTS episodes_document ON episodes (document_id);
"""

# The banks' versions and change log (store/changes.py), background jobs (store/jobs.py).
TABLES += CHANGES_SCHEMA + JOBS_SCHEMA


def tables(has_c_utf8: bool) -> str:
    """The CREATE statements, text columns in the code-point collation the server has."""
    collation = 'COLLATE "pg_c_utf8"' if has_c_utf8 else 'COLLATE "C"'
    return TABLES.replace("{texts}", f"text[] {collation}").replace("{text}", f"text {collation}")


#: Upgrades of an older PostgreSQL store, by the schema version they lead to, run after the
#: CREATE ... IF NOT EXISTS statements above (which add new tables: version 3's
#: ``bank_accesses``). The PostgreSQL schema started at the DuckDB store's version 2.
MIGRATIONS: tuple[tuple[str, str], ...] = (
    # 4: the vectors of a memory's sentences (retain/pieces.py), as in the DuckDB store's 3.
    ("4", "ALTER TABLE memories ADD COLUMN IF NOT EXISTS piece_vectors text;"),
    # 5: the slots supersession reads in a fact, as in the DuckDB store's 4.
    ("5", "ALTER TABLE memories ADD COLUMN IF NOT EXISTS statement_slots text;"),
)
