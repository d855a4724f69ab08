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
run.
"""

from __future__ import annotations

import hashlib
import importlib
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import Any

from repocontext.deps.common import Include, Issue, Parsed, declared, group_by_name
from repocontext.deps.files import CONDA_GLOBS, REQUIREMENTS_GLOBS, is_conda_environment
from repocontext.deps.pyproject import parse_pyproject
from repocontext.deps.requirements import include_closure, parse_requirements
from repocontext.model import Dependency, sparse_dump
from repocontext.probe import MAX_READ_BYTES, Probe, ProbeContext, ProbeOutput

__all__ = ["MANIFEST_GLOBS", "REQUIREMENTS_GLOBS", "DependenciesProbe"]

MANIFEST_GLOBS: tuple[str, ...] = (
    "**/pyproject.toml", "**/poetry.lock", "**/uv.lock", "**/package.json", "**/package-lock.json",
    "**/npm-shrinkwrap.json", "**/yarn.lock", "**/pnpm-lock.yaml", "**/go.mod", "**/go.sum", "**/setup.cfg",
    "**/setup.py", "**/Pipfile", "**/Pipfile.lock", "**/tox.ini", *CONDA_GLOBS,
)
_CONDA = "environment.yml"  # the group of every conda environment file, whatever its name
# Python manifests that are not requirement files but may point pip at some (tox `-r`, setup.cfg `file:`).
_POINTERS: tuple[tuple[str, str], ...] = (
    ("setup.cfg", "setup_cfg:parse_setup_cfg"), ("setup.py", "setup_py:parse_setup_py"),
    ("tox.ini", "tox_ini:parse_tox_ini"), (_CONDA, "conda_env:parse_conda_env"),
)


def _parser(target: str) -> Callable[..., Any]:
    """`module:function` of repocontext.deps, imported when a file of its format is first met: a gather
    imports only the parsers of the formats the repository holds (start-up cost of a small repository)."""
    module, _, name = target.partition(":")
    found: Callable[..., Any] = getattr(importlib.import_module(f"repocontext.deps.{module}"), name)
    return found


_Texts = dict[str, str | None]



class DependenciesProbe(Probe):
    name = "dependencies"
    # 3: compiled requirement files (generated_by, hashed, transitive pins), setup.cfg, setup.py, Pipfile,
    # Pipfile.lock, tox.ini and conda environment files, requirement files under nested requirements/ folders;
    # yarn.lock (Yarn 1 and Berry) and pnpm-lock.yaml records; 4: records stored without their None fields
    version = "4"
    applies_to_tasks = ("vulnerability-remediation",)
    inputs = REQUIREMENTS_GLOBS + MANIFEST_GLOBS
    produces = ("dependencies",)

    def extra_fingerprint(self, ctx: ProbeContext) -> str:
        """Files reached only through includes are not in `inputs`; their hashes count too."""
        by_name = _grouped(ctx)
        texts = {p: ctx.read_text(p) for name, _ in _POINTERS for p in by_name.get(name, [])}
        pointed = _parse_pointers(by_name, texts)
        roots = _globbed(ctx)
        targets = {i.target for i in pointed.includes}
        digest = hashlib.sha256()
        for path in sorted(set(include_closure(sorted(set(roots) | targets), ctx.read_text)) | targets):
            record = ctx.record(path)
            digest.update(f"{path}\0{record.sha if record else '-'}\0".encode())
        return digest.hexdigest()

    def run(self, ctx: ProbeContext) -> ProbeOutput:
        by_name = _grouped(ctx)
        result = Parsed()
        texts = {p: self._read(ctx, p, result) for paths in by_name.values() for p in paths}
        pointed = _parse_pointers(by_name, texts)
        result.extend(pointed)
        roots, constraint_roots = _requirement_roots(ctx, pointed.includes, result)
        result.extend(parse_requirements(roots, ctx.read_text, constraint_roots))
        python = self._manifests(by_name.get("pyproject.toml", []), texts, result, parse_pyproject)
        pipenv = self._manifests(by_name.get("Pipfile", []), texts, result, "pipfile:parse_pipfile")
        node = self._manifests(by_name.get("package.json", []), texts, result, "npm:parse_package_json")
        for lock, parser, manifests in (("poetry.lock", "poetry_lock:parse_poetry_lock", python),
                                        ("uv.lock", "uv_lock:parse_uv_lock", python),
                                        ("Pipfile.lock", "pipfile:parse_pipfile_lock", pipenv),
                                        ("package-lock.json", "npm_lock:parse_package_lock", node),
                                        ("npm-shrinkwrap.json", "npm_lock:parse_package_lock", node)):
            for path in by_name.get(lock, []):
                text = texts[path]
                if text is not None:
                    found = manifests.get(_directory(path))
                    result.extend(_parser(parser)(path, text, declared(found) if found is not None else None))
        yarn_dirs = {_directory(p) for p in by_name.get("yarn.lock", [])}
        for path in by_name.get("yarn.lock", []):
            text = texts[path]
            if text is not None:
                served = [d for folder, deps in node.items() if _nearest(folder, yarn_dirs) == _directory(path)
                          for d in deps]
                result.extend(_parser("yarn_lock:parse_yarn_lock")(path, text, served))
        for path in by_name.get("pnpm-lock.yaml", []):
            text = texts[path]
            if text is not None:
                result.extend(_parser("pnpm_lock:parse_pnpm_lock")(path, text))
        _go(by_name, texts, result)
        grouped = group_by_name(result.deps)
        return ProbeOutput(
            values={"dependencies": {name: [sparse_dump(d) for d in deps] for name, deps in grouped.items()}},
            diagnostics=[self.diagnostic(i.message, i.file, i.line, i.level)
                         for i in sorted(result.issues, key=lambda i: (i.file or "", i.line or 0, i.message))],
        )

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
    def _manifests(paths: list[str], texts: _Texts, result: Parsed,
                   parser: Callable[[str, str], Parsed] | str) -> dict[str, list[Dependency]]:
        """Parse each manifest (`parser`: a function or its `_parser` target); return directory → its
        declarations (for the lockfile beside it)."""
        found: dict[str, list[Dependency]] = {}
        for path in paths:
            text = texts[path]
            if text is None:
                continue
            parsed = (_parser(parser) if isinstance(parser, str) else parser)(path, text)
            result.extend(parsed)
            found[_directory(path)] = [d for d in parsed.deps if d.kind == "manifest"]
        return found


def _grouped(ctx: ProbeContext) -> dict[str, list[str]]:
    """File name (conda environment files under one name) → the matching paths, sorted."""
    by_name: dict[str, list[str]] = {}
    for path in ctx.matching_paths(MANIFEST_GLOBS):
        name = _CONDA if is_conda_environment(path) else PurePosixPath(path).name
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
                result.extend(_parser(parser)(path, text))
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

    sums = {_directory(p): texts[p] for p in by_name.get("go.sum", [])}
    for path in by_name.get("go.mod", []):
        text = texts[path]
        if text is None:
            continue
        sum_text = sums.get(_directory(path))
        checked = None
        if sum_text is not None:
            checked, issues = gosum_versions(sum_text, _sibling(path, "go.sum"))
            result.issues.extend(issues)
        result.extend(parse_gomod(path, text, checked))
        if sum_text is not None:  # before Go 1.17 the rest of the build is named only in go.sum
            result.deps.extend(build_list(_sibling(path, "go.sum"), sum_text, text))


def _directory(path: str) -> str:
    return str(PurePosixPath(path).parent)


def _nearest(folder: str, candidates: set[str]) -> str | None:
    """The closest of `candidates` at or above `folder` (a workspace's lockfile is at its root)."""
    current = PurePosixPath(folder)
    for step in (current, *current.parents):
        if str(step) in candidates:
            return str(step)
    return None


def _sibling(path: str, name: str) -> str:
    return str(PurePosixPath(path).with_name(name))
