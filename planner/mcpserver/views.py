"""The shapes the MCP tools answer with, built from the engine's models (plain JSON-able dicts)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from planner.queries import tccm_summary

if TYPE_CHECKING:
    from planner.bundle.model import Bundle
    from planner.store.provenance import ProvenanceRecord
    from planner.tccm.model import TCCM
    from planner.tccm.registry import Registry


def class_row(registry: Registry, name: str) -> dict[str, Any]:
    """One task class for list_task_classes: what `task-classes list --json` says, plus inputs and recipes."""
    errors = registry.errors_for(name)
    if errors:
        return {"name": name, "valid": False, "errors": [str(e) for e in errors]}
    tccm = registry.get(name)
    summary = tccm_summary(tccm)
    return {"name": name, "valid": True, "version": tccm.version, "description": summary["description"],
            "summary": summary["description"].split(". ")[0], "path": tccm.path, "extends": tccm.extends,
            "inputs": {k: v.model_dump(exclude_none=True) for k, v in sorted(tccm.accepted_inputs().items())},
            "budget": summary["budget"], **_recipes(tccm), "has_flow": tccm.flow is not None,
            "flow": summary["flow"], "has_policy": tccm.policy is not None, "policy": summary["policy"]}


def _recipes(tccm: TCCM) -> dict[str, Any]:
    """recipes and has_recipes; a subgraph module that cannot be loaded is named, for this class only."""
    from planner.errors import PlannerError

    try:
        found = recipes(tccm)
    except PlannerError as exc:
        return {"recipes": None, "has_recipes": None, "recipes_error": exc.message}
    return {"recipes": found, "has_recipes": bool(found)}


def recipes(tccm: TCCM) -> list[str]:
    """The class's recipes (`name@version`): those its TCCM declares (`recipes:`), then its subgraph module's
    (imported here, on request only)."""
    from planner.run.taskmodule import resolve

    module = resolve(tccm.task_class, tccm.subgraph, tccm.lineage)
    return [*(recipe.id for recipe in tccm.recipes), *(recipe.ref for recipe in module.recipes)]


def bundle_result(bundle: Bundle, record: ProvenanceRecord) -> dict[str, Any]:
    """get_agent_context's answer: the rendered bundle, its size, and each entry's fate."""
    return {"bundle_id": record.id, "context_markdown": bundle.text, "tokens_estimated": bundle.totals.tokens,
            "budget": bundle.totals.model_dump(), "mode": bundle.mode, "task_class": bundle.task_class,
            "repocontext": record.repocontext.model_dump(), "hot_views": record.hot_views,
            "entries": [{"id": e.id, "band": e.band, "status": e.status, "tokens": e.tokens,
                         "tokens_needed": e.tokens_needed, "reason": e.reason, "detail": e.detail}
                        for e in bundle.entries]}
