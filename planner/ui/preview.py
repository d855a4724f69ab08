"""Bundle preview: the bundle a task class would get for a gathered repository and inputs, built and shown,
never recorded (seed 003's preview).

Which repositories: only those that recorded runs name and that have a
RepoContext stored under PLANNER_HOME. A path typed into the URL that no run
names is refused, so the preview never reads a directory the planner was not
already pointed at. The build is `planner bundle` without `service.record`
and without hot views: nothing is written to PLANNER_HOME, to Redis or to the
repository (the builder only reads, and refuses secrets and symlinks as ever).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel

from planner import service
from planner.bundle.builder import build
from planner.bundle.view import open_view
from planner.config import Settings
from planner.errors import PlannerError
from planner.inputs import parse_pairs
from planner.store.provenance import record_for
from planner.tccm.model import BANDS, TCCM, input_refs
from planner.ui.catalog import Catalog
from planner.ui.views import band_bar, entry_rows
from repocontext.store import RepoContextStore, StoreError

MAX_INPUTS = 20


class BadPreview(PlannerError):
    """A preview asked for something it cannot show (one line on the page)."""


class Preview(BaseModel):
    task_class: str
    repo: str
    inputs: dict[str, str]
    record: dict[str, Any]  # the provenance record `planner bundle --json` would print, never appended
    text: str  # the rendered bundle, as a worker or an LLM would get it
    entries: list[tuple[str, ...]]
    bar: dict[str, Any]


def gathered_repos(settings: Settings, catalog: Catalog) -> list[str]:
    """Repositories recorded runs name that have a stored RepoContext, sorted."""
    names = catalog.read(lambda db: [r for (r,) in db.execute(
        "SELECT DISTINCT repo FROM rows WHERE repo IS NOT NULL ORDER BY repo")])
    store = RepoContextStore(settings.home)
    return [name for name in names if Path(name).is_absolute() and _gathered(store, Path(name))]


def _gathered(store: RepoContextStore, root: Path) -> bool:
    try:
        return root.is_dir() and store.latest_path(root) is not None
    except (OSError, StoreError):
        return False


def input_names(tccm: TCCM) -> list[str]:
    """The ${inputs.NAME} a task class's entries use, in order of first use."""
    names: list[str] = []
    for band in BANDS:
        for entry in tccm.band(band):
            names += [n for n in input_refs(entry.slice_key or entry.glob or "") if n not in names]
    return names


def parse_inputs(text: str) -> dict[str, str]:
    """NAME=VALUE, one a line (or separated by `;`), as `planner bundle -i NAME=VALUE`."""
    try:
        inputs = parse_pairs(line for line in text.replace(";", "\n").splitlines() if line.strip())
    except ValueError as exc:
        raise BadPreview(str(exc)) from None
    if len(inputs) > MAX_INPUTS:
        raise BadPreview(f"{len(inputs)} inputs: at most {MAX_INPUTS}")
    return inputs


def preview(settings: Settings, catalog: Catalog, task_class: str, repo: str, inputs: dict[str, str]) -> Preview:
    """Build the bundle and its provenance in memory. BadPreview for a repo no recorded run names."""
    if repo not in gathered_repos(settings, catalog):
        raise BadPreview(f"repository {repo!r} is not one that recorded runs name with a stored RepoContext "
                         "(gather it and dispatch a run on it first)")
    tccm = service.task_class(settings, task_class)
    root = service.repo_root(Path(repo))
    try:  # the no-hot-views path of `planner bundle`: the stored RepoContext and the files, nothing cached
        view = open_view(root, RepoContextStore(settings.home))
        bundle = build(tccm, view, inputs)
    except StoreError as exc:
        raise BadPreview(str(exc)) from None
    record = record_for(bundle, tccm, view, hot_views="off (a preview: built in memory, not recorded)")
    data = record.model_dump(mode="json")
    return Preview(task_class=tccm.task_class, repo=str(root), inputs=dict(inputs), record=data, text=bundle.text,
                   entries=entry_rows(data), bar=band_bar(data["entries"], data["totals"]))
