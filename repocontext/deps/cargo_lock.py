"""Cargo.lock (v1 to v4): every locked crate, with its chain from a workspace member's dependency.

The lock names its own roots: a `[[package]]` without `source` is a workspace member or a path crate (the
repository's own code, not recorded), and the crates they depend on are direct. Other crates get the
shortest chain of names from a direct one. A dependency entry is `"name"` (v2+: the only locked version),
`"name version"` or `"name version (source)"` (v1 always, later ones where a name is locked twice).
A v1 file's `[root]` table is its root package. A git crate keeps its origin as the source.

dev: Cargo.lock does not say. A direct crate that the Cargo.toml beside the lock declares only under
`[dev-dependencies]` (and no other member depends on) is dev, and so is what only such crates pull in; every
other crate counts as shipped.
"""

from __future__ import annotations

import re
from typing import Any

from repocontext.deps.common import Issue, Parsed, lock_graph, read_lock
from repocontext.model import Dependency

Key = tuple[str, str]  # (name, version)
REGISTRY = "registry+https://github.com/rust-lang/crates.io-index"
# The layout cargo writes (names, versions and sources are plain strings without escapes). A file in it is read
# by these two expressions at a third of tomllib's cost; any other file, by tomllib (tests hold them equal).
_PREAMBLE = re.compile(r"(?:#[^\n]*\n|version = \d+\n|\n)*")
_ENTRY = re.compile(r'\[\[package\]\]\nname = "([^"\\\n]*)"\nversion = "([^"\\\n]*)"\n(?:source = "([^"\\\n]*)"\n)?'
                    r'(?:checksum = "[0-9a-f]*"\n)?(?:dependencies = \[\n((?: "[^"\\\n]*",\n)*)\]\n)?(?:\n+|\Z)')


def parse_cargo_lock(path: str, text: str, declared: dict[str, bool] | None = None) -> Parsed:
    lock = cargo_layout(text) or read_lock(path, text)
    if isinstance(lock, Parsed):
        return lock
    entries, lines = lock
    result = Parsed()
    packages: list[tuple[dict[str, Any], int | None]] = []
    for index, entry in enumerate(entries):
        line = lines[index] if lines else None
        if isinstance(entry, dict) and isinstance(entry.get("name"), str) and isinstance(entry.get("version"), str):
            packages.append((entry, line))
        else:
            result.issues.append(Issue("[[package]] entry without a name and version", path, line))
    root = _root(path, text)
    if root is not None:
        packages.append((root, None))
    edges, members = _graph(path, packages, result)
    users: dict[Key, int] = {}
    for member in sorted(members):
        for dep in edges.get(member, ()):
            if dep not in members:
                users[dep] = users.get(dep, 0) + 1
    # dev only when the manifest beside the lock declares it for dev alone and no other member needs it
    direct = {k: bool(declared and declared.get(k[0]) and n == 1) for k, n in sorted(users.items())}
    graph = lock_graph({_id(k): dev for k, dev in direct.items()},
                       {_id(k): [_id(t) for t in ts] for k, ts in edges.items()})
    for entry, line in packages:
        key = (entry["name"], entry["version"])
        if key in members:
            continue
        chain = graph.paths.get(_id(key), [])
        result.deps.append(Dependency(
            ecosystem="crates.io", name=key[0], version=key[1], direct=key in direct,
            path=[] if key in direct else [_name(step) for step in chain], dev=graph.is_dev(_id(key)),
            file=path, line=line, kind="lockfile", source=_source(entry.get("source"))))
    return result


def cargo_layout(text: str) -> tuple[list[Any], list[int]] | None:
    """The `[[package]]` entries (as tomllib gives them) and their header lines of a file in cargo's own layout;
    None for any other text."""
    at = _PREAMBLE.match(text)
    pos = at.end() if at else 0
    line = text.count("\n", 0, pos) + 1
    entries: list[Any] = []
    lines: list[int] = []
    while pos < len(text):
        found = _ENTRY.match(text, pos)
        if found is None:
            return None
        name, version, source, deps = found.groups()
        entry: dict[str, Any] = {"name": name, "version": version}
        if source is not None:
            entry["source"] = source
        if deps is not None:
            entry["dependencies"] = [d.strip()[1:-2] for d in deps.splitlines()]
        entries.append(entry)
        lines.append(line)
        line += found.group().count("\n")
        pos = found.end()
    return entries, lines


def _root(path: str, text: str) -> dict[str, Any] | None:
    """A v1 lockfile's `[root]` package (its `dependencies` name the others as `[[package]]` entries do)."""
    if "\n[root]" not in f"\n{text}":
        return None
    from repocontext.deps.common import read_toml

    data = read_toml(path, text)
    root = data.get("root") if isinstance(data, dict) else None
    named = isinstance(root, dict) and isinstance(root.get("name"), str) and isinstance(root.get("version"), str)
    return {k: v for k, v in root.items() if k != "source"} if named and isinstance(root, dict) else None


def _graph(path: str, packages: list[tuple[dict[str, Any], int | None]],
           result: Parsed) -> tuple[dict[Key, list[Key]], set[Key]]:
    """(crate → the crates it depends on, the source-less crates); an entry naming no locked crate is an issue."""
    by_name: dict[str, list[Key]] = {}
    sources: dict[Key, str | None] = {}
    for entry, _ in packages:
        key = (entry["name"], entry["version"])
        by_name.setdefault(key[0], []).append(key)
        sources[key] = entry.get("source") if isinstance(entry.get("source"), str) else None
    edges: dict[Key, list[Key]] = {}
    for entry, line in packages:
        key = (entry["name"], entry["version"])
        raw = entry.get("dependencies")
        targets: list[Key] = []
        for text in raw if isinstance(raw, list) else []:
            found = _resolve(str(text), by_name, sources)
            if found is None:
                result.issues.append(Issue(f"{key[0]} {key[1]} depends on {text!r}, which is not locked", path, line))
            else:
                targets.append(found)
        edges[key] = sorted(set(targets))
    return edges, {k for k, source in sources.items() if source is None}


def _resolve(text: str, by_name: dict[str, list[Key]], sources: dict[Key, str | None]) -> Key | None:
    """The locked crate a dependency entry names: by name alone when only one version is locked."""
    name, _, rest = text.strip().partition(" ")
    version, _, source = rest.partition(" ")
    candidates = by_name.get(name, [])
    if version:
        candidates = [k for k in candidates if k[1] == version]
    if source and len(candidates) > 1:
        wanted = source.strip().removeprefix("(").removesuffix(")")
        candidates = [k for k in candidates if sources[k] == wanted] or candidates
    return candidates[0] if len(candidates) == 1 else None


def _id(key: Key) -> str:
    return f"{key[0]} {key[1]}"


def _name(node: str) -> str:
    return node.partition(" ")[0]


def _source(source: Any) -> str | None:
    """A git or other non-crates.io origin; crates.io itself is no origin to note."""
    if not isinstance(source, str) or source in (REGISTRY, "sparse+https://index.crates.io/"):
        return None
    return source
