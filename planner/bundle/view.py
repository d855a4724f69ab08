"""The builder's view of one repository: its RepoContext (or none), its paths, safe reads.

In repocontext mode paths come from the stored snapshot's file index; in
bootstrap mode (no snapshot yet) the tree is indexed on the spot. Reads never
follow a symlink, never leave the repository, never return secret content.
"""

from __future__ import annotations

import errno
import os
import stat
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from repocontext import git
from repocontext.globs import PathIndex
from repocontext.index import build_index
from repocontext.lazyjson import Columns
from repocontext.secrets import RULES_DIGEST, content_rule, path_rule, redact
from repocontext.store import RepoContextStore

MAX_FILE_BYTES = 4_000_000

Freshness = Literal["fresh", "stale", "dirty", "none"]


@dataclass(frozen=True)
class ReadResult:  # frozen: remembered reads are shared
    text: str | None
    status: Literal["ok", "denied", "skipped"] = "ok"
    detail: str | None = None
    rule: str | None = None


@dataclass
class RepoView:
    root: Path
    context: Mapping[str, Any] | None  # the stored RepoContext as JSON, sections parsed on demand
    paths: PathIndex
    sizes: dict[str, int]
    denied: dict[str, str]  # path -> rule
    denied_index: PathIndex = field(init=False)

    def __post_init__(self) -> None:
        self.denied_index = PathIndex(sorted(self.denied))

    @property
    def mode(self) -> Literal["repocontext", "bootstrap"]:
        return "bootstrap" if self.context is None else "repocontext"

    def freshness(self) -> Freshness:
        """fresh: gathered at HEAD; stale: HEAD moved since, or the secret rules changed (what was read and
        denied was decided by the old ones); dirty: gathered with uncommitted changes."""
        if self.context is None:
            return "none"
        meta = self.context.get("meta", {})
        commit = meta.get("commit")
        if (commit is not None and commit != git.head(self.root)) or meta.get("secret_rules") != RULES_DIGEST:
            return "stale"
        return "dirty" if meta.get("dirty") else "fresh"

    def read(self, rel: str) -> ReadResult:
        return read_repo_file(self.root, rel)


def reader(repo: str) -> Any:
    """The text edits apply to: an exact read, so the patch and the patched files keep the file's bytes."""
    root = Path(repo)
    return lambda rel: read_repo_file(root, rel, exact=True).text


# Reads of unchanged files are remembered: a run builds a bundle and runs the recipe for each work item, and
# they read the same files again (each of 52 Dockerfiles ~100 times in one run). A file counts as unchanged
# while lstat gives the same inode, size and change times; a link swapped in on the way gives another inode.
_MEMO_BYTES = 262_144
_MEMO_ENTRIES = 1024
_memo: OrderedDict[tuple[str, str, bool], tuple[tuple[int, ...], ReadResult]] = OrderedDict()
_memo_lock = threading.Lock()


def read_repo_file(root: Path, rel: str, exact: bool = False) -> ReadResult:
    """Read a repo file the safe way (see `_read_repo_file`), remembering reads of files that do not change."""
    key = (str(root), rel, exact)
    try:
        info = os.lstat(os.path.join(root, rel))
        stamp = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_mode)
    except (OSError, ValueError):
        return _read_repo_file(root, rel, exact)
    with _memo_lock:
        found = _memo.get(key)
        if found is not None and found[0] == stamp:
            _memo.move_to_end(key)
            return found[1]
    result = _read_repo_file(root, rel, exact)
    if info.st_size <= _MEMO_BYTES and stat.S_ISREG(info.st_mode):
        with _memo_lock:
            _memo[key] = (stamp, result)
            if len(_memo) > _MEMO_ENTRIES:
                _memo.popitem(last=False)
    return result


def _read_repo_file(root: Path, rel: str, exact: bool = False) -> ReadResult:
    """Read a repo file the safe way: no secrets, no symlinks, nothing outside `root`, no binaries.

    Bytes are read as they are (no newline translation: CRLF stays CRLF). For the bundle, bytes that are
    not UTF-8 show as U+FFFD; `exact` keeps them as surrogates instead, so the text encodes back to the
    very same bytes (`planner.patch.diff.to_bytes`): edits and patches are made from exact reads. Secret values
    are redacted in what is shown (the bundle), never in an exact read: a patch must apply to the real file.
    """
    rule = path_rule(rel)
    if rule:
        return ReadResult(None, "denied", f"secret file ({rule})", rule)
    rel = os.path.normpath(rel)
    if rel == ".." or rel.startswith(("../", "/")):  # "..": never even looked at
        return ReadResult(None, "denied", "path leaves the repository", "outside-repo")
    try:
        data = _read_inside(str(root), rel)
    except _Outside:
        return ReadResult(None, "denied", "path leaves the repository", "outside-repo")
    except FileNotFoundError:
        return ReadResult(None, "skipped", "file no longer exists (re-run `planner gather`)")
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return ReadResult(None, "skipped", "symlink not followed")
        return ReadResult(None, "skipped", f"unreadable: {exc.strerror}")
    return _checked(data, rel, exact)


class _Detour(Exception):
    """A directory on the way to a file is a symbolic link."""


class _Outside(Exception):
    """The path leads out of the repository (through a linked directory)."""


def _read_inside(root: str, rel: str) -> bytes:
    """The bytes of `rel` under `root`: without following any link (`_read_below`), or, where a directory on
    the way has become a link that stays inside the repository, through it (rare: the slow path). Raises
    _Outside when it leads out, OSError (ELOOP) when the file itself is a link."""
    try:
        return _read_below(root, rel)
    except _Detour:
        real_root = os.path.realpath(root)
        full = os.path.join(real_root, rel)
        if os.path.commonpath([real_root, os.path.realpath(full)]) != real_root:
            raise _Outside from None
        if stat.S_ISLNK(os.lstat(full).st_mode):
            raise OSError(errno.ELOOP, "symlink not followed") from None
        fd = os.open(full, os.O_RDONLY | os.O_NOFOLLOW)  # and if it became a link just now: ELOOP
        with os.fdopen(fd, "rb") as handle:
            return handle.read(MAX_FILE_BYTES + 1)


def _read_below(root: str, rel: str) -> bytes:
    """The bytes of `rel` under `root`, opened one component at a time without following any link (openat):
    no path lookup of ours can leave the repository, and it costs a few system calls where resolving the
    path twice (realpath) was a quarter of a 52-Dockerfile run. Raises _Detour at a linked directory, OSError
    (ELOOP) when the file itself is a link."""
    parts = rel.split("/")
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for part in parts[:-1]:
            try:
                inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR) and stat.S_ISLNK(os.lstat(part, dir_fd=fd).st_mode):
                    raise _Detour from None
                raise
            os.close(fd)
            fd = inner
        file_fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW, dir_fd=fd)
    finally:
        os.close(fd)
    with os.fdopen(file_fd, "rb") as handle:
        return handle.read(MAX_FILE_BYTES + 1)


def _checked(data: bytes, rel: str, exact: bool) -> ReadResult:
    """A read file's text, unless it is too big, binary or secret (see read_repo_file)."""
    if len(data) > MAX_FILE_BYTES:
        return ReadResult(None, "skipped", f"larger than {MAX_FILE_BYTES // 1_000_000} MB")
    if b"\0" in data[:8192]:
        return ReadResult(None, "skipped", "binary file")
    text = data.decode("utf-8", errors="surrogateescape" if exact else "replace")
    secret = content_rule(text, rel)
    if secret:
        return ReadResult(None, "denied", f"secret-looking content ({secret})", secret)
    return ReadResult(text if exact else redact(text))


def open_view(root: Path, store: RepoContextStore) -> RepoView:
    """A view backed by the stored RepoContext, or a bootstrap view when there is none."""
    root = root.resolve()
    context = store.load_lazy(root)
    if context is not None:
        files = context.get("files", [])
        if isinstance(files, Columns):  # the stored layout: no row is built
            paths, sizes = files.column("path"), files.column("size")
        else:
            paths, sizes = [f["path"] for f in files], [f["size"] for f in files]
        return RepoView(
            root=root, context=context, paths=PathIndex(paths), sizes=dict(zip(paths, sizes, strict=True)),
            denied={d["path"]: d["rule"] for d in context.get("denied", [])},
        )
    index = build_index(root)
    return RepoView(
        root=root, context=None, paths=PathIndex([f.path for f in index.files]),
        sizes={f.path: f.size for f in index.files}, denied={d.path: d.rule for d in index.denied},
    )
