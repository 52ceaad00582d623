"""Configuration as data: engine settings and the frozen per-call recall configuration.

``recall()`` keeps the keyword arguments of SPEC.md, but builds them into one validated,
frozen :class:`RecallConfig` before any work starts (graphiti's ``SearchConfig`` pattern), so
every stage of the pipeline reads one object instead of twenty arguments.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agentmem._time import optional_utc, to_utc, utc_now
from agentmem.errors import InvalidInputError, shown
from agentmem.links import EDGE_KINDS, normalize_kind
from agentmem.retain.labels import LabelGroup, parse_label_groups
from agentmem.retain.messages import clean_text, string_list
from agentmem.temporal.expressions import checked_date_order
from agentmem.types import FACT_TYPES, TimeRange

#: The arms TEMPR fuses when ``strategies=None`` and that exist in this version.
TEMPR_STRATEGIES: tuple[str, ...] = ("semantic", "keyword", "graph", "temporal")
#: Every strategy that can be asked for by name, with the extra recall arguments it takes.
STRATEGY_PARAMS: Mapping[str, frozenset[str]] = {
    "semantic": frozenset(),
    "keyword": frozenset(),
    "graph": frozenset({"edge_types"}),
    "temporal": frozenset(),
    "timeline": frozenset({"entity", "start", "end", "order"}),
    "causal": frozenset({"seed_memory_id", "max_depth", "edge_types", "direction"}),
    "analogical": frozenset({"analogical_alpha"}),
}
#: A single one of these keeps its own order instead of the composite score's.
ORDERED_STRATEGIES: frozenset[str] = frozenset({"timeline", "causal", "analogical"})
CAUSAL_DIRECTIONS: frozenset[str] = frozenset({"causes", "effects", "both"})
STRATEGY_ALIASES: Mapping[str, str] = {"similarity": "semantic", "bm25": "keyword"}
TAGS_MATCH_MODES: frozenset[str] = frozenset({"any", "all", "exact"})


@dataclass(frozen=True, slots=True)
class ScoringWeights:
    """Weights of the composite score; divided by their sum so the score stays in [0, 1]."""

    w_relevance: float = 0.5
    w_recency: float = 0.2
    w_importance: float = 0.2
    w_reinforcement: float = 0.1

    @classmethod
    def from_mapping(cls, weights: Mapping[str, float] | None) -> ScoringWeights:
        """Build weights from a partial mapping; missing keys keep their defaults."""
        if weights is None:
            return cls()
        if not isinstance(weights, Mapping):
            raise InvalidInputError("scoring_weights must be a mapping of weight name to number")
        known = {f for f in cls.__dataclass_fields__}
        unknown = set(weights) - known
        if unknown:
            raise InvalidInputError(
                f"unknown scoring weight(s) {sorted(unknown)}; expected {sorted(known)}"
            )
        values = {}
        for key, value in weights.items():
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise InvalidInputError(f"scoring weight {key} must be a number")
            if not math.isfinite(value) or value < 0:
                raise InvalidInputError(f"scoring weight {key} must be finite and >= 0")
            values[key] = float(value)
        result = cls(**values)
        if result.total == 0:
            raise InvalidInputError("scoring weights must not all be zero")
        return result

    @property
    def total(self) -> float:
        """Sum of the four weights."""
        return self.w_relevance + self.w_recency + self.w_importance + self.w_reinforcement


@dataclass(frozen=True, slots=True)
class FusionWeights:
    """How much each arm's normalised raw score counts in the offline relevance.

    BM25 is the strongest single arm on conversational memory (research/retrieval-lessons.md),
    so it weighs more than cosine similarity. A fact inside the period a query names (or, for
    a "when" question, anchored in time) is strong evidence, so the temporal arm weighs as much
    as BM25. The graph arm's activation is a weaker signal of its own (docs/benchmarks.md has
    the measurements behind these weights).
    """

    keyword: float = 1.0
    semantic: float = 0.5
    graph: float = 0.4
    temporal: float = 1.0
    timeline: float = 0.5
    causal: float = 0.5
    analogical: float = 0.5


@dataclass(frozen=True, slots=True)
class GraphConfig:
    """How retain links memories and how the graph strategies walk the links.

    Attributes:
        semantic_link_threshold: Cosine a retained fact needs with an earlier memory to get a
            "semantic" link (MiniLM: chat turns of one conversation average ~0.4; 0.7 keeps
            about five links per memory).
        semantic_link_k: At most this many semantic links per new fact.
        causal_clause_threshold: Cosine between a cause clause ("... because the vendor was
            late") and an earlier memory for a cue-phrase "caused_by" link.
        entry_points: Semantic matches the "graph" strategy starts from (the seed's top-5).
        entry_similarity: Cosine an entry point needs (the seed's 0.5). MiniLM puts a question
            and the chat turn answering it at 0.3-0.5, so the seed's threshold left many
            questions without an entry point (docs/benchmarks.md).
        decay: Activation kept per memory-to-memory hop (the seed's 0.8).
        causal_boost: Factor on "caused_by" edges (the seed's 2x); activation is capped at 1.
        causal_max_depth: Default ``max_depth`` of the "causal" strategy (hard cap 10).
        kind_weights: Extra factor per link kind in the "graph" walk (e.g. ``{"semantic":
            0.5}``); kinds not named count 1.
    """

    semantic_link_threshold: float = 0.7
    semantic_link_k: int = 5
    causal_clause_threshold: float = 0.6
    entry_points: int = 10
    entry_similarity: float = 0.3
    decay: float = 0.8
    causal_boost: float = 2.0
    causal_max_depth: int = 5
    kind_weights: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Limits:
    """The most one call may ask for, checked before any work; beyond them a call raises
    InvalidInputError and writes nothing.

    Attributes:
        retain_chars: Characters of content in one ``retain`` call, all messages together.
            Long content is processed in bounded pieces, so a call of this size stays well
            within a few hundred MB.
        retain_messages: Messages in one ``retain`` call.
        query_chars: Characters of a ``recall`` or ``reflect`` query (the keyword arm's cost
            grows with the number of words).
        json_depth: Nesting depth of metadata and every other JSON value a call takes (a dict
            or list inside a dict is depth 2).
    """

    retain_chars: int = 1_000_000
    retain_messages: int = 10_000
    query_chars: int = 10_000
    json_depth: int = 32

    def __post_init__(self) -> None:
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidInputError(
                    f"limit {name} must be a positive integer, got {shown(value)}"
                )


@dataclass(frozen=True, slots=True)
class EngineConfig:
    """Settings of one ``AgentMemory``; none is read from the environment.

    Attributes:
        candidates_per_strategy: How many memories each arm contributes before fusion.
        rrf_k: The RRF constant (60, as in the seed).
        rerank_top_n: How many fused candidates the reranker scores.
        fusion: Arm weights of the offline relevance.
        graph: Link building at retain and graph walking at recall.
        context_weight: Weight of a turn's neighbouring text in the keyword index (BM25F-style).
        keyword_rebuild_min: Rows written since the keyword index last took in its pending
            postings before it is due to again, in the background (also at least
            ``keyword_rebuild_fraction`` of the indexed rows).
        recency_window_days: Age at which recency reaches 0.
        reinforcement_cap: Access count at which reinforcement reaches 1.
        workers: Threads that run recall strategies in parallel.
        in_process_recall: Serve recall's keyword search and candidate rows from per-bank
            copies in process (``store/keyword_mirror.py``, ``store/recall_rows.py``), the
            same results as the SQL path they fall back to when False; on PostgreSQL kept
            current from the bank's version and change log, so replicas stay coherent.
        limits: Input sizes one call may not exceed (:class:`Limits`).
    """

    candidates_per_strategy: int = 60
    rrf_k: int = 60
    rerank_top_n: int = 50
    fusion: FusionWeights = field(default_factory=FusionWeights)
    graph: GraphConfig = field(default_factory=GraphConfig)
    context_weight: float = 0.5
    keyword_rebuild_min: int = 2000
    keyword_rebuild_fraction: float = 0.05
    recency_window_days: float = 30.0
    reinforcement_cap: int = 100
    workers: int = 4
    in_process_recall: bool = True
    limits: Limits = field(default_factory=Limits)


EXTRACTION_MODES: tuple[str, ...] = ("concise", "verbose", "custom")


@dataclass(frozen=True, slots=True)
class BankConfig:
    """Per-bank settings, persisted with the bank and editable with ``bank.configure()``.

    The LLM settings steer extraction only when ``AgentMemory(llm=...)`` is given; the offline
    extractor ignores them.

    Attributes:
        temporal_sigma_days: Decay of temporal links: two facts Δt apart are linked with
            weight exp(-Δt/σ); a day apart stays strong, months apart fade.
        retain_mission: What this bank should pay attention to, injected into the extraction
            prompt next to the built-in rules (e.g. "Keep technical decisions; ignore
            greetings").
        extraction_mode: "concise" (selective, default), "verbose" (richer facts with full
            context) or "custom" (``extraction_rules`` replace the built-in rules).
        extraction_rules: The rules of the "custom" mode.
        entity_labels: Label groups (see :mod:`agentmem.retain.labels`), as the seed's
            ``entity_labels`` JSON.
        entities_allow_free_form: False stores only label entities (labels-only mode).
        llm_chunk_chars: Characters of content per extraction call; a chunk holds many
            messages, a message is never split.
        consolidate: Run observation consolidation after each LLM retain.
        profiles: Keep entity profiles: offline observations that gather what each person
            said about one side of their life (activities, places, likes, family, pets, plans,
            work, works read or watched), rebuilt as facts arrive or are forgotten (see
            docs/observations.md). On by default; ``False`` stops building them.
        pieces: Embed each sentence of a fact that says several things as well, for the
            reranker (see docs/retain.md). On by default; ``False`` saves that embedding work
            (about a quarter of a chat retain's CPU) for facts retained from then on.
        rerank: The bank's default for ``recall(rerank=None)``: None uses the reranker the
            ``AgentMemory`` was given, False the offline default, True requires a configured
            reranker.
        date_order: How retain and recall read a numeric date with slashes or dashes whose
            first two numbers could both be a month ("03/04/2025"): "MDY" (March 4, the
            default) or "DMY" (3 April). A date with a number over 12 reads one way only, one
            with dots ("03.04.2025") is day-first.
    """

    temporal_sigma_days: float = 14.0
    retain_mission: str | None = None
    extraction_mode: str = "concise"
    extraction_rules: str | None = None
    entity_labels: tuple[LabelGroup, ...] = ()
    entities_allow_free_form: bool = True
    llm_chunk_chars: int = 3000
    consolidate: bool = True
    profiles: bool = True
    pieces: bool = True
    rerank: bool | None = None
    date_order: str = "MDY"

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> BankConfig:
        """Validate settings (unknown names and bad values raise InvalidInputError)."""
        fields = cls.__dataclass_fields__
        unknown = set(values) - set(fields)
        if unknown:
            raise InvalidInputError(
                f"unknown bank setting(s) {sorted(unknown)}; known: {sorted(fields)}"
            )
        # A slotted dataclass keeps defaults on its fields, not as class attributes.
        values = {**{name: f.default for name, f in fields.items()}, **values}
        sigma = values["temporal_sigma_days"]
        if isinstance(sigma, bool) or not isinstance(sigma, int | float):
            raise InvalidInputError("temporal_sigma_days must be a number")
        if not math.isfinite(sigma) or sigma <= 0:
            raise InvalidInputError("temporal_sigma_days must be finite and > 0")
        mode = values["extraction_mode"]
        if mode not in EXTRACTION_MODES:
            raise InvalidInputError(f"extraction_mode must be one of {list(EXTRACTION_MODES)}")
        rules = _optional_text(values.get("extraction_rules"), "extraction_rules")
        if mode == "custom" and not rules:
            raise InvalidInputError('extraction_mode "custom" needs extraction_rules')
        flags = {
            name: values[name]
            for name in ("entities_allow_free_form", "consolidate", "profiles", "pieces")
        }
        if not all(isinstance(flag, bool) for flag in flags.values()):
            raise InvalidInputError(
                "entities_allow_free_form, consolidate, profiles and pieces must be booleans"
            )
        chunk = values["llm_chunk_chars"]
        if isinstance(chunk, bool) or not isinstance(chunk, int) or chunk < 200:
            raise InvalidInputError("llm_chunk_chars must be an integer >= 200")
        rerank = values.get("rerank")
        if rerank is not None and not isinstance(rerank, bool):
            raise InvalidInputError("rerank must be true, false or null")
        return cls(
            temporal_sigma_days=float(sigma),
            rerank=rerank,
            date_order=checked_date_order(values["date_order"]),
            retain_mission=_optional_text(values.get("retain_mission"), "retain_mission"),
            extraction_mode=mode,
            extraction_rules=rules,
            entity_labels=parse_label_groups(values.get("entity_labels")),
            llm_chunk_chars=chunk,
            **flags,
        )

    def to_mapping(self) -> dict[str, Any]:
        """The settings as JSON-ready data."""
        return {
            "temporal_sigma_days": self.temporal_sigma_days,
            "retain_mission": self.retain_mission,
            "extraction_mode": self.extraction_mode,
            "extraction_rules": self.extraction_rules,
            "entity_labels": [group.to_mapping() for group in self.entity_labels],
            "entities_allow_free_form": self.entities_allow_free_form,
            "llm_chunk_chars": self.llm_chunk_chars,
            "consolidate": self.consolidate,
            "profiles": self.profiles,
            "pieces": self.pieces,
            "rerank": self.rerank,
            "date_order": self.date_order,
        }


def _optional_text(value: object, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInputError(f"{name} must be a string")
    return value.strip() or None


def _normalize_strategies(strategies: Iterable[str] | str | None) -> tuple[str, ...]:
    if strategies is None:
        return TEMPR_STRATEGIES
    names: list[str] = []
    for raw in string_list(strategies, field="strategies"):
        name = STRATEGY_ALIASES.get(raw.strip().lower(), raw.strip().lower())
        if name not in STRATEGY_PARAMS:
            known = sorted({*STRATEGY_PARAMS, *STRATEGY_ALIASES})
            raise InvalidInputError(f"unknown recall strategy {raw!r}; known: {known}")
        if name not in names:
            names.append(name)
    if not names:
        raise InvalidInputError("strategies must name at least one strategy")
    return tuple(names)


def _validate_strategy_params(
    strategies: tuple[str, ...], params: Mapping[str, Any]
) -> dict[str, Any]:
    """Check ``recall(**strategy_params)`` against the strategies in use; normalise values.

    The graph strategies' arguments are normalised here; timeline's are read by its strategy.
    """
    accepted = frozenset().union(*(STRATEGY_PARAMS[name] for name in strategies))
    unknown = sorted(set(params) - accepted)
    if unknown:
        raise InvalidInputError(
            f"unknown recall argument(s) {unknown} for strategies {list(strategies)}"
            + (f"; they accept {sorted(accepted)}" if accepted else "")
        )
    result: dict[str, Any] = {}
    for key, value in params.items():
        if key == "edge_types":
            if value is None:
                continue
            value = string_list(value, field="edge_types")
            kinds = tuple(dict.fromkeys(normalize_kind(v, EDGE_KINDS) for v in value))
            if not kinds:
                raise InvalidInputError("edge_types must name at least one link kind")
            result[key] = kinds
        elif key == "max_depth":
            # HEBBS's hard cap: deeper requests are bounded, not refused.
            result[key] = min(_positive_int(value, "max_depth"), 10)
        elif key == "direction":
            if not isinstance(value, str) or value not in CAUSAL_DIRECTIONS:
                raise InvalidInputError(f"direction must be one of {sorted(CAUSAL_DIRECTIONS)}")
            result[key] = value
        elif key == "seed_memory_id":
            if value is None:
                continue
            seeds = string_list(value, field="seed_memory_id")
            if not seeds or not all(seeds):
                raise InvalidInputError("seed_memory_id must be a memory id or a list of them")
            result[key] = value if isinstance(value, str) else tuple(seeds)
        elif key == "analogical_alpha":
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise InvalidInputError("analogical_alpha must be a number in [0, 1]")
            if not math.isfinite(value) or not 0 <= value <= 1:
                raise InvalidInputError("analogical_alpha must be in [0, 1]")
            result[key] = float(value)
        else:
            result[key] = value
    return result


MAX_TOP_K = 10_000
# Far above any real use; beyond it, sizes derived from these overflow the stores' integers.
MAX_RECALL_SIZE = 1_000_000_000


def _positive_int(value: object, name: str, maximum: int = MAX_RECALL_SIZE) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= maximum:
        raise InvalidInputError(f"{name} must be an integer in [1, {maximum}], got {shown(value)}")
    return value


@dataclass(frozen=True, slots=True)
class RecallConfig:
    """One recall call's validated settings, built by :meth:`build` from recall's keywords."""

    query: str
    top_k: int
    max_tokens: int
    strategies: tuple[str, ...]
    fact_types: tuple[str, ...] | None
    tags: tuple[str, ...] | None
    tags_match: str
    time_range: TimeRange | None
    now: datetime
    weights: ScoringWeights
    thinking_budget: int
    rerank: bool | None
    reinforce: bool
    strategy_params: Mapping[str, Any]
    date_order: str = "MDY"

    @classmethod
    def build(
        cls,
        query: object,
        *,
        top_k: object = 10,
        max_tokens: object = 4096,
        strategies: Iterable[str] | str | None = None,
        fact_types: Iterable[str] | str | None = None,
        tags: Iterable[str] | str | None = None,
        tags_match: object = "any",
        time_range: tuple[object, object] | TimeRange | None = None,
        now: object = None,
        scoring_weights: Mapping[str, float] | None = None,
        thinking_budget: object = 100,
        rerank: bool | None = None,
        reinforce: bool = True,
        strategy_params: Mapping[str, Any] | None = None,
        date_order: object = "MDY",
        max_query_chars: int | None = None,
    ) -> RecallConfig:
        """Validate ``recall()``'s arguments; raises InvalidInputError on anything wrong.

        ``max_query_chars`` bounds a query that comes from a caller (None: unbounded, for the
        queries the engine builds itself).
        """
        check_query(query, max_query_chars)
        query = clean_text(query)  # as retained text is: no control chars, no lone surrogates
        if not query.strip():
            raise InvalidInputError("query must not be empty")
        if not isinstance(tags_match, str) or tags_match not in TAGS_MATCH_MODES:
            raise InvalidInputError(f"tags_match must be one of {sorted(TAGS_MATCH_MODES)}")
        if rerank is not None and not isinstance(rerank, bool):
            raise InvalidInputError(f"rerank must be None, True or False, got {shown(rerank)}")
        names = _normalize_strategies(strategies)
        return cls(
            query=query,
            top_k=_positive_int(top_k, "top_k", maximum=MAX_TOP_K),
            max_tokens=_positive_int(max_tokens, "max_tokens"),
            strategies=names,
            fact_types=_normalize_fact_types(fact_types),
            tags=normalize_tags(tags) if tags is not None else None,
            tags_match=str(tags_match),
            time_range=_normalize_time_range(time_range),
            now=to_utc(now, field="now") if now is not None else utc_now(),
            weights=ScoringWeights.from_mapping(scoring_weights),
            thinking_budget=_positive_int(thinking_budget, "thinking_budget"),
            rerank=rerank,
            reinforce=bool(reinforce),
            strategy_params=_validate_strategy_params(names, strategy_params or {}),
            date_order=checked_date_order(date_order),
        )

    @property
    def ordered_strategy(self) -> str | None:
        """The strategy whose own order the result keeps (a single timeline, ...), if any."""
        if len(self.strategies) == 1 and self.strategies[0] in ORDERED_STRATEGIES:
            return self.strategies[0]
        return None

    @property
    def has_filters(self) -> bool:
        """Whether any hard filter narrows the memories."""
        return bool(self.fact_types or self.tags or self.time_range)


def check_query(query: object, max_chars: int | None) -> None:
    """A query must be a string, at most ``max_chars`` long (None: any length)."""
    if not isinstance(query, str):
        raise InvalidInputError(f"query must be a string, got {type(query).__name__}")
    if max_chars is not None and len(query) > max_chars:
        raise InvalidInputError(
            f"query is {len(query)} characters long; the limit is {max_chars} "
            "(EngineConfig(limits=Limits(query_chars=...)))"
        )


def _normalize_fact_types(fact_types: Iterable[str] | str | None) -> tuple[str, ...] | None:
    if fact_types is None:
        return None
    values = tuple(dict.fromkeys(string_list(fact_types, field="fact_types")))
    bad = [v for v in values if v not in FACT_TYPES]
    if bad or not values:
        raise InvalidInputError(f"fact_types must be a non-empty subset of {list(FACT_TYPES)}")
    return values


def as_path(value: object, *, field: str = "path") -> Path:
    """A caller's file or directory path (a string or path-like, not empty) as a ``Path``."""
    if not isinstance(value, str | os.PathLike) or not str(value).strip():
        raise InvalidInputError(f"{field} must be a non-empty file path, got {shown(value)}")
    return Path(value)


def normalize_tags(tags: Iterable[str] | str | None) -> tuple[str, ...]:
    """Validate tags: non-empty strings without control characters or lone surrogates,
    deduplicated, sorted."""
    if tags is None:
        return ()
    result: set[str] = set()
    for tag in string_list(tags, field="tags"):
        if not tag.strip():
            raise InvalidInputError(f"tags must be non-empty strings, got {shown(tag)}")
        # Control characters and lone surrogates (which UTF-8 cannot store) are refused.
        if any(ord(ch) < 32 or "\ud800" <= ch <= "\udfff" for ch in tag) or len(tag) > 256:
            raise InvalidInputError(f"invalid tag {tag!r}")
        result.add(tag.strip())
    return tuple(sorted(result))


def _normalize_time_range(value: tuple[object, object] | TimeRange | None) -> TimeRange | None:
    if value is None or isinstance(value, TimeRange):
        return value
    if not isinstance(value, tuple | list) or len(value) != 2:
        raise InvalidInputError("time_range must be a (start, end) pair")
    start = optional_utc(value[0], field="time_range start")
    end = optional_utc(value[1], field="time_range end")
    # An open end means unbounded on that side.
    start = start or datetime.min.replace(tzinfo=UTC)
    end = end or datetime.max.replace(tzinfo=UTC)
    if end <= start:
        raise InvalidInputError("time_range end must be after its start")
    return TimeRange(start, end)
