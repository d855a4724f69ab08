"""Lockfiles as jobs: each is one lockfile, parsed with the declarations of the manifests it serves, into
plain rows (each record dumped, with its sort key and name), so a forked worker can parse it and send it back:
pickled dicts travel at a quarter of the cost of pickled models.

Which manifest serves a lockfile: the one in the same directory (pyproject.toml for poetry.lock and uv.lock,
Pipfile for Pipfile.lock, package.json for package-lock.json and npm-shrinkwrap.json); for a yarn.lock, every
package.json whose nearest yarn.lock at or above it is this one (a workspace's lockfile is at its root); a
pnpm-lock.yaml names its importers itself.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from repocontext.deps.common import Issue, declared, sort_key
from repocontext.model import Dependency, sparse_dump

# Lockfile name → (its parser, the name of the manifest whose declarations it takes, or None), in the order
# their records were always listed.
LOCKS: dict[str, tuple[str, str | None]] = {
    "poetry.lock": ("poetry_lock:parse_poetry_lock", "pyproject.toml"),
    "uv.lock": ("uv_lock:parse_uv_lock", "pyproject.toml"),
    "Pipfile.lock": ("pipfile:parse_pipfile_lock", "Pipfile"),
    "package-lock.json": ("npm_lock:parse_package_lock", "package.json"),
    "npm-shrinkwrap.json": ("npm_lock:parse_package_lock", "package.json"),
    "yarn.lock": ("yarn_lock:parse_yarn_lock", "package.json"),
    "pnpm-lock.yaml": ("pnpm_lock:parse_pnpm_lock", None),
    "Gemfile.lock": ("gemfile_lock:parse_gemfile_lock", "Gemfile|*.gemspec"),  # `gemspec`: its dev gems too
    "gems.locked": ("gemfile_lock:parse_gemfile_lock", "gems.rb|*.gemspec"),
    "Cargo.lock": ("cargo_lock:parse_cargo_lock", "Cargo.toml"),
    "packages.lock.json": ("nuget_lock:parse_packages_lock", "*.csproj"),
    "composer.lock": ("composer:parse_composer_lock", "composer.json"),
    "gradle.lockfile": ("gradle_lock:parse_gradle_lock", "build.gradle|build.gradle.kts"),  # `|`: either serves
}
# Manifests read before the lockfiles (a lockfile takes the declarations of the one its LOCKS entry names):
# group → parser target `module:function(path, text) -> Parsed`. A group is a file name, or `*.ext` for
# manifests named freely (a .NET project, a gemspec). The dependencies probe globs `**/GROUP` for each.
# Another ecosystem's manifest: one line here (and its lockfile's line in LOCKS).
MANIFESTS: dict[str, str] = {
    "pyproject.toml": "pyproject:parse_pyproject",
    "Pipfile": "pipfile:parse_pipfile",
    "package.json": "npm:parse_package_json",
    "Gemfile": "gemfile:parse_gemfile",
    "gems.rb": "gemfile:parse_gemfile",
    "*.gemspec": "gemfile:parse_gemspec",
    "Cargo.toml": "cargo:parse_cargo_toml",
    "*.csproj": "nuget:parse_msbuild",
    "*.fsproj": "nuget:parse_msbuild",
    "*.vbproj": "nuget:parse_msbuild",
    "Directory.Packages.props": "nuget:parse_msbuild",
    "Directory.Build.props": "nuget:parse_msbuild",
    "packages.config": "nuget:parse_packages_config",
    "composer.json": "composer:parse_composer_json",
    "pom.xml": "maven:parse_pom",
    "build.gradle": "gradle:parse_gradle",
    "build.gradle.kts": "gradle:parse_gradle",
    "libs.versions.toml": "gradle_catalog_file:parse_catalog",
}
# Groups whose parser also takes the texts of every manifest read (repo path → text or None) as a third
# argument: a pom resolves its parent's properties and managed versions, a Gradle build script its version
# catalog, a catalog which libraries only tests use.
READS_OTHERS: frozenset[str] = frozenset({"pom.xml", "build.gradle", "build.gradle.kts", "libs.versions.toml"})


def group_of(name: str) -> str | None:
    """The MANIFESTS or LOCKS group of a file name: the name itself, or the `*.ext` pattern it matches."""
    if name in MANIFESTS or name in LOCKS:
        return name
    return next((g for g in MANIFESTS if g.startswith("*") and name.endswith(g[1:])), None)


def by_group(table: Mapping[str, Any], name: str) -> Any:
    """`table[name]`, else the value of the first `*.ext` key `name` ends with, else None (registries keyed by
    file name, where some files are named freely)."""
    if name in table:
        return table[name]
    return next((v for k, v in table.items() if k.startswith("*") and name.endswith(k[1:])), None)


# What a parse costs, to decide whether forking workers pays: nine npm lockfiles of docker/awesome-compose
# (3.2 MB, 8,720 records) took 0.32 s to read and parse in one process.
SECONDS_PER_FILE = 1e-4
SECONDS_PER_BYTE = 1e-7

Row = tuple[tuple[str, str, int, str, str, str], str, dict[str, Any]]  # (sort key, name, the dumped record)
Manifests = dict[str, dict[str, list[Dependency]]]  # manifest name → its directory → the records it declares


@dataclass
class LockResult:
    issues: list[Issue] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)


def parser(target: str) -> Callable[..., Any]:
    """`module:function` of repocontext.deps, imported when a file of its format is first met: a gather
    imports only the parsers of the formats the repository holds (start-up cost of a small repository)."""
    module, _, name = target.partition(":")
    found: Callable[..., Any] = getattr(importlib.import_module(f"repocontext.deps.{module}"), name)
    return found


def row(record: Dependency) -> Row:
    return sort_key(record), record.name, sparse_dump(record)


def parse_lock(kind: str, path: str, text: str, manifests: Manifests, yarn_dirs: set[str]) -> LockResult:
    """The rows and issues of the lockfile at `path` (`kind`: its name in LOCKS)."""
    target, manifest = LOCKS[kind]
    if kind == "yarn.lock":
        serving = manifests.get(manifest or "", {})
        here = directory(path)
        served = [d for folder, deps in serving.items() if nearest(folder, yarn_dirs) == here for d in deps]
        parsed = parser(target)(path, text, served)
    elif manifest is None:
        parsed = parser(target)(path, text)
    else:  # `a|b`: the declarations of every one of those manifests beside the lockfile
        beside = [deps for group in manifest.split("|") if (deps := manifests.get(group, {}).get(directory(path)))
                  is not None]
        parsed = parser(target)(path, text, declared([d for deps in beside for d in deps]) if beside else None)
    return LockResult(list(parsed.issues), [row(d) for d in parsed.deps])


def grouped(rows: list[Row]) -> dict[str, list[dict[str, Any]]]:
    """name → records, names sorted, each name's records sorted by ecosystem, file, line (a stable sort: the
    rows of one file keep their parser's order)."""
    by_name: dict[str, list[dict[str, Any]]] = {}
    for _, name, record in sorted(rows, key=_first):
        by_name.setdefault(name, []).append(record)
    return dict(sorted(by_name.items()))


def _first(item: Row) -> tuple[str, str, int, str, str, str]:
    return item[0]


def directory(path: str) -> str:
    return str(PurePosixPath(path).parent)


def nearest(folder: str, candidates: Mapping[str, Any] | set[str]) -> str | None:
    """The closest of `candidates` at or above `folder` (a workspace's lockfile is at its root)."""
    current = PurePosixPath(folder)
    for step in (current, *current.parents):
        if str(step) in candidates:
            return str(step)
    return None
