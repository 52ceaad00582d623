"""The keyword index of a bank held in process: its postings in numpy arrays, scored as the SQL.

The store's keyword index (``store/keyword.py`` on DuckDB, ``store/postgres/keyword.py`` on
PostgreSQL) is the system of record and the fallback; this mirror answers the same query with
the same ranking and the same scores, without a round trip to the database. Per bank it holds:

* the bank's stored rows (seq, memory id, length), and whether each is still stored;
* per term, the rows it occurs in, their weighted term frequency and whether the fact itself
  holds it (what word idfs count), in CSR arrays (term → slice), plus the postings of rows
  added since the arrays were last packed;
* the bank's statistics (rows and total length) as ``keyword_bank_stats`` holds them.

It is loaded on first use and caught up whenever the bank's version (:func:`bank_version`)
has moved: rows with a seq above the highest it holds are added (new rows always get higher
seqs: they are allocated under the write lock), and when the bank then holds fewer rows than
the mirror, the rows no longer stored are dropped. Each catch-up reads one snapshot. On a
shared store (PostgreSQL) a bank's writers hold its version row while they allocate seqs, so
there too a bank's new rows come after every row a snapshot holds.

Scoring repeats the SQL's arithmetic operation for operation in float64 (the literals are
decimals in SQL), rounds to the same fixed point as that backend's SQL does (C's ``round`` on
DuckDB, ``floor(x + 0.5)`` on PostgreSQL), and sums integers, so scores are bit-identical and
ties break the same way (higher seq first).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

import numpy as np

from agentmem.store.bulk import bulk_read, collection_paused, fetch_arrays
from agentmem.store.database import Database
from agentmem.store.dialect import POSTGRESQL, dialect_of
from agentmem.store.keyword import _FIXED_POINT, BM25_B, BM25_K1

# The SQL's literals are DECIMALs, cast to DOUBLE where they meet a DOUBLE.
_K1_PLUS_1 = float(Decimal(str(BM25_K1)) + 1)
_K_FIXED = float(Decimal(str(BM25_K1)) * (1 - Decimal(str(BM25_B))))
_K_LEN = float(Decimal(str(BM25_K1)) * Decimal(str(BM25_B)))
#: Postings added since the last packing beyond which they are packed into the CSR arrays.
_PACK_AT = 50_000

# One posting per (term, row), as the store's search weighs them. {rows}: which of the bank's
# rows. DuckDB: the built postings of rows still stored, then the pending ones.
_DUCKDB_POSTINGS = """
WITH postings AS (
    SELECT term, seq, len, tf_fact + tf_context * $context_weight AS wtf, tf_fact > 0 AS in_fact
    FROM keyword_postings
    WHERE bank_id = $bank_id AND {rows} AND seq NOT IN (SELECT seq FROM keyword_removed)
    UNION ALL
    SELECT term, seq, max(len) AS len,
           coalesce(sum(tf) FILTER (WHERE field = 0), 0)
           + coalesce(sum(tf) FILTER (WHERE field = 1), 0) * $context_weight AS wtf,
           coalesce(sum(tf) FILTER (WHERE field = 0 AND tf > 0), 0) > 0 AS in_fact
    FROM keyword_pending
    WHERE bank_id = $bank_id AND {rows}
    GROUP BY term, seq
)
"""
# PostgreSQL: every posting is built in its write's transaction.
_POSTGRES_POSTINGS = """
WITH postings AS (
    SELECT term COLLATE "C" AS term, seq, len,
           tf_fact + tf_context * $context_weight::float8 AS wtf, tf_fact > 0 AS in_fact
    FROM keyword_postings
    WHERE bank_id = $bank_id AND {rows}
)
"""
_TERM_COUNTS = "SELECT term, count(*) FROM postings GROUP BY term ORDER BY term"
_POSTING_ROWS = (
    "SELECT CAST(seq AS int8) AS seq, CAST(len AS float8) AS len, CAST(wtf AS float8) AS wtf, "
    "CAST(in_fact AS bool) AS in_fact FROM postings ORDER BY term, seq"
)
_POSTING_COLUMNS = {"seq": "int8", "len": "float8", "wtf": "float8", "in_fact": "bool"}
_NEW_ROWS = "seq > $after"
_STORED_SEQS = (
    "SELECT CAST(seq AS int8) AS seq FROM memories WHERE bank_id = $bank_id AND seq > $after "
    "ORDER BY seq"
)
_ROW_IDS = "SELECT seq, id FROM memories WHERE bank_id = $bank_id AND seq > $after ORDER BY seq"
_STATS = "SELECT num_docs, total_len FROM keyword_bank_stats WHERE bank_id = $bank_id"


def c_round(values: np.ndarray) -> np.ndarray:
    """Round half away from zero, as C's ``round`` (DuckDB's) does; numpy rounds half to even."""
    whole = np.trunc(values)
    return whole + np.copysign((np.abs(values - whole) >= 0.5).astype(np.float64), values)


def floor_half_up(values: np.ndarray) -> np.ndarray:
    """``floor(x + 0.5)``, as the PostgreSQL query rounds (its contributions are positive)."""
    return np.floor(values + 0.5)


class BankPostings:
    """One bank's postings and statistics (see the module docstring); guarded by ``lock``."""

    def __init__(self, rounding: Callable[[np.ndarray], np.ndarray] = c_round) -> None:
        self.lock = threading.Lock()
        self.version: int | None = None
        self._round = rounding
        self._terms: dict[str, int] = {}
        self._offsets = np.zeros(1, dtype=np.int64)
        self._slots = np.zeros(0, dtype=np.int64)  # posting → row slot
        self._wtf = np.zeros(0, dtype=np.float64)
        self._in_fact = np.zeros(0, dtype=bool)
        # term → (slots, weighted frequencies, in the fact) of postings added since packing
        self._added: dict[int, tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]]] = {}
        self._added_count = 0
        self._seq = np.zeros(0, dtype=np.int64)  # slot → seq, ascending
        self._len = np.zeros(0, dtype=np.float64)
        self._stored = np.zeros(0, dtype=bool)
        self._ids: list[str] = []
        self._rows = 0  # rows stored
        self.num_docs = 0
        self.total_len = 0
        self._has_stats = False

    @property
    def max_seq(self) -> int:
        return int(self._seq[-1]) if len(self._seq) else 0

    # -- catching up -------------------------------------------------------------------------

    def catch_up(self, cur: Any, bank_id: str, context_weight: float) -> None:
        """Add the rows the store holds beyond the mirror's, drop those it no longer holds
        and take the bank's statistics, all from ``cur``'s snapshot."""
        params = {"bank_id": bank_id, "after": self.max_seq}
        if not params["after"]:  # the first load reads the whole bank
            bulk_read(cur)
        stats = cur.execute(_STATS, {"bank_id": bank_id}).fetchall()
        self._has_stats = bool(stats)
        self.num_docs, self.total_len = stats[0] if stats else (0, 0)
        with collection_paused():
            rows = cur.execute(_ROW_IDS, params).fetchall()
            if rows:
                weighted = {**params, "context_weight": context_weight}
                self._add_rows(rows, *_postings(cur, _NEW_ROWS, weighted))
        if self._rows != self.num_docs:  # some rows went (forget, rewrite, delete_bank)
            stored = fetch_arrays(cur, _STORED_SEQS, {**params, "after": 0}, {"seq": "int8"})
            self._keep_only(stored["seq"])

    def _add_rows(
        self,
        rows: Sequence[tuple[int, str]],
        term_counts: list[tuple[str, int]],
        postings: dict[str, np.ndarray],
    ) -> None:
        first = len(self._seq)
        new_seq = np.fromiter((seq for seq, _ in rows), dtype=np.int64, count=len(rows))
        self._seq = np.concatenate([self._seq, new_seq])
        self._stored = np.concatenate([self._stored, np.ones(len(rows), dtype=bool)])
        self._ids.extend(memory_id for _, memory_id in rows)
        self._rows += len(rows)
        seq = np.asarray(postings["seq"], dtype=np.int64)
        slots = first + np.searchsorted(new_seq, seq)
        lengths = np.zeros(len(rows), dtype=np.float64)
        lengths[slots - first] = np.asarray(postings["len"], dtype=np.float64)
        self._len = np.concatenate([self._len, lengths])
        wtf = np.asarray(postings["wtf"], dtype=np.float64)
        in_fact = np.asarray(postings["in_fact"], dtype=bool)
        start = 0
        for term, count in term_counts:
            end = start + count
            term_id = self._terms.setdefault(term, len(self._terms))
            slot_parts, wtf_parts, fact_parts = self._added.setdefault(term_id, ([], [], []))
            slot_parts.append(slots[start:end])
            wtf_parts.append(wtf[start:end])
            fact_parts.append(in_fact[start:end])
            start = end
        self._added_count += len(seq)
        if self._added_count >= max(_PACK_AT, len(self._slots) // 4) or first == 0:
            self._pack()

    def _keep_only(self, stored_seqs: np.ndarray) -> None:
        """Mark the rows whose seq is not in ``stored_seqs`` as gone."""
        self._stored &= np.isin(self._seq, stored_seqs, assume_unique=True)
        self._rows = int(self._stored.sum())
        if self._rows < len(self._seq) // 2:
            self._compact()

    def _term_postings(self, term_id: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The slots, weighted frequencies and in-fact flags of a term, packed ones then
        added ones."""
        columns: tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]] = ([], [], [])
        if term_id < len(self._offsets) - 1:
            start, end = self._offsets[term_id], self._offsets[term_id + 1]
            for column, packed in zip(
                columns, (self._slots, self._wtf, self._in_fact), strict=True
            ):
                column.append(packed[start:end])
        added = self._added.get(term_id)
        if added is not None:
            for column, parts in zip(columns, added, strict=True):
                column.extend(parts)
        if len(columns[0]) == 1:
            return columns[0][0], columns[1][0], columns[2][0]
        if not columns[0]:
            return self._slots[:0], self._wtf[:0], self._in_fact[:0]
        slots, wtf, in_fact = (np.concatenate(column) for column in columns)
        return slots, wtf, in_fact

    def _pack(self) -> None:
        """Fold the added postings into the CSR arrays."""
        parts = [self._term_postings(t) for t in range(len(self._terms))]
        counts = [len(slots) for slots, _, _ in parts]
        self._offsets = np.concatenate([[0], np.cumsum(counts, dtype=np.int64)])
        self._slots = np.concatenate([self._slots[:0], *(slots for slots, _, _ in parts)])
        self._wtf = np.concatenate([self._wtf[:0], *(wtf for _, wtf, _ in parts)])
        self._in_fact = np.concatenate([self._in_fact[:0], *(fact for _, _, fact in parts)])
        self._added, self._added_count = {}, 0

    def _compact(self) -> None:
        """Drop the rows no longer stored, renumbering slots."""
        self._pack()
        keep = self._stored
        alive = keep[self._slots]
        term_of = np.repeat(np.arange(len(self._terms)), np.diff(self._offsets))
        counts = np.bincount(term_of[alive], minlength=len(self._terms))
        self._offsets = np.concatenate([[0], np.cumsum(counts, dtype=np.int64)])
        self._slots = (np.cumsum(keep) - 1)[self._slots[alive]]
        self._wtf = self._wtf[alive]
        self._in_fact = self._in_fact[alive]
        self._seq, self._len = self._seq[keep], self._len[keep]
        self._ids = [memory_id for memory_id, k in zip(self._ids, keep, strict=True) if k]
        self._stored = np.ones(len(self._seq), dtype=bool)

    # -- searching ---------------------------------------------------------------------------

    def search(self, terms: Sequence[str], limit: int) -> list[tuple[str, float]]:
        """Top ``limit`` (memory id, BM25 score) of the bank, best first, then newest."""
        if not self._has_stats or limit <= 0:
            return []
        n = self.num_docs
        avgdl = self.total_len / n if n else 1.0
        k_len = _K_LEN / avgdl
        scored_slots: list[np.ndarray] = []
        scored_points: list[np.ndarray] = []
        for term in terms:
            term_id = self._terms.get(term)
            if term_id is None:
                continue
            slots, wtf, _ = self._term_postings(term_id)
            stored = self._stored[slots]
            slots, wtf = slots[stored], wtf[stored]
            df = len(slots)
            if df == 0:
                continue
            idf = math.log((n - df + 0.5) / (df + 0.5) + 1) * _K1_PLUS_1
            share = idf * wtf / (wtf + _K_FIXED + k_len * self._len[slots])
            scored_slots.append(slots)
            scored_points.append(self._round(share * _FIXED_POINT))
        if not scored_slots:
            return []
        slots = np.concatenate(scored_slots)
        # Whole numbers below 2**53: float64 sums them exactly, in any order.
        points = np.bincount(slots, weights=np.concatenate(scored_points))
        # The rows matched, ascending: np.unique's answer at a twentieth of its cost.
        hit = np.flatnonzero(np.bincount(slots))
        points = points[hit]
        if len(hit) > limit:
            cut = np.partition(points, len(points) - limit)[len(points) - limit]
            keep = points >= cut
            hit, points = hit[keep], points[keep]
        order = np.lexsort((-self._seq[hit], -points))[:limit]
        best = zip(hit[order].tolist(), points[order].tolist(), strict=True)
        return [(self._ids[slot], total / _FIXED_POINT) for slot, total in best]

    def document_frequencies(self, terms: Sequence[str]) -> dict[str | None, int]:
        """How many of the bank's rows hold each term in the fact itself (terms no row holds
        are absent), and under None the bank's rows: the index's ``term_idfs`` counts."""
        if not self._has_stats:
            return {}
        found: dict[str | None, int] = {None: self.num_docs}
        for term in dict.fromkeys(terms):
            term_id = self._terms.get(term)
            if term_id is not None:
                slots, _, in_fact = self._term_postings(term_id)
                count = int(np.count_nonzero(in_fact & self._stored[slots]))
                if count:
                    found[term] = count
        return found


def _postings(
    cur: Any, rows: str, params: dict[str, Any]
) -> tuple[list[tuple[str, int]], dict[str, np.ndarray]]:
    source = _POSTGRES_POSTINGS if dialect_of(cur) == POSTGRESQL else _DUCKDB_POSTINGS
    source = source.replace("{rows}", rows)
    counts = cur.execute(source + _TERM_COUNTS, params).fetchall()
    return counts, fetch_arrays(cur, source + _POSTING_ROWS, params, _POSTING_COLUMNS)


class KeywordMirrors:
    """The per-bank keyword mirrors of one store, each caught up to the bank's version."""

    def __init__(self, db: Database, context_weight: float, version: Callable[[str], int]) -> None:
        self._db = db
        self._context_weight = context_weight
        self._version = version
        self._banks: dict[str, BankPostings] = {}
        self._lock = threading.Lock()

    def search(self, bank_id: str, terms: Sequence[str], limit: int) -> list[tuple[str, float]]:
        """As ``KeywordIndex.search`` without filters, from the bank's mirror."""
        if not terms:
            return []
        with self._current(bank_id) as bank:
            return bank.search(terms, limit)

    def document_frequencies(self, bank_id: str, terms: Sequence[str]) -> dict[str | None, int]:
        """The document frequencies ``KeywordIndex.term_idfs`` reads, from the bank's mirror
        (see :meth:`BankPostings.document_frequencies`)."""
        with self._current(bank_id) as bank:
            return bank.document_frequencies(terms)

    @contextmanager
    def _current(self, bank_id: str) -> Iterator[BankPostings]:
        """The bank's mirror at its current version, locked for the block."""
        with self._lock:
            bank = self._banks.get(bank_id)
            if bank is None:
                rounding = floor_half_up if dialect_of(self._db) == POSTGRESQL else c_round
                bank = self._banks[bank_id] = BankPostings(rounding)
        with bank.lock:
            version = self._version(bank_id)
            if bank.version != version:
                try:
                    self._catch_up(bank, bank_id)
                except BaseException:
                    self.drop(bank_id)  # half caught up: the next search loads it anew
                    raise
                bank.version = version
            yield bank

    def _catch_up(self, bank: BankPostings, bank_id: str) -> None:
        with self._db.snapshot() as cur:  # one snapshot for every read of the catch-up
            bank.catch_up(cur, bank_id, self._context_weight)

    def drop(self, bank_id: str) -> None:
        """Forget a bank's mirror (the next search loads it anew)."""
        with self._lock:
            self._banks.pop(bank_id, None)
