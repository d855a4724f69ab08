"""The bundle builder's hot-view path: an assembled bundle first, then pre-rendered slices, then the RepoContext.

1. Assembled bundle, keyed by (renderer, repo, commit, snapshot, TCCM hash,
   inputs). Served only when HEAD is still the snapshot's commit and every
   file the original build read has the same (inode, size, mtime, ctime); a
   build that read a file modified in the last RACY_S seconds is not stored,
   since a same-size rewrite within one timestamp tick would go unseen. Such a
   hit never loads the RepoContext: it is what makes a warm build cheap.
2. Slices: the builder asks the hot views for each key entry first.
3. Everything else comes from the RepoContext and the files, as without hot views.
A hit gives the same bytes as a miss; provenance differs only in `source`
(`hot_view` for what came from Redis) and `hot_views` (what happened).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from planner.bundle.builder import build
from planner.bundle.model import LOADED, Bundle
from planner.bundle.view import RepoView, open_view
from planner.config import Settings
from planner.errors import EnvironmentProblem, PlannerError
from planner.hotviews import naming, parsed, tccms
from planner.hotviews.store import HotViews, SliceLookup, WarmReport
from planner.tccm.model import TCCM
from repocontext import git
from repocontext.globs import PathIndex
from repocontext.parallel import gc_paused
from repocontext.store import RepoContextStore, StoreError

RACY_S = 2.0
Mode = Literal["all", "slices", "off"]


def _stat(root: Path, rel: str) -> list[Any] | None:
    """[path, inode, size, mtime, ctime], [path] when absent; None when it cannot be told."""
    try:
        st = os.lstat(root / rel)
    except FileNotFoundError:
        return [rel]
    except OSError:
        return None
    return [rel, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def _deps(root: Path, bundle: Bundle, started_ns: int) -> list[list[Any]] | None:
    """What the build read from the work tree, or None when something is too new to be trusted."""
    horizon = started_ns - int(RACY_S * 1e9)
    deps: dict[str, list[Any]] = {}
    for entry in bundle.entries:
        if entry.kind != "file" or entry.band == "may_read" or entry.target in deps:
            continue
        dep = _stat(root, entry.target)
        if dep is None or (len(dep) > 1 and max(dep[3], dep[4]) >= horizon):
            return None
        deps[entry.target] = dep
    return list(deps.values())


def _still_valid(root: Path, deps: list[list[Any]]) -> bool:
    return all(_stat(root, dep[0]) == dep for dep in deps)


def _as_hot(bundle: Bundle) -> bytes:
    """The bundle as a later hit will present it: loaded entries come from the hot view."""
    entries = [e.model_copy(update={"source": "hot_view"}) if e.status in LOADED else e for e in bundle.entries]
    return bundle.model_copy(update={"entries": entries}).model_dump_json().encode()


def _meta_view(root: Path, meta: dict[str, Any]) -> RepoView:
    """Enough of a RepoView for provenance (commit, gathered-at, freshness) without loading the RepoContext."""
    return RepoView(root=root, context={"meta": meta}, paths=PathIndex([]), sizes={}, denied={})


def _slice_status(lookup: SliceLookup, hot: HotViews) -> str:
    if not lookup.templates and hot.backend.kind == "embedded":
        return "slices not warmed in this process (embedded Redis)"
    if not lookup.templates:
        return "slices not warmed for this snapshot (`planner hotviews warm`)"
    return f"{lookup.hits} slice hit(s), {lookup.misses} miss(es)"


def build_bundle(settings: Settings, tccm: TCCM, root: Path, inputs: Mapping[str, str],
                 mode: Mode = "all", per_item: frozenset[str] = frozenset()) -> tuple[Bundle, RepoView, str]:
    """(bundle, view, hot-view status for provenance). Raises what open_view and the builder raise."""
    with gc_paused():  # parsing parts and building allocate many short-lived objects; collect afterwards
        return _build_bundle(settings, tccm, root, inputs, mode, per_item)


def _build_bundle(settings: Settings, tccm: TCCM, root: Path, inputs: Mapping[str, str],
                  mode: Mode, per_item: frozenset[str]) -> tuple[Bundle, RepoView, str]:
    store = RepoContextStore(settings.home)
    hot = HotViews.open(settings)
    snap = naming.snapshot(store, root)
    why = _not_used(hot, snap, root, mode)
    if why is not None or snap is None:
        view = open_view(root, store)
        return build(tccm, view, inputs, per_item=per_item), view, why or "not used"
    key = naming.bundle_key(snap, tccm, inputs, per_item)
    if mode == "all":
        hit = _cached_bundle(hot, root, key)
        if hit is not None:
            return hit
        hot.count(bundle_misses=int(hot.usable))
    view = open_view(root, store)
    if naming.snapshot(store, root) != snap:  # a gather replaced it meanwhile: its slices may not match
        return build(tccm, view, inputs, per_item=per_item), view, "not used (RepoContext replaced during the build)"
    lookup = hot.slices(snap, naming.tccm_set(tccms.in_service(settings)), tccm, inputs)
    started = time.time_ns()
    bundle = build(tccm, view, inputs, hot=lookup, per_item=per_item)
    status = _slice_status(lookup, hot)
    if mode == "all":
        deps = _deps(root, bundle, started)
        meta = {k: (view.context or {}).get("meta", {}).get(k)
                for k in ("repo_id", "commit", "gathered_at", "dirty", "secret_rules")}  # what freshness reads
        if deps is not None and hot.put_bundle(snap, key, _as_hot(bundle), meta, deps):
            status += "; bundle stored"
    hot.count(slice_hits=lookup.hits, slice_misses=lookup.misses)
    if hot.error:
        status = f"unavailable ({hot.error})" if not lookup.hits else f"{status}; then unavailable ({hot.error})"
    return bundle, view, status


def _cached_bundle(hot: HotViews, root: Path, key: str) -> tuple[Bundle, RepoView, str] | None:
    head = hot.bundle_head(key)
    if head is None or not _still_valid(root, head.deps):
        return None
    bundle = parsed.get(head.etag)
    if bundle is None:
        body = hot.bundle_body(key)
        if body is None:
            return None
        bundle = parsed.put(body[0], Bundle.model_validate_json(body[1]), len(body[1]))
    return bundle, _meta_view(root, head.meta), "hit: bundle"


def _not_used(hot: HotViews, snap: naming.Snapshot | None, root: Path, mode: Mode) -> str | None:
    if mode == "off" or hot.backend.kind == "off":
        return "off"
    if snap is None:
        return "not used (bootstrap mode: no RepoContext)"
    if snap.is_git and git.head(root) != snap.commit:
        return "not used (RepoContext is stale: HEAD moved since the last gather)"
    return None


def warm(settings: Settings, root: Path, bundles: bool = False) -> WarmReport:
    """Pre-render the slice set for the latest snapshot of `root`; with `bundles`, also build (and so
    store) each task class's bundle with no inputs. Raises PlannerError when there is no snapshot.
    Redis failures do not raise: the report's `error` says what happened."""
    store = RepoContextStore(settings.home)
    snap = naming.snapshot(store, root)
    try:
        context = store.load_lazy(root)  # only the keys the TCCMs name are read
    except StoreError as exc:
        raise EnvironmentProblem(str(exc)) from None
    if snap is None or context is None:
        raise PlannerError(f"no RepoContext for {root}; run `planner gather {root}` first")
    if naming.snapshot(store, root) != snap:
        raise PlannerError(f"the RepoContext of {root} was replaced while warming; warm again")
    hot = HotViews.open(settings)
    if hot.backend.kind == "off":
        raise PlannerError("hot views are off (PLANNER_REDIS_URL=off)")
    in_service = tccms.in_service(settings)
    report = hot.warm(snap, context, in_service)
    if bundles and report.error is None and (not snap.is_git or git.head(root) == snap.commit):
        for tccm in in_service:
            try:
                _, _, status = build_bundle(settings, tccm, root, {})
            except PlannerError:
                continue  # e.g. must_read over budget: that class has no bundle to keep
            report.bundles += status.endswith("bundle stored") or status == "hit: bundle"
            if "unavailable" in status:
                report.error = status
                break
    return report
