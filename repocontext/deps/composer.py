"""composer.json and composer.lock (Packagist).

composer.json: `require` and `require-dev` (dev), the constraint kept as written. Platform requirements
(`php`, `hhvm`, `ext-*`, `lib-*`, `composer-plugin-api`, `composer-runtime-api`, `composer`) are the
interpreter and its extensions, not packages, and are not recorded. A package that a `repositories` entry
serves (a `package` entry naming it, a vcs/git/github URL ending in its name, a `path` folder named like it)
records that as its source. Names are lower-cased, as Composer and the advisories write them.

composer.lock: every entry of `packages` (production) and `packages-dev` (dev-only: Composer decides that
itself), its version as locked (`v1.2.3` stays `v1.2.3`: the order in repocontext/osv/composer_versions.py
reads both spellings alike), at the line of its `"name"`. Chains run from the root's requirements (the
composer.json beside it) through each package's `require`; a transitive record's constraint is the one its
chain's last package places on it, so a remediation can say whether that parent caps the fix.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from repocontext.deps.common import Issue, Parsed, guessed_roots, lock_graph, no_manifest_issue
from repocontext.deps.json_lines import key_lines
from repocontext.deps.npm import load_json
from repocontext.model import Dependency

ECOSYSTEM = "Packagist"
SECTIONS = ("require", "require-dev")
_PLATFORM = re.compile(r"^(?:php(?:-64bit|-ipv6|-zts|-debug)?|hhvm|ext-.+|lib-.+|composer(?:-plugin-api|"
                       r"-runtime-api)?)$", re.IGNORECASE)
_EXACT = re.compile(r"^\s*(?:==?\s*)?(v?\d+(?:\.\d+){0,3}(?:[-._]?(?:beta|b|RC|alpha|a|patch|pl|p)[.-]?\d*)?)\s*$",
                    re.IGNORECASE)
_LOCK_NAME = re.compile(r'^ {12}"name": "([^"\\]*)",?$', re.MULTILINE)  # Composer's own 4-space layout
_TOKEN = re.compile(r'"((?:[^"\\]|\\.)*)"(\s*:)?|[{}\[\]]')


def is_platform(name: str) -> bool:
    """The interpreter, its extensions and Composer's APIs: requirements Composer checks, never installs."""
    return bool(_PLATFORM.match(name))


def exact(constraint: str) -> str | None:
    """The one version an exact constraint (`1.2.3`, `=v1.2.3`) admits, as written; None for a range."""
    found = _EXACT.match(constraint)
    return found.group(1) if found else None


def parse_composer_json(path: str, text: str) -> Parsed:
    data, issue = load_json(path, text)
    if data is None:
        return Parsed(issues=[issue] if issue else [])
    lines = key_lines(text, max_depth=2)
    sources = _sources(data.get("repositories"))
    result = Parsed()
    for section in SECTIONS:
        deps = data.get(section)
        if deps is None:
            continue
        if not isinstance(deps, dict):
            result.issues.append(Issue(f"{section} is not an object", path, lines.get((section,))))
            continue
        for raw, constraint in deps.items():
            line = lines.get((section, raw))
            if is_platform(raw):
                continue
            if not isinstance(constraint, str):
                result.issues.append(Issue(f"{section}.{raw}: version constraint is not a string", path, line))
                continue
            name = raw.lower()
            result.deps.append(Dependency(
                ecosystem=ECOSYSTEM, name=name, version=exact(constraint), constraint=constraint,
                dev=section == "require-dev", file=path, line=line, section=section, source=_source(name, sources),
            ))
    return result


def _sources(repositories: Any) -> list[tuple[str, str, str]]:
    """(type, package name or "", url) of each `repositories` entry that is not the registry."""
    if isinstance(repositories, dict):
        entries = list(repositories.values())
    else:
        entries = repositories if isinstance(repositories, list) else []
    found: list[tuple[str, str, str]] = []
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        kind, url = str(entry.get("type", "")), entry.get("url")
        package = entry.get("package")
        if kind == "package" and isinstance(package, dict):
            dist = package.get("dist")
            where = str(dist.get("url", "")) if isinstance(dist, dict) else ""
            found.append((kind, str(package.get("name", "")).lower(), where or "package repository"))
        elif kind in ("vcs", "git", "github", "gitlab", "bitbucket", "path") and isinstance(url, str):
            found.append((kind, "", url))
    return found


def _source(name: str, sources: list[tuple[str, str, str]]) -> str | None:
    """The first repository that serves `name`: by its `package` entry, a URL ending in the name, or a folder
    named like the name's package part."""
    for kind, named, url in sources:
        tail = url.rstrip("/").removesuffix(".git").lower()
        if kind == "package":
            served = named == name
        elif kind == "path":
            served = tail.rsplit("/", 1)[-1] == name.rsplit("/", 1)[-1]
        else:
            served = tail.endswith(("/" + name, ":" + name))
        if served:
            return url
    return None


def parse_composer_lock(path: str, text: str, declared: dict[str, bool] | None) -> Parsed:
    data, issue = load_json(path, text)
    if data is None:
        return Parsed(issues=[issue] if issue else [])
    entries = [(entry, section == "packages-dev") for section in ("packages", "packages-dev")
               for entry in _list(data.get(section))
               if isinstance(entry, dict) and isinstance(entry.get("name"), str)]
    if not entries and "packages" not in data:
        return Parsed(issues=[Issue("lockfile has no `packages`", path, None, "info")])
    names = [str(entry["name"]).lower() for entry, _ in entries]
    lines = _name_lines(text, [str(entry["name"]) for entry, _ in entries])
    requires = {name: _requires(entry) for name, (entry, _) in zip(names, entries, strict=True)}
    result = Parsed()
    direct = {n: dev for n, dev in (declared or {}).items() if n in requires}
    if not direct:
        roots = guessed_roots(set(names), {n: list(r) for n, r in requires.items()})
        direct = {n: dev for n, (_, dev) in zip(names, entries, strict=True) if n in roots}
        result.issues.append(no_manifest_issue(path))
    graph = lock_graph(direct, {n: sorted(r) for n, r in requires.items()})
    for index, (name, (entry, dev)) in enumerate(zip(names, entries, strict=True)):
        chain = [] if name in direct else graph.paths.get(name, [])
        parent = requires.get(chain[-2], {}) if len(chain) > 1 else {}
        result.deps.append(Dependency(
            ecosystem=ECOSYSTEM, name=name, version=_text(entry.get("version")), constraint=parent.get(name),
            direct=name in direct, path=chain, dev=dev, file=path, line=lines[index], kind="lockfile",
            section="packages-dev" if dev else "packages", source=_lock_source(entry),
        ))
    return result


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _requires(entry: Mapping[str, Any]) -> dict[str, str]:
    """Package name → constraint of an entry's `require` (platform requirements left out)."""
    raw = entry.get("require")
    if not isinstance(raw, dict):
        return {}
    return {str(n).lower(): str(c) for n, c in raw.items() if not is_platform(str(n))}


def _text(value: Any) -> str | None:
    return str(value) if isinstance(value, (str, int, float)) else None


def _lock_source(entry: Mapping[str, Any]) -> str | None:
    """A package Composer took from a folder (`path` repository) rather than a registry."""
    dist = entry.get("dist")
    if isinstance(dist, dict) and dist.get("type") == "path":
        return str(dist.get("url", "")) or "path repository"
    return None


def _name_lines(text: str, names: list[str]) -> list[int | None]:
    """The line of each entry's `"name"` key, in order. Composer writes 4-space JSON, where an entry's keys are
    the only 12-space-indented `"name"` lines; any other layout is tokenized."""
    found = list(_LOCK_NAME.finditer(text))
    if [m.group(1) for m in found] == names:
        return _lines_of(text, [m.start() for m in found])
    return _tokenized_name_lines(text, len(names))


def _lines_of(text: str, offsets: list[int]) -> list[int | None]:
    lines: list[int | None] = []
    line, last = 1, 0
    for offset in offsets:
        line += text.count("\n", last, offset)
        last = offset
        lines.append(line)
    return lines


def _tokenized_name_lines(text: str, count: int) -> list[int | None]:
    """The `"name"` keys of the objects directly inside the top level's `packages` and `packages-dev` arrays."""
    offsets: list[int] = []
    stack: list[str] = []  # "{" or "[" per open container
    pending = ""  # the last key read in the innermost object
    owners: list[str] = []  # the key each open container was the value of
    for match in _TOKEN.finditer(text):
        token = match.group()
        if match.group(2) is not None:
            pending = match.group(1)
            if pending == "name" and len(stack) == 3 and owners[1] in ("packages", "packages-dev"):
                offsets.append(match.start())
        elif token in "{[" and match.group(1) is None:
            owners.append(pending if stack and stack[-1] == "{" else "")
            stack.append(token)
        elif token in "}]" and match.group(1) is None and stack:
            stack.pop()
            owners.pop()
    lines = _lines_of(text, offsets)
    return lines if len(lines) == count else [None] * count
