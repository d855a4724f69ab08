"""uv.lock: every locked package, with its chain from a direct dependency.

Workspace members (source `editable` or `virtual`, the root project being
".") are the project itself: they are not recorded, and what they depend on
is the direct set. Their `dependencies` and non-dev extras are production
roots; `dev-dependencies` groups and dev-named extras are dev roots. Edges
follow `dependencies`, plus a package's optional dependencies for the extras
that some dependent requests (`{ name = "x", extra = ["y"] }`).
"""

from __future__ import annotations

from typing import Any

from repocontext.deps.common import (
    Issue,
    Parsed,
    guessed_roots,
    is_dev_name,
    lock_graph,
    no_manifest_issue,
    pypi_name,
    read_lock,
)

_MEMBER_SOURCES = ("editable", "virtual")


def _entries(value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        return []
    return [e for e in value if isinstance(e, dict) and isinstance(e.get("name"), str)]


def _groups(value: Any) -> dict[str, list[dict[str, Any]]]:
    return {str(k): _entries(v) for k, v in value.items()} if isinstance(value, dict) else {}


def _is_member(pkg: dict[str, Any]) -> bool:
    source = pkg.get("source")
    return isinstance(source, dict) and any(k in source for k in _MEMBER_SOURCES)


def _edges(packages: list[dict[str, Any]]) -> dict[str, set[str]]:
    """name → names it depends on, including the optional dependencies of requested extras."""
    edges: dict[str, set[str]] = {}
    requested: set[tuple[str, str]] = set()
    every = [e for p in packages for e in _entries(p.get("dependencies"))]
    every += [e for p in packages for g in (*_groups(p.get("optional-dependencies")).values(),
                                            *_groups(p.get("dev-dependencies")).values()) for e in g]
    for entry in every:
        extras = entry.get("extra")
        for extra in extras if isinstance(extras, list) else []:
            requested.add((pypi_name(entry["name"]), str(extra)))
    for pkg in packages:
        name = pypi_name(pkg["name"])
        targets = edges.setdefault(name, set())
        targets.update(pypi_name(e["name"]) for e in _entries(pkg.get("dependencies")))
        for extra, items in _groups(pkg.get("optional-dependencies")).items():
            if (name, extra) in requested:
                targets.update(pypi_name(e["name"]) for e in items)
    return edges


def _member_roots(members: list[dict[str, Any]]) -> dict[str, bool]:
    """Direct names of the workspace members → dev-only."""
    prod: set[str] = set()
    dev: set[str] = set()
    for pkg in members:
        prod.update(pypi_name(e["name"]) for e in _entries(pkg.get("dependencies")))
        for extra, items in _groups(pkg.get("optional-dependencies")).items():
            (dev if is_dev_name(extra) else prod).update(pypi_name(e["name"]) for e in items)
        for items in _groups(pkg.get("dev-dependencies")).values():
            dev.update(pypi_name(e["name"]) for e in items)
    names = {pypi_name(p["name"]) for p in members}
    return {n: n not in prod for n in sorted((prod | dev) - names)}


def parse_uv_lock(path: str, text: str, declared: dict[str, bool] | None) -> Parsed:
    lock = read_lock(path, text)
    if isinstance(lock, Parsed):
        return lock
    entries, lines = lock
    packages = _entries(entries)
    members = [p for p in packages if _is_member(p)]
    edges = _edges(packages)
    result = Parsed()
    direct = _member_roots(members) or {n: d for n, d in (declared or {}).items() if n in edges}
    if not direct and len(packages) > len(members):
        direct = dict.fromkeys(guessed_roots(set(edges), edges), False)
        result.issues.append(no_manifest_issue(path))
    graph = lock_graph(direct, edges)
    for index, pkg in enumerate(entries):
        line = lines[index] if lines else None
        if not isinstance(pkg, dict) or not isinstance(pkg.get("name"), str):
            result.issues.append(Issue("[[package]] entry without a name", path, line))
            continue
        if _is_member(pkg):
            continue
        dev = graph.is_dev(pypi_name(pkg["name"]))
        result.deps.append(graph.dependency(pkg, direct, path, line, dev, _source(pkg.get("source"))))
    return result


def _source(source: Any) -> str | None:
    """Where a non-registry package comes from: git, url, path or directory."""
    if not isinstance(source, dict):
        return None
    if "git" in source:
        git = str(source["git"])
        return git if git.startswith("git+") else f"git+{git}"
    return next((str(source[k]) for k in ("url", "path", "directory") if k in source), None)
