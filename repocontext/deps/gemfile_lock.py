"""Gemfile.lock (and gems.locked): every gem Bundler resolved, with the chain that brings it in.

The file is sections at column 0. GEM, GIT and PATH (and PLUGIN SOURCE) hold `remote:` and `specs:`;
under specs, a 4-space `name (version[-platform])` line is a locked gem and the 6-space `dep (reqs)` lines
below it are what it depends on. DEPENDENCIES lists the Gemfile's gems (`name (reqs)`, `name!` for a
GIT/PATH source): the direct set. PLATFORMS, RUBY VERSION, CHECKSUMS and BUNDLED WITH are not gems.

A gem locked in several platform variants (`nokogiri (1.15.4)`, `nokogiri (1.15.4-x86_64-linux)`) is one
version, recorded once at its first line; the platform is everything after the first `-`, as Bundler reads
it. A PATH gem the DEPENDENCIES name is the project's own code (`gemspec`): it is not recorded, and what it
depends on is direct. A gem from GIT or PATH, or from a gem server other than rubygems.org, has that origin
as its source. Dev comes from the Gemfile's groups (a gem reachable only from dev-group gems is dev).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from repocontext.deps.common import Issue, Parsed, guessed_roots, lock_graph, no_manifest_issue
from repocontext.model import Dependency

ECOSYSTEM = "RubyGems"
_SPEC = re.compile(r"^    (\S+) \(([^-)]*)(?:-([^)]*))?\)\s*$")
_DEP = re.compile(r"^      (\S+)(?: \(([^)]*)\))?\s*$")
_DIRECT = re.compile(r"^  (\S+?)(!)?(?: \(([^)]*)\))?\s*$")
_SOURCES = ("GEM", "GIT", "PATH", "PLUGIN SOURCE")
_PUBLIC = re.compile(r"^https?://(?:index\.)?rubygems\.org/?$")


@dataclass
class _Spec:
    name: str
    version: str
    line: int
    section: str
    source: str | None
    deps: list[str] = field(default_factory=list)
    requires: dict[str, str] = field(default_factory=dict)  # dependency → its requirement as written ("" for none)


@dataclass
class _Lock:
    specs: dict[str, _Spec] = field(default_factory=dict)  # by name: one locked version per gem
    direct: list[str] = field(default_factory=list)
    has_dependencies: bool = False


def _origin(section: str, fields: dict[str, str]) -> str | None:
    remote = fields.get("remote", "")
    if section == "GEM":
        return None if _PUBLIC.match(remote) else f"source: {remote}"
    revision = fields.get("revision")
    return f"{section.lower()}: {remote}" + (f"@{revision}" if revision else "")


def read_lock(path: str, text: str, issues: list[Issue]) -> _Lock:
    lock = _Lock()
    section = ""
    fields: dict[str, str] = {}
    current: _Spec | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        if not raw.startswith(" "):
            section, fields, current = raw.strip(), {}, None
            lock.has_dependencies |= section == "DEPENDENCIES"
            continue
        if section == "DEPENDENCIES":
            found = _DIRECT.match(raw)
            if found:
                lock.direct.append(found.group(1))
            continue
        if section not in _SOURCES:
            continue
        current = _source_line(raw, number, section, fields, lock, current, path, issues)
    return lock


def _source_line(raw: str, number: int, section: str, fields: dict[str, str], lock: _Lock, current: _Spec | None,
                 path: str, issues: list[Issue]) -> _Spec | None:
    """One line of a GEM / GIT / PATH section; returns the spec later dependency lines belong to."""
    if raw.startswith("  ") and not raw.startswith("   "):
        key, _, value = raw.strip().partition(":")
        fields[key] = value.strip()
        return None
    spec = _SPEC.match(raw)
    if spec:
        name, version = spec.group(1), spec.group(2)
        known = lock.specs.get(name)
        if known is not None:  # another platform's variant of the same version: one gem
            return known
        found = _Spec(name, version, number, section, _origin(section, fields))
        lock.specs[name] = found
        return found
    dep = _DEP.match(raw)
    if dep and current is not None:
        if dep.group(1) not in current.deps:
            current.deps.append(dep.group(1))
            current.requires[dep.group(1)] = dep.group(2) or ""
        return current
    issues.append(Issue(f"unexpected line in Gemfile.lock: {raw.strip()[:80]}", path, number))
    return current


def _roots(lock: _Lock, declared: dict[str, bool] | None) -> tuple[dict[str, bool], set[str]]:
    """Direct gem → dev, and the project's own PATH gems (replaced by what they depend on)."""
    dev = declared or {}
    roots: dict[str, bool] = {}
    own: set[str] = set()
    for name in lock.direct:
        spec = lock.specs.get(name)
        if spec is not None and spec.section == "PATH":
            own.add(name)
            for child in spec.deps:
                roots[child] = roots.get(child, True) and dev.get(name, False)
        else:
            roots[name] = roots.get(name, True) and dev.get(name, False)
    return roots, own


def parse_gemfile_lock(path: str, text: str, declared: dict[str, bool] | None) -> Parsed:
    """Records for every gem locked in `path`; `declared` are the Gemfile's names → dev, when known."""
    result = Parsed()
    lock = read_lock(path, text, result.issues)
    edges = {name: [d for d in spec.deps if d in lock.specs] for name, spec in lock.specs.items()}
    if lock.has_dependencies:
        roots, own = _roots(lock, declared)
    else:
        roots, own = dict.fromkeys(guessed_roots(set(lock.specs), edges), False), set()
        if lock.specs:
            result.issues.append(no_manifest_issue(path))
    graph = lock_graph(roots, edges)
    for name, spec in lock.specs.items():
        if name in own:
            continue
        direct = name in roots
        result.deps.append(Dependency(
            ecosystem=ECOSYSTEM, name=name, version=spec.version, direct=direct,
            path=[] if direct else graph.paths.get(name, []), dev=graph.is_dev(name), file=path,
            line=spec.line, kind="lockfile", section=spec.section, source=spec.source,
        ))
    return result
