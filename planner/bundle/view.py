"""The builder's view of one repository: its RepoContext (or none), its paths, safe reads.

In repocontext mode paths come from the stored snapshot's file index; in
bootstrap mode (no snapshot yet) the tree is indexed on the spot. Reads never
follow a symlink, never leave the repository, never return secret content.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from repocontext import git
from repocontext.globs import PathIndex
from repocontext.index import build_index
from repocontext.lazyjson import Columns
from repocontext.secrets import content_rule, path_rule, redact
from repocontext.store import RepoContextStore

MAX_FILE_BYTES = 4_000_000

Freshness = Literal["fresh", "stale", "dirty", "none"]


@dataclass
class ReadResult:
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
        """fresh: gathered at HEAD; stale: HEAD moved since; dirty: gathered with uncommitted changes."""
        if self.context is None:
            return "none"
        meta = self.context.get("meta", {})
        commit = meta.get("commit")
        if commit is not None and commit != git.head(self.root):
            return "stale"
        return "dirty" if meta.get("dirty") else "fresh"

    def read(self, rel: str) -> ReadResult:
        return read_repo_file(self.root, rel)


def reader(repo: str) -> Any:
    """The text edits apply to: an exact read, so the patch and the patched files keep the file's bytes."""
    root = Path(repo)
    return lambda rel: read_repo_file(root, rel, exact=True).text


def read_repo_file(root: Path, rel: str, exact: bool = False) -> ReadResult:
    """Read a repo file the safe way: no secrets, no symlinks, nothing outside `root`, no binaries.

    Bytes are read as they are (no newline translation: CRLF stays CRLF). For the bundle, bytes that are
    not UTF-8 show as U+FFFD; `exact` keeps them as surrogates instead, so the text encodes back to the
    very same bytes (`planner.patch.diff.to_bytes`): edits and patches are made from exact reads. Secret values
    are redacted in what is shown (the bundle), never in an exact read: a patch must apply to the real file.
    """
    rule = path_rule(rel)
    if rule:
        return ReadResult(None, "denied", f"secret file ({rule})", rule)
    real_root = os.path.realpath(root)
    full = os.path.normpath(os.path.join(real_root, rel))
    if os.path.commonpath([real_root, full]) != real_root:  # "..": never even looked at
        return ReadResult(None, "denied", "path leaves the repository", "outside-repo")
    try:
        if stat.S_ISLNK(os.lstat(full).st_mode):
            return ReadResult(None, "skipped", "symlink not followed")
        # realpath: a directory on the way may have become a symlink since the snapshot was gathered.
        if os.path.commonpath([real_root, os.path.realpath(full)]) != real_root:
            return ReadResult(None, "denied", "path leaves the repository", "outside-repo")
        fd = os.open(full, os.O_RDONLY | os.O_NOFOLLOW)  # and if it became a link just now: ELOOP
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        return ReadResult(None, "skipped", "file no longer exists (re-run `planner gather`)")
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return ReadResult(None, "skipped", "symlink not followed")
        return ReadResult(None, "skipped", f"unreadable: {exc.strerror}")
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
