"""The ``agentmem`` command: demo, retain, recall and bench.

Examples::

    agentmem demo
    agentmem retain --path ./memdata --bank notes "Alice moved to Berlin last June."
    agentmem recall --path ./memdata --bank notes "Where does Alice live?"
    agentmem graph notes --path ./memdata --out graph.html
    agentmem bench locomo --data ../shared/data/locomo10.json
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from datetime import datetime, timedelta
from importlib import resources
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from agentmem._time import to_utc
from agentmem.errors import AgentMemError, NotFoundError
from agentmem.memory import AgentMemory
from agentmem.types import RecallHit, RecallResult


def explain(hit: RecallHit) -> str:
    """Why a hit came back, in words: each strategy's rank and raw score."""
    labels = {"semantic": "cosine", "keyword": "bm25"}
    parts = [
        f"{name} #{detail['rank']} ({labels.get(name, 'score')} {detail['score']:.2f})"
        for name, detail in hit.strategy_details.items()
        if "rank" in detail and "score" in detail and name != "fusion"
    ]
    if hit.strategy_details.get("budget", {}).get("truncated"):
        parts.append("truncated to fit the budget")
    return " + ".join(parts)


def recall_table(title: str, result: RecallResult) -> Table:
    """A readable table of recall hits."""
    table = Table(title=title, title_justify="left", show_lines=False, expand=True)
    table.add_column("#", justify="right", width=2)
    table.add_column("score", justify="right", width=5)
    table.add_column("memory", ratio=3)
    table.add_column("why", ratio=2, style="dim")
    for rank, hit in enumerate(result, start=1):
        table.add_row(str(rank), f"{hit.score:.2f}", hit.memory.text, explain(hit))
    return table


def hit_json(hit: RecallHit) -> dict[str, Any]:
    """A hit as JSON-ready data."""
    memory = hit.memory

    def iso(value: datetime | None) -> str | None:
        return value.isoformat() if value else None

    return {
        "id": memory.id,
        "text": memory.text,
        "score": hit.score,
        "fact_type": memory.fact_type,
        "mentioned_at": iso(memory.mentioned_at),
        "occurred_start": iso(memory.occurred_start),
        "occurred_end": iso(memory.occurred_end),
        "entities": list(memory.entities),
        "tags": list(memory.tags),
        "metadata": memory.metadata,
        "strategy_details": hit.strategy_details,
    }


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
        graph = mem.bank(args.bank).graph()
    path = write_picture(graph, args.out, title=args.bank, max_memories=args.max_memories)
    console.print(f"wrote {path}: {graph.number_of_nodes()} nodes, {graph.number_of_edges()} edges")
    return 0


def cmd_bench_locomo(args: argparse.Namespace, console: Console) -> int:
    from agentmem.bench.locomo import format_report, run_locomo

    with _progress(console) as progress:
        task = progress.add_task("LoCoMo", total=None)

        def show(description: str, completed: int, total: int) -> None:
            progress.update(task, description=description, completed=completed, total=total)

        report = run_locomo(
            args.data,
            out_path=args.out,
            limit_conversations=args.limit,
            weights=args.weights,
            progress=show,
            include_questions=args.questions,
            ablations=args.ablate or (),
        )
    print(format_report(report))
    print(f"report: {args.out}")
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

    bench = sub.add_parser("bench", help="benchmarks (print figures, write a JSON report)")
    bench_sub = bench.add_subparsers(dest="bench", required=True)
    locomo = bench_sub.add_parser("locomo", help="LoCoMo evidence recall (BENCH.md protocol)")
    locomo.add_argument("--data", required=True, help="path to locomo10.json")
    locomo.add_argument("--out", default="bench-reports/locomo.json", help="JSON report path")
    locomo.add_argument("--limit", type=int, default=None, help="first N conversations only")
    locomo.add_argument("--weights", choices=("relevance", "default", "both"), default="both")
    locomo.add_argument("--questions", action="store_true", help="per-question figures in JSON")
    locomo.add_argument(
        "--ablate",
        action="append",
        help="extra row without part of the graph: graph (the arm), entity-links, "
        "semantic-links, caused-by-links, followed-by-links, temporal-links, related-links, "
        "or all (repeatable)",
    )
    locomo.set_defaults(func=cmd_bench_locomo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``agentmem`` console script."""
    args = build_parser().parse_args(argv)
    console = Console()
    try:
        return args.func(args, console)
    except AgentMemError as exc:
        Console(stderr=True).print(f"[red]error:[/red] {exc}")
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
