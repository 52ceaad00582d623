"""``MemoryBank``: the verbs of one isolated bank (retain, recall, get, forget, ...).

Every verb has an async twin (``aretain``, ``arecall``, ...) that runs the one sync
implementation in a worker thread, as LangChain's and LlamaIndex's async retrievers do.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

import networkx as nx

from agentmem import reflect as reflecting
from agentmem.config import BankConfig, RecallConfig, normalize_tags
from agentmem.consolidate.observations import consolidate, list_observations
from agentmem.consolidate.profiles import keep_profiles_current
from agentmem.consolidate.worker import ConsolidationJob
from agentmem.errors import InvalidInputError, NotFoundError, StorageError
from agentmem.links import normalize_kind, validate_weight
from agentmem.recall.pipeline import recall as run_recall
from agentmem.retain import corrections
from agentmem.retain.messages import check_retain_size, string_list, validate_optional_str
from agentmem.retain.pipeline import retain as run_retain
from agentmem.retain.repeats import retained_from
from agentmem.store.changes import record_change
from agentmem.store.forget import forget_memories
from agentmem.store.graph import bank_graph, loaded_graph, mirror_dropped_on_failure
from agentmem.store.integrity import IntegrityReport, check_integrity
from agentmem.store.records import (
    from_db_time,
    load_memories,
    memories_by_id,
    memory_from_row,
    memory_selector,
    require_bank,
    select_memories,
)
from agentmem.store.transfer import export_bank
from agentmem.types import (
    Entity,
    Memory,
    RecallResult,
    Reflection,
    ReflectPrompt,
    RetainResult,
    TimeRange,
)

if TYPE_CHECKING:
    from agentmem.engine import Engine

P = ParamSpec("P")
R = TypeVar("R")


def _bank_verb(
    method: Callable[Concatenate[MemoryBank, P], R],
) -> Callable[Concatenate[MemoryBank, P], R]:
    """A verb of a bank that may be deleted: refused on a deleted bank's handle, and a store
    error that a deletion during the call caused is reported as the missing bank."""

    @functools.wraps(method)
    def verb(bank: MemoryBank, /, *args: P.args, **kwargs: P.kwargs) -> R:
        bank._require_alive()
        try:
            return method(bank, *args, **kwargs)
        except StorageError as exc:
            if bank._deleted:
                raise NotFoundError(f"no bank {bank.id!r}: it was deleted") from exc
            raise

    return verb


def _async_twin(method: Callable[P, R]) -> Callable[P, Awaitable[R]]:
    """An ``async`` version of a bank verb that runs it in a worker thread."""

    @functools.wraps(method)
    async def twin(*args: P.args, **kwargs: P.kwargs) -> R:
        return await asyncio.to_thread(method, *args, **kwargs)

    twin.__doc__ = f"Async twin of :meth:`MemoryBank.{method.__name__}` (same arguments)."
    return twin


class MemoryBank:
    """One hard-isolated bank of memories. Get it from :meth:`AgentMemory.bank`.

    Once the bank is deleted (:meth:`AgentMemory.delete_bank`) every verb of this handle
    raises NotFoundError, also if a bank of the same id is created again (get a new handle);
    a write running when the bank is deleted either committed before the deletion or raises
    NotFoundError, writing nothing.
    """

    def __init__(self, engine: Engine, bank_id: str, collection: str, config: BankConfig) -> None:
        self._engine = engine
        self._collection = collection
        self._config = config
        self._deleted = False  # set by AgentMemory.delete_bank
        self.id = bank_id

    def _require_alive(self) -> None:
        if self._deleted:
            raise NotFoundError(f"no bank {self.id!r}: it was deleted")

    @property
    def config(self) -> BankConfig:
        """The bank's persisted settings, as last configured through any process."""
        engine = self._engine
        config = engine.mirror("configs", self.id)
        if config is None:
            version = engine.bank_version(self.id)
            rows = engine.db.fetchall("SELECT config FROM banks WHERE bank_id = ?", [self.id])
            if not rows:  # deleted meanwhile: the next write says so
                return self._config
            config = BankConfig.from_mapping(json.loads(rows[0][0] or "{}"))
            engine.keep_mirror("configs", self.id, config, version)
            self._config = config
        return config

    @_bank_verb
    def configure(self, **changes: Any) -> BankConfig:
        """Change and persist bank settings (see :class:`~agentmem.config.BankConfig`).

        Applies to what is retained from now on.

        Raises:
            InvalidInputError: An unknown setting or a bad value.
        """
        engine = self._engine
        with engine.db.transaction() as cur:
            require_bank(cur, self.id, self._collection)
            engine.begin_write(cur, self.id)
            config = BankConfig.from_mapping({**self.config.to_mapping(), **changes})
            cur.execute(
                "UPDATE banks SET config = ? WHERE bank_id = ?",
                [json.dumps(config.to_mapping()), self.id],
            )
            version = record_change(engine.db, cur, self.id, "configure")
        engine.bank_changed(self.id, version)
        engine.keep_mirror("configs", self.id, config, version)
        self._config = config
        return config

    def __repr__(self) -> str:
        return f"MemoryBank({self.id!r})"

    @_bank_verb
    def retain(
        self,
        content: str | list[Mapping[str, Any]],
        *,
        mentioned_at: Any = None,
        occurred_at: Any = None,
        tags: Iterable[str] = (),
        importance: float | None = None,
        context: str | None = None,
        document_id: str | None = None,
        entity_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        links: Iterable[tuple[Any, ...]] | None = None,
    ) -> RetainResult:
        """Store content: the raw episode verbatim, plus the facts extracted from it.

        Args:
            content: A string, or chat messages ``{"role", "content"}`` with optional
                ``"name"`` (the speaker), ``"timestamp"`` (when it was said) and
                ``"metadata"`` (kept on the facts that come from that message).
            mentioned_at: When the agent learned it (naive = UTC). Defaults to now, with a
                warning: relative dates in the content are resolved against this time.
            occurred_at: When it happened: a datetime or a ``(start, end)`` pair.
            tags: Visibility scopes, for ``recall(tags=...)``.
            importance: In [0, 1]; when None the extractor estimates it around 0.5.
            context: Free text about where the content came from.
            document_id: Groups retains (a session, a file); ``forget(document_id=...)``.
            entity_id: An explicit entity every fact of this call is about.
            metadata: Free JSON stored on every fact (a message's own metadata wins).
            links: Explicit edges from every new fact to existing memories, as (kind, target id,
                weight) tuples: ``[("caused_by", memory_id, 0.9), ("related", other_id)]``
                (weight default 1).

        Returns:
            The facts created, each recallable by every strategy when this returns (a chat
            turn that states its cause is followed by that clause, a part of the turn that
            only the causal strategy returns, see docs/entities-and-causes.md). With an
            LLM, the result also tells how facts were extracted and the calls and tokens
            used; observation consolidation then runs in the background
            (:meth:`wait_for_consolidation`).

        Raises:
            InvalidInputError: Empty content, malformed messages, importance outside [0, 1],
                malformed links.
            NotFoundError: A link targets a memory that is not in this bank.
            ExtractionError: The offline extractor failed; nothing was stored. (An LLM
                failure does not raise: the offline extractor runs instead.)
        """
        result = run_retain(
            self._engine,
            self.id,
            self._collection,
            self.config,
            content,
            mentioned_at=mentioned_at,
            occurred_at=occurred_at,
            tags=tags,
            importance=importance,
            context=context,
            document_id=document_id,
            entity_id=entity_id,
            metadata=metadata,
            links=links,
        )
        # Facts leave a bank only by forget or a document's replacement: only a replacement
        # can make a profile stale, and without profiles kept nothing else is to be done.
        if self.config.profiles or result.replaced:
            keep_profiles_current(
                self._engine,
                self.id,
                self._collection,
                self.config,
                result.memories,
                check_stale=bool(result.replaced),
            )
        self._schedule_consolidation(result)
        return result

    def _schedule_consolidation(self, result: RetainResult) -> None:
        worker = self._engine.consolidator
        if worker is None or not self.config.consolidate or result.extraction != "llm":
            return
        ids = tuple(m.id for m in result.memories)
        if ids:
            engine, collection, config = self._engine, self._collection, self.config

            def run() -> None:
                try:
                    consolidate(engine, self.id, collection, config, ids)
                except Exception:
                    if not self._deleted:
                        raise  # else the bank was deleted meanwhile: nothing to consolidate

            worker.submit(ConsolidationJob(self.id, ids, run))

    def wait_for_consolidation(self, timeout: float | None = None) -> bool:
        """Block until observation consolidation of this bank's retains has finished.

        Args:
            timeout: Seconds to wait at most (None: as long as it takes).

        Returns:
            True when nothing is left to consolidate, False if the timeout passed first.
            Without an LLM there is never anything to wait for.
        """
        worker = self._engine.consolidator
        return True if worker is None else worker.wait(self.id, timeout)

    @property
    def consolidation_error(self) -> str | None:
        """Why this bank's last consolidation failed, or None (facts are never lost)."""
        worker = self._engine.consolidator
        return None if worker is None else worker.last_error(self.id)

    @_bank_verb
    def observations(self) -> list[Memory]:
        """The bank's observations (fact_type "observation"), most supported first.

        Each one's metadata holds ``source_memory_ids``, ``proof_count`` and ``history``.
        """
        return list_observations(self._engine, self.id)

    @_bank_verb
    def reflect(self, query: str, *, top_k: int = 10) -> Reflection:
        """Answer a question from memory: recall facts and observations, then ask the LLM.

        Args:
            query: The question.
            top_k: How many observations, and how many facts, to use as evidence.

        Returns:
            A :class:`Reflection`. With an LLM: the answer, the ids it cites, and an
            "opinion" memory when it formed one. Offline: ``answer`` is None and the
            evidence is returned.

        Raises:
            InvalidInputError: Empty query.
            LLMError: The LLM failed.
        """
        return reflecting.reflect(
            self._engine, self.id, self._collection, self.config, query, top_k
        )

    @_bank_verb
    def reflect_prepare(self, query: str, *, top_k: int = 10) -> ReflectPrompt:
        """The evidence for ``query`` and a ready prompt, for an agent that runs its own LLM.

        Send ``prompt.messages`` to your model, then store its conclusions with
        :meth:`reflect_commit`.

        Raises:
            InvalidInputError: Empty query.
        """
        return reflecting.prepare(
            self._engine,
            self.id,
            self._collection,
            query,
            top_k=top_k,
            date_order=self.config.date_order,
        )

    @_bank_verb
    def reflect_commit(
        self,
        query: str,
        *,
        observations: Iterable[str] = (),
        opinions: Iterable[str] = (),
        cited_ids: Iterable[str] = (),
    ) -> list[Memory]:
        """Store the observations and opinions an agent produced after :meth:`reflect_prepare`.

        Args:
            query: The question they answer (kept in their metadata).
            observations: Texts stored as fact_type "observation".
            opinions: Texts stored as fact_type "opinion".
            cited_ids: The memories they rest on (their ``source_memory_ids``).

        Returns:
            The stored memories, recallable at once.

        Raises:
            InvalidInputError: Nothing to store, or an empty text.
            NotFoundError: A cited id is not a memory of this bank.
        """
        return reflecting.commit(
            self._engine,
            self.id,
            self._collection,
            self.config,
            query,
            observations=observations,
            opinions=opinions,
            cited_ids=cited_ids,
        )

    @_bank_verb
    def recall(
        self,
        query: str,
        *,
        top_k: int = 10,
        max_tokens: int = 4096,
        strategies: Iterable[str] | str | None = None,
        fact_types: Iterable[str] | str | None = None,
        tags: Iterable[str] | str | None = None,
        tags_match: str = "any",
        time_range: tuple[Any, Any] | TimeRange | None = None,
        now: Any = None,
        scoring_weights: Mapping[str, float] | None = None,
        thinking_budget: int = 100,
        rerank: bool | None = None,
        reinforce: bool = True,
        **strategy_params: Any,
    ) -> RecallResult:
        """Find the memories that answer ``query``, best first, within a token budget.

        Args:
            query: What to recall; its text is data (FTS operators and quotes are harmless).
            top_k: At most this many hits (1 to 10,000).
            max_tokens: cl100k_base token budget of the returned texts; misfits are skipped
                and the top hit is always returned (truncated if it alone is too long).
            strategies: None runs the four default strategies side by side and fuses them
                ("semantic", "keyword", "graph" and "temporal"); or names: "semantic" (alias
                "similarity"), "keyword" (alias "bm25"), "graph", "temporal", "timeline",
                "causal", "analogical".
            fact_types: Only these fact types ("world", "experience", ...).
            tags: Only memories with these tags, as ``tags_match`` says: "any" (at least
                one), "all", or "exact" (the same set).
            time_range: ``(start, end)``: only memories whose occurrence (or, when unknown,
                mention time) falls inside.
            now: The time recency is measured from (default: now).
            scoring_weights: Overrides of w_relevance / w_recency / w_importance /
                w_reinforcement (defaults 0.5 / 0.2 / 0.2 / 0.1), divided by their sum.
            thinking_budget: Most graph nodes the "graph" strategy expands.
            rerank: None uses the bank's ``rerank`` setting, else the configured reranker;
                False the offline default; True requires a configured reranker (else
                InvalidInputError). Each hit's ``strategy_details["rerank"]`` names it.
            reinforce: Count this recall in the returned memories' ``access_count``.
            **strategy_params: Parameters of the strategies in use: ``edge_types`` (graph,
                causal: link kinds to follow, "entity" included), ``seed_memory_id`` (causal;
                default the memory closest to the query), ``max_depth`` (causal; default 5,
                capped at 10), ``direction`` (causal: "causes", "effects" or "both"),
                ``analogical_alpha`` (analogical; 0 = structure only, 1 = embedding only),
                ``entity``, ``start``, ``end``, ``order`` (timeline: one entity's memories in
                time order, newest first unless ``order="asc"``).

        Returns:
            A :class:`RecallResult`; each hit's ``strategy_details`` says why it came back.

        Raises:
            InvalidInputError: Empty query or one over ``Limits.query_chars``, unknown
                strategy, bad weights or filters, a parameter that no strategy in use reads.
            NotFoundError: ``seed_memory_id`` is not a memory of this bank.
            NotAvailableError: A documented strategy that this version does not have.
        """
        # One read of the bank's version for the whole call (settings, every mirror).
        with self._engine.one_version_read(self.id):
            config = RecallConfig.build(
                query,
                top_k=top_k,
                max_tokens=max_tokens,
                strategies=strategies,
                fact_types=fact_types,
                tags=tags,
                tags_match=tags_match,
                time_range=time_range,
                now=now,
                scoring_weights=scoring_weights,
                thinking_budget=thinking_budget,
                rerank=self.config.rerank if rerank is None else rerank,
                reinforce=reinforce,
                strategy_params=strategy_params,
                date_order=self.config.date_order,
                max_query_chars=self._engine.config.limits.query_chars,
            )
            return run_recall(self._engine, self.id, self._collection, config)

    @_bank_verb
    def get(self, memory_id: str) -> Memory:
        """One memory by id.

        Raises:
            NotFoundError: No such memory in this bank.
        """
        if not isinstance(memory_id, str):
            raise InvalidInputError("memory_id must be a string")
        found = load_memories(self._engine.db, self.id, [memory_id])
        if memory_id not in found:
            raise NotFoundError(f"no memory {memory_id!r} in bank {self.id!r}")
        return found[memory_id]

    @_bank_verb
    def find_retained(self, content: str | list[Mapping[str, Any]]) -> list[list[Memory]]:
        """What the bank already holds of some content, message by message.

        Lets a caller that re-sends a conversation (a restored chat history) retain only
        what is new. Matching is the one ``retain`` uses for exact repeats.

        Args:
            content: As :meth:`retain` takes it: a string (one message) or chat messages.

        Returns:
            For each message, the memories retained from an identical message (same speaker
            and normalised text, and the same time when the message has a ``timestamp``),
            oldest first; empty for a new or empty message.

        Raises:
            InvalidInputError: Malformed content, or content over the retain limits.
            NotFoundError: The bank was deleted.
        """
        limits = self._engine.config.limits
        check_retain_size(
            content, max_chars=limits.retain_chars, max_messages=limits.retain_messages
        )
        return retained_from(self._engine.db, self.id, content, max_depth=limits.json_depth)

    @_bank_verb
    def memories(
        self,
        *,
        tags: Iterable[str] | None = None,
        document_id: str | None = None,
        limit: int | None = None,
    ) -> list[Memory]:
        """The bank's memories, oldest first.

        Args:
            tags: Only memories having any of these tags.
            document_id: Only memories retained with this document id.
            limit: At most this many.

        Raises:
            InvalidInputError: A malformed selector or limit.
        """
        tag_list = list(normalize_tags(tags)) if tags is not None else None
        doc = validate_optional_str(document_id, field="document_id", max_len=512)
        where, params = memory_selector(self.id, tags=tag_list, document_id=doc)
        if limit is not None and (
            isinstance(limit, bool) or not isinstance(limit, int) or limit < 0
        ):
            raise InvalidInputError("limit must be a non-negative integer")
        sql = select_memories(where, limit=limit)
        return [memory_from_row(row) for row in self._engine.db.fetchall(sql, params)]

    @_bank_verb
    def forget(
        self,
        ids: str | Iterable[str] | None = None,
        *,
        tags: Iterable[str] | None = None,
        document_id: str | None = None,
    ) -> int:
        """Delete memories everywhere: rows, vectors, keyword index, entity links, links,
        and episodes left without facts. Selectors combine with AND. A memory's parts (the
        cause clause split off a chat turn, see :meth:`retain`) go with it.

        Args:
            ids: Memory ids (unknown ids are ignored).
            tags: Memories having any of these tags.
            document_id: Memories retained with this document id.

        Returns:
            How many memories were deleted.

        Raises:
            InvalidInputError: No selector given (use ``AgentMemory.delete_bank`` to wipe).
        """
        if ids is None and tags is None and document_id is None:
            raise InvalidInputError("forget needs ids, tags or document_id")
        id_list = None if ids is None else string_list(ids, field="ids")
        tag_list = list(normalize_tags(tags)) if tags is not None else None
        doc = validate_optional_str(document_id, field="document_id", max_len=512)
        # With the profiles refreshed before another writer may read or write the bank: a
        # profile never keeps what the bank forgot.
        with self._engine.bank_held(self.id):
            gone = forget_memories(self._engine, self.id, self._collection, id_list, tag_list, doc)
            if gone:
                keep_profiles_current(
                    self._engine, self.id, self._collection, self.config, check_stale=True
                )
        return gone

    def _rebuild_stale_profiles(self) -> None:
        """Rebuild (or, when the bank keeps none, delete) the profiles citing a fact the bank
        no longer holds (``AgentMemory.repair``)."""
        keep_profiles_current(
            self._engine, self.id, self._collection, self.config, check_stale=True
        )

    @_bank_verb
    def link(self, src_id: str, dst_id: str, kind: str, weight: float = 1.0) -> None:
        """Add (or re-weight) an explicit edge between two memories of this bank.

        ``bank.link(effect, cause, "caused_by")`` says ``cause`` is a cause of ``effect``;
        ``bank.link(a, b, "followed_by")`` that ``b`` came after ``a``. CamelCase spellings
        ("CausedBy") are accepted. The edge is walked by the "graph" and "causal" strategies
        as soon as this returns.

        Raises:
            NotFoundError: Either memory is not in this bank.
            InvalidInputError: Unknown kind ("entity" edges come from entity resolution), a
                weight outside [0, 1], or a memory linked to itself.
        """
        kind = normalize_kind(kind)
        weight = validate_weight(weight)
        if not isinstance(src_id, str) or not isinstance(dst_id, str):
            raise InvalidInputError("memory ids must be strings")
        if src_id == dst_id:
            raise InvalidInputError("a memory cannot link to itself")
        with (
            self._engine.db.write_lock,
            mirror_dropped_on_failure(self._engine, self.id),
            self._engine.db.transaction() as cur,
        ):
            # Inside the transaction: a forget or delete_bank cannot slip in between.
            require_bank(cur, self.id, self._collection)
            self._engine.begin_write(cur, self.id)
            found = {row[0] for row in memories_by_id(cur, self.id, [src_id, dst_id], "m.id")}
            for memory_id in (src_id, dst_id):
                if memory_id not in found:
                    raise NotFoundError(f"no memory {memory_id!r} in bank {self.id!r}")
            cur.execute(
                "DELETE FROM links WHERE bank_id = ? AND src_id = ? AND dst_id = ? AND kind = ?",
                [self.id, src_id, dst_id, kind],
            )
            cur.execute(
                "INSERT INTO links VALUES (?, ?, ?, ?, ?, now())",
                [self.id, src_id, dst_id, kind, weight],
            )
            graph = loaded_graph(self._engine, self.id)
            if graph is not None:
                graph.add_link(src_id, dst_id, kind, weight)
            version = record_change(self._engine.db, cur, self.id, "link", [src_id, dst_id])
        self._engine.bank_changed(self.id, version)

    @_bank_verb
    def entities(self, *, kind: str | None = None) -> list[Entity]:
        """The bank's canonical entities, by name; ``kind`` keeps one kind ("person", ...)."""
        if kind is not None and not isinstance(kind, str):
            raise InvalidInputError("kind must be a string")
        return self._entities_where(
            "e.bank_id = $bank AND (CAST($kind AS VARCHAR) IS NULL OR e.kind = $kind)",
            {"bank": self.id, "kind": kind},
        )

    @_bank_verb
    def entity(self, name_or_alias: str) -> Entity:
        """One entity by canonical name or alias (case-insensitive); an entity called that
        wins over one that merely has it as an alias.

        Raises:
            NotFoundError: No entity has that name or alias.
        """
        name = corrections.validate_name(name_or_alias, "name_or_alias")
        with self._engine.db.write_lock:
            found = corrections.find_entity(self._engine, self._engine.db.cursor(), self.id, name)
        return self._entity_by_id(found.id)

    def _entity_by_id(self, entity_id: str) -> Entity:
        found = self._entities_where("e.id = $id", {"id": entity_id})
        if not found:
            raise NotFoundError(f"no entity {entity_id!r} in bank {self.id!r}")
        return found[0]

    def _entities_where(self, condition: str, params: dict[str, Any]) -> list[Entity]:
        """Entities matching a condition on ``e`` (entities), with their memory ids, by name."""
        rows = self._engine.db.fetchall(
            "SELECT e.name, e.kind, e.aliases, array_agg(me.memory_id ORDER BY me.memory_id) "
            "FROM entities AS e LEFT JOIN memory_entities AS me ON me.entity_id = e.id "
            f"WHERE {condition} GROUP BY e.id, e.name, e.kind, e.aliases ORDER BY e.name, e.kind",
            params,
        )
        return [
            Entity(name=r[0], kind=r[1], aliases=tuple(r[2] or ()), memory_ids=tuple(r[3] or ()))
            for r in rows
        ]

    @_bank_verb
    def add_alias(self, entity: str, alias: str) -> Entity:
        """Correct entity resolution: ``alias`` always names ``entity`` from now on.

        An entity called ``alias`` is merged into ``entity``; memories where ``alias`` was an
        alias of some other entity move over. The correction is stored with the bank and wins
        over the resolver in every later retain, also after reopening.

        Args:
            entity: Name or alias of the entity that ``alias`` denotes.
            alias: The other name ("Bob" for "Robert Chen").

        Returns:
            The corrected entity.

        Raises:
            NotFoundError: No entity is called ``entity``.
            InvalidInputError: Empty or malformed names.
        """
        target = corrections.validate_name(entity, "entity")
        name = corrections.validate_name(alias, "alias")
        return self._entity_by_id(
            corrections.add_alias(self._engine, self.id, self._collection, target, name)
        )

    @_bank_verb
    def split_alias(self, entity: str, alias: str) -> Entity | None:
        """Correct entity resolution: ``alias`` never names ``entity`` from now on.

        The alias is removed, the memories that say ``alias`` but none of the entity's other
        names move to an entity of their own, and later mentions of ``alias`` are never
        resolved to ``entity``. Stored with the bank, like :meth:`add_alias`.

        Returns:
            The entity now holding those memories, or None when no memory moved.

        Raises:
            NotFoundError: No entity is called ``entity``.
            InvalidInputError: ``alias`` is the entity's canonical name, or a malformed name.
        """
        target = corrections.validate_name(entity, "entity")
        name = corrections.validate_name(alias, "alias")
        created = corrections.split_alias(self._engine, self.id, self._collection, target, name)
        return None if created is None else self._entity_by_id(created)

    @_bank_verb
    def graph(self) -> nx.MultiDiGraph:
        """A copy of the bank's memory graph (changing it changes nothing in the bank).

        Nodes are memory ids (``type="memory"``, with ``text``) and entity names
        (``type="entity"``, with ``kind`` and ``aliases``; ``"name (kind)"`` when two entities
        share a name). Every edge has a ``kind`` — "entity" (memory → each entity it
        mentions), "followed_by", "caused_by", "semantic", "temporal", "related",
        "supersedes", "part_of" (a clause split off a chat turn → the turn) — and a ``weight``.
        """
        texts = dict(
            self._engine.db.fetchall("SELECT id, text FROM memories WHERE bank_id = ?", [self.id])
        )
        return bank_graph(self._engine, self.id).export(texts)

    @_bank_verb
    def stats(self) -> dict[str, Any]:
        """Counts of what the bank holds."""
        db = self._engine.db
        count = {
            table: db.fetchall(f"SELECT count(*) FROM {table} WHERE bank_id = ?", [self.id])[0][0]
            for table in ("memories", "episodes", "entities", "links")
        }
        by_type = dict(
            db.fetchall(
                "SELECT fact_type, count(*) FROM memories WHERE bank_id = ? GROUP BY fact_type",
                [self.id],
            )
        )
        span = db.fetchall(
            "SELECT min(mentioned_at), max(mentioned_at) FROM memories WHERE bank_id = ?",
            [self.id],
        )[0]
        return {
            "bank_id": self.id,
            **count,
            "fact_types": by_type,
            "first_mentioned_at": from_db_time(span[0]),
            "last_mentioned_at": from_db_time(span[1]),
        }

    @_bank_verb
    def export(
        self,
        path: str | Path,
        *,
        vectors: bool = True,
        progress: Callable[[int, int], None] | None = None,
    ) -> int:
        """Write the whole bank to ``path`` as JSON Lines (see :mod:`agentmem.store.transfer`).

        Memories (every field, access counts included), episodes, entities, links and times
        round-trip exactly through :meth:`AgentMemory.import_`.

        Args:
            path: The file to write (overwritten).
            vectors: Include each memory's vector (base64 float32), so an import with the same
                embedder need not re-embed.
            progress: Called as ``progress(memories_done, memories_total)``.

        Returns:
            The number of memories written.
        """
        return export_bank(
            self._engine, self.id, self._collection, path, vectors=vectors, progress=progress
        )

    @_bank_verb
    def check_integrity(self) -> IntegrityReport:
        """Check that this bank's rows, vectors and keyword postings agree.

        See :meth:`AgentMemory.check_integrity`; this checks one bank only.
        """
        return check_integrity(self._engine, [self.id])

    aretain = _async_twin(retain)
    arecall = _async_twin(recall)
    aget = _async_twin(get)
    amemories = _async_twin(memories)
    afind_retained = _async_twin(find_retained)
    aforget = _async_twin(forget)
    alink = _async_twin(link)
    aentities = _async_twin(entities)
    aentity = _async_twin(entity)
    agraph = _async_twin(graph)
    aadd_alias = _async_twin(add_alias)
    asplit_alias = _async_twin(split_alias)
    astats = _async_twin(stats)
    aexport = _async_twin(export)
    acheck_integrity = _async_twin(check_integrity)
    aconfigure = _async_twin(configure)
    aobservations = _async_twin(observations)
    areflect = _async_twin(reflect)
    areflect_prepare = _async_twin(reflect_prepare)
    areflect_commit = _async_twin(reflect_commit)
    await_for_consolidation = _async_twin(wait_for_consolidation)
