"""The bundle a preview shows (`planner bundle`, an agent's `get_agent_context`). Beside the run, not in
`planner.service`, because it asks the task class's module (`planner.run.taskmodule`) which inputs scope its
work items."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from planner import service
from planner.config import Settings
from planner.errors import BudgetError
from repocontext.store import RepoContextStore

if TYPE_CHECKING:
    from planner.bundle.model import Bundle
    from planner.store.provenance import ProvenanceRecord
    from planner.tccm.model import TCCM


def build_view(settings: Settings, name: str, repo: Path, inputs: Mapping[str, str],
               tccm: TCCM | None = None) -> tuple[Bundle, TCCM, ProvenanceRecord, list[str] | None]:
    """`build_bundle` for a preview (`planner bundle`, an agent's `get_agent_context`): when the bundle is over
    budget because an input that scopes work items was not given (no `package`: every package's slices at
    once), the view a dispatch's run gets instead, those entries left per item, and one line per candidate
    item (None when the bundle fit as it was). `tccm`: the class already resolved (narrowed, for an agent)."""
    from planner.run.taskmodule import for_tccm

    try:
        bundle, built, provenance = service.build_bundle(settings, name, repo, inputs, tccm=tccm)
        return bundle, built, provenance, None
    except BudgetError:
        tccm = tccm or service.task_class(settings, name)
        module = for_tccm(tccm.model_dump(mode="json"))
        scoped = frozenset(module.item_inputs) - set(inputs)
        if not scoped:
            raise
    bundle, tccm, provenance = service.build_bundle(settings, name, repo, inputs, per_item=scoped, tccm=tccm)
    context = RepoContextStore(settings.home).load_lazy(service.repo_root(repo))
    lines = (module.overview(context) if context is not None else None) or []
    return bundle, tccm, provenance, lines
