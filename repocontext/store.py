"""Where RepoContexts live: `$PLANNER_HOME/repos/<repo id>/<commit>.json`.

Writes are atomic (temp file + rename), so a crash mid-write never leaves a
half-written snapshot; `latest` names the newest snapshot of a repository.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson
from pydantic import TypeAdapter

from repocontext import sections
from repocontext.model import RepoContext
from repocontext.parallel import gc_paused

WORKTREE_KEY = "worktree"  # the snapshot name for directories outside git


StoreError = sections.StoreError  # re-exported: callers catch one error for the whole store


def repo_id(root: Path) -> str:
    """A stable id for a repository checkout: its name plus a hash of its real path."""
    real = str(root.resolve())
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", root.resolve().name).strip("-") or "repo"
    return f"{slug}-{hashlib.sha1(real.encode()).hexdigest()[:12]}"


_CONTEXT_JSON = TypeAdapter(RepoContext)  # dump_json: model_dump_json's bytes, without a str in between
_SECTION_JSON = {name: TypeAdapter(field.annotation) for name, field in RepoContext.model_fields.items()}


def _serialise(context: RepoContext) -> tuple[bytes, dict[str, bytes]]:
    """The snapshot's JSON and each section's, from one serialisation pass (the whole is the parts joined)."""
    parts = {name: adapter.dump_json(getattr(context, name)) for name, adapter in _SECTION_JSON.items()}
    whole = b"{" + b",".join(b'"' + name.encode() + b'":' + data for name, data in parts.items()) + b"}"
    return whole, parts


def atomic_write(path: Path, text: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") if isinstance(text, bytes) else os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class RepoContextStore:
    def __init__(self, home: Path) -> None:
        self.home = home

    def repo_dir(self, root: Path) -> Path:
        return self.home / "repos" / repo_id(root)

    def save(self, context: RepoContext) -> Path:
        root = Path(context.meta.root)
        key = context.meta.commit or WORKTREE_KEY
        target = self.repo_dir(root) / f"{key}.json"
        whole, parts = _serialise(context)
        try:
            sections.write(self.repo_dir(root), key, parts, atomic_write)
            atomic_write(target, whole)
            atomic_write(self.repo_dir(root) / "latest", key + "\n")
        except OSError as exc:
            raise StoreError(f"cannot write RepoContext to {target}: {exc.strerror}") from exc
        return target

    def latest_path(self, root: Path) -> Path | None:
        pointer = self.repo_dir(root) / "latest"
        try:
            key = pointer.read_text(encoding="utf-8").strip()
        except OSError:
            return None
        path = self.repo_dir(root) / f"{key}.json"
        return path if path.is_file() else None

    def load_lazy(self, root: Path) -> Mapping[str, Any] | None:
        """The latest snapshot, parsed section by section on demand (falls back to the whole file)."""
        path = self.latest_path(root)
        if path is None:
            return None
        lazy = sections.open_latest(path.parent, path.stem)
        return lazy if lazy is not None else self.load_raw(root)

    def load_raw(self, root: Path) -> dict[str, Any] | None:
        """The latest snapshot as plain JSON (the fast path the bundle builder uses)."""
        path = self.latest_path(root)
        if path is None:
            return None
        try:
            raw = path.read_bytes()
            with gc_paused():  # a large snapshot is many small objects; collections while parsing are wasted
                data = orjson.loads(raw)
        except (OSError, orjson.JSONDecodeError) as exc:
            raise StoreError(f"RepoContext {path} is unreadable ({exc}); re-run `planner gather`") from exc
        if not isinstance(data, dict) or "meta" not in data:
            raise StoreError(f"RepoContext {path} is not a RepoContext; re-run `planner gather`")
        return data

    def load_cache(self, root: Path) -> dict[str, dict[str, Any]]:
        """Per-file probe results from earlier gathers (empty when absent or unreadable)."""
        try:
            raw = (self.repo_dir(root) / "probe-cache.json").read_bytes()
            with gc_paused():
                data = orjson.loads(raw)
        except (OSError, orjson.JSONDecodeError):
            return {}
        return data if isinstance(data, dict) else {}

    def save_cache(self, root: Path, cache: dict[str, dict[str, Any]]) -> None:
        target = self.repo_dir(root) / "probe-cache.json"
        try:
            atomic_write(target, orjson.dumps(cache))
        except OSError as exc:
            raise StoreError(f"cannot write probe cache {target}: {exc.strerror}") from exc

    def load(self, root: Path) -> RepoContext | None:
        raw = self.load_raw(root)
        if raw is None:
            return None
        try:
            return RepoContext.model_validate(raw)
        except ValueError as exc:
            raise StoreError(
                f"RepoContext for {root} has an old or invalid shape; re-run `planner gather` "
                f"({exc.__class__.__name__})"
            ) from exc
