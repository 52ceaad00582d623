"""Draw a bank's memory graph as one self-contained HTML page (inline SVG, no network).

``agentmem graph BANK --path STORE --out graph.html`` writes it. Entities are the dots a
reader looks for, sized by how many memories mention them and coloured by kind; memories are
small grey dots (hover for the text); edges are coloured by kind. A large bank is cut to the
``max_memories`` memories that mention the most entities, so the picture stays readable. The
layout is networkx's spring layout with a fixed seed, so the same bank draws the same way.
"""

from __future__ import annotations

import html
import math
from pathlib import Path

import networkx as nx

KIND_COLOURS: dict[str, str] = {
    "person": "#1f77b4",
    "org": "#ff7f0e",
    "place": "#2ca02c",
    "product": "#9467bd",
    "event": "#d62728",
    "concept": "#8c564b",
}
EDGE_COLOURS: dict[str, str] = {
    "entity": "#c7c7c7",
    "followed_by": "#aec7e8",
    "semantic": "#98df8a",
    "caused_by": "#d62728",
    "temporal": "#ffbb78",
    "related": "#c5b0d5",
    "supersedes": "#7f7f7f",
}
_SIZE = 1000
_MARGIN = 40


def select(graph: nx.MultiDiGraph, max_memories: int) -> nx.MultiDiGraph:
    """The part of ``graph`` to draw: every entity of the kept memories, and the
    ``max_memories`` memories with the most edges."""
    memories = [n for n, t in graph.nodes(data="type") if t == "memory"]
    if len(memories) > max_memories:
        memories = sorted(memories, key=lambda n: (-graph.degree(n), n))[:max_memories]
    keep = set(memories)
    keep |= {e for m in memories for e in graph.successors(m) if graph.nodes[e]["type"] == "entity"}
    return graph.subgraph(keep).copy()


def render_html(graph: nx.MultiDiGraph, *, title: str, max_memories: int = 200) -> str:
    """An HTML page with the graph drawn in inline SVG.

    Args:
        graph: A bank's graph, as ``MemoryBank.graph()`` returns it.
        title: The page title (the bank id).
        max_memories: Most memories drawn.

    Returns:
        The page; it loads nothing from anywhere.
    """
    shown = select(graph, max_memories)
    positions = (
        nx.spring_layout(nx.Graph(shown), seed=7, k=1.5 / math.sqrt(max(1, len(shown))))
        if len(shown)
        else {}
    )

    def xy(node: str) -> tuple[float, float]:
        x, y = positions[node]
        scale = (_SIZE - 2 * _MARGIN) / 2
        return _MARGIN + (x + 1) * scale, _MARGIN + (y + 1) * scale

    parts: list[str] = []
    for src, dst, kind in shown.edges(data="kind"):
        (x1, y1), (x2, y2) = xy(src), xy(dst)
        colour = EDGE_COLOURS.get(kind, "#dddddd")
        parts.append(
            f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
            f'stroke="{colour}" stroke-width="{2 if kind == "caused_by" else 1}">'
            f"<title>{html.escape(kind)}</title></line>"
        )
    for node, data in shown.nodes(data=True):
        x, y = xy(node)
        if data["type"] == "memory":
            parts.append(
                f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="#999999">'
                f"<title>{html.escape(data.get('text', ''))}</title></circle>"
            )
    for node, data in shown.nodes(data=True):
        if data["type"] != "entity":
            continue
        x, y = xy(node)
        radius = 4 + 2 * math.sqrt(graph.in_degree(node))
        colour = KIND_COLOURS.get(data.get("kind", ""), "#7f7f7f")
        label = html.escape(str(node))
        aliases = ", ".join(data.get("aliases") or ())
        tooltip = html.escape(
            f"{node} ({data.get('kind')}), {graph.in_degree(node)} memories"
            + (f"; also: {aliases}" if aliases else "")
        )
        parts.append(
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{radius:.1f}" fill="{colour}" '
            f'fill-opacity="0.85"><title>{tooltip}</title></circle>'
            f'<text x="{x + radius + 2:.1f}" y="{y + 4:.1f}" class="entity">{label}</text>'
        )
    legend = (
        " ".join(
            f'<span style="color:{colour}">&#9679; {kind}</span>'
            for kind, colour in KIND_COLOURS.items()
        )
        + " &nbsp; "
        + " ".join(
            f'<span style="color:{colour}">&#9472; {kind}</span>'
            for kind, colour in EDGE_COLOURS.items()
        )
    )
    memories = sum(1 for _, t in graph.nodes(data="type") if t == "memory")
    entities = graph.number_of_nodes() - memories
    shown_memories = sum(1 for _, t in shown.nodes(data="type") if t == "memory")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)} — agentmem graph</title>
<style>body{{font-family:sans-serif;margin:1em}} svg{{border:1px solid #eee}}
text.entity{{font-size:11px;fill:#222}}</style></head>
<body><h1>{html.escape(title)}</h1>
<p>{entities} entities, {memories} memories ({shown_memories} drawn), {graph.number_of_edges()}
edges. Hover a dot for its text.</p><p>{legend}</p>
<svg xmlns="http://www.w3.org/2000/svg" width="{_SIZE}" height="{_SIZE}"
 viewBox="0 0 {_SIZE} {_SIZE}">
{chr(10).join(parts)}
</svg></body></html>
"""


def write_picture(
    graph: nx.MultiDiGraph, out: str | Path, *, title: str, max_memories: int = 200
) -> Path:
    """Write the picture to ``out`` (``.html``/``.htm``, or ``.svg`` for the drawing alone).

    Raises:
        InvalidInputError: Another extension (PNG would need matplotlib, which we do not ship).
    """
    from agentmem.errors import InvalidInputError

    path = Path(out)
    page = render_html(graph, title=title, max_memories=max_memories)
    suffix = path.suffix.lower()
    if suffix == ".svg":
        page = page[page.index("<svg") : page.index("</svg>") + len("</svg>")] + "\n"
    elif suffix not in (".html", ".htm"):
        raise InvalidInputError("the picture is written as .html or .svg")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
    return path
