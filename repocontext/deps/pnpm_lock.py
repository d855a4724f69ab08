"""pnpm-lock.yaml: lockfileVersion 5.x (`/name/1.2.3_peer`), 6.x (`/name@1.2.3(peer)`) and 9.x.

The direct set is explicit: `importers` (one per workspace folder, `.` for
the root) or, in single-project 5.x/6.x files, the top-level `dependencies`
/ `devDependencies` / `optionalDependencies`. 5.x writes a dependency as
`name: version`, 6.x and 9.x as `name: {specifier, version}`. In 5.x and 6.x
`packages` holds both the metadata and the edges; 9.x splits them into
`packages` (one key per name@version: the line recorded) and `snapshots`
(one key per peer variant, with the edges). A version can also be a full key
(an alias, or a non-registry package) or `link:` (a workspace folder, the
project's own code, not recorded).
"""

from __future__ import annotations

from typing import Any

from repocontext.deps.common import Issue, Parsed
from repocontext.deps.js_lock import Entry, lock_records, split_descriptor
from repocontext.deps.yaml_lines import KeyPath, load_yaml

_SECTIONS = {"dependencies": False, "optionalDependencies": False, "devDependencies": True}
_EDGES = ("dependencies", "optionalDependencies")


def _major(data: dict[str, Any]) -> int:
    try:
        return int(str(data.get("lockfileVersion", "")).strip("'\"").split(".")[0])
    except ValueError:
        return 0


def _reference(value: Any) -> str | None:
    """The resolved version of a dependency as written: a string (5.x) or {specifier, version}."""
    if isinstance(value, dict):
        value = value.get("version")
    return str(value) if isinstance(value, str) and value else None


def _peerless(key: str, major: int) -> str:
    """A package key without its peer suffix: `(react@18.2.0)` since 6.0, `_react@18.2.0` before."""
    key = key.split("(", 1)[0]
    if major < 6 and "_" in key:
        head, _, tail = key.rpartition("/")
        key = f"{head}/{tail.split('_', 1)[0]}"
    return key


def _name_version(key: str, major: int) -> tuple[str, str]:
    """`/@scope/a/1.0.0` (5.x), `/@scope/a@1.0.0` (6.x), `@scope/a@1.0.0` (9.x) → (name, version)."""
    bare = _peerless(key, major).lstrip("/")
    if major >= 6:
        return split_descriptor(bare)
    parts = bare.split("/")
    cut = 2 if bare.startswith("@") else 1
    return "/".join(parts[:cut]), "/".join(parts[cut:])


def _target(name: str, reference: str, major: int, keys: set[str]) -> str | None:
    """The entry key a dependency on `name` at `reference` points to, if the file has it."""
    if reference.startswith("link:"):
        return None
    if major >= 9:
        base = reference.split("(", 1)[0]
        candidates = [reference if base.find("@", 1) != -1 else f"{name}@{reference}"]
    elif major >= 6:
        candidates = [f"/{name}@{reference}"]
    else:
        candidates = [f"/{name}/{reference}"]
    candidates += [reference, f"/{reference}"]  # a full key: an alias or a non-registry package
    return next((c for c in candidates if c in keys), None)


def _entry(key: str, meta: dict[str, Any], edges: dict[str, Any], major: int, line: int | None,
           keys: set[str]) -> Entry:
    key_name, key_version = _name_version(key, major)
    registry = key_version[:1].isdigit()  # else a git / tarball / file key, whose metadata names the package
    version = str(meta.get("version") or key_version)
    deps = {_target(n, str(r), major, keys) for s in _EDGES if isinstance(edges.get(s), dict)
            for n, r in edges[s].items()}
    return Entry(name=str(meta.get("name") or key_name), version=version if version[:1].isdigit() else None,
                 line=line, deps=sorted(d for d in deps if d),
                 source=None if registry else _peerless(key, major).lstrip("/"))


def _entries(data: dict[str, Any], lines: dict[KeyPath, int], major: int) -> dict[str, Entry]:
    raw_packages, raw_snapshots = data.get("packages"), data.get("snapshots")
    packages: dict[str, Any] = raw_packages if isinstance(raw_packages, dict) else {}
    snapshots: dict[str, Any] | None = raw_snapshots if major >= 9 and isinstance(raw_snapshots, dict) else None
    nodes = snapshots if snapshots is not None else packages
    keys = set(nodes)
    entries: dict[str, Entry] = {}
    for key, edges in nodes.items():
        peerless = _peerless(key, major)
        meta = packages.get(peerless) if snapshots is not None else edges
        line = lines.get(("packages", peerless)) or lines.get(("snapshots", key)) or lines.get(("packages", key))
        entries[key] = _entry(key, meta if isinstance(meta, dict) else {}, edges if isinstance(edges, dict) else {},
                              major, line, keys)
    return entries


def _importers(data: dict[str, Any]) -> list[dict[str, Any]]:
    importers = data.get("importers")
    if isinstance(importers, dict):
        return [i for i in importers.values() if isinstance(i, dict)]
    return [data]  # a single project: its sections are at the top level


def _roots(data: dict[str, Any], major: int, keys: set[str]) -> dict[str, bool]:
    roots: dict[str, bool] = {}
    for importer in _importers(data):
        for section, dev in _SECTIONS.items():
            deps = importer.get(section)
            for name, value in (deps.items() if isinstance(deps, dict) else ()):
                reference = _reference(value)
                target = _target(name, reference, major, keys) if reference else None
                if target is not None:
                    roots[target] = roots.get(target, True) and dev
    return roots


def parse_pnpm_lock(path: str, text: str) -> Parsed:
    loaded = load_yaml(path, text, depth=2)
    if isinstance(loaded, Issue):
        return Parsed(issues=[loaded])
    data, lines = loaded
    major = _major(data)
    if major < 5:
        return Parsed(issues=[Issue(f"unsupported pnpm lockfileVersion {data.get('lockfileVersion')!r}", path,
                                    lines.get(("lockfileVersion",)), "warning")])
    entries = _entries(data, lines, major)
    importers = data.get("importers")
    workspace = isinstance(importers, dict) and any(key != "." for key in importers)
    deps, _ = lock_records(path, entries, _roots(data, major, set(entries)), "pnpm-workspace" if workspace else "pnpm")
    return Parsed(deps=deps)
