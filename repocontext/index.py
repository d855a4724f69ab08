"""The file index: every file in the repository with size, content hash and language.

In a git work tree the index comes from git itself (tracked files with their
blob ids, plus untracked files that are not ignored), so hashing is only done
for files that changed. Outside git the tree is walked. Secret files are
denied by name here and never opened; symlinks are never followed.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from repocontext import git
from repocontext.model import Denied, Diagnostic, FileRecord
from repocontext.secrets import path_rule

SKIP_DIRS = frozenset(
    {".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".nox",
     ".mypy_cache", ".pytest_cache", ".ruff_cache", ".planner"}
)

LANGUAGE_BY_EXT = {
    ".py": "Python", ".pyi": "Python", ".js": "JavaScript", ".mjs": "JavaScript", ".cjs": "JavaScript",
    ".jsx": "JavaScript", ".ts": "TypeScript", ".tsx": "TypeScript", ".go": "Go", ".rs": "Rust",
    ".java": "Java", ".kt": "Kotlin", ".rb": "Ruby", ".php": "PHP", ".c": "C", ".h": "C",
    ".cc": "C++", ".cpp": "C++", ".hpp": "C++", ".cs": "C#", ".swift": "Swift", ".scala": "Scala",
    ".sh": "Shell", ".bash": "Shell", ".sql": "SQL", ".html": "HTML", ".css": "CSS",
    ".md": "Markdown", ".rst": "reStructuredText", ".yaml": "YAML", ".yml": "YAML", ".json": "JSON",
    ".toml": "TOML", ".ini": "INI", ".cfg": "INI", ".xml": "XML", ".tf": "HCL", ".txt": "Text",
    ".lock": "Lockfile", ".mod": "Go Module", ".sum": "Go Checksums", ".gradle": "Gradle",
}

LANGUAGE_BY_NAME = {
    "Dockerfile": "Dockerfile", "Containerfile": "Dockerfile", "Makefile": "Makefile",
    "GNUmakefile": "Makefile", "Jenkinsfile": "Groovy", "Gemfile": "Ruby", "Rakefile": "Ruby",
}


_RECORDS = TypeAdapter(list[FileRecord])


def language_of(path: str) -> str | None:
    name = path.rpartition("/")[2]
    if name in LANGUAGE_BY_NAME:
        return LANGUAGE_BY_NAME[name]
    if name.startswith("Dockerfile.") or name.endswith((".Dockerfile", ".dockerfile")):
        return "Dockerfile"
    dot = name.rfind(".")
    return LANGUAGE_BY_EXT.get(name[dot:].lower()) if dot > 0 else None


@dataclass
class FileIndex:
    root: Path
    commit: str | None
    dirty: bool
    files: list[FileRecord] = field(default_factory=list)
    denied: list[Denied] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    rows: list[Mapping[str, Any]] = field(default_factory=list, repr=False)  # files, before they become records


def _note(index: FileIndex, path: str, message: str) -> None:
    index.diagnostics.append(Diagnostic(probe="files", level="info", message=message, file=path))


def _hash_file(full: Path) -> str:
    return git.blob_sha(full.read_bytes())


def _add(index: FileIndex, rel: str, known_sha: str | None) -> None:
    # Hot path (once per file): plain string and os calls, no pathlib.
    rule = path_rule(rel)
    if rule:
        index.denied.append(Denied(path=rel, rule=rule))
        return
    if "/" in rel and not SKIP_DIRS.isdisjoint(rel.split("/")[:-1]):
        return
    full = f"{index.root}/{rel}"
    try:
        st = os.lstat(full)
    except OSError as exc:
        _note(index, rel, f"cannot stat: {exc.strerror}")
        return
    if stat.S_ISLNK(st.st_mode):
        _note(index, rel, "symlink not followed")
        return
    if not stat.S_ISREG(st.st_mode):
        return
    try:
        sha = known_sha or _hash_file(Path(full))
    except OSError as exc:
        _note(index, rel, f"unreadable: {exc.strerror}")
        return
    index.rows.append({"path": rel, "size": st.st_size, "sha": sha, "language": language_of(rel)})


def _index_git(index: FileIndex, known: Mapping[str, Mapping[str, Any]]) -> None:
    listing = git.list_tree(index.root)
    index.dirty = listing.dirty
    for rel, (mode, sha) in listing.tracked.items():
        if rel in listing.deleted:
            continue
        if mode in ("120000", "160000"):
            _note(index, rel, "symlink not followed" if mode == "120000" else "submodule skipped")
            continue
        if rel in listing.modified:
            _add(index, rel, None)
            continue
        before = known.get(rel)
        if before is not None and before["sha"] == sha:  # git vouches it is unchanged: no stat needed
            index.rows.append(before)
        else:
            _add(index, rel, sha)
    for rel in listing.untracked:
        _add(index, rel, None)


def _index_walk(index: FileIndex) -> None:
    root = index.root
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        base = Path(dirpath).relative_to(root).as_posix()
        for name in filenames:
            _add(index, name if base == "." else f"{base}/{name}", None)


def build_index(root: Path, known: Mapping[str, Mapping[str, Any]] | None = None) -> FileIndex:
    """Index `root` (a directory, in a git work tree or not). `known`: the previous snapshot's file
    records by path; a tracked file git reports unchanged with the same blob id keeps its record."""
    top = git.toplevel(root)
    index = FileIndex(root=root, commit=git.head(root) if top else None, dirty=top is None)
    if top is not None:
        _index_git(index, known or {})
    else:
        _index_walk(index)
    index.rows.sort(key=lambda row: row["path"])
    # One validation call for all records: much cheaper than a model (even model_construct) per file.
    index.files = _RECORDS.validate_python(index.rows)
    index.rows = []
    index.denied.sort(key=lambda d: d.path)
    index.diagnostics.sort(key=lambda d: (d.file or "", d.message))
    return index
