"""What yarn.lock and pnpm-lock.yaml have in common: entries, edges between them, records from a graph.

Both formats list resolved packages (one entry per name@version, or per peer
variant in pnpm) and, for each, the names and ranges or versions it depends
on. The parsers turn their file into `Entry`s keyed by an id unique in the
file, with edges as ids; the direct set (roots) comes from the lockfile's
importers / workspace entries or from the manifests beside it. Chains and
dev-only-ness come from the same breadth-first walk the PyPI lockfiles use.
Each record's `section` names the file's flavour ("yarn-berry",
"yarn-classic", "pnpm", "pnpm-workspace"): the command that regenerates the
file depends on it, and the lockfile itself is rarely in a bundle to look at.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from repocontext.deps.common import guessed_roots, lock_graph
from repocontext.deps.npm import npm_source
from repocontext.model import Dependency


@dataclass
class Entry:
    name: str
    version: str | None
    line: int | None
    deps: list[str] = field(default_factory=list)  # ids of the entries it depends on
    source: str | None = None  # git / file / URL origin instead of the registry


def split_descriptor(descriptor: str) -> tuple[str, str]:
    """`name@range` (the name may be `@scope/name`) → (name, range); no `@` after the name gives ''."""
    at = descriptor.find("@", 1)
    return (descriptor, "") if at == -1 else (descriptor[:at], descriptor[at + 1:])


def real_name(name: str, spec: str) -> str:
    """An alias `name@npm:other@^1` installs `other`: advisories name the real package."""
    if spec.startswith("npm:") and spec.find("@", 5) != -1:
        return split_descriptor(spec[4:])[0]
    return name


def spec_source(specs: Iterable[str]) -> str | None:
    """The first non-registry spec (git, file, URL, GitHub shorthand) among a package's ranges."""
    return next((s for s in (npm_source(x) for x in specs) if s), None)


def manifest_roots(manifests: Iterable[Dependency], resolve: Callable[[str, str], str | None],
                   lookup: Mapping[str, str]) -> dict[str, bool]:
    """Entry id → dev for each declared name: the entry its `name@constraint` resolved to, else (the
    manifest changed since the lock was written) every entry locked under that name."""
    by_name: dict[str, set[str]] = {}
    for descriptor, key in lookup.items():
        by_name.setdefault(split_descriptor(descriptor)[0], set()).add(key)
    roots: dict[str, bool] = {}
    for dep in manifests:
        found = resolve(dep.name, dep.constraint or "")
        for key in [found] if found is not None else sorted(by_name.get(dep.name, ())):
            roots[key] = roots.get(key, True) and dep.dev
    return roots


def lock_records(path: str, entries: Mapping[str, Entry], roots: Mapping[str, bool],
                 flavour: str) -> tuple[list[Dependency], bool]:
    """One record per (name, version, line), with its shortest chain; True when the roots had to be guessed."""
    edges = {key: entry.deps for key, entry in entries.items()}
    guessed = not roots
    if guessed:
        roots = {key: False for key in guessed_roots(set(entries), edges)}
    graph = lock_graph(roots, edges)
    best: dict[tuple[str, str | None, int | None], tuple[tuple[bool, bool, int], Dependency]] = {}
    for key in sorted(entries):
        entry = entries[key]
        direct = key in roots
        chain = [] if direct else [entries[k].name for k in graph.paths.get(key, []) if k in entries]
        dep = Dependency(ecosystem="npm", name=entry.name, version=entry.version, direct=direct, path=chain,
                         dev=graph.is_dev(key), file=path, line=entry.line, kind="lockfile", source=entry.source,
                         section=flavour)
        rank = (not direct, dep.dev, len(chain))  # peer variants of one package: keep its most direct use
        slot = (entry.name, entry.version, entry.line)
        if slot not in best or rank < best[slot][0]:
            best[slot] = (rank, dep)
    return [dep for _, dep in best.values()], guessed
