"""Declared and locked dependencies from pip, setuptools, Pipenv, tox, conda, pyproject, Poetry, uv, npm,
Yarn, pnpm and Go files.

Requirement files are found by name (see `repocontext.deps.files`). Files they
include with -r/-c are read wherever they are, and so are the requirement
files that tox.ini `deps`, setup.cfg `file:` values and conda `pip:` lists
point at; all of them are folded into the fingerprint. A lockfile's direct
set comes from the manifest in the same directory (pyproject.toml,
package.json, Pipfile); a yarn.lock's from every package.json it serves (its
directory and the workspaces below it that have no yarn.lock of their own); a
pnpm-lock.yaml names its importers itself. setup.py is parsed with ast, never
run. The other ecosystems' manifests and lockfiles are the registries' in
`repocontext.deps.locks` (MANIFESTS, LOCKS); a manifest group in READS_OTHERS
(pom.xml, Gradle build scripts and catalog) is parsed with every manifest's text
at hand, as a pom's parent and a build script's version catalog decide its
versions.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from repocontext import parallel
from repocontext.deps import locks
from repocontext.deps.common import Include, Issue, Parsed
from repocontext.deps.files import (
    CONDA_GLOBS,
    REQUIREMENTS_GLOBS,
    is_conda_environment,
    manifest_bound,
    skipped_note,
)
from repocontext.deps.requirements import include_closure, parse_requirements
from repocontext.model import Dependency
from repocontext.probe import MAX_READ_BYTES, Probe, ProbeContext, ProbeOutput, Started, take_started

__all__ = ["MANIFEST_GLOBS", "REQUIREMENTS_GLOBS", "DependenciesProbe"]

_FIXED_GLOBS: tuple[str, ...] = (
    "**/pyproject.toml", "**/poetry.lock", "**/uv.lock", "**/package.json", "**/package-lock.json",
    "**/npm-shrinkwrap.json", "**/yarn.lock", "**/pnpm-lock.yaml", "**/go.mod", "**/go.sum", "**/setup.cfg",
    "**/setup.py", "**/Pipfile", "**/Pipfile.lock", "**/tox.ini", *CONDA_GLOBS,
)
# Every manifest and lockfile the registries in repocontext.deps.locks name, after the fixed ones.
MANIFEST_GLOBS: tuple[str, ...] = tuple(dict.fromkeys(
    (*_FIXED_GLOBS, *(f"**/{group}" for group in (*locks.MANIFESTS, *locks.LOCKS)))))
_CONDA = "environment.yml"  # the group of every conda environment file, whatever its name
# Python manifests that are not requirement files but may point pip at some (tox `-r`, setup.cfg `file:`).
_POINTERS: tuple[tuple[str, str], ...] = (
    ("setup.cfg", "setup_cfg:parse_setup_cfg"), ("setup.py", "setup_py:parse_setup_py"),
    ("tox.ini", "tox_ini:parse_tox_ini"), (_CONDA, "conda_env:parse_conda_env"),
)


_Texts = dict[str, str | None]
_DECLARED = "dependencies:declared"  # ctx.memo: what `start` worked out for `run`


@dataclass
class _Declared:
    """The manifests' side of a run: the parsed declarations, and what the lockfiles' parses need of them."""

    by_name: dict[str, list[str]]
    texts: _Texts  # every matched file but the lockfiles (the lock jobs read those)
    result: Parsed
    manifests: locks.Manifests
    yarn_dirs: set[str]  # the folders holding a yarn.lock (each serves the package.json files below it)


class DependenciesProbe(Probe):
    name = "dependencies"
    # 3: compiled requirement files (generated_by, hashed, transitive pins), setup.cfg, setup.py, Pipfile,
    # Pipfile.lock, tox.ini and conda environment files, requirement files under nested requirements/ folders;
    # yarn.lock (Yarn 1 and Berry) and pnpm-lock.yaml records; 4: records stored without their None fields;
    # 5: crates.io, RubyGems, Packagist, Maven/Gradle and NuGet files, npm parents' ranges
    version = "5"
    applies_to_tasks = ("vulnerability-remediation",)
    inputs = REQUIREMENTS_GLOBS + MANIFEST_GLOBS
    produces = ("dependencies",)

    def extra_fingerprint(self, ctx: ProbeContext) -> str:
        """Files reached only through includes are not in `inputs`; their hashes count too."""
        by_name = _grouped(ctx)
        read = _Bounded(ctx, Parsed())
        texts = {p: read(p) for name, _ in _POINTERS for p in by_name.get(name, [])}
        pointed = _parse_pointers(by_name, texts)
        roots = _globbed(ctx)
        targets = {i.target for i in pointed.includes}
        digest = hashlib.sha256(f"bound\0{read.bound}\0".encode())  # another bound, another answer
        for path in sorted(set(include_closure(sorted(set(roots) | targets), read)) | targets):
            record = ctx.record(path)
            digest.update(f"{path}\0{record.sha if record else '-'}\0".encode())
        return digest.hexdigest()

    def start(self, ctx: ProbeContext, cache: Mapping[str, Any], nice: int = 0) -> Started | None:
        """The lockfiles' parses (most of a run when there are large ones), when forking workers pays; the
        manifests they need are parsed here first."""
        ctx.memo[_DECLARED] = found = self._declare(ctx)
        jobs = _lock_jobs(found.by_name)
        costs = [locks.SECONDS_PER_FILE + _size(ctx, path) * locks.SECONDS_PER_BYTE for _, path in jobs]
        pending = parallel.start_map(lambda job: self._lock(ctx, found, job), jobs, ctx.workers, costs, nice)
        return Started(jobs, pending) if pending.forked else None

    def run(self, ctx: ProbeContext) -> ProbeOutput:
        found: _Declared = ctx.memo.pop(_DECLARED, None) or self._declare(ctx)
        result = found.result
        jobs = _lock_jobs(found.by_name)
        started = take_started(ctx, self.name, jobs)
        parsed = started.result() if started is not None else [self._lock(ctx, found, job) for job in jobs]
        _go(found.by_name, found.texts, result)
        rows = [locks.row(d) for d in result.deps]
        for lock in parsed:
            result.issues += lock.issues
            rows += lock.rows
        return ProbeOutput(
            values={"dependencies": locks.grouped(rows)},
            diagnostics=[self.diagnostic(i.message, i.file, i.line, i.level)
                         for i in sorted(result.issues, key=lambda i: (i.file or "", i.line or 0, i.message))],
        )

    def _declare(self, ctx: ProbeContext) -> _Declared:
        """Every manifest and requirement file parsed; the lockfiles are left to `_lock`."""
        by_name = _grouped(ctx)
        result = Parsed()
        read = _Bounded(ctx, result)
        texts = {p: None if read.skip(p) else self._read(ctx, p, result) for name, paths in by_name.items()
                 if name not in locks.LOCKS for p in paths}
        pointed = _parse_pointers(by_name, texts)
        result.extend(pointed)
        roots, constraint_roots = _requirement_roots(ctx, pointed.includes, result)
        result.extend(parse_requirements(roots, read, constraint_roots))
        read.settle()
        manifests = {group: self._manifests(by_name.get(group, []), texts, result, target,
                                            texts if group in locks.READS_OTHERS else None)
                     for group, target in locks.MANIFESTS.items()}
        return _Declared(by_name, texts, result, manifests, {locks.directory(p) for p in by_name.get("yarn.lock", [])})

    def _lock(self, ctx: ProbeContext, found: _Declared, job: tuple[str, str]) -> locks.LockResult:
        """One lockfile's rows (in a worker, when `start` forked them)."""
        kind, path = job
        read = Parsed()
        text = self._read(ctx, path, read)
        if text is None:
            return locks.LockResult(read.issues)
        return locks.parse_lock(kind, path, text, found.manifests, found.yarn_dirs)

    def _read(self, ctx: ProbeContext, path: str, result: Parsed) -> str | None:
        text = ctx.read_text(path)
        record = ctx.record(path)
        if text is None and record is not None and record.size > MAX_READ_BYTES:  # say which, for a lockfile
            result.issues.append(Issue(f"not read: file is larger than {MAX_READ_BYTES:,} bytes", path, None,
                                       "warning"))
        elif text is None:
            result.issues.append(Issue("file unreadable (binary, too big or secret-looking)", path, None, "info"))
        return text

    @staticmethod
    def _manifests(paths: list[str], texts: _Texts, result: Parsed, parser: Callable[..., Parsed] | str,
                   others: _Texts | None = None) -> dict[str, list[Dependency]]:
        """Parse each manifest (`parser`: a function or its `locks.parser` target; given `others`, the texts of
        every manifest read, as a third argument); return directory → its declarations (for the lockfile
        beside it)."""
        found: dict[str, list[Dependency]] = {}
        for path in paths:
            text = texts[path]
            if text is None:
                continue
            parse = locks.parser(parser) if isinstance(parser, str) else parser
            parsed = parse(path, text) if others is None else parse(path, text, others)
            result.extend(parsed)
            found[locks.directory(path)] = [d for d in parsed.deps if d.kind == "manifest"]
        return found


class _Bounded:
    """`ctx.read_text` for manifests and requirement files, but one over the manifest bound is not read: a
    note says so, once per file (the parse of a 2 MB requirement file, and what its pins set off, cost more
    than the rest of a gather)."""

    UNREADABLE = "file unreadable (binary, too big or secret-looking)"  # parse_requirements' own note

    def __init__(self, ctx: ProbeContext, result: Parsed) -> None:
        self.ctx, self.result, self.bound = ctx, result, manifest_bound()
        self.skipped: set[str] = set()

    def skip(self, path: str) -> bool:
        record = self.ctx.record(path)
        if record is None or record.size <= self.bound:
            return False
        if path not in self.skipped:
            self.skipped.add(path)
            self.result.issues.append(Issue(skipped_note(path, record.size, self.bound), path, None, "warning"))
        return True

    def __call__(self, path: str) -> str | None:
        return None if self.skip(path) else self.ctx.read_text(path)

    def settle(self) -> None:
        """Drop the parsers' "unreadable" notes for skipped files: the skip note says why."""
        self.result.issues = [i for i in self.result.issues
                              if not (i.file in self.skipped and i.message == self.UNREADABLE)]


def _grouped(ctx: ProbeContext) -> dict[str, list[str]]:
    """File name (conda environment files under one name) → the matching paths, sorted."""
    by_name: dict[str, list[str]] = {}
    for path in ctx.matching_paths(MANIFEST_GLOBS):
        name = PurePosixPath(path).name
        name = _CONDA if is_conda_environment(path) else locks.group_of(name) or name
        by_name.setdefault(name, []).append(path)
    return by_name


def _globbed(ctx: ProbeContext) -> list[str]:
    return ctx.matching_paths(REQUIREMENTS_GLOBS)


def _parse_pointers(by_name: dict[str, list[str]], texts: _Texts) -> Parsed:
    result = Parsed()
    for name, parser in _POINTERS:
        for path in by_name.get(name, []):
            text = texts.get(path)
            if text is not None:
                result.extend(locks.parser(parser)(path, text))
    return result


def _requirement_roots(ctx: ProbeContext, includes: list[Include], result: Parsed) -> tuple[list[str], set[str]]:
    """The requirement files to read: found by name, or named by another manifest (those must exist).

    Returns the roots and those of them that manifests name only with -c (constraints files)."""
    globbed = set(_globbed(ctx))
    wanted, constrained = set(), set()
    for include in includes:
        if not ctx.has(include.target):
            result.issues.append(Issue(f"included file not found: {include.target}", include.file, include.line))
        elif include.kind == "c":
            constrained.add(include.target)
        else:
            wanted.add(include.target)
    return sorted(globbed | wanted | constrained), constrained - wanted - globbed


def _go(by_name: dict[str, list[str]], texts: _Texts, result: Parsed) -> None:
    if not by_name.get("go.mod"):
        return
    from repocontext.deps.gomod import gosum_versions, parse_gomod
    from repocontext.deps.gosum import build_list

    sums = {locks.directory(p): texts[p] for p in by_name.get("go.sum", [])}
    for path in by_name.get("go.mod", []):
        text = texts[path]
        if text is None:
            continue
        sum_text = sums.get(locks.directory(path))
        checked = None
        if sum_text is not None:
            checked, issues = gosum_versions(sum_text, _sibling(path, "go.sum"))
            result.issues.extend(issues)
        result.extend(parse_gomod(path, text, checked))
        if sum_text is not None:  # before Go 1.17 the rest of the build is named only in go.sum
            result.deps.extend(build_list(_sibling(path, "go.sum"), sum_text, text))


def _lock_jobs(by_name: dict[str, list[str]]) -> list[tuple[str, str]]:
    """(lockfile name, path) of every lockfile, in LOCKS order, each name's paths sorted."""
    return [(kind, path) for kind in locks.LOCKS for path in by_name.get(kind, [])]


def _size(ctx: ProbeContext, path: str) -> int:
    record = ctx.record(path)
    return record.size if record is not None else 0


def _sibling(path: str, name: str) -> str:
    return str(PurePosixPath(path).with_name(name))
