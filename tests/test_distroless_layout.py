"""The distroless_migration package stays one a reader can map (issue 26): at most 12 modules, and no import
circle among them, counting every import (also one inside a function). `from PKG import NAME` counts as an
import of PKG.NAME when that is a module, else of the package itself, so a submodule that takes a name from
the package __init__ (which imports submodules) is a circle."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "subgraphs.distroless_migration"


def _modules() -> dict[str, Path]:
    folder = ROOT / PACKAGE.replace(".", "/")
    return {PACKAGE if p.stem == "__init__" else f"{PACKAGE}.{p.stem}": p for p in sorted(folder.glob("*.py"))}


def _edges(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    package = name if path.stem == "__init__" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{parent}.{base}" if base else parent
            found.update(f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names)
    return {m for m in found if m in modules and m != name}


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = stack[stack.index(v):]
            del stack[stack.index(v):]
            if len(part) > 1:
                circles.append(sorted(part))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return circles


def test_at_most_twelve_modules() -> None:
    assert 1 < len(_modules()) <= 12


def test_no_import_circle() -> None:
    modules = _modules()
    graph = {name: _edges(name, path, modules) for name, path in modules.items()}
    assert _circles(graph) == []
    assert not any(PACKAGE in edges for name, edges in graph.items() if name != PACKAGE)


def test_the_check_sees_a_circle() -> None:
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
