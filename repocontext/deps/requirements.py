"""pip requirements and constraints files (requirements*.txt, requirements/*.txt, *.in).

Each file is parsed once. `-r` includes keep the including file's role, `-c`
includes make the target a constraints file; a file reached both ways counts
as requirements. Entries of constraints files are kept with kind="constraint"
and direct=False: they cap versions but install nothing by themselves.
Includes resolve relative to the including file; missing targets and cycles
become diagnostics. A file written by pip-compile or `uv pip compile` keeps
the header's command on each record (`generated_by`), and pins that only
other packages require (`# via pkg`) are marked transitive (see compiled.py).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Collection
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from repocontext.deps.common import (
    Include,
    Issue,
    Parsed,
    Reader,
    is_dev_name,
    may_be_compiled,
    pep508,
    pypi_name,
)
from repocontext.model import Dependency

if TYPE_CHECKING:
    from repocontext.deps.compiled import CompileHeader

_COMMENT = re.compile(r"(^|\s+)#.*$")
_INCLUDE = re.compile(r"^(-r|--requirement|-c|--constraint)(?:\s*=\s*|\s+|(?<=^-[rc]))(\S.*)$")
_EDITABLE = re.compile(r"^(?:-e|--editable)(?:\s*=\s*|\s+)(\S.*)$")
_PER_REQ_OPTION = re.compile(r"\s--?[A-Za-z]")
_EGG = re.compile(r"[#&]egg=([A-Za-z0-9][A-Za-z0-9._-]*)")


def is_constraints_name(path: str) -> bool:
    return "constraints" in PurePosixPath(path).name.lower()


def logical_lines(text: str) -> list[tuple[int, str]]:
    """(first physical line, content) after joining `\\` continuations and dropping comments, by pip's rules
    (pip/_internal/req/req_file.py join_lines + ignore_comments): a line that *starts* with a comment never
    continues, and ends a continuation; a line with a trailing comment that ends in `\\` does continue, so
    the next line becomes part of the comment and pip never sees it."""
    out: list[tuple[int, str]] = []
    start: int | None = None
    parts: list[str] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        leading_comment = _COMMENT.match(raw) is not None
        if raw.endswith("\\") and not leading_comment:
            start = number if not parts else start
            parts.append(raw.strip("\\"))  # pip strips backslashes at both ends
            continue
        line = " " + raw if leading_comment else raw
        first = number if start is None else start  # start is set exactly while parts are held
        _keep(out, first, "".join([*parts, line]))
        start, parts = None, []
    if parts and start is not None:
        _keep(out, start, "".join(parts))
    return out


def _keep(out: list[tuple[int, str]], number: int, line: str) -> None:
    content = _COMMENT.sub("", line).strip()
    if content:
        out.append((number, content))


def _direct_reference(path: str, line: int, value: str, dev: bool, section: str | None = None) -> Dependency | Issue:
    """A URL, VCS or local-path requirement: named from `#egg=` or an archive file name."""
    name: str | None = None
    version: str | None = None
    egg = _EGG.search(value)
    filename = value.split("#")[0].split("?")[0].rstrip("/").rsplit("/", 1)[-1]
    if egg:
        name = egg.group(1)
    elif filename.endswith((".whl", ".tar.gz", ".zip")):  # named by its file: packaging reads the name
        name, version = _archive_name(filename)
    if name is None:
        return Issue(f"unnamed URL/path/editable requirement not recorded: {value}", path, line, "info")
    return Dependency(ecosystem="PyPI", name=pypi_name(name), version=version, file=path, line=line, dev=dev,
                      source=value, section=section)


def _archive_name(filename: str) -> tuple[str | None, str | None]:
    """(name, version) of a wheel or sdist file name, or (None, None) when it is not a valid one. packaging's
    parsers are imported here: their module pulls in packaging.tags and logging, which few files need."""
    from packaging.utils import InvalidSdistFilename, InvalidWheelFilename, parse_sdist_filename, parse_wheel_filename

    try:
        if filename.endswith(".whl"):
            name, version, _, _ = parse_wheel_filename(filename)
        else:
            name, version = parse_sdist_filename(filename)
    except (InvalidWheelFilename, InvalidSdistFilename):
        return None, None
    return str(name), str(version)


def resolve_include(path: str, target: str) -> str | None:
    """The repo-relative path of an include, relative to the including file; None for URLs and escapes."""
    if "://" in target or target.startswith("/"):
        return None
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
    return None if resolved == ".." or resolved.startswith("../") else resolved


def include_closure(roots: list[str], read: Reader) -> list[str]:
    """Files reached through includes from `roots` that are not roots themselves (sorted)."""
    seen = set(roots)
    queue = sorted(seen)
    while queue:
        path = queue.pop()
        text = read(path)
        for _, content in logical_lines(text) if text is not None else ():
            include = _INCLUDE.match(content)
            target = resolve_include(path, include.group(2).strip()) if include else None
            if target is not None and target not in seen:
                seen.add(target)
                queue.append(target)
    return sorted(seen - set(roots))


def _is_reference(content: str) -> bool:
    """A URL, VCS URL, local path or archive file name rather than a `name[extras] spec` requirement."""
    first = content.split()[0]
    if "://" in first:
        return "@" not in first.split("://")[0]  # `pkg@https://…` is a named requirement
    return first.startswith((".", "/")) or first.endswith((".whl", ".tar.gz", ".zip"))


def parse_line(path: str, line: int, content: str, dev: bool,
               section: str | None = None) -> Dependency | Issue | Include | None:
    """One logical line of requirements syntax (also tox `deps` and conda `pip:` items); None for options."""
    include = _INCLUDE.match(content)
    if include:
        target = include.group(2).strip()
        resolved = resolve_include(path, target)
        if resolved is None:
            if "://" in target:
                return Issue(f"remote include not followed: {target}", path, line, "info")
            return Issue(f"include outside the repository: {target}", path, line)
        return Include(path, line, "c" if include.group(1) in ("-c", "--constraint") else "r", resolved)
    editable = _EDITABLE.match(content)
    if editable:
        return _direct_reference(path, line, editable.group(1).strip(), dev, section)
    if content.startswith("-"):
        return None  # global options (--index-url, --hash-only modes, …) carry no dependency
    if _is_reference(content):
        return _direct_reference(path, line, content.split()[0], dev, section)
    return pep508(path, line, _PER_REQ_OPTION.split(content, maxsplit=1)[0], dev, section)  # drop --hash=…


def parse_file(path: str, text: str) -> Parsed:
    """One requirements file, without following its includes."""
    result = Parsed()
    dev = is_dev_name(PurePosixPath(path).name.split(".")[0])
    for line, content in logical_lines(text):
        result.add(parse_line(path, line, content, dev))
    _mark_compiled(result.deps, text)
    return result


def _mark_compiled(deps: list[Dependency], text: str) -> None:
    """Note what generated the file, whether it checks hashes, and which pins are transitive."""
    hashed: bool = False
    header: CompileHeader | None = None
    if may_be_compiled(text):  # else a hand-written file: its parsers are not even imported
        from repocontext.deps.compiled import compile_header, is_hashed

        hashed, header = is_hashed(text), compile_header(text)
    for dep in deps:
        dep.hashed = hashed
        dep.generated_by = header.command if header else None
    if header is not None:
        from repocontext.deps.compiled import mark_transitive, via_annotations

        mark_transitive(deps, via_annotations(text))


def parse_requirements(roots: list[str], read: Reader, constraint_roots: Collection[str] = ()) -> Parsed:
    """All requirement files reachable from `roots` (the files found by name, and those other manifests point
    at), each parsed once. `constraint_roots` (also in `roots`) are files other manifests name with -c."""
    files: dict[str, Parsed | None] = {}
    pending = sorted(set(roots))
    missing: list[Issue] = []
    while pending:
        path = pending.pop(0)
        if path in files:
            continue
        text = read(path)
        parsed = files[path] = parse_file(path, text) if text is not None else None
        for include in parsed.includes if parsed else ():
            if include.target not in files and include.target not in pending:
                pending.append(include.target)
    result = Parsed()
    for path, parsed in sorted(files.items()):
        if parsed is None:
            if path in roots:
                result.issues.append(Issue("file unreadable (binary, too big or secret-looking)", path, None, "info"))
            continue
        result.issues.extend(parsed.issues)
        for include in parsed.includes:
            if files.get(include.target) is None:
                missing.append(Issue(f"included file not found or unreadable: {include.target}", path,
                                     include.line))
    result.issues.extend(missing)
    result.issues.extend(_cycles(sorted(roots), files))
    roles = _roles(sorted(roots), files, set(constraint_roots))
    for path, parsed in sorted(files.items()):
        if parsed is None:
            continue
        constraint = roles.get(path) == "constraint"
        for dep in parsed.deps:
            if constraint:
                dep.kind, dep.direct = "constraint", False
            result.deps.append(dep)
    return result


def _roles(roots: list[str], files: dict[str, Parsed | None], constraint_roots: set[str]) -> dict[str, str]:
    """"manifest" for files reached from a requirements root through -r only, else "constraint"."""
    roles: dict[str, str] = {}
    for wanted in ("manifest", "constraint"):
        queue = [r for r in roots
                 if wanted == "constraint" or not (is_constraints_name(r) or r in constraint_roots)]
        seen: set[str] = set()
        while queue:
            path = queue.pop(0)
            if path in seen:
                continue
            seen.add(path)
            roles.setdefault(path, wanted)
            parsed = files.get(path)
            for include in parsed.includes if parsed else ():
                if wanted == "constraint" or include.kind == "r":
                    queue.append(include.target)
    return roles


def _cycles(roots: list[str], files: dict[str, Parsed | None]) -> list[Issue]:
    """One diagnostic per include that closes a cycle, found by depth-first search from each root."""
    issues: list[Issue] = []
    done: set[str] = set()
    reported: set[tuple[str, int | None]] = set()

    def visit(path: str, stack: list[str]) -> None:
        parsed = files.get(path)
        for include in parsed.includes if parsed else ():
            target = include.target
            if target in stack:
                if (path, include.line) not in reported:
                    reported.add((path, include.line))
                    chain = " -> ".join([*stack[stack.index(target):], target])
                    issues.append(Issue(f"include cycle: {chain}", path, include.line))
            elif target not in done:
                visit(target, [*stack, target])
        done.add(path)

    for root in roots:
        if root not in done:
            visit(root, [root])
    return issues
