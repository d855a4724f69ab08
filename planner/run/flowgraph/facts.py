"""A flow's run record (the `flow` channel of its graph state) and the facts conditions read.

The record is plain JSON, so every checkpoint of a flow is data: where it goes next, the steps and
visits so far, the trace, reflections (notes), recalled examples, and the last outcome of each
side-effect and action.
"""

from __future__ import annotations

from typing import Any

from planner.run.state import TaskState


class FlowGraphState(TaskState, total=False):
    flow: dict[str, Any]


def fresh() -> dict[str, Any]:
    return {"next": None, "steps": 0, "visits": {}, "trace": [], "notes": [], "recalled": [], "apply": {},
            "verify": {}, "regenerate": {}, "regather": {}, "action": {}, "refused": None, "limit": None}


def record_of(state: FlowGraphState) -> dict[str, Any]:
    """A copy of the record to update (a node returns the whole record; flows run one state at a time)."""
    current = state.get("flow") or fresh()
    return {**fresh(), **current, "visits": dict(current.get("visits") or {}),
            "trace": list(current.get("trace") or []), "notes": list(current.get("notes") or []),
            "recalled": list(current.get("recalled") or [])}


def _plan_facts(plan: dict[str, Any] | None) -> dict[str, Any]:
    if not plan:
        return {"exists": False, "edits": [], "files": []}
    edits = plan.get("edits") or []
    return {"exists": True, "source": plan.get("source"), "recipe": plan.get("recipe"), "summary": plan.get("summary"),
            "edits": edits, "files": sorted({e["file"] for e in edits}), "data": plan.get("data") or {}}


def facts(state: FlowGraphState, record: dict[str, Any]) -> dict[str, Any]:
    """What a condition can name (conditions.ROOTS)."""
    item = state.get("item") or {}
    return {"item": {"id": item.get("id"), "title": item.get("title"), "data": item.get("data") or {},
                     "inputs": item.get("inputs") or {}},
            "inputs": state.get("inputs") or {}, "plan": _plan_facts(state.get("plan")),
            "apply": record["apply"], "verify": record["verify"], "regenerate": record["regenerate"],
            "regather": record["regather"],
            "action": record["action"], "steps": record["steps"], "visits": record["visits"],
            "notes": record["notes"], "recalled": record["recalled"]}
