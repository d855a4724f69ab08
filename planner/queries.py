"""Queries shared by the CLI's `--json` output and `planner ui`'s /api: one function per shape, so they agree."""

from __future__ import annotations

from typing import Any

from planner.tccm.model import BANDS, TCCM
from planner.tccm.registry import Registry
from planner.tccm.surface import summary as policy_summary

ROW_KEYS = ("id", "kind", "task_class", "status", "repo", "created_at")


def run_rows(runs: list[dict[str, Any]], records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`planner runs list --json`: dispatched runs (with live status) and bundle builds, oldest first.
    `runs` are RunStore summaries, `records` the provenance index lines."""
    rows = [{"id": r["id"], "kind": "run", "task_class": r["task_class"], "status": r["status"],
             "repo": r["repo"], "created_at": r["created_at"]} for r in runs]
    known = {r["id"] for r in rows}
    bundles = [{k: row.get(k) for k in ROW_KEYS} for row in records if row["id"] not in known]
    return sorted(rows + bundles, key=lambda r: (r["created_at"], r["id"]))


def tccm_summary(tccm: TCCM) -> dict[str, Any]:
    return {
        "task_class": tccm.task_class, "version": tccm.version, "description": tccm.description.strip(),
        "path": tccm.path, "extends": tccm.extends, "subgraph": tccm.subgraph,
        "budget": tccm.budget.model_dump(),
        **{band: len(tccm.band(band)) for band in BANDS},
        "flow": _flow_summary(tccm), "policy": policy_summary(tccm.policy),
        "inputs": {name: {"description": spec.description, "required": spec.required}
                   for name, spec in sorted(tccm.accepted_inputs().items())},
    }


def _flow_summary(tccm: TCCM) -> dict[str, Any] | None:
    flow = tccm.flow
    if flow is None:
        return None
    inherited = sorted(n for n, c in tccm.flow_origin.items() if c != tccm.task_class)
    return {"states": len(flow.states), "start": flow.start, "max_steps": flow.max_steps,
            "side_effects": sorted({s.effect for s in flow.states.values() if s.effect}), "inherited": inherited}


def task_class_rows(registry: Registry) -> list[dict[str, Any]]:
    """`planner task-classes list --json`: every task class in service, valid or with its problems."""
    rows: list[dict[str, Any]] = []
    for name in registry.names():
        errors = registry.errors_for(name)
        if errors:
            rows.append({"task_class": name, "valid": False, "errors": [str(e) for e in errors]})
        else:
            rows.append({"valid": True, **tccm_summary(registry.get(name)), "overrides": registry.shadowed(name)})
    return rows
