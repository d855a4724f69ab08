"""Where RepoContexts live: `$PLANNER_HOME/repos/<repo id>/` (layout in parts.py).

Writes are atomic (temp file + rename, then a pointer), so a crash mid-write
never leaves a half-written snapshot; `latest` names the newest snapshot.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from repocontext import parallel, parts
from repocontext.encode import Encoded, encode, encode_carried, encode_section
from repocontext.lazyjson import LAZY, StoreError, plain
from repocontext.model import RepoContext
from repocontext.parallel import gc_paused
from repocontext.parts import LazyContext, atomic_write
from repocontext.paths import repo_id
from repocontext.probecache import ProbeCache

if TYPE_CHECKING:
    from repocontext.regather import Regathered

WORKTREE_KEY = "worktree"  # the snapshot name for directories outside git
# The probe cache's write, measured on python/pythondotorg at 1× and 8× (1,156 and 9,248 results: 23 and 143 ms).
CACHE_WRITE_S, CACHE_WRITE_S_PER_RESULT = 0.004, 16e-6


__all__ = ["WORKTREE_KEY", "RepoContextStore", "StoreError", "atomic_write", "repo_id"]


class RepoContextStore:
    def __init__(self, home: Path) -> None:
        self.home = home

    def repo_dir(self, root: Path) -> Path:
        return self.home / "repos" / repo_id(root)

    def save(self, context: RepoContext) -> Path:
        """Store `context` as the latest snapshot of its repository; returns the manifest's path."""
        directory = self.repo_dir(Path(context.meta.root))
        encoded = encode(context)
        try:
            name = parts.write(directory, context.meta.commit or WORKTREE_KEY, encoded.sections, encoded.parts,
                               rewrite=True)
        except OSError as exc:
            raise StoreError(f"cannot write RepoContext under {directory}: {exc.strerror}") from exc
        return directory / name

    def save_regathered(self, result: Regathered, previous: LazyContext) -> Path:
        """Store a re-gather: unchanged sections and members keep their parts; the probe cache gets the
        changed files' results. Returns the manifest's path."""
        directory = self.repo_dir(Path(result.meta.root))
        out = Encoded()
        for name in RepoContext.model_fields:
            if name in ("meta", "diagnostics", "files", "denied"):
                encode_section(out, name, getattr(result, name))
            elif name in result.sections:
                encode_carried(out, name, result.sections[name], previous, result.changed)
            else:  # no probe produced it (one crashed): the model's empty default, as a full gather stores
                encode_section(out, name, RepoContext.model_fields[name].get_default(call_default_factory=True))
        try:
            name = parts.write(directory, result.meta.commit or WORKTREE_KEY, out.sections, out.parts)
        except OSError as exc:
            raise StoreError(f"cannot write RepoContext under {directory}: {exc.strerror}") from exc
        cache = self.probe_cache(Path(result.meta.root))
        try:
            for slot, results in result.cache_replaced.items():
                cache.replace(slot, results)
            for slot, added in result.cache_added.items():
                cache.update(slot, added, result.cache_removed.get(slot, ()))
        finally:
            cache.close()
        return directory / name

    def latest_path(self, root: Path) -> Path | None:
        """The current manifest of `root`, or None when it has no (readable) snapshot."""
        directory = self.repo_dir(root)
        try:
            name = parts.current(directory)
        except StoreError:
            return None
        path = directory / name if name else None
        return path if path is not None and path.is_file() else None

    def load_lazy(self, root: Path) -> LazyContext | None:
        """The latest snapshot, each section read and parsed on first access (None when there is none)."""
        return parts.open_current(self.repo_dir(root))

    def load_raw(self, root: Path) -> dict[str, Any] | None:
        """The latest snapshot as plain JSON (every section parsed)."""
        lazy = self.load_lazy(root)
        if lazy is None:
            return None
        with gc_paused():
            data = {name: plain(lazy[name]) if isinstance(lazy[name], LAZY) else lazy[name] for name in lazy}
        if "meta" not in data:
            raise StoreError(f"RepoContext {lazy.name} is not a RepoContext; re-run `planner gather`")
        return data

    def probe_cache(self, root: Path) -> ProbeCache:
        return ProbeCache(self.repo_dir(root))

    def load_cache(self, root: Path) -> dict[str, dict[str, Any]]:
        """Per-file probe results from earlier gathers, by slot (empty when absent or unreadable)."""
        cache = self.probe_cache(root)
        try:
            return {slot: cache.load(slot) for slot in cache.slots()}
        finally:
            cache.close()

    def save_cache(self, root: Path, cache: dict[str, dict[str, Any]]) -> None:
        (self.repo_dir(root) / "probe-cache.json").unlink(missing_ok=True)  # the older layout's file
        store = self.probe_cache(root)
        try:
            store.replace_all(cache)
        finally:
            store.close()

    def save_all(self, root: Path, context: RepoContext, cache: dict[str, dict[str, Any]]) -> Path:
        """`save(context)` and `save_cache(root, cache)`, the cache written by a forked worker meanwhile where
        that pays (a large first gather: the two writes are the last tenth of it, on one core); returns when
        both are done. A failure of either raises as it would in turn."""
        results = sum(len(slot) for slot in cache.values())
        writing = parallel.start_call(lambda held: self.save_cache(root, held), cache, parallel.default_workers(),
                                      CACHE_WRITE_S + CACHE_WRITE_S_PER_RESULT * results)
        try:
            path = self.save(context)
        except BaseException:
            writing.cancel()
            raise
        writing.result()
        return path

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
