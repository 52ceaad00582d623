"""The ``agentmem`` command: demo, retain, recall, serve, mcp and bench.

Examples::

    agentmem demo
    agentmem retain --path ./memdata --bank notes "Alice moved to Berlin last June."
    agentmem recall --path ./memdata --bank notes "Where does Alice live?"
    agentmem graph notes --path ./memdata --out graph.html
    agentmem export --path ./memdata --bank notes notes.jsonl
    agentmem import --path ./other --bank notes-copy notes.jsonl
    agentmem repair ./memdata          # re-embed vectors lost from chroma/, then check the store
    agentmem serve --path ./memdata --port 8888            # REST, needs agentmem[server]
    agentmem mcp --path ./memdata --bank notes             # MCP over stdio, needs agentmem[mcp]
    agentmem bench locomo --data ../shared/data/locomo10.json
    agentmem bench scale --sizes 10000 100000 --workdir /tmp/agentmem-scale
    agentmem bench rerank --conversations 2 [--cross-encoder-dir ~/models/ms-marco-MiniLM-L-6-v2]
    agentmem models export-cross-encoder --out ~/models/ms-marco-MiniLM-L-6-v2   # needs optimum
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import timedelta
from importlib import resources
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from agentmem._time import to_utc
from agentmem.errors import AgentMemError, InvalidInputError, NotAvailableError, NotFoundError
from agentmem.memory import DB_FILE, AgentMemory
from agentmem.schemas import RecallHitOut
from agentmem.types import RecallHit, RecallResult

TOKEN_ENV = "AGENTMEM_TOKEN"


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
    with AgentMemory(args.path) as mem:
        bank = mem.bank("demo")
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
    return 0


def cmd_retain(args: argparse.Namespace, console: Console) -> int:
    text = sys.stdin.read() if args.content == "-" else args.content
    with AgentMemory(args.path) as mem:
        result = mem.bank(args.bank).retain(
            text,
            mentioned_at=args.mentioned_at,
            tags=args.tag or (),
            document_id=args.document_id,
            importance=args.importance,
        )
    if args.json:
        print(json.dumps({"episode_id": result.episode_id, "memories": [m.id for m in result]}))
    else:
        for memory in result:
            console.print(f"[green]retained[/green] {memory.id}  {memory.text}")
    return 0


def cmd_recall(args: argparse.Namespace, console: Console) -> int:
    with AgentMemory(args.path) as mem:
        result = mem.bank(args.bank).recall(
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


def cmd_graph(args: argparse.Namespace, console: Console) -> int:
    from agentmem.picture import write_picture

    with AgentMemory(args.path) as mem:
        if args.bank not in mem.banks():
            raise NotFoundError(f"no bank {args.bank!r} in {args.path}")
        bank = mem.bank(args.bank)
        graph = bank.graph()
        times = {memory.id: memory.mentioned_at for memory in bank.memories()}
    picture = write_picture(
        graph, args.out, title=args.bank, max_memories=args.max_memories, times=times
    )
    console.print(picture.summary())
    return 0


def cmd_export(args: argparse.Namespace, console: Console) -> int:
    with AgentMemory(args.path) as mem, _progress(console) as progress:
        if args.bank not in mem.banks():
            raise NotFoundError(f"no bank {args.bank!r} in {args.path}")
        task = progress.add_task(f"exporting {args.bank}", total=None)
        count = mem.bank(args.bank).export(
            args.file,
            vectors=not args.no_vectors,
            progress=lambda done, total: progress.update(task, completed=done, total=total),
        )
    console.print(f"exported {count} memories of bank {args.bank!r} to {args.file}")
    return 0


def cmd_import(args: argparse.Namespace, console: Console) -> int:
    with AgentMemory(args.path) as mem, _progress(console) as progress:
        task = progress.add_task(f"importing {args.file}", total=None)
        bank = mem.import_(
            args.file,
            bank_id=args.bank,
            progress=lambda done, total: progress.update(task, completed=done, total=total),
        )
        count = bank.stats()["memories"]
    console.print(f"imported {count} memories into bank {bank.id!r}")
    return 0


def cmd_repair(args: argparse.Namespace, console: Console) -> int:
    if not (Path(args.store) / DB_FILE).is_file():
        raise NotFoundError(f"no agentmem store at {args.store}")
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
        f"removed {repair.removed} vectors of no memory; {report.memories} memories in "
        f"{len(report.banks)} banks"
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
    return args.token or os.environ.get(TOKEN_ENV) or None


def _serve_http(app: Any, host: str, port: int) -> None:
    import uvicorn

    uvicorn.run(app, host=host, port=port, log_level="info", access_log=False)


def cmd_serve(args: argparse.Namespace, console: Console) -> int:
    _import_extra("fastapi", "server")
    from agentmem.server.auth import check_bind
    from agentmem.server.rest import create_app

    token = _token(args)
    check_bind(args.host, token)
    with AgentMemory(args.path, chroma_url=args.chroma_url) as mem:
        _serve_http(create_app(mem, token=token), args.host, args.port)
    return 0


def cmd_mcp(args: argparse.Namespace, console: Console) -> int:
    _import_extra("mcp.server", "mcp")
    from agentmem.server.auth import check_bind
    from agentmem.server.mcp_server import create_mcp_server, streamable_http_app

    token = _token(args)
    if args.transport == "streamable-http":
        check_bind(args.host, token)
    with AgentMemory(args.path, chroma_url=args.chroma_url) as mem:
        server = create_mcp_server(mem.bank(args.bank))
        if args.transport == "stdio":
            server.run("stdio")  # stdout carries the protocol; logs go to stderr
        else:
            _serve_http(streamable_http_app(server, token=token), args.host, args.port)
    return 0


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


def cmd_bench_locomo(args: argparse.Namespace, console: Console) -> int:
    from agentmem.bench.locomo import format_report, run_locomo

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
        )
    print(format_report(report))
    print(f"stores: {workdir}\nreport: {args.out}")
    return 0


def cmd_bench_rerank(args: argparse.Namespace, console: Console) -> int:
    from agentmem.bench.rerank import format_report, run_rerank

    if not os.path.isfile(args.data):
        raise NotFoundError(f"no LoCoMo data at {args.data} (pass --data path/to/locomo10.json)")
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


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``agentmem`` command."""
    parser = argparse.ArgumentParser(prog="agentmem", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="offline end-to-end run on a bundled sample conversation")
    demo.add_argument("--path", default=None, help="store directory (default: a temporary one)")
    demo.add_argument("--top-k", type=int, default=3)
    demo.set_defaults(func=cmd_demo)

    def store_args(p: argparse.ArgumentParser) -> None:
        p.add_argument("--path", required=True, help="store directory")
        p.add_argument("--bank", required=True, help="bank id")
        p.add_argument("--tag", action="append", help="a tag (repeatable)")
        p.add_argument("--json", action="store_true", help="print JSON")

    retain = sub.add_parser("retain", help="retain text into a bank")
    store_args(retain)
    retain.add_argument("content", help="the text to retain, or - to read stdin")
    retain.add_argument("--mentioned-at", default=None, help="ISO time it was learned")
    retain.add_argument("--document-id", default=None)
    retain.add_argument("--importance", type=float, default=None)
    retain.set_defaults(func=cmd_retain)

    recall = sub.add_parser("recall", help="recall memories from a bank")
    store_args(recall)
    recall.add_argument("query")
    recall.add_argument("--top-k", type=int, default=10)
    recall.add_argument("--max-tokens", type=int, default=4096)
    recall.add_argument("--strategy", action="append", help="a strategy (repeatable)")
    recall.add_argument("--now", default=None, help="ISO time recency is measured from")
    recall.set_defaults(func=cmd_recall)

    graph = sub.add_parser("graph", help="draw a bank's entity/memory graph (self-contained HTML)")
    graph.add_argument("bank", help="bank id")
    graph.add_argument("--path", required=True, help="store directory")
    graph.add_argument("--out", default="graph.html", help="output .html or .svg")
    graph.add_argument("--max-memories", type=int, default=200, help="most memories drawn")
    graph.set_defaults(func=cmd_graph)
    export = sub.add_parser("export", help="write a bank to a JSON Lines file")
    export.add_argument("--path", required=True, help="store directory")
    export.add_argument("--bank", required=True, help="bank id")
    export.add_argument("--no-vectors", action="store_true", help="leave vectors out")
    export.add_argument("file", help="the .jsonl file to write")
    export.set_defaults(func=cmd_export)

    repair = sub.add_parser(
        "repair", help="re-embed vectors missing from Chroma (e.g. a deleted chroma/ folder)"
    )
    repair.add_argument("store", help="store directory")
    repair.set_defaults(func=cmd_repair)

    import_ = sub.add_parser("import", help="load a bank from an export file")
    import_.add_argument("--path", required=True, help="store directory")
    import_.add_argument("--bank", default=None, help="bank id (default: the exported one)")
    import_.add_argument("file", help="the .jsonl file to read")
    import_.set_defaults(func=cmd_import)

    def server_args(p: argparse.ArgumentParser, port: int) -> None:
        p.add_argument("--host", default="127.0.0.1", help="interface (default: loopback only)")
        p.add_argument("--port", type=int, default=port, help="0 picks a free port")
        p.add_argument(
            "--token", default=None, help=f"require this bearer token (or set ${TOKEN_ENV})"
        )
        p.add_argument(
            "--chroma-url",
            default=None,
            help="keep vectors on this Chroma server (http://host:port) instead of embedded",
        )

    serve = sub.add_parser("serve", help="REST server (OpenAPI at /docs)")
    serve.add_argument("--path", required=True, help="store directory")
    server_args(serve, 8888)
    serve.set_defaults(func=cmd_serve)

    mcp = sub.add_parser("mcp", help="MCP server with a bank's memory tools")
    mcp.add_argument("--path", required=True, help="store directory")
    mcp.add_argument("--bank", required=True, help="bank id the tools act on")
    mcp.add_argument("--transport", choices=("stdio", "streamable-http"), default="stdio")
    server_args(mcp, 8765)
    mcp.set_defaults(func=cmd_mcp)

    bench = sub.add_parser("bench", help="benchmarks (print figures, write a JSON report)")
    bench_sub = bench.add_subparsers(dest="bench", required=True)
    locomo = bench_sub.add_parser("locomo", help="LoCoMo evidence recall (BENCH.md protocol)")
    locomo.add_argument("--data", required=True, help="path to locomo10.json")
    locomo.add_argument("--out", default="bench-reports/locomo.json", help="JSON report path")
    locomo.add_argument("--limit", type=int, default=None, help="first N conversations only")
    locomo.add_argument("--weights", choices=("relevance", "default", "both"), default="both")
    locomo.add_argument("--questions", action="store_true", help="per-question figures in JSON")
    locomo.add_argument(
        "--rerank",
        choices=("default", "cross-encoder"),
        default="default",
        help="the offline default reranker, or an ONNX cross-encoder (--cross-encoder-dir)",
    )
    locomo.add_argument("--cross-encoder-dir", default=None, help="folder of model.onnx")
    locomo.add_argument(
        "--ablate",
        action="append",
        help="extra row without part of the graph: graph (the arm), entity-links, "
        "semantic-links, caused-by-links, followed-by-links, temporal-links, related-links, "
        "or all (repeatable)",
    )
    locomo.set_defaults(func=cmd_bench_locomo)
    scale = bench_sub.add_parser(
        "scale", help="throughput, latency, RSS and disk at 10k/100k synthetic memories"
    )
    scale.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    scale.add_argument("--workdir", default=None, help="where stores are built (kept, reused)")
    scale.add_argument("--out", default="bench-reports/scale.json", help="JSON report path")
    scale.add_argument("--queries", type=int, default=200, help="recall probes per strategy")
    scale.add_argument("--singles", type=int, default=300, help="one-message retain calls")
    scale.add_argument(
        "--imports",
        type=int,
        default=5000,
        help="messages retained last as an import, one call per conversation of 500 (0: none)",
    )
    scale.set_defaults(func=cmd_bench_scale)
    rerank = bench_sub.add_parser(
        "rerank", help="recall latency and R@10 without reranking and per reranker × top-n"
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

    models = sub.add_parser("models", help="obtain optional models (needs network once)")
    models_sub = models.add_subparsers(dest="models", required=True)
    export_ce = models_sub.add_parser(
        "export-cross-encoder",
        help="export a Hugging Face cross-encoder to ONNX with optimum (not installed by agentmem)",
    )
    export_ce.add_argument("--out", required=True, help="folder to write model.onnx + tokenizer")
    export_ce.add_argument(
        "--model",
        default="cross-encoder/ms-marco-MiniLM-L-6-v2",
        help="Hugging Face Hub id or local checkpoint",
    )
    export_ce.set_defaults(func=cmd_models_export_cross_encoder)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``agentmem`` console script."""
    args = build_parser().parse_args(argv)
    console = Console()
    try:
        return args.func(args, console)
    except AgentMemError as exc:
        # Escaped: messages hold text such as 'pip install "optimum[onnxruntime]"'.
        Console(stderr=True).print(f"[red]error:[/red] {escape(str(exc))}")
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
