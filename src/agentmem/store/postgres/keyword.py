"""BM25 keyword search on PostgreSQL, scoring exactly as the DuckDB store's index does.

The index is three tables, written by every write in its own transaction, so there is
nothing to fold:

* ``keyword_postings``: one row per (bank, term, row) with the term frequency of each field
  and the row's length, under a ``(bank_id, term)`` btree that INCLUDEs the rest, so a query
  reads its terms' postings of its own bank from the index alone;
* ``keyword_docs``: one row per indexed memory (its bank and length), which says whether a row
  is indexed and what a removal takes out of the statistics;
* ``keyword_bank_stats``: per bank, the rows indexed and their total length (N and the mean
  length of BM25), kept exactly by every write.

**Same terms as DuckDB.** Rows are tokenised here, as DuckDB's fts extension does in SQL
(``store/keyword.py``): an ASCII text is lower-cased and split into runs of letters and digits,
which is what that tokeniser gives for it; any other text goes through the extension's own
tokeniser in an in-memory DuckDB (accents, scripts and case rules stay DuckDB's). Stopwords are
the extension's list. Stems come from PostgreSQL's Snowball ``porter`` dictionary, the
algorithm of DuckDB's ``stem(x, 'porter')``; the two differ only where PostgreSQL leaves a word
whole (a one-letter word the stemmer would empty, a word over 1,000 bytes), and those words
take DuckDB's stem.

**Same scores.** The query computes BM25 with the DuckDB query's arithmetic in double
precision, each term's contribution rounded to a fixed-point unit (half away from zero, as
DuckDB's ``round``) and summed as integers, so a score does not depend on the order rows are
read and equals the DuckDB store's for the same bank contents. Every statistic is the bank's
own: what one bank holds does not change another's scores.

Query text is bound as a parameter and tokenised like a document: it is data, never syntax.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Sequence
from functools import cache, partial
from typing import Any

import duckdb

from agentmem.store.database import fts_extension_path
from agentmem.store.keyword import (
    _FIXED_POINT,
    BM25_B,
    BM25_K1,
    FTS_SCHEMA,
    IGNORE_PATTERN,
    STEM_CACHE_SIZE,
    KeywordIndex,
    row_terms,
    sql_tokens,
)
from agentmem.store.keyword import split_tokens as _split_tokens

#: Advisory lock key under which the index's tables and dictionary are created.
KEYWORD_SCHEMA_LOCK = 0x6167656E746B7764  # "agentkwd"
#: PostgreSQL's Snowball porter stemmer, as a text search dictionary of the database.
STEMMER = "agentmem_porter"
# PostgreSQL's Snowball dictionary returns a word unstemmed past this many bytes.
_PG_STEM_MAX_BYTES = 1000
# Rows tokenised per statement by a rebuild.
_REBUILD_BATCH = 5000

_TABLES = """
CREATE TABLE IF NOT EXISTS keyword_postings (
    bank_id text NOT NULL,
    term text NOT NULL,
    seq bigint NOT NULL,
    len integer NOT NULL,
    tf_fact integer NOT NULL,
    tf_context integer NOT NULL
);
CREATE INDEX IF NOT EXISTS keyword_postings_term
    ON keyword_postings (bank_id, term) INCLUDE (seq, len, tf_fact, tf_context);
CREATE INDEX IF NOT EXISTS keyword_postings_seq ON keyword_postings (seq);
CREATE TABLE IF NOT EXISTS keyword_docs (
    seq bigint PRIMARY KEY,
    bank_id text NOT NULL,
    len integer NOT NULL
);
CREATE INDEX IF NOT EXISTS keyword_docs_bank ON keyword_docs (bank_id);
CREATE TABLE IF NOT EXISTS keyword_bank_stats (
    bank_id text PRIMARY KEY,
    num_docs bigint NOT NULL,
    total_len bigint NOT NULL
);
"""

# Rows of the range not indexed yet: under READ COMMITTED the range may hold rows another
# transaction committed meanwhile (sequence values interleave), which it indexed itself.
_UNINDEXED = """
SELECT m.seq, m.bank_id, m.search_text, m.context_text FROM memories AS m
WHERE m.seq BETWEEN $first AND $last
  AND NOT EXISTS (SELECT 1 FROM keyword_docs AS d WHERE d.seq = m.seq)
ORDER BY m.seq
"""
_ALL_ROWS = """
SELECT seq, bank_id, search_text, context_text FROM memories
WHERE seq > $after ORDER BY seq LIMIT $batch
"""
_ADD_TO_STATS = """
INSERT INTO keyword_bank_stats (bank_id, num_docs, total_len)
SELECT bank_id, count(*), coalesce(sum(len), 0) FROM docs GROUP BY bank_id ORDER BY bank_id
ON CONFLICT (bank_id) DO UPDATE
SET num_docs = keyword_bank_stats.num_docs + excluded.num_docs,
    total_len = keyword_bank_stats.total_len + excluded.total_len
"""
# Docs, postings and the banks' statistics of tokenised rows, in one statement.
_INSERT = f"""
WITH docs AS (
    INSERT INTO keyword_docs (seq, bank_id, len)
    SELECT * FROM unnest($doc_seqs::bigint[], $doc_banks::text[], $doc_lens::integer[])
    RETURNING bank_id, len
), postings AS (
    INSERT INTO keyword_postings (bank_id, term, seq, len, tf_fact, tf_context)
    SELECT * FROM unnest($banks::text[], $terms::text[], $seqs::bigint[], $lens::integer[],
                         $tf_fact::integer[], $tf_context::integer[])
)
{_ADD_TO_STATS}
"""
_REMOVE = """
WITH gone AS (
    DELETE FROM keyword_docs WHERE seq = ANY($seqs::bigint[]) RETURNING bank_id, len
), postings AS (
    DELETE FROM keyword_postings WHERE seq = ANY($seqs::bigint[])
), delta AS (
    SELECT bank_id, count(*) AS n, sum(len) AS total_len FROM gone GROUP BY bank_id
)
UPDATE keyword_bank_stats AS s
SET num_docs = s.num_docs - delta.n, total_len = s.total_len - delta.total_len
FROM delta WHERE s.bank_id = delta.bank_id
"""
_STEMS = f"""
SELECT token, (ts_lexize('{STEMMER}', token))[1] FROM unnest($tokens::text[]) AS t(token)
"""

# BM25 of the bank's postings of the query's terms, with the bank's statistics: the DuckDB
# query's arithmetic (store/keyword.py) in double precision, operand for operand. Rounding is
# half away from zero, as DuckDB's round(), written floor(x + 0.5): contributions are positive.
_SCORED = f"""
WITH postings AS (
    SELECT term, seq, len, tf_fact + tf_context * $context_weight::float8 AS wtf
    FROM keyword_postings
    WHERE bank_id = $bank_id AND term = ANY($terms::text[])
), doc_freq AS (
    SELECT term, count(*) AS df FROM postings GROUP BY term
), corpus AS (
    SELECT num_docs AS n, coalesce(total_len::float8 / nullif(num_docs, 0), 1.0) AS avgdl
    FROM keyword_bank_stats WHERE bank_id = $bank_id
), term_weights AS (
    SELECT term,
           ln(((corpus.n - df)::float8 + 0.5) / (df::float8 + 0.5) + 1)
           * ({BM25_K1} + 1)::float8 AS idf,
           ({BM25_K1} * (1 - {BM25_B}))::float8 AS k_fixed,
           ({BM25_K1} * {BM25_B})::float8 / corpus.avgdl AS k_len
    FROM doc_freq, corpus
), scored AS (
    SELECT postings.seq,
           sum(floor(
               w.idf * postings.wtf / (postings.wtf + w.k_fixed + w.k_len * postings.len)
               * {_FIXED_POINT} + 0.5)::bigint)::float8 / {_FIXED_POINT} AS score
    FROM postings JOIN term_weights AS w USING (term)
    GROUP BY postings.seq
)
"""
# No filter: the top rows of the scores alone, joined to their memories after the LIMIT.
_SEARCH = f"""{_SCORED}, best AS (
    SELECT seq, score FROM scored ORDER BY score DESC, seq DESC LIMIT $limit
)
SELECT m.id, best.score FROM best JOIN memories AS m ON m.seq = best.seq
ORDER BY best.score DESC, best.seq DESC
"""
# A filter over the memories (alias m) has to see every scored row before the LIMIT.
_SEARCH_FILTERED = f"""{_SCORED}
SELECT m.id, scored.score FROM scored JOIN memories AS m ON m.seq = scored.seq
WHERE m.bank_id = $bank_id {{filters}}
ORDER BY scored.score DESC, scored.seq DESC
LIMIT $limit
"""

#: A line when bank $bank's statistics are not what its rows give.
STATS_MISMATCH = """
SELECT 'rows ' || coalesce(s.num_docs, 0) || ' and length ' || coalesce(s.total_len, 0)
       || ' counted, ' || actual.n || ' and ' || actual.total_len || ' stored'
FROM (
    SELECT count(*) AS n, coalesce(sum(d.len), 0) AS total_len
    FROM memories AS m JOIN keyword_docs AS d ON d.seq = m.seq WHERE m.bank_id = $bank
) AS actual
LEFT JOIN keyword_bank_stats AS s ON s.bank_id = $bank
WHERE coalesce(s.num_docs, 0) <> actual.n OR coalesce(s.total_len, 0) <> actual.total_len
"""
#: Ids of bank $bank's memories the index does not hold (a row of only stopwords is held too).
MISSING_ROWS = """
SELECT m.id FROM memories AS m WHERE m.bank_id = $bank
AND NOT EXISTS (SELECT 1 FROM keyword_docs AS d WHERE d.seq = m.seq)
"""
#: Seqs the index holds of no stored memory.
ORPHAN_ROWS = """
SELECT CAST(d.seq AS text) FROM keyword_docs AS d
WHERE NOT EXISTS (SELECT 1 FROM memories AS m WHERE m.seq = d.seq)
"""
# For the integrity check (store/integrity.py): (what is wrong, SQL of the offenders).
_BANK_CHECKS: tuple[tuple[str, str], ...] = (
    ("memory missing from the keyword index", MISSING_ROWS),
    ("keyword statistics not those of the bank's rows", STATS_MISMATCH),
)
_STORE_CHECKS: tuple[tuple[str, str], ...] = (
    (
        "keyword_bank_stats row of an unknown bank",
        "SELECT DISTINCT t.bank_id FROM keyword_bank_stats AS t "
        "WHERE t.bank_id NOT IN (SELECT bank_id FROM banks)",
    ),
    ("keyword postings of a deleted memory", ORPHAN_ROWS),
)


class DuckDBTokenizer:
    """The DuckDB fts extension's tokeniser, stopwords and stemmer, in an in-memory DuckDB.

    Only what cannot be done faster elsewhere runs here: the tokens of non-ASCII text and the
    stems PostgreSQL does not give the same way. One connection, used under a lock.
    """

    def __init__(self) -> None:
        self._con = duckdb.connect(
            ":memory:",
            config={"autoinstall_known_extensions": False, "autoload_known_extensions": False},
        )
        self._lock = threading.Lock()
        with self._lock:
            self._con.execute(f"LOAD '{fts_extension_path()}'")
            # The extension makes its stopword list with an index, as the DuckDB store does.
            self._con.execute(
                "CREATE TABLE memories (seq BIGINT, search_text VARCHAR, context_text VARCHAR)"
            )
            self._con.execute(
                "PRAGMA create_fts_index('memories', 'seq', 'search_text', 'context_text', "
                f"stemmer='porter', stopwords='english', ignore='{IGNORE_PATTERN}', "
                "strip_accents=1, lower=1, overwrite=1)"
            )
            rows = self._con.execute(f"SELECT sw FROM {FTS_SCHEMA}.stopwords").fetchall()
        self.stopwords = frozenset(r[0] for r in rows)

    def tokens(self, texts: Sequence[str]) -> list[list[str]]:
        """The tokens of each text (stopwords included), in order."""
        with self._lock:
            return sql_tokens(self._con, texts)

    def stems(self, tokens: Sequence[str]) -> dict[str, str]:
        """DuckDB's ``stem(token, 'porter')`` of each token."""
        if not tokens:
            return {}
        with self._lock:
            rows = self._con.execute(
                "SELECT token, stem(token, 'porter') FROM unnest($tokens::VARCHAR[]) AS t(token)",
                {"tokens": list(tokens)},
            ).fetchall()
        return dict(rows)


@cache
def duckdb_tokenizer() -> DuckDBTokenizer:
    """The process's one :class:`DuckDBTokenizer` (made on first use)."""
    return DuckDBTokenizer()


def _pg_stems_alike(token: str) -> bool:
    """Whether PostgreSQL's porter dictionary stems ``token`` as DuckDB's stemmer does."""
    return len(token) > 1 and len(token.encode("utf-8")) <= _PG_STEM_MAX_BYTES


def split_tokens(texts: Sequence[str]) -> list[list[str]]:
    """Each text's tokens, as DuckDB's fts tokeniser gives them (stopwords included)."""
    return _split_tokens(texts, duckdb_tokenizer().tokens)


# Rows of a bank holding each term in the fact itself, and (under term NULL) the bank's rows.
_DOCUMENT_FREQUENCIES = """
SELECT NULL AS term, num_docs FROM keyword_bank_stats WHERE bank_id = $bank_id
UNION ALL
SELECT term, count(*) FROM keyword_postings
WHERE bank_id = $bank_id AND term = ANY($terms::text[]) AND tf_fact > 0
GROUP BY term
"""


class PostgresKeywordIndex:
    """The BM25 index over every bank's memories in PostgreSQL, each bank scored with its own
    statistics; the interface of :class:`~agentmem.store.keyword.KeywordIndex`.

    Args:
        db: A :class:`~agentmem.store.postgres.database.PostgresDatabase` (or anything with its
            ``execute``/``fetchall``/``transaction``/``write_lock``).
        context_weight: Weight of a term of the neighbouring turns against one of the fact.
        rebuild_min, rebuild_fraction: Accepted for the interface; nothing is ever folded.
    """

    #: Integrity checks of one bank's index, as (what is wrong, SQL over ``$bank`` returning
    #: the offending ids), and of the whole store's (no parameter).
    bank_checks = _BANK_CHECKS
    store_checks = _STORE_CHECKS

    def __init__(
        self,
        db: Any,  # noqa: ANN401
        *,
        context_weight: float,
        rebuild_min: int = 0,
        rebuild_fraction: float = 0.0,
    ) -> None:
        del rebuild_min, rebuild_fraction
        self._db = db
        self._context_weight = context_weight
        self._stems: dict[str, str] = {}
        self._stopwords = duckdb_tokenizer().stopwords
        with db.transaction() as cur:
            cur.execute("SELECT pg_advisory_xact_lock(?)", [KEYWORD_SCHEMA_LOCK])
            cur.execute(_TABLES)
            (exists,) = cur.execute(
                "SELECT count(*) FROM pg_ts_dict WHERE dictname = ?", [STEMMER]
            ).fetchone()
            if not exists:
                cur.execute(
                    f"CREATE TEXT SEARCH DICTIONARY {STEMMER} "
                    "(TEMPLATE = snowball, Language = porter)"
                )

    # -- tokens -----------------------------------------------------------------------------

    def _stemmed(self, cur: Any, tokens: Iterable[str]) -> dict[str, str]:  # noqa: ANN401
        """Stems of ``tokens`` (stopwords removed beforehand), from the cache or looked up."""
        cache = self._stems
        wanted = dict.fromkeys(tokens)
        stems = {t: cache[t] for t in wanted if t in cache}
        missing = [t for t in wanted if t not in stems]
        if missing:
            found = duckdb_tokenizer().stems([t for t in missing if not _pg_stems_alike(t)])
            alike = [t for t in missing if _pg_stems_alike(t)]
            if alike:
                found.update(cur.execute(_STEMS, {"tokens": alike}).fetchall())
            stems.update(found)
            if len(cache) + len(found) > STEM_CACHE_SIZE:
                cache = self._stems = {}  # a new dict: a reader of the old one is unaffected
            cache.update(found)
        return stems

    def _kept(self, tokens: list[str]) -> list[str]:
        stopwords = self._stopwords
        return [t for t in tokens if t not in stopwords]

    def query_terms(self, query: str) -> list[str]:
        """The distinct terms of ``query``, tokenised, stopped and stemmed as rows are."""
        tokens = list(dict.fromkeys(self._kept(split_tokens([query])[0])))
        stems = self._stemmed(self._db, tokens)
        return list(dict.fromkeys(stems[t] for t in tokens))

    #: How informative each word is in this bank (see ``KeywordIndex.term_idfs``: the same
    #: steps over this index's tokeniser and document frequencies).
    term_idfs = KeywordIndex.term_idfs

    def document_frequencies(self, bank_id: str, terms: Sequence[str]) -> dict[str | None, int]:
        """See :meth:`agentmem.store.keyword.KeywordIndex.document_frequencies`."""
        return dict(
            self._db.fetchall(_DOCUMENT_FREQUENCIES, {"bank_id": bank_id, "terms": list(terms)})
        )

    # -- writes -----------------------------------------------------------------------------

    def _index(self, cur: Any, rows: Sequence[tuple[int, str, str, str]]) -> None:  # noqa: ANN401
        """Insert the postings, docs and statistics of ``rows`` (seq, bank, fact, context)."""
        if not rows:
            return
        found = row_terms(
            rows, duckdb_tokenizer().tokens, self._stopwords, partial(self._stemmed, cur)
        )
        docs: dict[str, list[Any]] = {"doc_seqs": [], "doc_banks": [], "doc_lens": []}
        postings: dict[str, list[Any]] = {
            k: [] for k in ("banks", "terms", "seqs", "lens", "tf_fact", "tf_context")
        }
        for row in found:
            docs["doc_seqs"].append(row.seq)
            docs["doc_banks"].append(row.bank_id)
            docs["doc_lens"].append(row.length)
            for term in sorted(row.fact.keys() | row.context.keys()):
                postings["banks"].append(row.bank_id)
                postings["terms"].append(term)
                postings["seqs"].append(row.seq)
                postings["lens"].append(row.length)
                postings["tf_fact"].append(row.fact[term])
                postings["tf_context"].append(row.context[term])
        cur.execute(_INSERT, {**docs, **postings})

    def add_pending(self, cur: Any, first_seq: int, last_seq: int) -> None:  # noqa: ANN401
        """Index rows ``first_seq..last_seq`` and count them in their banks' statistics, in
        the caller's transaction (searchable once it commits)."""
        rows = cur.execute(_UNINDEXED, {"first": first_seq, "last": last_seq}).fetchall()
        self._index(cur, rows)

    def remove_rows(self, cur: Any, seqs: list[int]) -> None:  # noqa: ANN401
        """Take rows about to be replaced or deleted out of the index and their banks'
        statistics, in the caller's transaction."""
        if seqs:
            cur.execute(_REMOVE, {"seqs": list(seqs)})

    def remove_bank(self, cur: Any, bank_id: str) -> None:  # noqa: ANN401
        """Take every row of a bank out of the index, in the caller's transaction."""
        for table in ("keyword_postings", "keyword_docs", "keyword_bank_stats"):
            cur.execute(f"DELETE FROM {table} WHERE bank_id = ?", [bank_id])

    def rebuild(self) -> float:
        """Tokenise every row anew and recount every bank's statistics, in one transaction;
        returns the seconds it took."""
        started = time.perf_counter()
        with self._db.transaction() as cur:
            cur.execute("LOCK TABLE keyword_docs IN EXCLUSIVE MODE")  # other replicas wait
            for table in ("keyword_postings", "keyword_docs", "keyword_bank_stats"):
                cur.execute(f"DELETE FROM {table}")
            after = 0
            while True:
                rows = cur.execute(_ALL_ROWS, {"after": after, "batch": _REBUILD_BATCH}).fetchall()
                if not rows:
                    break
                self._index(cur, rows)
                after = rows[-1][0]
        return time.perf_counter() - started

    # -- what the DuckDB index folds: nothing here ------------------------------------------

    def pending_rows(self) -> int:
        """Rows waiting for a fold: none, every write is indexed in its transaction."""
        return 0

    def pending_memories(self, bank_ids: list[str]) -> int:
        """Memories of these banks waiting for a fold: none."""
        del bank_ids
        return 0

    def fold_pending(self) -> float:
        """Nothing to fold; returns 0 seconds."""
        return 0.0

    def maybe_fold(self) -> bool:
        """Never starts a fold (there is none to run)."""
        return False

    def wait(self) -> None:
        """Nothing runs in the background."""

    def close(self) -> None:
        """Nothing to stop (the database is closed by its owner)."""

    # -- search -----------------------------------------------------------------------------

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
        params: dict[str, object] = {
            "bank_id": bank_id,
            "terms": terms,
            "limit": limit,
            "context_weight": float(self._context_weight),
            **(filter_params or {}),
        }
        sql = _SEARCH_FILTERED.replace("{filters}", filter_sql) if filter_sql else _SEARCH
        rows = self._db.fetchall(sql, params)
        return [(memory_id, float(score)) for memory_id, score in rows]
