"""Shared pieces of the dependency parsers: results, names, versions, dev groups, graphs."""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

from repocontext import bounded
from repocontext.deps.specifiers import exact_version, plain_specifiers, settled
from repocontext.model import Dependency

Level = Literal["info", "warning", "error"]
Reader = Callable[[str], str | None]  # repo-relative path -> text, or None when unreadable


@dataclass
class Issue:
    """A problem in repository content; the probe turns it into a Diagnostic."""

    message: str
    file: str | None = None
    line: int | None = None
    level: Level = "warning"


@dataclass(frozen=True)
class Include:
    """A pip `-r` / `-c` include: `target` is the repo-relative path it names (resolved against `file`)."""

    file: str
    line: int | None
    kind: Literal["r", "c"]
    target: str


@dataclass
class Parsed:
    deps: list[Dependency] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)
    includes: list[Include] = field(default_factory=list)  # requirement files a manifest points pip at

    def extend(self, other: Parsed) -> None:
        self.deps.extend(other.deps)
        self.issues.extend(other.issues)
        self.includes.extend(other.includes)

    def add(self, found: Dependency | Issue | Include | None) -> None:
        """File one line's result where it belongs; None is a line that declares nothing (an option)."""
        if isinstance(found, Dependency):
            self.deps.append(found)
        elif isinstance(found, Include):
            self.includes.append(found)
        elif found is not None:
            self.issues.append(found)


_SEPARATORS = re.compile(r"[-_.]+")


def pypi_name(name: str) -> str:
    """PEP 503 normalisation: lower case, runs of -_. become one -. (What packaging's canonicalize_name
    does; its module imports packaging.tags and logging, ~3 ms of every gather of a Python repository.)"""
    return _SEPARATORS.sub("-", name).lower()


def exact_pep440(specifier: str) -> str | None:
    """The pinned version of a `==x` / `===x` specifier (no wildcard), else None."""
    pairs = plain_specifiers(specifier)
    if pairs is None or not settled(pairs):
        pairs = _packaging_specifiers(specifier)
    return exact_version(pairs) if pairs is not None else None


def _packaging_specifiers(text: str) -> list[tuple[str, str]] | None:
    """(operator, version) of each specifier packaging reads in `text`, or None where it rejects it."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        return [(spec.operator, spec.version) for spec in SpecifierSet(text)]
    except InvalidSpecifier:
        return None


_RAW_SPEC = re.compile(r"^\s*[A-Za-z0-9][A-Za-z0-9._-]*\s*(?:\[[^\]]*\])?\s*([^;]*)")
Parsed508 = tuple[str, str | None, str | None, tuple[str, ...], str | None, str | None]

# The plain shape nearly every line has: a name, maybe extras, maybe comma-joined specifiers, and no marker, URL
# or parenthesis. Read here, it needs no `packaging.requirements` (its grammar, markers and tags cost ~10 ms
# of every bare start that parses a requirement); anything else goes to packaging.
_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_SPEC = r"(?:===|==|!=|<=|>=|~=|<|>)\s*[A-Za-z0-9.*+!_-]+"
_PLAIN508 = re.compile(
    rf"({_NAME})\s*(?:\[\s*((?:{_NAME})(?:\s*,\s*{_NAME})*)?\s*\])?\s*({_SPEC}(?:\s*,\s*{_SPEC})*)?")


def _plain508(text: str) -> Parsed508 | None:
    """`_parse508`'s answer for a plain requirement (the shape above), else None (packaging decides)."""
    match = _PLAIN508.fullmatch(text)
    if match is None:
        return None
    name, extras, specifier = match.groups()
    pairs = plain_specifiers(specifier or "")
    if pairs is None or not settled(pairs):
        return None  # packaging decides, and words any error
    return (pypi_name(name), exact_version(pairs),
            specifier.strip() if specifier else None,
            tuple(sorted({part.strip() for part in extras.split(",")})) if extras else (), None, None)


@lru_cache(maxsize=8192)
def _parse508(text: str) -> Parsed508 | str:
    """(name, exact version, constraint as written, extras, markers, url), or the parse error.

    Cached: monorepos repeat the same requirement strings across many manifests. packaging's parser is
    imported only for a line `_plain508` does not read: building its grammar is a fifth of a re-gather's imports.
    """
    plain = _plain508(text)
    return plain if plain is not None else _packaging508(text)


def _packaging508(text: str) -> Parsed508 | str:
    """`_parse508`'s answer from `packaging.requirements`, for any line (the tests hold `_plain508` to it)."""
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        req = Requirement(text)
    except InvalidRequirement as exc:
        return str(exc).splitlines()[0]
    specs = list(req.specifier)
    exact = specs[0].version if len(specs) == 1 and specs[0].operator in ("==", "===") else None
    raw = _RAW_SPEC.match(text)
    constraint = raw.group(1).strip() if raw and not req.url else ""
    return (pypi_name(req.name), None if exact is None or exact.endswith("*") else exact, constraint or None,
            tuple(sorted(req.extras)), str(req.marker) if req.marker else None, req.url)


def pep508(path: str, line: int | None, text: str, dev: bool, section: str | None = None) -> Dependency | Issue:
    """A PEP 508 requirement string as a record; the constraint is kept as written."""
    parsed = _parse508(text.strip())
    if isinstance(parsed, str):
        return Issue(f"unparsable requirement {text.strip()!r}: {parsed}", path, line)
    name, version, constraint, extras, markers, url = parsed
    return Dependency(ecosystem="PyPI", name=name, version=version, constraint=constraint, file=path, line=line,
                      dev=dev, extras=list(extras), markers=markers, source=url, section=section)


def declared(deps: Iterable[Dependency]) -> dict[str, bool]:
    """Declared names of a manifest → dev (True only when every declaration is dev-only)."""
    names: dict[str, bool] = {}
    for dep in deps:
        if dep.kind == "manifest":
            names[dep.name] = names.get(dep.name, True) and dep.dev
    return names


# Group, extra and file-name words that mark development-only dependencies.
DEV_WORDS = frozenset({
    "dev", "develop", "development", "devel", "test", "tests", "testing", "lint", "linting", "linters",
    "doc", "docs", "documentation", "sphinx", "typing", "types", "mypy", "typecheck", "style", "format",
    "fmt", "qa", "ci", "check", "checks", "coverage", "cov", "bench", "benchmark", "benchmarks", "tox",
    "nox", "precommit", "debug",
})


def is_dev_name(name: str) -> bool:
    """True when a group / extra / file stem is named like dev tooling ("dev", "test-deps", "docs")."""
    return any(word in DEV_WORDS for word in re.split(r"[-_.\s]+", name.lower()))


def line_of_error(message: str) -> int | None:
    """The line number in a tomllib error message ("... (at line 3, column 5)")."""
    found = re.search(r"line (\d+)", message)
    return int(found.group(1)) if found else None


def shortest_paths(roots: Iterable[str], edges: Mapping[str, Iterable[str]]) -> dict[str, list[str]]:
    """For every node reachable from `roots`, the shortest chain root → … → node.

    Roots and neighbours are visited in sorted order, so ties always break the same way.
    """
    paths: dict[str, list[str]] = {}
    queue: deque[str] = deque()
    for root in sorted(set(roots)):
        paths[root] = [root]
        queue.append(root)
    while queue:
        node = queue.popleft()
        for nxt in sorted(set(edges.get(node, ()))):
            if nxt not in paths:
                paths[nxt] = [*paths[node], nxt]
                queue.append(nxt)
    return paths


def guessed_roots(nodes: set[str], edges: Mapping[str, Iterable[str]]) -> set[str]:
    """Packages no other package depends on: the best guess at a lockfile's direct set."""
    targets = {t for source, ts in edges.items() for t in ts if t != source}
    return nodes - targets


def no_manifest_issue(path: str) -> Issue:
    return Issue("no declared dependencies found for this lockfile; treating packages that nothing "
                 "depends on as direct", path, None, "info")


@dataclass
class LockGraph:
    """Chains and reachability of a lockfile's packages from its direct set."""

    paths: dict[str, list[str]]
    prod: set[str]
    dev: set[str]

    def is_dev(self, name: str) -> bool:
        """Dev-only when reachable from dev roots but not from production roots."""
        return name not in self.prod and name in self.dev

    def dependency(self, pkg: Mapping[str, Any], direct: Mapping[str, bool], path: str, line: int | None,
                   dev: bool, source: str | None) -> Dependency:
        """The record of one named `[[package]]` entry of a PyPI TOML lockfile (poetry.lock, uv.lock)."""
        name = pypi_name(pkg["name"])
        version = pkg.get("version")
        return Dependency(
            ecosystem="PyPI", name=name, version=str(version) if version is not None else None,
            direct=name in direct, path=[] if name in direct else self.paths.get(name, []),
            dev=dev, file=path, line=line, kind="lockfile", source=source,
        )


def lock_graph(direct: Mapping[str, bool], edges: Mapping[str, Iterable[str]]) -> LockGraph:
    """Chains prefer production roots: a package both ship and dev tools need shows its shipping chain."""
    prod = shortest_paths([n for n, dev in direct.items() if not dev], edges)
    dev = shortest_paths([n for n, dev in direct.items() if dev], edges)
    return LockGraph(paths={**dev, **prod}, prod=set(prod), dev=set(dev))


def sort_key(dep: Dependency) -> tuple[str, str, int, str, str, str]:
    return (dep.ecosystem, dep.file, dep.line if dep.line is not None else -1, dep.name,
            dep.version or "", dep.constraint or "")


def read_toml(path: str, text: str) -> dict[str, Any] | Parsed:
    """The TOML document, or a Parsed carrying the one error (with its line) when it is invalid."""
    import tomllib  # here: most gathers read no TOML (~2 ms of start-up)

    try:
        return bounded.toml_loads(text)
    except bounded.LimitExceeded as exc:
        return Parsed(issues=[Issue(bounded.describe(exc), path, exc.line, "error")])
    except tomllib.TOMLDecodeError as exc:
        return Parsed(issues=[Issue(f"invalid TOML: {exc}", path, line_of_error(str(exc)), "error")])


def read_lock(path: str, text: str) -> tuple[list[Any], list[int]] | Parsed:
    """A TOML lockfile's `[[package]]` entries and their header lines (empty when they cannot be paired),
    or a Parsed carrying the one error when the TOML is invalid."""
    data = read_toml(path, text)
    if isinstance(data, Parsed):
        return data
    from repocontext.deps.toml_lines import TomlLines

    raw = data.get("package")
    entries: list[Any] = raw if isinstance(raw, list) else []
    headers = TomlLines(text).array_headers(("package",))
    return entries, headers if len(headers) == len(entries) else []
