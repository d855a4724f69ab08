"""packages.lock.json (NuGet's repeatable-restore lockfile, version 1 and 2).

    {"version": 1, "dependencies": {"net8.0": {"Newtonsoft.Json": {"type": "Direct", "requested": "[13.0.1, )",
     "resolved": "13.0.1", "contentHash": "…", "dependencies": {"X": "4.3.0"}}, "Web": {"type": "Project", …}}}

Each target framework (and runtime, `net8.0/linux-x64`) lists every package it restores. `type` says how it
came: Direct (the project references it; `requested` is its range), Transitive, CentralTransitive (pinned by a
Directory.Packages.props PackageVersion under transitive pinning) or Project (a project reference: the
project's own code, not recorded, but its dependencies are reached through it, so chains start there).
One record per package and resolved version, at the line of its first entry. Chains: shortest, from the
Direct packages and project references. Dev: the records of a test project (its manifest records are dev,
or, with no manifest, it references Microsoft.NET.Test.Sdk directly). Ids are matched case-insensitively.
"""

from __future__ import annotations

from typing import Any

from repocontext.deps.common import Issue, Parsed, lock_graph
from repocontext.deps.json_lines import key_lines
from repocontext.deps.npm import load_json
from repocontext.deps.nuget import TEST_SDK
from repocontext.model import Dependency

_ROOTS = frozenset({"direct", "project"})


def parse_packages_lock(path: str, text: str, declared: dict[str, bool] | None) -> Parsed:
    data, issue = load_json(path, text)
    if data is None:
        return Parsed(issues=[issue] if issue else [])
    frameworks = data.get("dependencies")
    if not isinstance(frameworks, dict):
        return Parsed(issues=[Issue("no `dependencies` object", path, 1, "error")])
    lines = key_lines(text, max_depth=3)
    entries = [(tfm, name, entry) for tfm, packages in frameworks.items() if isinstance(packages, dict)
               for name, entry in packages.items() if isinstance(entry, dict)]
    shown = {name.lower(): name for _, name, _ in reversed(entries)}  # the first spelling of each id
    edges: dict[str, set[str]] = {}
    roots: set[str] = set()
    for _, name, entry in entries:
        key = name.lower()
        needs = entry.get("dependencies")
        edges.setdefault(key, set()).update(n.lower() for n in (needs if isinstance(needs, dict) else ()))
        if str(entry.get("type", "")).lower() in _ROOTS:
            roots.add(key)
    dev = _is_test(declared, entries)
    graph = lock_graph(dict.fromkeys(sorted(roots), dev), edges)
    result = Parsed()
    seen: set[tuple[str, str]] = set()
    for tfm, name, entry in entries:
        kind = str(entry.get("type", ""))
        version = entry.get("resolved")
        if kind.lower() == "project" or not isinstance(version, str) or (name.lower(), version) in seen:
            continue
        seen.add((name.lower(), version))
        direct = kind.lower() == "direct"
        requested = entry.get("requested")
        chain = [] if direct else [shown.get(n, n) for n in graph.paths.get(name.lower(), [])]
        result.deps.append(Dependency(
            ecosystem="NuGet", name=name, version=version, constraint=requested if isinstance(requested, str) else None,
            direct=direct, path=chain, dev=graph.is_dev(name.lower()) or (dev and not chain),
            file=path, line=lines.get(("dependencies", tfm, name)), kind="lockfile", section=kind or None))
    return result


def _is_test(declared: dict[str, bool] | None, entries: list[tuple[str, str, dict[str, Any]]]) -> bool:
    """A test project's lockfile: its manifest's declarations are all dev, or (no manifest read) it
    references Microsoft.NET.Test.Sdk directly."""
    if declared:
        return all(declared.values())
    return any(name.lower() == TEST_SDK and str(e.get("type", "")).lower() == "direct" for _, name, e in entries)
