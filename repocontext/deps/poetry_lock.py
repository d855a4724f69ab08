"""poetry.lock: every locked package, with its chain from a direct dependency.

The direct set is the names declared in the sibling pyproject.toml. Without
one (or when none of its names is locked) the packages that nothing else
depends on are taken as direct, and an info diagnostic says so. dev comes
from the lock's `groups` (Poetry ≥ 2) or `category` (Poetry < 1.5) when
present, else from reachability: dev-only when reachable only from dev roots.
"""

from __future__ import annotations

from typing import Any

from repocontext.deps.common import (
    Issue,
    LockGraph,
    Parsed,
    guessed_roots,
    lock_graph,
    no_manifest_issue,
    pypi_name,
    read_lock,
)


def parse_poetry_lock(path: str, text: str, declared: dict[str, bool] | None) -> Parsed:
    lock = read_lock(path, text)
    if isinstance(lock, Parsed):
        return lock
    entries, lines = lock
    packages = [p for p in entries if isinstance(p, dict) and isinstance(p.get("name"), str)]
    named = {id(p) for p in packages}
    edges: dict[str, set[str]] = {}
    for pkg in packages:
        deps = pkg.get("dependencies")
        edges.setdefault(pypi_name(pkg["name"]), set()).update(
            pypi_name(d) for d in (deps if isinstance(deps, dict) else {}))
    result = Parsed()
    direct = {n: dev for n, dev in (declared or {}).items() if n in edges}
    if not direct:
        direct = dict.fromkeys(guessed_roots(set(edges), edges), False)
        result.issues.append(no_manifest_issue(path))
    graph = lock_graph(direct, edges)
    for index, pkg in enumerate(entries):
        if id(pkg) not in named:
            result.issues.append(Issue("[[package]] entry without a name", path, lines[index] if lines else None))
            continue
        dev = _dev(pkg, pypi_name(pkg["name"]), graph)
        result.deps.append(graph.dependency(pkg, direct, path, lines[index] if lines else None, dev,
                                            _source(pkg.get("source"))))
    return result


def _dev(pkg: dict[str, Any], name: str, graph: LockGraph) -> bool:
    groups = pkg.get("groups")
    if isinstance(groups, list):
        return "main" not in groups
    category = pkg.get("category")
    if isinstance(category, str):
        return category == "dev"
    return graph.is_dev(name)


def _source(source: Any) -> str | None:
    """git/url/file/directory sources; registries (PyPI, "legacy" private indexes) are not an origin to note."""
    if not isinstance(source, dict) or source.get("type") in (None, "legacy"):
        return None
    url = str(source.get("url", ""))
    return f"git+{url}" if source.get("type") == "git" and not url.startswith("git+") else url or None
