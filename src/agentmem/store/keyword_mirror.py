"""The keyword index of a bank held in process: its postings in numpy arrays, scored as the SQL.

``store/keyword.py`` is the system of record and the fallback; this mirror answers the same
query with the same ranking and the same scores, without a round trip through DuckDB. Per
bank it holds:

* the bank's stored rows (seq, memory id, length), and whether each is still stored;
* per term, the rows it occurs in, their weighted term frequency and whether the row's own
  text (not only its neighbouring turns) holds the term, in CSR arrays (term → slice), plus
  the postings of rows added since the arrays were last packed;
* the bank's statistics (rows and total length) as ``keyword_bank_stats`` holds them.

It is loaded on first use and caught up whenever the bank's version (:func:`bank_version`)
has moved: rows with a seq above the highest it holds are added (new rows always get higher
seqs: they are allocated under the write lock), and when the bank then holds fewer rows than
the mirror, the rows no longer stored are dropped. Each catch-up reads one snapshot.

Scoring repeats the SQL's arithmetic operation for operation in float64 (the literals are
decimals in SQL), rounds to the same fixed point as C's ``round`` does, and sums integers, so
scores are bit-identical and ties break the same way (higher seq first).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

import numpy as np

from agentmem.store.database import Database
from agentmem.store.keyword import _FIXED_POINT, BM25_B, BM25_K1

# The SQL's literals are DECIMALs, cast to DOUBLE where they meet a DOUBLE.
_K1_PLUS_1 = float(Decimal(str(BM25_K1)) + 1)
_K_FIXED = float(Decimal(str(BM25_K1)) * (1 - Decimal(str(BM25_B))))
_K_LEN = float(Decimal(str(BM25_K1)) * Decimal(str(BM25_B)))
#: Postings added since the last packing beyond which they are packed into the CSR arrays.
_PACK_AT = 50_000

# One posting per (term, row), as store/keyword.py's search weighs them: the built postings of
# rows still stored, then the pending ones. {rows}: which of the bank's rows.
_POSTINGS = """
WITH postings AS (
    SELECT term, seq, len, tf_fact + tf_context * $context_weight AS wtf, tf_fact > 0 AS own
    FROM keyword_postings
    WHERE bank_id = $bank_id AND {rows} AND seq NOT IN (SELECT seq FROM keyword_removed)
    UNION ALL
    SELECT term, seq, max(len) AS len,
           coalesce(sum(tf) FILTER (WHERE field = 0), 0)
           + coalesce(sum(tf) FILTER (WHERE field = 1), 0) * $context_weight AS wtf,
           coalesce(sum(tf) FILTER (WHERE field = 0), 0) > 0 AS own
    FROM keyword_pending
    WHERE bank_id = $bank_id AND {rows}
    GROUP BY term, seq
)
"""
_TERM_COUNTS = _POSTINGS + "SELECT term, count(*) FROM postings GROUP BY term ORDER BY term"
_POSTING_ROWS = _POSTINGS + "SELECT seq, len, wtf, own FROM postings ORDER BY term, seq"
_NEW_ROWS = "seq > $after"
_STORED_SEQS = "SELECT seq FROM memories WHERE bank_id = $bank_id AND seq > $after ORDER BY seq"
_ROW_IDS = "SELECT seq, id FROM memories WHERE bank_id = $bank_id AND seq > $after ORDER BY seq"
_STATS = "SELECT num_docs, total_len FROM keyword_bank_stats WHERE bank_id = $bank_id"


def c_round(values: np.ndarray) -> np.ndarray:
    """Round half away from zero, as C's ``round`` (DuckDB's) does; numpy rounds half to even."""
    whole = np.trunc(values)
    return whole + np.copysign((np.abs(values - whole) >= 0.5).astype(np.float64), values)


class BankPostings:
    """One bank's postings and statistics (see the module docstring); guarded by ``lock``."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.version: int | None = None
        self._terms: dict[str, int] = {}
        self._offsets = np.zeros(1, dtype=np.int64)
        self._slots = np.zeros(0, dtype=np.int64)  # posting → row slot
        # posting → (weighted term frequency, 1.0 if the row's own text holds the term)
        self._wtf = np.zeros((0, 2), dtype=np.float64)
        self._added: dict[int, tuple[list[np.ndarray], list[np.ndarray]]] = {}
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
        stats = cur.execute(_STATS, {"bank_id": bank_id}).fetchall()
        self._has_stats = bool(stats)
        self.num_docs, self.total_len = stats[0] if stats else (0, 0)
        rows = cur.execute(_ROW_IDS, params).fetchall()
        if rows:
            weighted = {**params, "context_weight": context_weight}
            self._add_rows(rows, *_postings(cur, _NEW_ROWS, weighted))
        if self._rows != self.num_docs:  # some rows went (forget, rewrite, delete_bank)
            stored = cur.execute(_STORED_SEQS, {**params, "after": 0}).fetchnumpy()["seq"]
            self._keep_only(np.asarray(stored, dtype=np.int64))

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
        wtf = np.column_stack(
            [np.asarray(postings["wtf"], dtype=np.float64), np.asarray(postings["own"], dtype=bool)]
        ).astype(np.float64)
        start = 0
        for term, count in term_counts:
            end = start + count
            term_id = self._terms.setdefault(term, len(self._terms))
            slot_parts, wtf_parts = self._added.setdefault(term_id, ([], []))
            slot_parts.append(slots[start:end])
            wtf_parts.append(wtf[start:end])
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

    def _term_postings(self, term_id: int) -> tuple[np.ndarray, np.ndarray]:
        """The slots of a term's postings, packed ones then added ones, and their (weighted
        frequency, own text) pairs."""
        slots, wtf = [], []
        if term_id < len(self._offsets) - 1:
            start, end = self._offsets[term_id], self._offsets[term_id + 1]
            slots.append(self._slots[start:end])
            wtf.append(self._wtf[start:end])
        added = self._added.get(term_id)
        if added is not None:
            slots.extend(added[0])
            wtf.extend(added[1])
        if len(slots) == 1:
            return slots[0], wtf[0]
        if not slots:
            return self._slots[:0], self._wtf[:0]
        return np.concatenate(slots), np.concatenate(wtf)

    def _pack(self) -> None:
        """Fold the added postings into the CSR arrays."""
        parts = [self._term_postings(t) for t in range(len(self._terms))]
        counts = [len(slots) for slots, _ in parts]
        self._offsets = np.concatenate([[0], np.cumsum(counts, dtype=np.int64)])
        self._slots = np.concatenate([self._slots[:0], *(slots for slots, _ in parts)])
        self._wtf = np.concatenate([self._wtf[:0], *(wtf for _, wtf in parts)])
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
            slots, payload = self._term_postings(term_id)
            stored = self._stored[slots]
            slots, wtf = slots[stored], payload[stored, 0]
            df = len(slots)
            if df == 0:
                continue
            idf = math.log((n - df + 0.5) / (df + 0.5) + 1) * _K1_PLUS_1
            share = idf * wtf / (wtf + _K_FIXED + k_len * self._len[slots])
            scored_slots.append(slots)
            scored_points.append(c_round(share * _FIXED_POINT))
        if not scored_slots:
            return []
        slots = np.concatenate(scored_slots)
        # Whole numbers below 2**53: float64 sums them exactly, in any order.
        points = np.bincount(slots, weights=np.concatenate(scored_points))
        hit = np.unique(slots)
        points = points[hit]
        if len(hit) > limit:
            cut = np.partition(points, len(points) - limit)[len(points) - limit]
            keep = points >= cut
            hit, points = hit[keep], points[keep]
        order = np.lexsort((-self._seq[hit], -points))[:limit]
        best = zip(hit[order].tolist(), points[order].tolist(), strict=True)
        return [(self._ids[slot], total / _FIXED_POINT) for slot, total in best]

    def document_frequencies(self, terms: Sequence[str]) -> dict[str | None, int]:
        """Per term, how many of the bank's stored rows hold it in their own text, and the
        bank's row count under the key None (absent without statistics), as
        ``KeywordIndex.document_frequencies`` gives them."""
        found: dict[str | None, int] = {None: self.num_docs} if self._has_stats else {}
        for term in terms:
            term_id = self._terms.get(term)
            if term_id is not None:
                slots, payload = self._term_postings(term_id)
                own = int(np.count_nonzero(payload[self._stored[slots], 1]))
                if own:
                    found[term] = own
        return found


def _postings(
    cur: Any, rows: str, params: dict[str, Any]
) -> tuple[list[tuple[str, int]], dict[str, np.ndarray]]:
    counts = cur.execute(_TERM_COUNTS.replace("{rows}", rows), params).fetchall()
    postings = cur.execute(_POSTING_ROWS.replace("{rows}", rows), params).fetchnumpy()
    return counts, postings


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
        """As ``KeywordIndex.document_frequencies``, from the bank's mirror."""
        with self._current(bank_id) as bank:
            return bank.document_frequencies(terms)

    @contextmanager
    def _current(self, bank_id: str) -> Iterator[BankPostings]:
        """The bank's mirror at the bank's version, its lock held."""
        with self._lock:
            bank = self._banks.get(bank_id)
            if bank is None:
                bank = self._banks[bank_id] = BankPostings()
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
        cur = self._db.cursor()
        with self._db.storage_errors():
            cur.execute("BEGIN TRANSACTION")  # one snapshot for every read of the catch-up
            try:
                bank.catch_up(cur, bank_id, self._context_weight)
            finally:
                cur.execute("COMMIT")

    def drop(self, bank_id: str) -> None:
        """Forget a bank's mirror (the next search loads it anew)."""
        with self._lock:
            self._banks.pop(bank_id, None)
