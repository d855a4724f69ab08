"""package-lock.json / npm-shrinkwrap.json: lockfileVersion 2 and 3 (`packages`), v1 (`dependencies`).

Both shapes become one map of install locations ("node_modules/a/node_modules/b")
to nodes. Chains are found by walking from the root ("" and workspace folders)
and resolving each required name the way Node does: the nearest
`node_modules/<name>` going up from the requiring package. Packages the walk
never reaches get the chain their nesting implies. Workspace folders and
`link` entries are the project's own code and are not recorded. v1 lockfiles
have no root entry: the sibling package.json gives the direct set.
"""

from __future__ import annotations

import posixpath
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from repocontext.deps.common import Issue, Parsed, no_manifest_issue
from repocontext.deps.json_lines import KeyPath, nested_key_lines, parsed_key_lines
from repocontext.deps.npm import SECTIONS, load_json
from repocontext.model import Dependency

_PACKAGE_SECTIONS = ("dependencies", "optionalDependencies", "peerDependencies")


@dataclass
class _Node:
    name: str
    version: str | None = None
    dev: bool = False
    deps: list[str] = field(default_factory=list)
    link: str | None = None  # location a `link: true` entry points to
    line: int | None = None
    installed: bool = True  # False for the root and workspace folders
    source: str | None = None


def _names(entry: dict[str, Any], sections: tuple[str, ...]) -> list[str]:
    return sorted({n for s in sections if isinstance(entry.get(s), dict) for n in entry[s]})


def _is_installed(location: str) -> bool:
    return location.startswith("node_modules/") or "/node_modules/" in location


def _v2_nodes(packages: dict[str, Any], lines: dict[KeyPath, int]) -> dict[str, _Node]:
    nodes: dict[str, _Node] = {}
    for location, entry in packages.items():
        if not isinstance(entry, dict):
            continue
        line = lines.get(("packages", location))
        if not _is_installed(location):  # the root ("") or a workspace folder
            nodes[location] = _Node(name=str(entry.get("name", location)), deps=_names(entry, SECTIONS),
                                    line=line, installed=False)
            continue
        resolved = entry.get("resolved")
        name = entry.get("name")
        nodes[location] = _Node(
            name=name if isinstance(name, str) else location.rsplit("node_modules/", 1)[1],
            version=str(entry["version"]) if "version" in entry else None, dev=entry.get("dev") is True,
            deps=_names(entry, _PACKAGE_SECTIONS), line=line,
            link=str(resolved) if entry.get("link") and resolved else None,
            source=resolved if isinstance(resolved, str) and resolved.startswith(("git+", "file:")) else None,
        )
    return nodes


def _v1_nodes(deps: dict[str, Any], lines: dict[KeyPath, int], parent: str = "",
              keys: KeyPath = ("dependencies",)) -> dict[str, _Node]:
    nodes: dict[str, _Node] = {}
    for name, entry in deps.items():
        if not isinstance(entry, dict):
            continue
        location = f"{parent}/node_modules/{name}" if parent else f"node_modules/{name}"
        version = str(entry.get("version", "")) or None
        source = version if version and not version[0].isdigit() else None  # git/file/URL specs
        nodes[location] = _Node(name=name, version=None if source else version, dev=entry.get("dev") is True,
                                deps=_names(entry, ("requires",)), line=lines.get((*keys, name)), source=source)
        if isinstance(entry.get("dependencies"), dict):
            nodes.update(_v1_nodes(entry["dependencies"], lines, location, (*keys, name, "dependencies")))
    return nodes


def _search_path(location: str, known: dict[str, list[str]]) -> list[str]:
    """The `node_modules/` folders Node looks in for a package required at `location`, nearest first.
    A folder's list is its own `node_modules/` then its parent's list; `known` keeps the lists built so
    far, so `posixpath.dirname` (once most of the chain search) runs once per folder, not once per name."""
    pending: list[str] = []  # folders from `location` up to the first one already known
    base = location
    while base not in known:
        pending.append(base)
        parent = posixpath.dirname(base)
        if not base or parent == base:  # "" is the top; an absolute key stops at "/", where the walk repeats
            folders: list[str] = []
            break
        base = parent
    else:
        folders = known[base]
    for folder in reversed(pending):
        folders = [f"{folder}/node_modules/" if folder else "node_modules/", *folders]
        known[folder] = folders
    return folders


def _resolve(nodes: dict[str, _Node], search_path: list[str], name: str) -> str | None:
    """The location Node would load `name` from, given the requiring package's `_search_path`."""
    for folder in search_path:
        candidate = folder + name
        if candidate in nodes:
            return candidate
    return None


def _chains(nodes: dict[str, _Node]) -> dict[str, list[str]]:
    """Location → names from a direct dependency to it, by breadth-first walk from the roots."""
    roots = sorted(loc for loc, node in nodes.items() if not node.installed)
    chains: dict[str, list[str]] = {root: [] for root in roots}
    queue = deque(roots)
    known: dict[str, list[str]] = {}
    while queue:
        location = queue.popleft()
        search_path = _search_path(location, known)
        for name in nodes[location].deps:
            target = _resolve(nodes, search_path, name)
            if target is None:
                continue
            link = nodes[target].link
            if link is not None:  # a workspace link: "resolved" is the folder's own key
                if link not in nodes:
                    continue
                target = link
            if target not in chains:
                chains[target] = [*chains[location], nodes[target].name]
                queue.append(target)
    return chains


def _unrequired(nodes: dict[str, _Node]) -> list[str]:
    """Top-level packages that no installed package loads: the best guess at the direct set."""
    loaded: set[str | None] = set()
    known: dict[str, list[str]] = {}
    for location, node in nodes.items():
        search_path = _search_path(location, known)
        loaded.update(_resolve(nodes, search_path, name) for name in node.deps)
    return sorted(loc.removeprefix("node_modules/") for loc in nodes
                  if loc.count("node_modules/") == 1 and loc not in loaded)


def _nesting(location: str) -> list[str]:
    parts = [p.strip("/") for p in location.split("node_modules/")[1:]]
    return parts if len(parts) > 1 else []


def parse_package_lock(path: str, text: str, declared: dict[str, bool] | None) -> Parsed:
    data, issue = load_json(path, text)
    if data is None:
        return Parsed(issues=[issue] if issue else [])
    result = Parsed()
    if isinstance(data.get("packages"), dict) and data["packages"]:
        nodes = _v2_nodes(data["packages"], parsed_key_lines(text, data, max_depth=2))
    elif isinstance(data.get("dependencies"), dict):
        nodes = _v1_nodes(data["dependencies"], nested_key_lines(text, data, "dependencies"))
    else:
        return Parsed(issues=[Issue("lockfile has neither `packages` nor `dependencies`", path, None, "info")])
    if not any(not n.installed for n in nodes.values()):
        top = {loc.removeprefix("node_modules/") for loc in nodes if loc.count("node_modules/") == 1}
        names = [n for n in (declared or {}) if n in top]
        if not names:
            names = _unrequired(nodes)
            result.issues.append(no_manifest_issue(path))
        nodes[""] = _Node(name="", deps=sorted(names), installed=False)
    chains = _chains(nodes)
    for location, node in nodes.items():
        if not node.installed or node.link is not None:
            continue
        chain = chains.get(location)
        direct = chain is not None and len(chain) == 1
        result.deps.append(Dependency(
            ecosystem="npm", name=node.name, version=node.version, direct=direct,
            path=[] if direct else chain if chain is not None else _nesting(location),
            dev=node.dev, file=path, line=node.line, kind="lockfile", source=node.source,
        ))
    return result
