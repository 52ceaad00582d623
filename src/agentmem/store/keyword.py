"""BM25 keyword search on DuckDB's fts extension, searchable as soon as a write commits.

The index is two tables of postings that one query scores together:

* the **built postings** (``keyword_postings``): one row per (term, row) with the term
  frequency of each field, sorted by term and bank, so a query reads only the row groups of
  its own terms in its own bank;
* the **pending postings** (``keyword_pending``), which every write adds to inside its own
  transaction.

Both hold the terms of the extension's tokeniser, stemmer (``stem``, porter) and stopword
list, as its ``create_fts_index`` would make them (it runs once, on an empty store, for that
list): a rebuild or fold tokenises in SQL; a write counts its rows' terms in Python
(:func:`row_terms`: an ASCII text split here, any other through the same SQL, stems from the
extension), ~5 ms a retain of twenty rows where the SQL took ~15.

**Every statistic is the bank's own.** Banks are tenants: what one bank holds must not change
another's scores, nor be readable from them. Postings carry their row's bank, so a query
reads only its bank's postings of its terms; built
postings of rows removed since the last fold (``keyword_removed``: forgotten, rewritten, or of
a deleted bank) are skipped. Document frequencies therefore count the bank's stored rows only,
and N and the mean length come from ``keyword_bank_stats``: per bank, the rows stored and their
total length, kept exactly by every write in its own transaction (retain, import and an
observation's rewrite add; forget, a rewrite and a bank's deletion subtract). A score is the
same whether a row is pending or built, whenever folds run, and whatever other banks hold; the
per-term contributions are summed in fixed point so the sum does not depend on the order rows
arrive in.

When enough rows are pending, a background thread **folds** them into the built postings:
the built postings of rows still stored, plus the pending ones, re-sorted by term (~0.3 s at
100k rows, where re-indexing every row took ~2.4 s). It works without holding the write lock:
its transaction sees a snapshot, and deletes the pending postings of exactly the rows it
folded, so rows written meanwhile stay pending and searchable. Only that delete and the commit
take the write lock; a fold changes no statistic, and clears ``keyword_removed`` of the rows
it dropped. If a forget removed pending postings in between, the delete conflicts, the fold
rolls back and the next due check starts another; nothing is lost either way.
:meth:`KeywordIndex.rebuild` re-tokenises every row and recounts the statistics instead,
holding the write lock (on first open of a store without these tables, which is how an older
store is upgraded, and on demand). Two fields are indexed: the fact itself (``search_text``)
and its neighbouring turns (``context_text``), the latter at ``context_weight`` (a BM25F-style
weighted term frequency).

Query text is bound as a parameter and tokenised like a document: it is data, never syntax.
"""

from __future__ import annotations

import logging
import math
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass
from functools import partial
from typing import Any

import duckdb

from agentmem.store.database import Database
from agentmem.store.records import insert_rows, json_list, sql_list, sql_strings

log = logging.getLogger(__name__)

FTS_SCHEMA = "fts_main_memories"
# Keep digits and every script's letters: the extension's default pattern ([^a-z]) drops
# them, so "room 42" would only match "room" and "记忆" or "עברית" would match nothing.
IGNORE_PATTERN = r"(\.|[^\p{L}\p{N}])+"
BM25_K1 = 1.2
BM25_B = 0.75


def tokenize_sql(expr: str) -> str:
    """SQL that splits ``expr`` into tokens exactly as the fts index does."""
    return (
        f"string_split_regex(regexp_replace(lower(strip_accents(CAST({expr} AS VARCHAR))), "
        f"'{IGNORE_PATTERN}', ' ', 'g'), '\\s+')"
    )


def _tokenized(rows: str) -> str:
    """SQL of the postings of the memories matching ``rows``: (bank_id, seq, field, term, tf,
    len)."""
    return f"""
WITH tokens AS (
    SELECT bank_id, seq, 0 AS field, unnest({tokenize_sql("search_text")}) AS token
    FROM memories WHERE {rows}
    UNION ALL
    SELECT bank_id, seq, 1 AS field, unnest({tokenize_sql("context_text")}) AS token
    FROM memories WHERE {rows}
), kept AS (
    SELECT bank_id, seq, field, stem(token, 'porter') AS term FROM tokens
    WHERE token <> '' AND token NOT IN (SELECT sw FROM {FTS_SCHEMA}.stopwords)
), lengths AS (
    SELECT seq, count(*) AS len FROM kept GROUP BY seq
)
SELECT kept.bank_id, kept.seq, kept.field, kept.term, count(*) AS tf, lengths.len
FROM kept JOIN lengths USING (seq)
GROUP BY kept.bank_id, kept.seq, kept.field, kept.term, lengths.len
"""


def _as_postings(source: str) -> str:
    """Per-field rows of ``source`` (as ``_tokenized`` gives them) as built postings."""
    return f"""
SELECT term, bank_id, seq, max(len)::BIGINT AS len,
       coalesce(sum(tf) FILTER (WHERE field = 0), 0)::BIGINT AS tf_fact,
       coalesce(sum(tf) FILTER (WHERE field = 1), 0)::BIGINT AS tf_context
FROM ({source}) GROUP BY term, bank_id, seq
"""


# Built postings are sorted by term, then bank: a query reads its terms' rows of its bank only.
_BUILT_ORDER = "ORDER BY term, bank_id, seq"

# Every row, tokenised anew.
_REBUILD = f"""
CREATE OR REPLACE TABLE keyword_postings AS
{_as_postings(_tokenized("true"))}
{_BUILT_ORDER}
"""

# The built postings of rows still stored (forgotten rows, and rows given a new seq, drop
# out), plus the pending ones.
_FOLD = f"""
CREATE OR REPLACE TABLE keyword_postings AS
SELECT * FROM (
    SELECT term, bank_id, seq, len, tf_fact, tf_context FROM keyword_postings
    WHERE seq IN (SELECT seq FROM memories)
    UNION ALL
    {_as_postings("SELECT bank_id, seq, field, term, tf, len FROM keyword_pending")}
)
{_BUILT_ORDER}
"""
# Rows removed since the last fold whose built postings are still there: a query skips them.
_REMOVED_TABLE = "CREATE TABLE IF NOT EXISTS keyword_removed (seq BIGINT NOT NULL)"

_BANK_STATS_TABLE = """
CREATE TABLE IF NOT EXISTS keyword_bank_stats (
    bank_id VARCHAR PRIMARY KEY,
    num_docs BIGINT NOT NULL,
    total_len BIGINT NOT NULL
)
"""
# Adds a signed (bank_id, rows, total length) delta to the bank's statistics.
_ADD_TO_STATS = """
INSERT INTO keyword_bank_stats {delta}
ON CONFLICT (bank_id) DO UPDATE
SET num_docs = num_docs + excluded.num_docs, total_len = total_len + excluded.total_len
"""
# N counts every stored row (one with only stopwords has length 0), as the extension does.
# {lengths}: (seq, len) of the rows with postings; {rows}: which memories.
_STATS_OF = """
SELECT m.bank_id, {sign} count(*), {sign} coalesce(sum(l.len), 0)
FROM memories AS m LEFT JOIN ({lengths}) AS l USING (seq)
WHERE {rows}
GROUP BY m.bank_id
"""
_PENDING_LENGTHS = "SELECT seq, max(len) AS len FROM keyword_pending WHERE {rows} GROUP BY seq"
_BUILT_LENGTHS = "SELECT seq, any_value(len) AS len FROM keyword_postings WHERE {rows} GROUP BY seq"
_RANGE = "seq BETWEEN $first AND $last"
_SEQS = sql_list("seqs", "BIGINT")
_LISTED = f"list_contains({_SEQS}, seq)"

# The rows just indexed of one bank, and their total length (an UPDATE: half an upsert's cost,
# which only a bank's first rows need).
_ADD_PENDING_STATS = (
    "UPDATE keyword_bank_stats SET num_docs = num_docs + $rows, total_len = total_len + $length "
    "WHERE bank_id = $bank"
)
_FIRST_PENDING_STATS = _ADD_TO_STATS.format(delta="VALUES ($bank, $rows, $length)")
# Before the rows go: their lengths are in the pending or the built postings, not both.
_REMOVE_STATS = _ADD_TO_STATS.format(
    delta=_STATS_OF.format(
        sign="-",
        lengths=f"{_PENDING_LENGTHS.format(rows=_LISTED)} UNION ALL "
        f"{_BUILT_LENGTHS.format(rows=_LISTED)}",
        rows=f"list_contains({_SEQS}, m.seq)",
    )
)
# After a rebuild, when every row's postings are built.
_RECOUNT_STATS = "INSERT INTO keyword_bank_stats " + _STATS_OF.format(
    sign="", lengths=_BUILT_LENGTHS.format(rows="true"), rows="true"
)

_RANGE_ROWS = (
    f"SELECT seq, bank_id, search_text, context_text FROM memories WHERE {_RANGE} ORDER BY seq"
)

#: For the integrity check: a line when bank $bank's statistics are not what its rows give.
STATS_MISMATCH = f"""
SELECT 'rows ' || coalesce(s.num_docs, 0) || ' and length ' || coalesce(s.total_len, 0)
       || ' counted, ' || actual.n || ' and ' || actual.total_len || ' stored'
FROM ({
    _STATS_OF.format(
        sign="",
        lengths=f"{_PENDING_LENGTHS.format(rows='true')} UNION ALL "
        f"{_BUILT_LENGTHS.format(rows='seq IN (SELECT seq FROM memories WHERE bank_id = $bank)')}",
        rows="m.bank_id = $bank",
    )
}) AS actual(bank_id, n, total_len)
LEFT JOIN keyword_bank_stats AS s ON s.bank_id = $bank
WHERE coalesce(s.num_docs, 0) <> actual.n OR coalesce(s.total_len, 0) <> actual.total_len
"""

_MEMORY_TOKENS = tokenize_sql("m.search_text || ' ' || m.context_text")
# For the integrity check (store/integrity.py): (what is wrong, SQL of the offenders).
_BANK_CHECKS: tuple[tuple[str, str], ...] = (
    (
        # Neither built nor pending, although its text has words to index (a fact of only
        # stopwords or emoji has no postings, rightly).
        "memory missing from the keyword index",
        f"SELECT m.id FROM memories AS m WHERE m.bank_id = $bank "
        "AND m.seq NOT IN (SELECT seq FROM keyword_postings) "
        "AND m.seq NOT IN (SELECT seq FROM keyword_pending) "
        "AND EXISTS (SELECT 1 FROM (SELECT unnest("
        f"{_MEMORY_TOKENS}) AS token) "
        f"WHERE token <> '' AND token NOT IN (SELECT sw FROM {FTS_SCHEMA}.stopwords))",
    ),
    # N and mean length of the bank's keyword scores.
    ("keyword statistics not those of the bank's rows", STATS_MISMATCH),
)
_STORE_CHECKS: tuple[tuple[str, str], ...] = (
    (
        "keyword_bank_stats row of an unknown bank",
        "SELECT DISTINCT t.bank_id FROM keyword_bank_stats AS t "
        "WHERE t.bank_id NOT IN (SELECT bank_id FROM banks)",
    ),
    (
        "pending keyword postings of a deleted memory",
        "SELECT DISTINCT CAST(seq AS VARCHAR) FROM keyword_pending "
        "WHERE seq NOT IN (SELECT seq FROM memories)",
    ),
)

_QUERY_TERMS = f"""
SELECT DISTINCT stem(token, 'porter') AS term
FROM (SELECT unnest({tokenize_sql("$query")}) AS token)
WHERE token <> '' AND token NOT IN (SELECT sw FROM {FTS_SCHEMA}.stopwords)
"""
# What the SQL tokeniser keeps of an ASCII text, once lower-cased: runs of letters and digits.
_ASCII_TOKEN = re.compile(r"[a-z0-9]+")
_SQL_TOKENS = (
    f"SELECT list_transform($texts::VARCHAR[], t -> list_filter({tokenize_sql('t')}, x -> x <> ''))"
)
_STEMS = "SELECT token, stem(token, 'porter') FROM unnest($tokens::VARCHAR[]) AS t(token)"
#: Tokens whose stems are kept (cleared when full); a query's words mostly repeat earlier ones.
STEM_CACHE_SIZE = 50_000

#: Per-term contributions are summed as integers of this unit (2^-40): exact, so in any order.
_FIXED_POINT = 2**40

# The bank's row count (term NULL), and per term of {terms} found in it how many of its rows
# hold it in their own text (not only in their neighbouring turns), in one round trip.
_DOCUMENT_FREQUENCIES = """
SELECT NULL AS term, num_docs FROM keyword_bank_stats WHERE bank_id = $bank_id
UNION ALL
SELECT term, count(DISTINCT seq) FROM (
    SELECT term, seq FROM keyword_postings
    WHERE term IN ({terms}) AND bank_id = $bank_id AND tf_fact > 0
      AND seq NOT IN (SELECT seq FROM keyword_removed)
    UNION ALL
    SELECT term, seq FROM keyword_pending
    WHERE term IN ({terms}) AND bank_id = $bank_id AND field = 0 AND tf > 0
) GROUP BY term
"""

# BM25 over the built + pending postings of the bank's rows for the query's terms ({terms}: a
# SQL list of literals), with the bank's statistics. $context_weight scales term frequency in
# field 1; both parts weigh a row's two fields by the same expression.
_SEARCH = f"""
WITH postings AS (
    SELECT term, seq, len, tf_fact + tf_context * $context_weight AS wtf
    FROM keyword_postings
    WHERE term IN ({{terms}}) AND bank_id = $bank_id
      AND seq NOT IN (SELECT seq FROM keyword_removed)
    UNION ALL
    SELECT term, seq, max(len) AS len,
           coalesce(sum(tf) FILTER (WHERE field = 0), 0)
           + coalesce(sum(tf) FILTER (WHERE field = 1), 0) * $context_weight AS wtf
    FROM keyword_pending
    WHERE term IN ({{terms}}) AND bank_id = $bank_id
    GROUP BY term, seq
), doc_freq AS (
    SELECT term, count(*) AS df FROM postings GROUP BY term
), corpus AS (
    SELECT num_docs AS n, coalesce(total_len / nullif(num_docs, 0), 1.0) AS avgdl
    FROM keyword_bank_stats WHERE bank_id = $bank_id
), term_weights AS (
    -- Per term, once: idf × (k1 + 1), and the two parts of the length normalisation.
    SELECT term, ln((corpus.n - df + 0.5) / (df + 0.5) + 1) * ({BM25_K1} + 1) AS idf,
           {BM25_K1} * (1 - {BM25_B}) AS k_fixed, {BM25_K1} * {BM25_B} / corpus.avgdl AS k_len
    FROM doc_freq, corpus
), scored AS (
    SELECT postings.seq,
           sum(CAST(round(
               w.idf * postings.wtf / (postings.wtf + w.k_fixed + w.k_len * postings.len)
               * {_FIXED_POINT}) AS BIGINT)) / {_FIXED_POINT}.0 AS score
    FROM postings JOIN term_weights AS w USING (term)
    GROUP BY postings.seq
)
SELECT m.id, scored.score
FROM scored JOIN memories AS m ON m.seq = scored.seq
WHERE m.bank_id = $bank_id {{filters}}
ORDER BY scored.score DESC, m.seq DESC
LIMIT $limit
"""


def bm25_idf(rows: int, df: int) -> float:
    """BM25's idf (the fts extension's, without its (k1 + 1) factor) of a term that ``df`` of
    a bank's ``rows`` rows hold."""
    return math.log((rows - df + 0.5) / (df + 0.5) + 1)


def word_idfs(stems: dict[str, list[str]], df: dict[str | None, int]) -> dict[str, float]:
    """Each word's idf, the largest of its terms', from document frequencies by term (and the
    bank's row count under the key None)."""
    rows = df.get(None, 0)
    return {
        word: max(bm25_idf(rows, df.get(term, 0)) for term in found)
        for word, found in stems.items()
        if found
    }


def sql_tokens(con: Any, texts: Sequence[str]) -> list[list[str]]:  # noqa: ANN401
    """The tokens of each text (stopwords included), from the SQL tokeniser on ``con``."""
    if not texts:
        return []
    (lists,) = con.execute(_SQL_TOKENS, {"texts": list(texts)}).fetchone()
    return lists


def split_tokens(
    texts: Sequence[str], tokenize: Callable[[Sequence[str]], list[list[str]]]
) -> list[list[str]]:
    """Each text's tokens, as the SQL tokeniser gives them (stopwords included): an ASCII
    text (most) is lower-cased and split into runs of letters and digits here, which is what
    that tokeniser gives for it; any other text goes through ``tokenize`` (the SQL tokeniser:
    accents, scripts and case rules stay DuckDB's)."""
    found: list[list[str] | None] = [
        _ASCII_TOKEN.findall(t.lower()) if t.isascii() else None for t in texts
    ]
    others = [i for i, tokens in enumerate(found) if tokens is None]
    for i, tokens in zip(others, tokenize([texts[i] for i in others]), strict=True):
        found[i] = tokens
    return found  # type: ignore[return-value]


@dataclass(frozen=True, slots=True)
class RowTerms:
    """What one row adds to a keyword index: its length (terms kept in both fields) and the
    frequency of each term in the fact itself and in its neighbouring turns."""

    seq: int
    bank_id: str
    length: int
    fact: Counter[str]
    context: Counter[str]


def row_terms(
    rows: Sequence[tuple[int, str, str, str]],
    tokenize: Callable[[Sequence[str]], list[list[str]]],
    stopwords: frozenset[str],
    stems: Callable[[Iterable[str]], dict[str, str]],
) -> list[RowTerms]:
    """The terms of ``rows`` (seq, bank, fact, context): tokenised (``tokenize`` for text that
    is not ASCII), stopwords dropped, then stemmed (``stems`` of the tokens kept), as the SQL
    of a rebuild does."""
    split = split_tokens([text for row in rows for text in (row[2], row[3])], tokenize)
    kept = [[t for t in tokens if t not in stopwords] for tokens in split]
    stem = stems(t for tokens in kept for t in tokens)
    return [
        RowTerms(
            seq,
            bank_id,
            len(kept[2 * i]) + len(kept[2 * i + 1]),
            Counter(stem[t] for t in kept[2 * i]),
            Counter(stem[t] for t in kept[2 * i + 1]),
        )
        for i, (seq, bank_id, _, _) in enumerate(rows)
    ]


class KeywordIndex:
    """The BM25 index over every bank's memories, each bank scored with its own statistics."""

    #: Integrity checks of one bank's index, as (what is wrong, SQL over ``$bank`` returning
    #: the offending ids), and of the whole store's (no parameter).
    bank_checks = _BANK_CHECKS
    store_checks = _STORE_CHECKS

    def __init__(
        self, db: Database, *, context_weight: float, rebuild_min: int, rebuild_fraction: float
    ) -> None:
        self._db = db
        self._context_weight = context_weight
        self._rebuild_min = rebuild_min
        self._rebuild_fraction = rebuild_fraction
        # Rows added or removed since the last due check, and how many more changes there can
        # be before a fold can be due (pending and removed rows only grow between folds):
        # counting them costs ~1 ms a retain at 100k, so it runs only once a fold may be due.
        self._added = 0
        self._headroom = 0
        # One thread, so folds never overlap.
        self._rebuilder = ThreadPoolExecutor(max_workers=1, thread_name_prefix="agentmem-keyword")
        self._background: Future[None] | None = None
        self._background_lock = threading.Lock()
        self._rebuild_lock = threading.Lock()  # two at once would conflict on commit
        self._stems: dict[str, str] = {}
        if not self._has_stopwords():
            # Only for the extension's stopword list: the store is new, or it is empty.
            self._db.execute(
                "PRAGMA create_fts_index('memories', 'seq', 'search_text', 'context_text', "
                f"stemmer='porter', stopwords='english', ignore='{IGNORE_PATTERN}', "
                "strip_accents=1, lower=1, overwrite=1)"
            )
        # Read once, here: not a cached_property, whose lock (Python 3.11) a writer would wait
        # on while the reader computing it waits on the writer.
        self._stopwords = frozenset(
            r[0] for r in self._db.fetchall(f"SELECT sw FROM {FTS_SCHEMA}.stopwords")
        )
        if not self._has_column("keyword_pending", "bank_id"):
            # A store from before per-bank statistics: the rebuild below empties the table.
            self._db.execute("ALTER TABLE keyword_pending ADD COLUMN bank_id VARCHAR")
        if not self._is_built():
            self.rebuild()  # a new store, or one from before these tables: once

    def _has_stopwords(self) -> bool:
        return self._table_exists(FTS_SCHEMA, "stopwords")

    def _is_built(self) -> bool:
        """Whether the built postings and statistics are there, in this version's shape."""
        return (
            self._has_column("keyword_postings", "bank_id")
            and self._table_exists("main", "keyword_bank_stats")
            and self._table_exists("main", "keyword_removed")
        )

    def _table_exists(self, schema: str, table: str) -> bool:
        rows = self._db.fetchall(
            "SELECT count(*) FROM duckdb_tables() WHERE schema_name = ? AND table_name = ?",
            [schema, table],
        )
        return rows[0][0] == 1

    def _has_column(self, table: str, column: str) -> bool:
        rows = self._db.fetchall(
            "SELECT count(*) FROM duckdb_columns() "
            "WHERE schema_name = 'main' AND table_name = ? AND column_name = ?",
            [table, column],
        )
        return rows[0][0] == 1

    def add_pending(self, cur, first_seq: int, last_seq: int) -> None:  # noqa: ANN001
        """Index rows ``first_seq..last_seq`` as pending postings and count them in their
        bank's statistics, in the caller's transaction."""
        rows = cur.execute(_RANGE_ROWS, {"first": first_seq, "last": last_seq}).fetchall()
        if not rows:
            return
        # Counted here, not in SQL (see the module's docstring): the rebuild's postings.
        found = row_terms(
            rows, partial(sql_tokens, cur), self._stopwords, partial(self._stemmed, cur)
        )
        insert_rows(
            cur,
            "keyword_pending",
            [
                (row.seq, field, term, tf, row.length, row.bank_id)
                for row in found
                for field, counts in enumerate((row.fact, row.context))
                for term, tf in counts.items()
            ],
        )
        stats: dict[str, list[int]] = {}
        for row in found:
            counted = stats.setdefault(row.bank_id, [0, 0])
            counted[0] += 1
            counted[1] += row.length
        for bank_id, (count, length) in stats.items():
            counted = {"bank": bank_id, "rows": count, "length": length}
            (updated,) = cur.execute(_ADD_PENDING_STATS, counted).fetchone()
            if not updated:
                cur.execute(_FIRST_PENDING_STATS, counted)
        self._added += last_seq - first_seq + 1

    def remove_rows(self, cur, seqs: list[int]) -> None:  # noqa: ANN001
        """Take rows about to be replaced or deleted out of the index, in the caller's
        transaction, while ``memories`` still holds them: out of their banks' statistics,
        their pending postings dropped, their built ones skipped until a fold drops them."""
        if seqs:
            listed = {"seqs": json_list(seqs)}
            cur.execute(_REMOVE_STATS, listed)
            cur.execute(f"DELETE FROM keyword_pending WHERE {_LISTED}", listed)
            cur.execute(f"INSERT INTO keyword_removed SELECT unnest({_SEQS})", listed)
            self._added += len(seqs)

    def remove_bank(self, cur, bank_id: str) -> None:  # noqa: ANN001
        """Take every row of a bank out of the index, as :meth:`remove_rows` does (a bank
        created later under the same id starts with none of them)."""
        bank = {"bank": bank_id}
        (removed,) = cur.execute(
            "INSERT INTO keyword_removed SELECT seq FROM memories WHERE bank_id = $bank", bank
        ).fetchone()
        cur.execute("DELETE FROM keyword_pending WHERE bank_id = $bank", bank)
        cur.execute("DELETE FROM keyword_bank_stats WHERE bank_id = $bank", bank)
        self._added += removed

    def pending_memories(self, bank_ids: list[str]) -> int:
        """Memories of these banks searchable through pending postings (not yet folded)."""
        return self._db.fetchall(
            "SELECT count(DISTINCT p.seq) FROM keyword_pending AS p JOIN memories AS m "
            "ON m.seq = p.seq WHERE list_contains($banks, m.bank_id)",
            {"banks": bank_ids},
        )[0][0]

    def pending_rows(self) -> int:
        """Rows written since the last fold or rebuild."""
        return self._db.fetchall("SELECT count(DISTINCT seq) FROM keyword_pending")[0][0]

    def _removed_rows(self) -> int:
        return self._db.fetchall("SELECT count(DISTINCT seq) FROM keyword_removed")[0][0]

    def rebuild(self) -> float:
        """Tokenise every row anew into the built postings and recount every bank's statistics,
        holding the write lock; returns the seconds it took."""
        with self._db.write_lock:
            return self._replace_built(
                [
                    _REBUILD,
                    "DROP TABLE IF EXISTS keyword_stats",  # the store-wide table of old stores
                    _REMOVED_TABLE,
                    _BANK_STATS_TABLE,
                    "DELETE FROM keyword_bank_stats",
                    _RECOUNT_STATS,
                ],
                "rebuilt",
            )

    def fold_pending(self) -> float:
        """Fold the pending postings into the built ones; returns the seconds it took."""
        return self._replace_built([_FOLD], "folded")

    def _replace_built(self, statements: list[str], done: str) -> float:
        started = time.perf_counter()
        with self._rebuild_lock:
            cur = self._db.cursor()
            cur.execute("BEGIN TRANSACTION")
            try:
                for sql in statements:
                    cur.execute(sql)
                with self._db.write_lock:
                    # The rows of this transaction's snapshot are now in the built postings,
                    # and the removed ones out of them.
                    cur.execute("DELETE FROM keyword_pending")
                    cur.execute("DELETE FROM keyword_removed")
                    cur.execute("COMMIT")
            except BaseException:
                with suppress(duckdb.Error):  # a failed COMMIT has already rolled back
                    cur.execute("ROLLBACK")
                raise
        elapsed = time.perf_counter() - started
        log.debug("keyword postings %s in %.3f s", done, elapsed)
        return elapsed

    def maybe_fold(self) -> bool:
        """Start a background fold when rows written or removed since the last one exceed the
        configured share.

        Returns:
            Whether a fold was started (never while one is running).
        """
        with self._background_lock:
            if self._background is not None and not self._background.done():
                return False
            if not self._fold_due():
                return False
            self._background = self._rebuilder.submit(self._fold_in_background)
            return True

    def _fold_due(self) -> bool:
        if self._added < self._headroom:
            return False
        pending = self.pending_rows()
        changed = pending + self._removed_rows()
        stored = self._db.fetchall("SELECT coalesce(sum(num_docs), 0) FROM keyword_bank_stats")
        built = stored[0][0] - pending
        due_at = max(self._rebuild_min, self._rebuild_fraction * built)
        self._added, self._headroom = 0, due_at - changed
        return changed > 0 and changed >= due_at

    def _fold_in_background(self) -> None:
        try:
            self.fold_pending()
        except Exception as exc:  # the pending postings still serve every row
            log.info("background keyword fold rolled back, retried later: %s", exc)

    def wait(self) -> None:
        """Block until a background fold (if any) has finished."""
        with self._background_lock:
            background = self._background
        if background is not None:
            background.result()

    def close(self) -> None:
        """Let a running fold finish and stop its thread."""
        self._rebuilder.shutdown(wait=True)

    def query_terms(self, query: str) -> list[str]:
        """The distinct terms of ``query``, tokenised, stopped and stemmed as rows are.

        An ASCII query (most) is split here, and its stems come from a cache the extension's
        stemmer fills: the SQL tokeniser alone costs ~2 ms a query, on the keyword arm's path.
        Any other text goes through that tokeniser (accents, scripts, case rules).
        """
        if not query.isascii():
            return [row[0] for row in self._db.fetchall(_QUERY_TERMS, {"query": query})]
        stopwords = self._stopwords
        tokens = [
            t for t in dict.fromkeys(_ASCII_TOKEN.findall(query.lower())) if t not in stopwords
        ]
        stems = self._stemmed(self._db, tokens)
        return list(dict.fromkeys(stems[t] for t in tokens))

    def _stemmed(self, con: Any, tokens: Iterable[str]) -> dict[str, str]:  # noqa: ANN401
        """The extension's stems of ``tokens``, from the cache or looked up through ``con``."""
        cache = self._stems
        wanted = dict.fromkeys(tokens)
        stems = {t: cache[t] for t in wanted if t in cache}
        missing = [t for t in wanted if t not in stems]
        if missing:
            found = dict(con.execute(_STEMS, {"tokens": missing}).fetchall())
            stems.update(found)
            if len(cache) + len(found) > STEM_CACHE_SIZE:
                cache = self._stems = {}  # a new dict: a reader of the old one is unaffected
            cache.update(found)
        return stems

    def term_idfs(
        self,
        bank_id: str,
        words: list[str],
        frequencies: Callable[[str, Sequence[str]], dict[str | None, int]] | None = None,
    ) -> dict[str, float]:
        """How informative each word is in this bank: the BM25 idf of its term (stemmed as the
        index stems) over the rows whose own text holds it, from the bank's own statistics.

        A word no row of the bank holds gets the largest idf (df 0); a stopword, or a word
        the tokeniser drops, is absent. ``frequencies`` reads the document frequencies
        (default :meth:`document_frequencies`; the bank's in-process mirror gives the same).
        """
        words = list(dict.fromkeys(words))
        joined = " ".join(words)
        if joined.isascii():
            self.query_terms(joined)  # stems every word not cached yet, in one round trip
        stems = {word: self.query_terms(word) for word in words}
        terms = sorted({term for found in stems.values() for term in found})
        if not terms:
            return {}
        return word_idfs(stems, (frequencies or self.document_frequencies)(bank_id, terms))

    def document_frequencies(self, bank_id: str, terms: Sequence[str]) -> dict[str | None, int]:
        """Per term found in the bank, how many of its stored rows hold it in their own text,
        and the bank's row count under the key None."""
        sql = _DOCUMENT_FREQUENCIES.replace("{terms}", sql_strings(terms))
        return {term: int(n) for term, n in self._db.fetchall(sql, {"bank_id": bank_id})}

    def search(
        self,
        bank_id: str,
        query: str,
        limit: int,
        *,
        filter_sql: str = "",
        filter_params: dict[str, object] | None = None,
    ) -> list[tuple[str, float]]:
        """Top ``limit`` (memory id, BM25 score) of a bank for ``query``, best first.

        ``filter_sql`` is an extra ``AND ...`` clause over alias ``m`` (memories) with named
        parameters in ``filter_params``.
        """
        terms = self.query_terms(query)
        if not terms:
            return []
        # Inlined so DuckDB can skip the other terms' row groups. A term is letters and digits
        # only (the tokeniser splits on everything else); quotes are doubled all the same.
        listed = sql_strings(terms)
        params: dict[str, object] = {
            "bank_id": bank_id,
            "limit": limit,
            "context_weight": self._context_weight,
            **(filter_params or {}),
        }
        sql = _SEARCH.replace("{terms}", listed).replace("{filters}", filter_sql)
        rows = self._db.fetchall(sql, params)
        return [(memory_id, float(score)) for memory_id, score in rows]
