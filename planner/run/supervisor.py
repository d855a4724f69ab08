"""The supervisor's nodes: TCCM → RepoContext → bundle → split; join → verify → finalize."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from planner import service
from planner.bundle.model import Bundle
from planner.bundle.view import open_view, reader
from planner.chain.work import Blocker, ItemResult
from planner.errors import BudgetError, ExitCode, PlannerError
from planner.patch.plan import Edit, EditError, apply_edits, unified_diff
from planner.policy import kinds
from planner.policy.enforce import from_state
from planner.recipes import work as work_items
from planner.recipes.engine import RecipeError
from planner.run.context import NodeRuntime
from planner.run.gates import leaks, paths
from planner.run.gates.check import gated_files
from planner.run.gates.policy import gate
from planner.run.stages import recipes_first
from planner.run.state import SEVERITY, RunInputs, RunState
from planner.run.taskmodule import for_tccm
from planner.tccm.model import TCCM
from repocontext.store import RepoContextStore, StoreError

BRANCH_KEYS = tuple(RunInputs.__annotations__)  # what a work branch is sent
PATCHED = frozenset({"succeeded", "needs_regeneration"})  # item statuses whose edits go into the patch
# A run takes the worst of its items' statuses by SEVERITY (planner/run/state.py); not_applicable and no_changes
# rank below all of them: a run is not_applicable only when every item is. A run with no item whose coverage
# names a reason (no advisory source, a lockfile no probe reads) is not_evaluated.


def _failed(state: RunState) -> bool:
    """The run stopped before its work items (an error, or a run-level must_read over budget)."""
    return state.get("status") in ("failed", "over_budget")


def _stop(exc: PlannerError) -> dict[str, Any]:
    status = "over_budget" if isinstance(exc, BudgetError) else "failed"
    return {"status": status, "error": exc.message, "exit_code": int(exc.exit_code)}


def load_tccm(state: RunState, runtime: NodeRuntime) -> dict[str, Any]:
    try:
        tccm = service.task_class(runtime.context.settings, state["task_class"])
    except PlannerError as exc:
        return _stop(exc)
    return {"tccm": tccm.model_dump(mode="json"), "status": "running"}


def ensure_repocontext(state: RunState, runtime: NodeRuntime) -> dict[str, Any]:
    if _failed(state):
        return {}
    settings, root = runtime.context.settings, Path(state["repo"])
    store = RepoContextStore(settings.home)
    advisories = state["options"].get("advisories") or None
    try:
        view = open_view(root, store) if store.latest_path(root) else None
        freshness: str = view.freshness() if view is not None else "none"
        if freshness == "fresh" and service.sources_changed(view.context if view else None, root, advisories):
            freshness = "other-advisories"
    except StoreError:
        freshness = "none"  # an unreadable snapshot is re-made like a missing one
    if freshness in ("none", "stale", "dirty", "other-advisories") and not state["options"].get("no_gather"):
        options = {"advisories": advisories} if advisories else None
        try:
            # Warming pays off only where the views outlive this run (a Redis server): the embedded store dies
            # with the process, and the item bundles build as fast from the RepoContext (awesome-compose:
            # warming 565 slices cost 4.4 s of a 10 s run and saved nothing).
            context, _ = service.gather_repo(settings, root, options=options, warm=settings.redis_url is not None)
        except PlannerError as exc:
            return _stop(exc)
        return {"repocontext": {"gathered": True, "was": freshness, "commit": context.meta.commit,
                                **_skipped(context.diagnostics)}}
    return {"repocontext": {"gathered": False, "was": freshness,
                            **_skipped(view.context.get("diagnostics") if view and view.context else None)}}


def _skipped(diagnostics: Any) -> dict[str, list[str]]:
    """The files the gather left unread (a manifest over its size bound), for the report: their declarations
    are missing from the RepoContext, so what the run found there is not the whole story."""
    found = []
    for diagnostic in diagnostics or ():
        message = diagnostic.get("message") if isinstance(diagnostic, dict) else getattr(diagnostic, "message", "")
        if isinstance(message, str) and message.startswith("skipped: "):
            found.append(message)
    return {"skipped": found} if found else {}


def list_work(state: RunState, runtime: NodeRuntime) -> dict[str, Any]:
    """List the work items from the RepoContext before any bundle, when the task class can: a budget cut
    can then never hide one, and each item's bundle is judged against the budget on its own."""
    if _failed(state):
        return {}
    module = for_tccm(state["tccm"])
    if state["tccm"].get("work_items") and not module.has_lister:
        return _yaml_work(state, runtime)
    try:
        context = RepoContextStore(runtime.context.settings.home).load_lazy(Path(state["repo"]))
    except StoreError as exc:
        return {"status": "failed", "error": str(exc), "exit_code": int(ExitCode.ENVIRONMENT)}
    said = module.coverage(context, state["options"])
    covered = {"coverage": said} if said is not None else {}  # what the run read, stated in all it reports
    items = module.list_work(context, state["inputs"]) if context is not None else None
    if context is None or items is None:
        return covered  # bootstrap, or a task class that splits its run bundle: `split` does it
    note = module.nothing_listed(context, state["inputs"]) if not items else ""
    return {**covered, "items": [item.model_dump() for item in items], "per_item": list(module.item_inputs),
            "note": note}


def _yaml_work(state: RunState, runtime: NodeRuntime) -> dict[str, Any]:
    """The items a TCCM's `work_items:` lists (no task module lists them)."""
    tccm = TCCM.model_validate(state["tccm"])
    try:
        view = open_view(Path(state["repo"]), RepoContextStore(runtime.context.settings.home))
        items, note = work_items.list_items(tccm, view, state["inputs"])
    except (StoreError, RecipeError) as exc:
        return {"status": "failed", "error": str(exc), "exit_code": int(ExitCode.FAILED)}
    per_item = list(tccm.work_items.item_inputs) if tccm.work_items else []
    return {"items": [item.model_dump() for item in items], "per_item": per_item, "note": note}


def build_bundle(state: RunState, runtime: NodeRuntime) -> dict[str, Any]:
    if _failed(state):
        return {}
    per_item = frozenset(state.get("per_item") or ())
    note: dict[str, str] = {}
    try:
        bundle, _, record = service.build_bundle(runtime.context.settings, state["task_class"], Path(state["repo"]),
                                                 state["inputs"], per_item=per_item)
    except BudgetError as exc:
        if not recipes_first(state.get("tccm") or {}):
            return _stop(exc)
        try:
            bundle, _, record = service.build_bundle(runtime.context.settings, state["task_class"],
                                                     Path(state["repo"]), state["inputs"], per_item, demoted=True)
        except PlannerError as again:
            return _stop(again)
        note = {"budget_note": exc.message}
    except PlannerError as exc:
        return _stop(exc)
    return {**note, "bundle": bundle.model_dump(mode="json"), "hot_views": record.hot_views,
            "repocontext": {**state.get("repocontext", {}), **record.repocontext.model_dump(), "mode": bundle.mode}}


def split(state: RunState) -> dict[str, Any]:
    if _failed(state):
        return {"items": []}
    if state.get("per_item") is not None:
        return {}  # listed from the RepoContext already
    module = for_tccm(state["tccm"])
    items = module.split(Bundle.model_validate(state["bundle"]), state["inputs"])
    return {"items": [item.model_dump() for item in items]}


def has_work(state: RunState) -> bool:
    """Whether `split` leaves any work item to fan out (a run that stopped before its items has none)."""
    return not _failed(state) and bool(state.get("items"))


def items_known(state: RunState) -> bool:
    """Whether the run's work items are settled before `split`: listed from the RepoContext, or none at all
    because the run stopped; otherwise `split` makes them from the run-level bundle."""
    return _failed(state) or state.get("per_item") is not None


def fan_out(state: RunState) -> list[Any] | str:
    """One `work` branch per item (LangGraph Sends), or straight to `join` when there is none."""
    if not has_work(state):
        return "join"
    from langgraph.types import Send  # the graph's own type: only a run with work items reaches this

    values: Mapping[str, Any] = state  # BRANCH_KEYS are RunInputs' keys, read as plain names
    shared = {key: values[key] for key in BRANCH_KEYS if key in values}
    return [Send("work", {**shared, "item": item}) for item in state["items"]]


def _merge(state: RunState, results: list[ItemResult]) -> str:
    """All items' edits applied together, in item order; an item whose edits clash with earlier ones fails."""
    accepted: list[Edit] = []
    for result in results:
        if result.status not in PATCHED:
            continue  # a blocked, over-budget or failed item contributes nothing to the patch
        edits = [Edit.model_validate(e) for e in result.edits]
        try:
            apply_edits(reader(state["repo"]), [*accepted, *edits])
        except EditError as exc:
            unregenerated = _unregenerated(state, result, accepted)
            if unregenerated is None:
                result.status, result.error = "failed", f"its edits clash with another item's: {exc}"
                result.report += f"\n**Not applied**: {result.error}\n"
                continue
            edits = unregenerated
        accepted += edits
    # only what `git apply --check` accepts is reported; an item whose file's diff it refuses fails
    return unified_diff(gated_files(state["repo"], results, PATCHED)) if accepted else ""


def _unregenerated(state: RunState, result: ItemResult, accepted: list[Edit]) -> list[Edit] | None:
    """Two items that each regenerated the same lockfile (in their own copy) clash on it. The later one
    keeps only its plan's own edits and names the command to run again on the patched tree; None when
    it regenerated nothing or its own edits clash too."""
    data = (result.plan or {}).get("data") or {}
    rows = [r for r in data.get("regeneration") or [] if r.get("status") in ("regenerated", "still_locked")]
    if not rows:
        return None
    edits = [Edit.model_validate(e) for e in (result.plan or {}).get("edits", [])]
    try:
        apply_edits(reader(state["repo"]), [*accepted, *edits])
    except EditError:
        return None
    result.status, result.edits = "needs_regeneration", [e.model_dump() for e in edits]
    result.blockers += [Blocker(kind="regenerate", file=r["file"], fix=r["fix"],
                                message="another item's regeneration of this file is already in the patch; run "
                                        "the command again on the patched tree to include this upgrade")
                        for r in rows]
    result.report += ("\n**Lockfiles not included**: " + ", ".join(f"`{r['file']}`" for r in rows)
                      + " were regenerated for another item too; run " + "; ".join(f"`{r['fix']}`" for r in rows)
                      + " on the patched tree.\n")
    return edits


def _status(state: RunState, results: list[ItemResult], patch: str) -> str:
    """The run's status is its worst item's: a run never reads as succeeded while an item is not done."""
    if _failed(state):
        return state["status"]
    statuses = {r.status for r in results}
    worst = next((s for s in SEVERITY if s in statuses), None)
    if worst is not None:
        return worst
    if patch:
        return "succeeded"
    if not results and (state.get("coverage") or {}).get("reason"):
        return "not_evaluated"  # it found nothing, but did not read everything: never green
    # nothing to do at all: no item (a YAML class's work-item source is empty) or every item not applicable
    none_listed = not results and bool((state.get("tccm") or {}).get("work_items"))
    return "not_applicable" if none_listed or statuses == {"not_applicable"} else "no_changes"


def _policy_gate(state: RunState, runtime: NodeRuntime, results: list[ItemResult]) -> list[dict[str, Any]]:
    """Every item's edits against the task class's policy, before anything is merged into the patch."""
    policy, notes = from_state(state.get("tccm"), state.get("inputs") or {})
    if policy is None or not any(r.edits or r.status == "needs_regeneration" for r in results):
        return []
    known: dict[str, str] = {}
    if policy.limits.file_kinds is not None:
        try:
            known = kinds.facts(RepoContextStore(runtime.context.settings.home).load_lazy(Path(state["repo"])))
        except StoreError:
            known = {}  # names decide; a refusal then says which kind the name suggested
    return gate(policy, results, known, notes, reader(state["repo"]))


def _path_gate(state: RunState, results: list[ItemResult]) -> list[dict[str, Any]]:
    """Every item whose edits (or plan, for one that failed on them) would write through a symbolic link or
    outside the repository is blocked, whatever made the edits: before the policy and the patch see them."""
    stages: list[dict[str, Any]] = []
    for result in results:
        planned = (result.plan or {}).get("edits") or []
        refused = paths.refusals(state["repo"], paths.edit_files([*result.edits, *planned]))
        if refused and not any(b.kind == "path" for b in result.blockers):
            paths.block(result, refused)
            stages.append({"item": result.item.id, "stage": "paths", "outcome": "refused",
                           "reason": "; ".join(refused.values()), "files": sorted(refused)})
    return stages


def join(state: RunState, runtime: NodeRuntime) -> dict[str, Any]:
    order = {item["id"]: i for i, item in enumerate(state.get("items", []))}
    results = sorted((ItemResult.model_validate(r) for r in state.get("results", [])),
                     key=lambda r: order.get(r.item.id, len(order)))
    stages = _path_gate(state, results)
    stages += leaks.gate(results, reader(state["repo"]))  # before the policy: a refused diff is kept for review
    stages += _policy_gate(state, runtime, results)
    patch = _merge(state, results)
    return {"patch": patch, "status": _status(state, results, patch), "outcomes": [r.model_dump() for r in results],
            "stages": stages}
