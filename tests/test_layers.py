"""Layers only point down: repocontext ← planner (the engine) ← subgraphs (task classes) ← interfaces (CLI, UI,
MCP, daemon, portfolio workers, inside planner/ but above the task classes). Every import counts, also one
inside a function: a circle hidden there is still a circle."""

from __future__ import annotations

import ast
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


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = _module(path) if path.name == "__init__.py" else _module(path).rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolved against the module's package
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                name = f"{base}.{node.module}" if node.module else base
            else:
                name = node.module or ""
            found.append((node.lineno, name))
    return found


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
