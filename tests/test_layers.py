"""Layers only point down: repocontext ← planner (the engine) ← subgraphs (task classes) ← interfaces (CLI, UI,
MCP, daemon, portfolio workers, inside planner/ but above the task classes). Inside planner/, its subpackages
and top-level modules stand in the layers of PLANNER_LAYERS (docs/layout.md draws them). Every import counts,
also one inside a function: a circle hidden there is still a circle."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INTERFACES = ("planner.cli", "planner.ui", "planner.mcpserver", "planner.daemon", "planner.portfolio",
              "planner.__main__")
# what each layer may import from this project (a layer may always import itself)
ALLOWED = {
    "repocontext": ("repocontext",),
    "planner": ("repocontext", "planner"),
    "subgraphs": ("repocontext", "planner", "subgraphs"),
    "interfaces": ("repocontext", "planner", "subgraphs"),
}


def _layer(module: str) -> str:
    if module.startswith(INTERFACES):
        return "interfaces"
    return module.split(".")[0]


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement, nested ones included (an import is a statement, so expressions need no visit)."""
    for node in body:
        yield node
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            inner = getattr(node, field, None)
            if isinstance(inner, list):
                yield from _statements(inner)


@cache
def _imports_with_names(path: Path) -> tuple[tuple[int, str, tuple[str, ...]], ...]:
    """(line, module, names taken from it: empty for `import module`), every import of the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = _module(path) if path.name == "__init__.py" else _module(path).rpartition(".")[0]
    found: list[tuple[int, str, tuple[str, ...]]] = []
    for node in _statements(tree.body):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, ()) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolved against the module's package
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                name = f"{base}.{node.module}" if node.module else base
            else:
                name = node.module or ""
            found.append((node.lineno, name, tuple(alias.name for alias in node.names)))
    return tuple(found)


def _imports(path: Path) -> list[tuple[int, str]]:
    return [(line, name) for line, name, _ in _imports_with_names(path)]


def _ours(name: str) -> bool:
    return name.split(".")[0] in ("repocontext", "planner", "subgraphs")


def test_no_layer_imports_one_above_it() -> None:
    problems = []
    for top in ("repocontext", "planner", "subgraphs"):
        for path in sorted((ROOT / top).rglob("*.py")):
            layer = _layer(_module(path))
            for line, name in _imports(path):
                if _ours(name) and _layer(name) not in ALLOWED[layer] and _layer(name) != layer:
                    problems.append(f"{path.relative_to(ROOT)}:{line}: {layer} imports {name}")
    assert problems == []


def test_the_engine_finds_task_classes_only_by_name() -> None:
    """planner/ (interfaces aside) names no subgraph module in an import; taskmodule resolves them by name."""
    engine = [p for p in (ROOT / "planner").rglob("*.py") if _layer(_module(p)) == "planner"]
    named = [f"{p.relative_to(ROOT)}:{line}" for p in engine for line, name in _imports(p)
             if name.split(".")[0] == "subgraphs"]
    assert named == []
    assert engine  # the walk found the engine


def _import_graph() -> dict[str, list[str]]:
    """Module → the project modules it imports. `from pkg import name` is an import of pkg.name when that is a
    module, else of pkg; a package stands for its __init__."""
    paths = [path for top in ("repocontext", "planner", "subgraphs") for path in sorted((ROOT / top).rglob("*.py"))]
    modules = {_module(path) for path in paths}
    graph: dict[str, list[str]] = {}
    for path in paths:
        targets: set[str] = set()
        for _, name, names in _imports_with_names(path):
            for target in [f"{name}.{each}" for each in names] or [name]:
                if target not in modules:
                    target = name  # a name defined in the module (or package), not a submodule
                if target in modules:
                    targets.add(target)
        source = _module(path)
        graph[source] = sorted(targets - {source})
    return graph


def _cycles(graph: dict[str, list[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's, without recursion), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            step = next(edges, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(graph[step])))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def test_cycles_finds_each_circle_once() -> None:
    graph = {"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a", "e"], "e": ["d"], "f": ["f"], "g": []}
    assert _cycles(graph) == [["a", "b", "c"], ["d", "e"]]


def test_no_import_cycles() -> None:
    """No two modules of repocontext/, planner/ or subgraphs/ import each other, directly or around a circle."""
    cycles = _cycles(_import_graph())
    assert cycles == [], "import cycles:\n" + "\n".join(" ↔ ".join(cycle) for cycle in cycles)


# planner/'s subpackages and top-level modules, lowest layer first. A unit imports only units of lower layers,
# or of its own layer without a circle between them.
PLANNER_LAYERS: list[list[str]] = [
    # utilities: errors, settings, the sandbox, the tokenizer, the advisory snapshot's source
    ["errors", "config", "sealed", "tokens_subset", "tokens", "sandbox", "egress", "egress_inside", "extras", "roots",
     "hostcheck", "advisories"],
    ["policy", "flow", "tccm"],  # the TCCM language: its policy and flow sections, the schema and loader
    ["patch", "bundle"],  # plans, edits and diffs; Context Bundles
    ["chain", "recipes", "store", "hotviews"],  # work items and the planning chain's parts; recipes; stores
    ["inputs", "queries", "service"],  # what the CLI, the graph and the interfaces share
    ["run"],  # a run: dispatch, the supervisor graph, its stages, gates and flows, the task-class contract
    ["portfolio", "ui", "mcpserver", "cli", "daemon", "__main__"],  # the interfaces
]


def _unit(module: str) -> str | None:
    """planner.X.… → X (its subpackage or top-level module); None outside planner/ or for planner itself."""
    parts = module.split(".")
    return parts[1] if parts[0] == "planner" and len(parts) > 1 else None


@cache
def _planner_edges() -> tuple[tuple[str, str, str], ...]:
    """(importing unit, imported unit, file:line) for every import between two units of planner/."""
    modules = {_module(path) for path in (ROOT / "planner").rglob("*.py")}
    edges: set[tuple[str, str, str]] = set()
    for path in sorted((ROOT / "planner").rglob("*.py")):
        source = _unit(_module(path))
        for line, name, names in _imports_with_names(path):
            for target in [f"{name}.{each}" for each in names] or [name]:
                unit = _unit(target if target in modules else name)
                if source is not None and unit is not None and unit != source:
                    edges.add((source, unit, f"{path.relative_to(ROOT)}:{line}"))
    return tuple(sorted(edges))


def test_planner_layers_name_every_unit_once() -> None:
    declared = [unit for layer in PLANNER_LAYERS for unit in layer]
    found = {unit for path in (ROOT / "planner").rglob("*.py") if (unit := _unit(_module(path))) is not None}
    assert sorted(declared) == sorted(set(declared)), "a unit stands in two layers"
    assert sorted(found - set(declared)) == [], "add these to PLANNER_LAYERS"
    assert sorted(set(declared) - found) == [], "these are gone from planner/"


def test_no_planner_unit_imports_a_higher_layer() -> None:
    rank = {unit: i for i, layer in enumerate(PLANNER_LAYERS) for unit in layer}
    upward = [f"{where}: {source} (layer {rank[source]}) imports {target} (layer {rank[target]})"
              for source, target, where in _planner_edges() if rank[target] > rank[source]]
    assert upward == [], "imports up the layers:\n" + "\n".join(upward)


def test_no_circle_between_planner_units() -> None:
    """Siblings of a layer may import each other, but not around a circle."""
    graph: dict[str, list[str]] = {unit: [] for layer in PLANNER_LAYERS for unit in layer}
    for source, target, _ in _planner_edges():
        graph[source] = sorted({*graph[source], target})
    circles = _cycles(graph)
    inside = [f"{where}: {source} imports {target}" for circle in circles for source, target, where in _planner_edges()
              if source in circle and target in circle]
    assert circles == [], "circles between planner/ units:\n" + "\n".join(inside)
