"""The package's modules import one another top-down: no cycle, even through imports made
only for type checking or inside functions."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

import agentmem

PACKAGE = Path(agentmem.__file__).parent


def _module(path: Path) -> str:
    parts = ["agentmem", *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, modules: set[str]) -> set[str]:
    name = _module(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module is not None:
            base = node.module
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
                base = f"{base}.{node.module}"
            for alias in node.names:
                target = f"{base}.{alias.name}"
                found.add(target if target in modules else base)
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return {m for m in found if m in modules and m not in (name, "agentmem")}


def test_no_import_cycles():
    paths = list(PACKAGE.rglob("*.py"))
    modules = {_module(p) for p in paths}
    graph = nx.DiGraph()
    for path in paths:
        graph.add_edges_from((_module(path), target) for target in _imports(path, modules))
    assert list(nx.simple_cycles(graph)) == []
