"""The distroless-migration subgraph: check the plan's edit → write the per-Dockerfile report."""

from __future__ import annotations

from typing import Any

from planner.state import TaskState
from subgraphs.base import checked_result, plan_markdown, single_step_graph
from subgraphs.distroless_migration.models import DockerfileMigration


def execute(state: TaskState) -> dict[str, Any]:
    result, plan = checked_result(state)
    if plan is not None and result.status != "failed":
        migration = (plan.data or {}).get("migration")
        result.report = (DockerfileMigration.model_validate(migration).report_markdown() if migration
                         else plan_markdown(result.item, plan))
        if result.status == "no_changes" and migration:
            result.report += "\nAlready on Chainguard images: nothing to change.\n"
    return {"results": [result.model_dump()]}


def build_graph() -> Any:
    return single_step_graph(execute)

