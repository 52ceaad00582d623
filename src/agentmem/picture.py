"""Draw a bank's memory graph as one self-contained HTML page (inline SVG and script, no
network): ``agentmem graph --bank BANK --path STORE --out graph.html``.

Entities are the large dots, sized by how many memories mention them and coloured by kind,
with their names; memories are small dots labelled with their first words (hover for the
whole text). Directed links (``followed_by``, ``caused_by``) carry arrows; ``temporal``
links, which join every dated fact to its neighbours in time, are faint and can be hidden.
Controls filter by entity, entity kind, link kind and mention time (a link can preselect
them: ``graph.html#entity=Maya&from=2025-03-01&links=temporal``), and the counts above the
picture always say what is shown. A large bank is cut to the ``max_memories`` memories with
the most links, so the picture stays readable; the layout is networkx's spring layout with a
fixed seed, so the same bank draws the same way.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
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
OTHER_KIND_COLOUR = "#7f7f7f"
EDGE_COLOURS: dict[str, str] = {
    "entity": "#c7c7c7",
    "followed_by": "#6f9fd8",
    "semantic": "#5cb85c",
    "caused_by": "#d62728",
    "temporal": "#ffbb78",
    "related": "#a58bc9",
    "supersedes": "#7f7f7f",
    "part_of": "#e377c2",
}
#: Link kinds drawn with an arrow (source → target, as stored: an effect points at its cause,
#: a newer fact at the one it supersedes, a clause at the fact it was split from).
DIRECTED = ("followed_by", "caused_by", "supersedes", "part_of")
MEMORY_COLOUR = "#555555"
MEMORY_RADIUS = 3.5
LABEL_WORDS = 4
LABEL_CHARS = 28
_SIZE = 1000
_MARGIN = 60


@dataclass(frozen=True, slots=True)
class Picture:
    """What a written picture holds: drawn and total counts of the bank's graph."""

    path: Path
    memories_drawn: int
    memories_total: int
    entities_drawn: int
    entities_total: int
    edges_drawn: int
    temporal_drawn: int

    def summary(self) -> str:
        """One line for a person: what was written and how much of the bank it shows."""
        temporal = (
            f" ({self.temporal_drawn} of them temporal, shown when switched on)"
            if self.temporal_drawn
            else ""
        )
        return (
            f"wrote {self.path}: {self.memories_drawn} of {self.memories_total} memories, "
            f"{self.entities_drawn} of {self.entities_total} entities, "
            f"{self.edges_drawn} links{temporal}"
        )


def select(graph: nx.MultiDiGraph, max_memories: int) -> nx.MultiDiGraph:
    """The part of ``graph`` to draw: the ``max_memories`` memories with the most edges,
    and every entity they mention."""
    memories = [n for n, t in graph.nodes(data="type") if t == "memory"]
    if len(memories) > max_memories:
        memories = sorted(memories, key=lambda n: (-graph.degree(n), n))[:max_memories]
    keep = set(memories)
    keep |= {e for m in memories for e in graph.successors(m) if graph.nodes[e]["type"] == "entity"}
    return graph.subgraph(keep).copy()


def short_label(text: str) -> str:
    """The first words of a memory, for its label on the picture (a chat turn's speaker,
    which every turn starts with, is left to the tooltip)."""
    speaker, colon, said = text.partition(": ")
    if colon and len(speaker.split()) <= 3 and said:
        text = said
    words = text.split()
    label = " ".join(words[:LABEL_WORDS])
    if len(label) > LABEL_CHARS:
        label = label[: LABEL_CHARS - 1].rstrip()
    return label + ("…" if label != " ".join(words) else "")


def _counts(graph: nx.MultiDiGraph, shown: nx.MultiDiGraph) -> tuple[int, int, int, int]:
    def memories(g: nx.MultiDiGraph) -> int:
        return sum(1 for _, t in g.nodes(data="type") if t == "memory")

    return (
        memories(shown),
        memories(graph),
        shown.number_of_nodes() - memories(shown),
        graph.number_of_nodes() - memories(graph),
    )


def render_html(
    graph: nx.MultiDiGraph,
    *,
    title: str,
    max_memories: int = 200,
    times: Mapping[str, datetime] | None = None,
) -> str:
    """An HTML page with the graph drawn in inline SVG, and its filters.

    Args:
        graph: A bank's graph, as ``MemoryBank.graph()`` returns it.
        title: The page title (the bank id).
        max_memories: Most memories drawn.
        times: Mention time per memory id, for the time filter (optional).

    Returns:
        The page; it loads nothing from anywhere.
    """
    return _page(graph, select(graph, max_memories), title, times or {})


def _page(
    graph: nx.MultiDiGraph, shown: nx.MultiDiGraph, title: str, times: Mapping[str, datetime]
) -> str:
    """The page drawing ``shown``, the part of ``graph`` that :func:`select` kept."""
    positions = (
        nx.spring_layout(nx.Graph(shown), seed=7, k=1.5 / math.sqrt(max(1, len(shown))))
        if len(shown)
        else {}
    )

    # Stretch the layout to the canvas (spring layouts fill only part of their square).
    xs = [p[0] for p in positions.values()] or [0.0]
    ys = [p[1] for p in positions.values()] or [0.0]
    span_x, span_y = (max(xs) - min(xs)) or 1.0, (max(ys) - min(ys)) or 1.0
    inner = _SIZE - 2 * _MARGIN

    def xy(node: str) -> tuple[float, float]:
        x, y = positions[node]
        # Room on the right for the labels.
        return (
            _MARGIN + (x - min(xs)) / span_x * inner * 0.85,
            _MARGIN + (y - min(ys)) / span_y * inner,
        )

    def radius(node: str) -> float:
        if shown.nodes[node]["type"] == "memory":
            return MEMORY_RADIUS
        return 5 + 2 * math.sqrt(graph.in_degree(node))

    ids = {node: f"n{index}" for index, node in enumerate(shown.nodes)}
    edges: list[str] = []
    for src, dst, kind in shown.edges(data="kind"):
        (x1, y1), (x2, y2) = xy(src), xy(dst)
        length = math.hypot(x2 - x1, y2 - y1) or 1.0
        # End the line at the target's rim, so its arrow is seen.
        cut = radius(dst) + (2 if kind in DIRECTED else 0)
        x2, y2 = x2 - (x2 - x1) * cut / length, y2 - (y2 - y1) * cut / length
        marker = f' marker-end="url(#arrow-{kind})"' if kind in DIRECTED else ""
        edges.append(
            f'<line class="edge" data-kind="{html.escape(kind)}" data-src="{ids[src]}" '
            f'data-dst="{ids[dst]}" x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
            f'stroke="{EDGE_COLOURS.get(kind, "#dddddd")}"{marker}>'
            f"<title>{html.escape(kind.replace('_', ' '))}</title></line>"
        )
    nodes: list[str] = []
    for node, data in shown.nodes(data=True):
        if data["type"] != "memory":
            continue
        x, y = xy(node)
        text = data.get("text", "")
        when = times.get(node)
        stamp = when.date().isoformat() if when else ""
        nodes.append(
            f'<g class="node memory" id="{ids[node]}" data-t="{stamp}">'
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{MEMORY_RADIUS}" fill="{MEMORY_COLOUR}"/>'
            f'<text class="memory-label" x="{x + 5:.1f}" y="{y + 3:.1f}">'
            f"{html.escape(short_label(text))}</text>"
            f"<title>{html.escape((stamp + ': ' if stamp else '') + text)}</title></g>"
        )
    entity_names: list[str] = []
    for node, data in shown.nodes(data=True):
        if data["type"] != "entity":
            continue
        x, y = xy(node)
        r = radius(node)
        kind = data.get("kind") or "other"
        entity_names.append(str(node))
        aliases = ", ".join(data.get("aliases") or ())
        tooltip = f"{node} ({kind}), {graph.in_degree(node)} memories" + (
            f"; also: {aliases}" if aliases else ""
        )
        nodes.append(
            f'<g class="node entity" id="{ids[node]}" data-kind="{html.escape(kind)}" '
            f'data-name="{html.escape(str(node))}">'
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r:.1f}" '
            f'fill="{KIND_COLOURS.get(kind, OTHER_KIND_COLOUR)}" fill-opacity="0.9"/>'
            f'<text class="entity-label" x="{x + r + 3:.1f}" y="{y + 4:.1f}">'
            f"{html.escape(str(node))}</text><title>{html.escape(tooltip)}</title></g>"
        )
    memories_drawn, memories_total, entities_drawn, entities_total = _counts(graph, shown)
    present_kinds = sorted(
        {d.get("kind") or "other" for _, d in shown.nodes(data=True) if d["type"] == "entity"}
    )
    present_edges = sorted({k for _, _, k in shown.edges(data="kind")})
    stamps = sorted(t.date().isoformat() for n, t in times.items() if n in shown)
    return _PAGE.format(
        title=html.escape(title),
        totals=(
            f"The bank holds {memories_total} memories and {entities_total} entities; "
            f"{memories_drawn} memories (the most linked) and {entities_drawn} entities are "
            "drawn."
            if memories_drawn < memories_total
            else f"The bank holds {memories_total} memories and {entities_total} entities."
        ),
        entity_options="".join(
            f'<option value="{html.escape(n)}">{html.escape(n)}</option>'
            for n in sorted(entity_names, key=str.lower)
        ),
        kind_boxes=" ".join(
            f'<label><input type="checkbox" class="f-kind" value="{html.escape(k)}" checked>'
            f'<span class="dot" style="background:{KIND_COLOURS.get(k, OTHER_KIND_COLOUR)}">'
            f"</span>{html.escape(k)}</label>"
            for k in present_kinds
        ),
        edge_boxes=" ".join(
            f'<label><input type="checkbox" class="f-edge" value="{html.escape(k)}"'
            f"{'' if k == 'temporal' else ' checked'}>"
            f'<span class="bar" style="background:{EDGE_COLOURS.get(k, "#dddddd")}"></span>'
            f"{html.escape(k.replace('_', ' '))}{' →' if k in DIRECTED else ''}</label>"
            for k in present_edges
        ),
        time_from=stamps[0] if stamps else "",
        time_to=stamps[-1] if stamps else "",
        markers="".join(
            f'<marker id="arrow-{k}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
            f'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
            f'fill="{EDGE_COLOURS[k]}"/></marker>'
            for k in DIRECTED
        ),
        size=_SIZE,
        edges="\n".join(edges),
        nodes="\n".join(nodes),
        data=json.dumps({"drawn": [memories_drawn, entities_drawn]}),
    )


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title} — agentmem graph</title>
<style>
body{{font-family:system-ui,sans-serif;margin:1em;color:#222}}
h1{{margin:0 0 .2em;font-size:1.4em}} .totals{{margin:.2em 0;color:#555}}
#counts{{font-weight:600;margin:.4em 0}}
.controls{{display:flex;flex-wrap:wrap;gap:.4em 1.4em;align-items:center;margin:.5em 0;
  font-size:.9em}}
.controls label{{white-space:nowrap;margin-right:.5em}}
.dot{{display:inline-block;width:.8em;height:.8em;border-radius:50%;margin:0 .25em;
  vertical-align:-.05em}}
.bar{{display:inline-block;width:1.4em;height:.25em;margin:0 .25em;vertical-align:.2em}}
svg{{border:1px solid #e5e5e5;background:#fff}}
body.no-labels .memory-label{{display:none}}
</style></head>
<body><h1>{title}</h1>
<p class="totals">{totals}</p>
<div class="controls">
 <label>Entity <select id="f-entity"><option value="">all</option>{entity_options}</select>
 </label>
 <span>Entities: {kind_boxes}</span>
</div>
<div class="controls">
 <span>Links: {edge_boxes}</span>
 <label>From <input type="date" id="f-from" value="{time_from}"></label>
 <label>to <input type="date" id="f-to" value="{time_to}"></label>
 <label><input type="checkbox" id="f-labels" checked> memory labels</label>
</div>
<p id="counts"></p>
<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{size}"
 viewBox="0 0 {size} {size}"><defs>{markers}<style>
.edge{{stroke-width:1.2;stroke-opacity:.75}} .edge[data-kind="caused_by"]{{stroke-width:2.2}}
.edge[data-kind="temporal"]{{stroke-opacity:.2}} .edge[data-kind="entity"]{{stroke-opacity:.6}}
.memory-label{{font-size:9px;fill:#666;font-family:sans-serif}}
.entity-label{{font-size:12px;font-weight:600;fill:#222;paint-order:stroke;stroke:#fff;
  stroke-width:3px;font-family:sans-serif}} .hidden{{display:none}}
</style></defs>
<g id="edges">
{edges}
</g><g id="nodes">
{nodes}
</g></svg>
<script>
const drawnAtLoad = {data};
function apply() {{
  const entity = document.getElementById("f-entity").value;
  const kinds = new Set([...document.querySelectorAll(".f-kind:checked")].map(e => e.value));
  const links = new Set([...document.querySelectorAll(".f-edge:checked")].map(e => e.value));
  const from = document.getElementById("f-from").value, to = document.getElementById("f-to").value;
  document.body.classList.toggle("no-labels", !document.getElementById("f-labels").checked);
  const edges = [...document.querySelectorAll(".edge")];
  const nodes = new Map([...document.querySelectorAll(".node")].map(n => [n.id, n]));
  const visible = new Set();
  for (const [id, n] of nodes) {{
    if (n.classList.contains("memory")) {{
      const t = n.dataset.t;
      if (!t || ((!from || t >= from) && (!to || t <= to))) visible.add(id);
    }} else if (kinds.has(n.dataset.kind)) visible.add(id);
  }}
  if (entity) {{
    const chosen = [...nodes.values()].find(n => n.dataset.name === entity);
    const near = new Set([chosen.id]);
    for (const e of edges) if (e.dataset.dst === chosen.id) near.add(e.dataset.src);
    for (const e of edges) if (near.has(e.dataset.src) && e.dataset.kind === "entity")
      near.add(e.dataset.dst);
    for (const id of [...visible]) if (!near.has(id)) visible.delete(id);
  }}
  // An entity none of whose drawn memories is visible is hidden with them.
  for (const [id, n] of nodes) if (n.classList.contains("entity") && visible.has(id)) {{
    const held = edges.some(e => e.dataset.dst === id && visible.has(e.dataset.src));
    if (!held) visible.delete(id);
  }}
  let shownEdges = 0;
  for (const e of edges) {{
    const on = links.has(e.dataset.kind) && visible.has(e.dataset.src)
      && visible.has(e.dataset.dst);
    e.classList.toggle("hidden", !on); if (on) shownEdges++;
  }}
  let memories = 0, entitiesShown = 0;
  for (const [id, n] of nodes) {{
    const on = visible.has(id); n.classList.toggle("hidden", !on);
    if (on) n.classList.contains("memory") ? memories++ : entitiesShown++;
  }}
  document.getElementById("counts").textContent =
    `Showing ${{memories}} memories, ${{entitiesShown}} entities and ${{shownEdges}} links.`;
}}
// A link can preselect the filters: graph.html#entity=Maya&from=2025-03-01&links=temporal
const wanted = new URLSearchParams(location.hash.slice(1));
if (wanted.has("entity")) document.getElementById("f-entity").value = wanted.get("entity");
for (const end of ["from", "to"])
  if (wanted.has(end)) document.getElementById("f-" + end).value = wanted.get(end);
for (const kind of (wanted.get("links") || "").split(",").filter(Boolean))
  document.querySelectorAll(".f-edge").forEach(e => {{ if (e.value === kind) e.checked = true; }});
document.querySelectorAll("select, input").forEach(e => e.addEventListener("input", apply));
apply();
</script></body></html>
"""


def write_picture(
    graph: nx.MultiDiGraph,
    out: str | Path,
    *,
    title: str,
    max_memories: int = 200,
    times: Mapping[str, datetime] | None = None,
) -> Picture:
    """Write the picture to ``out`` (``.html``/``.htm``; ``.svg`` for the drawing alone,
    without its controls).

    Raises:
        InvalidInputError: Another extension (PNG would need matplotlib, which we do not ship).
    """
    from agentmem.errors import InvalidInputError

    path = Path(out)
    suffix = path.suffix.lower()
    if suffix not in (".html", ".htm", ".svg"):
        raise InvalidInputError("the picture is written as .html or .svg")
    shown = select(graph, max_memories)
    page = _page(graph, shown, title, times or {})
    if suffix == ".svg":
        page = page[page.index("<svg") : page.index("</svg>") + len("</svg>")] + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
    memories_drawn, memories_total, entities_drawn, entities_total = _counts(graph, shown)
    temporal = sum(1 for _, _, kind in shown.edges(data="kind") if kind == "temporal")
    return Picture(
        path,
        memories_drawn,
        memories_total,
        entities_drawn,
        entities_total,
        shown.number_of_edges(),
        temporal,
    )
