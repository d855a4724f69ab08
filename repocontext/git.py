"""Thin, read-only git helpers. Nothing here writes to the user's repository."""

from __future__ import annotations

import hashlib
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path


class GitError(RuntimeError):
    pass


def _start(cwd: Path, *args: str) -> subprocess.Popen[str]:
    try:
        return subprocess.Popen(["git", "-C", str(cwd), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env={**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"})
    except FileNotFoundError as exc:  # git itself is missing
        raise GitError("git is not installed") from exc


def _finish(proc: subprocess.Popen[str], args: tuple[str, ...], check: bool = True) -> str:
    out, err = proc.communicate()
    if check and proc.returncode != 0:
        raise GitError(err.strip().splitlines()[-1] if err.strip() else f"git {args[0]} failed")
    return out


def _git(cwd: Path, *args: str, check: bool = True) -> str:
    return _finish(_start(cwd, *args), args, check)


def toplevel(path: Path) -> Path | None:
    """The work tree root containing `path`, or None when it is not in a git repo."""
    started = _taken(path, 0)
    out = (_finish(started, _TOPLEVEL, check=False) if started else _git(path, *_TOPLEVEL, check=False)).strip()
    if not out:
        for proc in _started.pop(os.path.realpath(path), []):  # not a work tree: the listings are not wanted
            if proc is not None:
                proc.communicate()
    return Path(out) if out else None


def head(path: Path) -> str | None:
    """The commit HEAD points at, or None (no git, or no commit yet)."""
    fast = _head_from_files(path)
    if fast is not None:
        return fast
    out = _git(path, "rev-parse", "--verify", "-q", "HEAD", check=False).strip()
    return out or None


_SHA = frozenset("0123456789abcdef")


def _is_sha(text: str) -> bool:
    return len(text) in (40, 64) and set(text) <= _SHA


def _head_from_files(path: Path) -> str | None:
    """Read HEAD without a subprocess (freshness checks run on every bundle build).

    Handles plain repos and linked worktrees with loose or packed refs; returns
    None for anything unusual, and the caller asks git itself.
    """
    try:
        for directory in (path.resolve(), *path.resolve().parents):
            dotgit = directory / ".git"
            if dotgit.is_dir():
                gitdir = dotgit
                break
            if dotgit.is_file():
                gitdir = (directory / dotgit.read_text().removeprefix("gitdir:").strip()).resolve()
                break
        else:
            return None
        common = gitdir
        if (gitdir / "commondir").is_file():
            common = (gitdir / (gitdir / "commondir").read_text().strip()).resolve()
        content = (gitdir / "HEAD").read_text().strip()
        if _is_sha(content):
            return content
        ref = content.removeprefix("ref: ").strip()
        for base in (gitdir, common):
            loose = base / ref
            if loose.is_file():
                sha = loose.read_text().strip()
                return sha if _is_sha(sha) else None
        packed = common / "packed-refs"
        if packed.is_file():
            for line in packed.read_text().splitlines():
                sha, _, name = line.partition(" ")
                if name == ref and _is_sha(sha):
                    return sha
    except OSError:
        return None
    return None


@dataclass(frozen=True, slots=True)
class TreeListing:
    """Files git knows about under a directory, relative to it."""

    tracked: dict[str, tuple[str, str]]  # path -> (mode, blob sha in the index)
    modified: set[str]
    deleted: set[str]
    untracked: list[str]

    @property
    def dirty(self) -> bool:
        return bool(self.modified or self.deleted or self.untracked)


def _nul_list(text: str) -> list[str]:
    return [p for p in text.split("\0") if p]


_CHANGES = ("diff-files", "--name-status", "--relative", "-z")
_UNTRACKED = ("ls-files", "-o", "--exclude-standard", "-z")
_INDEX = ("ls-files", "-s", "-z")
_TOPLEVEL = ("rev-parse", "--show-toplevel")
# Listings started ahead by `prefetch`, by the directory's real path: (toplevel, changes, untracked, index).
_started: dict[str, list[subprocess.Popen[str] | None]] = {}


def prefetch(path: Path) -> None:
    """Start the listings a gather of `path` needs now, so git works while the caller imports the probes (a
    bare `planner gather` pays ~0.2 s of imports first). `toplevel` and `list_tree` take them up; a snapshot
    is then of the tree as it was when the gather began. Nothing is started where git cannot run."""
    key = os.path.realpath(path)
    if key in _started or not os.path.isdir(key):
        return
    try:
        _started[key] = [_start(Path(key), *args) for args in (_TOPLEVEL, _CHANGES, _UNTRACKED, _INDEX)]
    except GitError:
        return


def _taken(path: Path, which: int) -> subprocess.Popen[str] | None:
    """The prefetched listing `which` (its place in the list `prefetch` starts) of `path`, taken once."""
    key = os.path.realpath(path)
    procs = _started.get(key)
    if procs is None:
        return None
    proc, procs[which] = procs[which], None
    if not any(procs):
        del _started[key]
    return proc


def list_tree(path: Path) -> TreeListing:
    """Tracked files (with index blob ids), modified, deleted and untracked files."""
    # Three listings at once (they dominate a re-gather): changes in tracked files (stats every file),
    # untracked files (walks the tree), the index itself.
    changes = _taken(path, 1) or _start(path, *_CHANGES)
    others = _taken(path, 2) or _start(path, *_UNTRACKED)
    index = _taken(path, 3) or _start(path, *_INDEX)
    tracked: dict[str, tuple[str, str]] = {}
    for line in _nul_list(_finish(index, _INDEX)):
        meta, _, name = line.partition("\t")
        mode, sha, _stage = meta.split(" ")
        tracked[name] = (mode, sha)
    modified: set[str] = set()
    deleted: set[str] = set()
    fields = _nul_list(_finish(changes, _CHANGES))
    for status, name in zip(fields[::2], fields[1::2], strict=True):  # "M", "D", "T" (type change), "U"
        (deleted if status == "D" else modified).add(name)
    untracked = _nul_list(_finish(others, _UNTRACKED))
    return TreeListing(tracked, modified - deleted, deleted, sorted(untracked))


def blob_sha(data: bytes) -> str:
    """The git blob id of `data`, so hashes agree with git's for tracked files."""
    digest = hashlib.sha1(b"blob %d\0" % len(data))
    digest.update(data)
    return digest.hexdigest()
