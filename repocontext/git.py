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
    out = _git(path, "rev-parse", "--show-toplevel", check=False).strip()
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


@dataclass(frozen=True)
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


def list_tree(path: Path) -> TreeListing:
    """Tracked files (with index blob ids), modified, deleted and untracked files."""
    # Three listings at once (they dominate a re-gather): changes in tracked files (stats every file),
    # untracked files (walks the tree), the index itself.
    changes_args = ("diff-files", "--name-status", "--relative", "-z")
    untracked_args = ("ls-files", "-o", "--exclude-standard", "-z")
    changes, others = _start(path, *changes_args), _start(path, *untracked_args)
    tracked: dict[str, tuple[str, str]] = {}
    for line in _nul_list(_git(path, "ls-files", "-s", "-z")):
        meta, _, name = line.partition("\t")
        mode, sha, _stage = meta.split(" ")
        tracked[name] = (mode, sha)
    modified: set[str] = set()
    deleted: set[str] = set()
    fields = _nul_list(_finish(changes, changes_args))
    for status, name in zip(fields[::2], fields[1::2], strict=True):  # "M", "D", "T" (type change), "U"
        (deleted if status == "D" else modified).add(name)
    untracked = _nul_list(_finish(others, untracked_args))
    return TreeListing(tracked, modified - deleted, deleted, sorted(untracked))


def blob_sha(data: bytes) -> str:
    """The git blob id of `data`, so hashes agree with git's for tracked files."""
    digest = hashlib.sha1(b"blob %d\0" % len(data))
    digest.update(data)
    return digest.hexdigest()
