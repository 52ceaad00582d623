"""Vectors in the PostgreSQL database itself (pgvector), in the same transactions as the rows.

One table holds every bank's vectors, keyed by (collection, id): a bank's collection is what
the Chroma store calls one, so the shared code names it the same way. Each collection has a
**partial HNSW index** of its own (cosine, over ``embedding::vector(d)``, ``WHERE collection =
'...'``): one index over all banks filtered by bank finds few of a small bank's neighbours, as
the graph walks through other banks' vectors. A query names its collection as a literal, so
the planner matches it to that index whatever plans it caches.

Writers call ``write_in``/``delete_in``/``drop_in`` inside the transaction that stores or
deletes the rows, and ``stage``/``delete``/``drop`` once it has committed (the Chroma store
journals in the first and writes in the second). Here the first do the work, on the calling
thread's connection, so it commits or rolls back with the rows: no vector journal, no window
where a fact is stored without its vector. ``stage`` then has nothing left to do, ``delete``
finds nothing left to delete, ``drop`` drops the collection's index (outside the transaction:
dropping an index locks the whole table). Nothing is staged (``staged`` is 0).

Similarities are ``1 - cosine distance``, as the Chroma store returns them. ``where`` filters
take the Chroma syntax the engine uses (``$and``, ``$or``, ``$eq``, ``$ne``, ``$gt``, ``$gte``,
``$lt``, ``$lte``, ``$in``, ``$nin``, a plain value for equality); a key a vector's metadata
lacks fails every comparison. A filtered query walks the index until it has found ``n``
matches (pgvector's iterative scan), and when the walk gives up short of ``n``, searches the
matching vectors exactly.
"""

from __future__ import annotations

import hashlib
import json
import struct
import threading
import weakref
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import cache
from typing import Any

import numpy as np

from agentmem.errors import InvalidInputError, StorageError
from agentmem.store.vectors import HNSW_CONFIGURATION, OVERFETCH

#: Advisory lock key under which the tables and each collection's index are created.
VECTOR_SCHEMA_LOCK = 0x6167656E74766563  # "agentvec"
_HNSW = HNSW_CONFIGURATION["hnsw"]
#: pgvector's default, below the Chroma store's 128: inserts are what a retain waits for, and
#: recall at the search width below stays high (tests/postgres/test_vectors.py).
EF_CONSTRUCTION = 64
# The search width of the Chroma store; a query for more rows (or a filtered one) walks on
# through the index in distance order (pgvector's iterative scan) until it has them, or has
# walked past hnsw.max_scan_tuples (20,000).
_SEARCH_SETTINGS = (
    f"SET {{scope}} hnsw.ef_search = {_HNSW['ef_search']}; "
    "SET {scope} hnsw.iterative_scan = strict_order"
)

_TABLES = """
CREATE TABLE IF NOT EXISTS vectors (
    collection text NOT NULL,
    id text NOT NULL,
    embedding vector NOT NULL,
    metadata jsonb NOT NULL,
    PRIMARY KEY (collection, id)
);
CREATE TABLE IF NOT EXISTS vector_collections (
    collection text PRIMARY KEY,
    dimension integer NOT NULL
);
"""

_COMPARISONS = {"$eq": "=", "$ne": "<>", "$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}


def _literal(value: str) -> str:
    """A SQL string literal (standard_conforming_strings: only quotes are special)."""
    return "'" + value.replace("'", "''") + "'"


def _index_name(collection: str) -> str:
    return "vectors_" + hashlib.sha256(collection.encode("utf-8")).hexdigest()[:40]


def index_ddl(collection: str, dimension: int) -> str:
    """The statement that builds a collection's partial HNSW index (if it is missing)."""
    return (
        f"CREATE INDEX IF NOT EXISTS "
        f"{_index_name(collection)} ON vectors "
        f"USING hnsw ((embedding::vector({int(dimension)})) vector_cosine_ops) "
        f"WITH (m = 16, ef_construction = {EF_CONSTRUCTION}) "
        f"WHERE collection = {_literal(collection)}"
    )


class _Vector:
    """A vector bound in pgvector's binary form (dimension, unused, big-endian float32s):
    much cheaper to make than its text, and exact."""

    __slots__ = ("data",)

    def __init__(self, vector: np.ndarray) -> None:
        values = np.asarray(vector, dtype=">f4").reshape(-1)
        self.data = struct.pack(">HH", len(values), 0) + values.tobytes()


@cache
def _vector_dumper() -> type:
    """psycopg's dumper of :class:`_Vector` (psycopg is imported when a store is opened)."""
    from psycopg.adapt import Dumper
    from psycopg.pq import Format

    class VectorDumper(Dumper):
        # No type oid: the statement's cast (%b::vector) gives the parameter its type.
        format = Format.BINARY

        def dump(self, obj: _Vector) -> bytes:
            return obj.data

    return VectorDumper


def where_sql(where: Mapping[str, Any], params: dict[str, Any] | None = None) -> str:
    """SQL over ``metadata`` (jsonb) for a Chroma ``where`` filter; its values are added to
    ``params`` as named parameters ``w0``, ``w1``...

    Raises:
        InvalidInputError: An operator Chroma's filters do not have.
    """
    params = {} if params is None else params

    def bind(value: Any) -> str:  # noqa: ANN401
        name = f"w{len(params)}"
        params[name] = value
        return f"%({name})s"

    parts: list[str] = []
    for key, condition in where.items():
        if key in ("$and", "$or"):
            subs = [where_sql(part, params) for part in condition]
            joiner, empty = (" AND ", "TRUE") if key == "$and" else (" OR ", "FALSE")
            parts.append("(" + (joiner.join(subs) or empty) + ")")
            continue
        ops = condition if isinstance(condition, Mapping) else {"$eq": condition}
        for op, arg in ops.items():
            field = f"(metadata -> {bind(key)})"
            if op in ("$in", "$nin"):
                if not isinstance(arg, list | tuple):
                    raise InvalidInputError(f"{op} needs a list, got {arg!r}")
                found = f"{field} = ANY({bind([json.dumps(a) for a in arg])}::jsonb[])"
                parts.append(found if op == "$in" else f"({field} IS NOT NULL AND NOT {found})")
            elif op in _COMPARISONS:
                # Values of another JSON type never compare (jsonb would order them by type).
                value = bind(json.dumps(arg))
                parts.append(
                    f"(jsonb_typeof({field}) = jsonb_typeof({value}::jsonb) "
                    f"AND {field} {_COMPARISONS[op]} {value}::jsonb)"
                )
            else:
                raise InvalidInputError(f"unknown operator {op!r} in a vector filter")
    return " AND ".join(parts) or "TRUE"


class PostgresVectorStore:
    """Every bank's vectors in one pgvector table, with the interface the engine uses of
    :class:`~agentmem.store.staged_vectors.StagedVectorStore`.

    Args:
        db: The :class:`~agentmem.store.postgres.database.PostgresDatabase` of the store.

    Raises:
        StorageError: pgvector is not available in the database.
    """

    embedded = False  # no embedded Chroma: nothing to repair after a crash
    staged = 0  # nothing waits for a flush
    #: ``upsert`` and ``delete`` run on the calling thread's transaction, if it is in one.
    writes_in_transaction = True

    def __init__(self, db: Any) -> None:  # noqa: ANN401
        self._db = db
        self._dimensions: dict[str, int] = {}
        self._lock = threading.Lock()
        # Pooled connections given the vector dumper, and the HNSW settings.
        self._adapted: weakref.WeakSet[Any] = weakref.WeakSet()
        self._configured: weakref.WeakSet[Any] = weakref.WeakSet()
        with self._connection() as con, con.transaction():
            con.execute("SELECT pg_advisory_xact_lock(%s)", [VECTOR_SCHEMA_LOCK])
            try:
                with con.transaction():
                    con.execute("CREATE EXTENSION IF NOT EXISTS vector")
            except db._psycopg.Error as exc:
                raise StorageError(
                    f"pgvector is not available in {db.path}: {exc}; install it on the server "
                    "and run CREATE EXTENSION vector as a user allowed to"
                ) from exc
            con.execute(_TABLES)

    @contextmanager
    def _connection(self) -> Iterator[Any]:
        """The calling thread's transaction connection, else a pooled one, able to bind
        vectors; psycopg's errors as StorageError."""
        with self._db._connection() as con, self._db.storage_errors():
            if con not in self._adapted:
                con.adapters.register_dumper(_Vector, _vector_dumper())
                self._adapted.add(con)
            yield con

    # -- collections ------------------------------------------------------------------------

    def _dimension_of(self, collection: str) -> int | None:
        with self._lock:
            known = self._dimensions.get(collection)
        if known is not None:
            return known
        with self._connection() as con:
            row = con.execute(
                "SELECT dimension FROM vector_collections WHERE collection = %s", [collection]
            ).fetchone()
        if row is not None:
            with self._lock:
                self._dimensions[collection] = row[0]
            return row[0]
        return None

    def create_collection(self, collection: str, dimension: int) -> None:
        """Register a collection and build its (empty) index, in a transaction of its own.

        Call it when a bank is created, outside any transaction: building an index waits for
        the table's writers, so it must not run inside one that has written vectors.
        """
        if self._dimension_of(collection) is not None:
            return
        psycopg = self._db._psycopg
        try:
            with psycopg.connect(self._db.url, autocommit=True) as con, con.transaction():
                con.execute("SET LOCAL lock_timeout = '10s'")
                con.execute("SELECT pg_advisory_xact_lock(%s)", [VECTOR_SCHEMA_LOCK])
                con.execute(
                    "INSERT INTO vector_collections VALUES (%s, %s) ON CONFLICT DO NOTHING",
                    [collection, dimension],
                )
                con.execute(index_ddl(collection, dimension))
        except psycopg.Error as exc:
            raise StorageError(f"cannot create vector collection {collection}: {exc}") from exc
        self._dimension_of(collection)

    def _checked_dimension(self, collection: str, vectors: np.ndarray) -> int:
        """The collection's dimension (creating it for these vectors if new).

        Raises:
            InvalidInputError: The vectors are not of the collection's dimension.
        """
        given = int(vectors.shape[1]) if vectors.ndim == 2 else int(vectors.shape[-1])
        dimension = self._dimension_of(collection)
        if dimension is None:
            self.create_collection(collection, given)
            dimension = given
        if given != dimension:
            raise InvalidInputError(
                f"vectors of dimension {given} given for collection {collection} of "
                f"dimension {dimension}"
            )
        return dimension

    # -- writes -----------------------------------------------------------------------------

    def write_in(
        self,
        cur: Any,  # noqa: ANN401
        bank_id: str,
        collection: str,
        ids: Sequence[str],
        vectors: np.ndarray,
        metadatas: Sequence[Mapping[str, str | int | float | bool]],
    ) -> None:
        """In the caller's transaction: write the vectors of the rows it stores."""
        del cur, bank_id  # the thread's statements run in its transaction
        self.upsert(collection, ids, vectors, metadatas)

    def delete_in(self, cur: Any, bank_id: str, collection: str, ids: Sequence[str]) -> None:  # noqa: ANN401
        """In the caller's transaction: delete the vectors of the rows it deletes."""
        del cur, bank_id
        self.delete(collection, ids)

    def drop_in(self, cur: Any, bank_id: str, collection: str) -> None:  # noqa: ANN401
        """In the caller's transaction: delete a deleted bank's vectors (:meth:`drop` then
        drops the collection's index)."""
        del cur, bank_id
        with self._connection() as con:
            con.execute("DELETE FROM vectors WHERE collection = %s", [collection])
            con.execute("DELETE FROM vector_collections WHERE collection = %s", [collection])

    def stage(
        self,
        bank_id: str,
        collection: str,
        ids: Sequence[str],
        vectors: np.ndarray,
        metadatas: Sequence[Mapping[str, str | int | float | bool]],
    ) -> None:
        """Nothing to do: :meth:`write_in` wrote the vectors in the rows' transaction."""

    def flush(self) -> None:
        """Nothing is staged."""

    def upsert(
        self,
        collection: str,
        ids: Sequence[str],
        vectors: np.ndarray,
        metadatas: Sequence[Mapping[str, str | int | float | bool]],
    ) -> None:
        """Add or replace vectors (the last of repeated ids wins).

        Raises:
            InvalidInputError: The vectors are not of the collection's dimension, or their
                count is not that of the ids and metadatas.
        """
        if not ids:
            return
        embeddings = np.asarray(vectors, dtype=np.float32).reshape(len(ids), -1)
        if len(metadatas) != len(ids):
            raise InvalidInputError(f"{len(ids)} ids but {len(metadatas)} metadatas")
        self._checked_dimension(collection, embeddings)
        with self._connection() as con, con.cursor() as cur:
            cur.executemany(  # pipelined: one round trip
                "INSERT INTO vectors (collection, id, embedding, metadata) "
                "VALUES (%s, %s, %b::vector, %s::jsonb) "
                "ON CONFLICT (collection, id) DO UPDATE "
                "SET embedding = excluded.embedding, metadata = excluded.metadata",
                [
                    (collection, i, _Vector(v), json.dumps(dict(m)))
                    for i, v, m in zip(ids, embeddings, metadatas, strict=True)
                ],
            )

    def delete(self, collection: str, ids: Sequence[str]) -> None:
        """Delete vectors (absent ids are ignored), in the calling thread's transaction."""
        if not ids:
            return
        with self._connection() as con:
            con.execute(
                "DELETE FROM vectors WHERE collection = %s AND id = ANY(%s::text[])",
                [collection, list(ids)],
            )

    def drop(self, collection: str) -> None:
        """Delete a bank's whole collection (what :meth:`drop_in` left) and its index."""
        with self._connection() as con, con.transaction():
            self.drop_in(None, "", collection)
            con.execute(f"DROP INDEX IF EXISTS {_index_name(collection)}")
        with self._lock:
            self._dimensions.pop(collection, None)

    def unindexed(self, collections: Sequence[str]) -> list[str]:
        """Those of ``collections`` whose partial HNSW index is gone (dropped by hand, or
        never built): searches of them stay right but scan every vector of the table."""
        with self._connection() as con:
            present = {
                row[0]
                for row in con.execute(
                    "SELECT indexname FROM pg_indexes WHERE tablename = 'vectors' "
                    "AND schemaname = current_schema()"
                ).fetchall()
            }
        return [c for c in collections if _index_name(c) not in present]

    def build_missing_indexes(self) -> list[str]:
        """Build the index of every collection that lacks it (each in a transaction of its
        own, as :meth:`create_collection` does); the collections built."""
        with self._connection() as con:
            dimensions = dict(
                con.execute("SELECT collection, dimension FROM vector_collections").fetchall()
            )
        built = self.unindexed(sorted(dimensions))
        psycopg = self._db._psycopg
        for collection in built:
            try:
                with psycopg.connect(self._db.url, autocommit=True) as con, con.transaction():
                    con.execute("SELECT pg_advisory_xact_lock(%s)", [VECTOR_SCHEMA_LOCK])
                    con.execute(index_ddl(collection, dimensions[collection]))
            except psycopg.Error as exc:
                raise StorageError(f"cannot build the index of {collection}: {exc}") from exc
        return built

    # -- reads ------------------------------------------------------------------------------

    @staticmethod
    def _nearest_sql(
        collection: str,
        dimension: int,
        where: str,
        limit: int,
        *,
        exact: bool = False,
        metadata: bool = False,
    ) -> str:
        """Nearest (id, similarity[, metadata]) of the collection to parameter ``q``: through
        its index, or ``exact`` by sorting every row that passes ``where``."""
        distance = f"embedding::vector({dimension}) <=> %(q)b::vector({dimension})"
        order = f"0 + ({distance})" if exact else distance  # not the index's expression
        return (
            f"SELECT id, 1 - ({distance}) AS similarity{', metadata' if metadata else ''} "
            "FROM vectors "
            f"WHERE collection = {_literal(collection)} AND {where} "
            f"ORDER BY {order} LIMIT {int(limit)}"
        )

    @contextmanager
    def _searching(self) -> Iterator[Any]:
        """A connection with the store's HNSW settings."""
        with self._connection() as con:
            if con not in self._configured:
                idle = con.info.transaction_status == self._db._psycopg.pq.TransactionStatus.IDLE
                # Outside a transaction the settings stay with the pooled connection; inside
                # one they could roll back with it, so they are set for it alone.
                con.execute(_SEARCH_SETTINGS.format(scope="SESSION" if idle else "LOCAL"))
                if idle:
                    self._configured.add(con)
            yield con

    def _search(self, sql: str, params: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        with self._searching() as con:
            return con.execute(sql, params).fetchall()

    def query(
        self,
        collection: str,
        vector: np.ndarray,
        n: int,
        where: Mapping[str, Any] | None = None,
        *,
        nearest_only: bool = False,
    ) -> list[tuple[str, float]]:
        """Nearest ``n`` (id, cosine similarity) whose metadata matches ``where``, best first.

        ``nearest_only`` keeps to the matches among the ``n × 16`` nearest (fewer than ``n``
        if that is all there are), as the Chroma store does for a filter that states a
        preference.
        """
        dimension = self._dimension_of(collection)
        if dimension is None or n <= 0:
            return []
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        if len(query) != dimension:
            raise InvalidInputError(
                f"a query vector of dimension {len(query)} for collection {collection} of "
                f"dimension {dimension}"
            )
        params: dict[str, Any] = {"q": _Vector(query)}
        if not where:
            sql = self._nearest_sql(collection, dimension, "TRUE", n)
            return [(i, float(s)) for i, s in self._search(sql, params)]
        clause = where_sql(where, params)
        if nearest_only:
            wide = n * OVERFETCH[-1]
            nearest = self._nearest_sql(collection, dimension, "TRUE", wide, metadata=True)
            sql = (
                f"SELECT id, similarity FROM ({nearest}) AS nearest WHERE {clause} "
                f"ORDER BY similarity DESC LIMIT {int(n)}"
            )
            rows = self._search(sql, params)
        else:
            rows = self._search(self._nearest_sql(collection, dimension, clause, n), params)
            if len(rows) < n:  # the walk gave up (or there are no more): search exactly
                exact = self._nearest_sql(collection, dimension, clause, n, exact=True)
                with self._connection() as con:
                    rows = con.execute(exact, params).fetchall()
        return [(i, float(s)) for i, s in rows]

    def query_many(
        self, collection: str, vectors: np.ndarray, n: int
    ) -> list[list[tuple[str, float]]]:
        """Nearest ``n`` (id, cosine similarity) of each vector, pipelined; best first."""
        if len(vectors) == 0:
            return []
        queries = np.asarray(vectors, dtype=np.float32).reshape(len(vectors), -1)
        dimension = self._dimension_of(collection)
        if dimension is None:
            return [[] for _ in queries]
        self._checked_dimension(collection, queries)
        sql = self._nearest_sql(collection, dimension, "TRUE", n)
        with self._searching() as con, con.cursor() as cur:
            cur.executemany(sql, [{"q": _Vector(q)} for q in queries], returning=True)
            found: list[list[tuple[str, float]]] = []
            while True:
                found.append([(i, float(s)) for i, s in cur.fetchall()])
                if not cur.nextset():
                    return found

    def holds_copy(self, collection: str) -> bool:
        """No copy in process: other replicas write the same vectors."""
        return False

    def get_vectors(self, collection: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vectors of ``ids`` (missing ids are absent from the result)."""
        if not ids:
            return {}
        with self._connection() as con:
            rows = con.execute(
                "SELECT id, embedding::real[] FROM vectors "
                "WHERE collection = %s AND id = ANY(%s::text[])",
                [collection, list(ids)],
            ).fetchall()
        return {i: np.asarray(v, dtype=np.float32) for i, v in rows}

    def ids(self, collection: str) -> set[str]:
        """Every id in a collection."""
        with self._connection() as con:
            rows = con.execute("SELECT id FROM vectors WHERE collection = %s", [collection])
            return {r[0] for r in rows.fetchall()}

    def count(self, collection: str) -> int:
        """How many vectors a collection holds."""
        with self._connection() as con:
            return con.execute(
                "SELECT count(*) FROM vectors WHERE collection = %s", [collection]
            ).fetchone()[0]

    def dimension(self, collection: str) -> int | None:
        """The length of a collection's vectors; None when it holds none."""
        with self._connection() as con:
            row = con.execute(
                "SELECT vector_dims(embedding) FROM vectors WHERE collection = %s LIMIT 1",
                [collection],
            ).fetchone()
        return None if row is None else int(row[0])

    def collection(self, name: str) -> _BareCollection:
        """A collection with Chroma's ``query`` call, for benchmarks that query it bare."""
        return _BareCollection(self, name)

    def close(self) -> None:
        """Nothing to release: the database belongs to the store."""


class _BareCollection:
    """One collection, answering Chroma's ``query(query_embeddings=, n_results=)``."""

    def __init__(self, store: PostgresVectorStore, name: str) -> None:
        self._store = store
        self._name = name

    def query(
        self,
        query_embeddings: Sequence[np.ndarray],
        n_results: int,
        include: Any = None,  # noqa: ANN401
    ) -> dict[str, list[list[Any]]]:
        del include
        found = self._store.query_many(self._name, np.asarray(query_embeddings), n_results)
        return {
            "ids": [[i for i, _ in hits] for hits in found],
            "distances": [[1.0 - s for _, s in hits] for hits in found],
        }
