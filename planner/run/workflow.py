"""A run as an agent sees it: status, work items, what each chain stage did, the report, recorded
decisions and the next steps open to it (the MCP `get_workflow_context` tool)."""

from __future__ import annotations

from typing import Any

from planner.config import Settings
from planner.errors import PlannerError


def workflow_context(settings: Settings, run_id: str) -> dict[str, Any]:
    from planner.run.dispatch import final_state  # the graph stack: only for a run's state
    from planner.store.provenance import ProvenanceStore
    from planner.store.runs import run_coverage, run_items

    try:
        state = final_state(settings, run_id)
    except PlannerError:
        return _bundle_build(settings, run_id)  # not a run: a bundle build (or its own error message)
    run = state["run"]
    status = run["status"]
    notes = ProvenanceStore(settings.home).notes(run["id"])
    return {"run_id": run["id"], "kind": "run", "task_class": run["task_class"], "repo": run["repo"],
            "status": status, "inputs": run["inputs"], "created_at": run["created_at"],
            "updated_at": run["updated_at"], "error": state.get("error"), "items": run_items(state),
            "chain": [_stage(s) for s in state.get("stages", [])], "report_markdown": state.get("report") or "",
            "patch": state.get("patch") or "", "artifacts": state.get("artifacts") or {},
            "decisions": [n for n in notes if n.get("note") == "decision"],
            "next_steps": next_steps(run["id"], status, state), **run_coverage(state)}


def _stage(stage: dict[str, Any]) -> dict[str, Any]:
    return {k: stage.get(k) for k in ("item", "stage", "outcome", "reason") if stage.get(k) is not None}


def _bundle_build(settings: Settings, record_id: str) -> dict[str, Any]:
    from planner.store.provenance import ProvenanceStore

    record = ProvenanceStore(settings.home).get(record_id)
    return {"run_id": record.id, "kind": record.kind, "task_class": record.task_class,
            "repo": record.repocontext.repo, "status": record.status, "inputs": record.inputs,
            "created_at": record.created_at, "items": [], "chain": [], "report_markdown": "", "patch": "",
            "requests": record.requests, "decisions": record.decisions,
            "next_steps": [f"dispatch it: `planner dispatch {record.task_class} --repo {record.repocontext.repo}`"]}


def next_steps(run_id: str, status: str, state: dict[str, Any]) -> list[str]:
    """What can move this run on, as commands a user (or an agent with a shell) can run."""
    resume = f"`planner runs resume {run_id}`"
    steps = {
        "running": ["wait: the run is in progress (ask again for its context)"],
        "interrupted": [f"resume it from its last checkpoint: {resume}"],
        "needs_llm": [f"answer with a model: {resume[:-1]} --model provider:name` (or set PLANNER_MODEL)"],
        "needs_regeneration": ["dispatch again with `--regenerate` so the repository's own tool rewrites the "
                               "lockfiles"],
        "over_budget": ["raise the task class's budget, or narrow the run with inputs"],
        "not_evaluated": [f"give it what it could not read: {(state.get('coverage') or {}).get('reason')}"],
    }.get(status, [])
    if status == "failed":
        steps.append(f"fix the cause above, then retry from the last checkpoint: {resume}")
    for item in state.get("outcomes", []):
        for blocker in item.get("blockers") or []:
            if blocker.get("fix"):
                steps.append(f"{item['item']['id']}: allow it: {blocker['fix']}")
    if status == "succeeded" and state.get("patch") and not state.get("branch"):
        patch = (state.get("artifacts") or {}).get("patch", "the run's patch")
        steps.append(f"review the patch ({patch}); dispatch with apply to commit it on a new branch")
    return steps
