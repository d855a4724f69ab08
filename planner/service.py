"""The operations the CLI (and later the graph) share: registry, gather, bundle, record."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planner.config import Settings
from planner.errors import EnvironmentProblem, PlannerError
from planner.inputs import check_inputs, check_sources
from repocontext.model import RepoContext
from repocontext.parallel import gc_paused
from repocontext.store import RepoContextStore, StoreError

if TYPE_CHECKING:
    from planner.bundle.model import Bundle
    from planner.store.provenance import ProvenanceRecord
    from planner.tccm.model import TCCM
    from planner.tccm.registry import Registry
    from repocontext.gather import Progress
    from repocontext.regather import Regathered

# Imported where used: bundles, hot views, TCCMs and provenance (`planner gather` needs none of them; their
# pydantic models and the Redis client were a third of a cold gather), and the probes (a dispatch on a fresh
# RepoContext gathers nothing, and importing every probe's parsers cost it a tenth of a second).


def registry(settings: Settings) -> Registry:
    from planner.tccm.registry import Registry

    return Registry(settings.task_class_dirs)


def task_class(settings: Settings, name: str) -> TCCM:
    from planner.hotviews import tccms

    return tccms.resolve(settings, name)  # registry(settings).get(name), parsed once while the files are unchanged


def repo_root(path: Path) -> Path:
    if not path.exists():
        raise PlannerError(f"repository {path} does not exist")
    if not path.is_dir():
        raise PlannerError(f"repository {path} is not a directory")
    return path.resolve()


def gather_repo(settings: Settings, repo: Path, progress: Progress | None = None,
                options: Mapping[str, str] | None = None, warm: bool = True) -> tuple[RepoContext | Regathered, Path]:
    """Gather `repo` and store the snapshot: a re-gather from the latest snapshot when there is one (only
    what changed is redone), else a full gather. Returns the result (a RepoContext, or a Regathered that
    answers meta, files, denied, languages and diagnostics the same way) and where it was stored."""
    root = repo_root(repo)
    store = RepoContextStore(settings.home)
    opts = dict(options or {})
    if settings.advisories and "advisories" not in opts:
        opts["advisories"] = os.pathsep.join(str(p) for p in settings.advisories)
    check_sources(opts.get("advisories"))
    from repocontext.gather import GatherError

    try:
        with gc_paused():
            done = _regather(store, root, opts, progress) or _gather(store, root, opts, progress)
    except GatherError as exc:
        raise PlannerError(str(exc)) from None
    except StoreError as exc:
        raise EnvironmentProblem(str(exc)) from None
    if warm:
        warm_hot_views(settings, root)
    return done


def sources_changed(context: Mapping[str, Any] | None, root: Path, advisories: str | None) -> bool:
    """True when `advisories` are given and are not the sources (paths and contents' stamp) the stored
    snapshot's vulnerabilities were evaluated with: a "fresh" snapshot must not answer for other sources.
    Re-gathering then re-runs that one probe (its settings fingerprint is what changed)."""
    if not advisories or context is None:
        return False
    from repocontext.probe import ProbeContext
    from repocontext.probes.vulnerabilities import OPTION, VulnerabilitiesProbe

    probe = VulnerabilitiesProbe()
    wanted = probe.settings_fingerprint(ProbeContext(root=root, files=[], options={OPTION: advisories}))
    runs = (context.get("meta") or {}).get("probes") or {}
    return (runs.get(probe.name) or {}).get("settings_hash") != wanted


def stored_context(settings: Settings, repo: Path) -> RepoContext:
    """The latest stored snapshot of `repo` as a validated RepoContext."""
    root = repo_root(repo)
    try:
        context = RepoContextStore(settings.home).load(root)
    except StoreError as exc:
        raise EnvironmentProblem(str(exc)) from None
    if context is None:
        raise PlannerError(f"no RepoContext for {root}; run `planner gather {root}` first")
    return context


def _regather(store: RepoContextStore, root: Path, options: dict[str, str],
              progress: Progress | None) -> tuple[Regathered, Path] | None:
    try:
        previous = store.load_lazy(root)
        if previous is None:
            return None
        from repocontext import parallel
        from repocontext.probes import ALL_PROBES
        from repocontext.regather import regather  # here: a first gather never needs it

        cache = store.probe_cache(root)
        try:
            result = regather(root, previous, cache, options, ALL_PROBES, progress, parallel.default_workers())
        finally:
            cache.close()
        return None if result is None else (result, store.save_regathered(result, previous))
    except StoreError:
        return None  # an unreadable snapshot or cache: the full gather re-makes it


def _gather(store: RepoContextStore, root: Path, options: dict[str, str],
            progress: Progress | None) -> tuple[RepoContext, Path]:
    from repocontext.gather import gather

    try:
        previous = store.load_raw(root)
    except StoreError:
        previous = None  # an unreadable old snapshot is simply re-made
    cache = store.load_cache(root) if previous is not None else {}
    context = gather(root, previous=previous, options=options, progress=progress, cache=cache)
    return context, store.save_all(root, context, cache)


def warm_hot_views(settings: Settings, root: Path) -> str | None:
    """Refresh the hot views after a gather (so the git hooks keep them fresh). Never fails the gather:
    returns why it could not warm, or None."""
    from planner.hotviews import bundles as hot_views

    try:
        report = hot_views.warm(settings, root)
    except (PlannerError, StoreError) as exc:
        return str(exc)
    return report.error


def build_bundle(settings: Settings, name: str, repo: Path, inputs: Mapping[str, str],
                 per_item: frozenset[str] = frozenset(),
                 demoted: bool = False, tccm: TCCM | None = None) -> tuple[Bundle, TCCM, ProvenanceRecord]:
    """Build the bundle `name` would get for `repo` (hot views first), without recording it. Entries
    scoped by a `per_item` input are left to each work item's own bundle. `demoted`: must_read is read as
    should_read (cut, not refused), for a class whose recipes run whatever the bundle holds. `tccm`: that
    class already resolved (and perhaps narrowed, planner/run/agent.py), instead of resolving `name`."""
    from planner.hotviews import bundles as hot_views
    from planner.store.provenance import record_for

    tccm = tccm or task_class(settings, name)
    if demoted:
        tccm = tccm.model_copy(update={"must_read": (), "should_read": (*tccm.must_read, *tccm.should_read)})
    check_inputs(tccm, inputs)
    root = repo_root(repo)
    try:
        bundle, view, hot = hot_views.build_bundle(settings, tccm, root, inputs, per_item=per_item)
    except StoreError as exc:
        raise EnvironmentProblem(str(exc)) from None
    return bundle, tccm, record_for(bundle, tccm, view, hot_views=hot)


OVERVIEW_NOTE = ("over budget without an input that scopes work items: the entries scoped by it are left to "
                 "each item's bundle (per_item), as in a dispatch; one line per candidate item (pick one with "
                 "--input):")


def record(settings: Settings, provenance: ProvenanceRecord) -> Path:
    from planner.store.provenance import ProvenanceStore

    return ProvenanceStore(settings.home).append(provenance)
