"""The distroless-migration subgraph: check the plan's edit → write the per-Dockerfile report."""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph

from planner.context import RunContext
from planner.plan import Plan
from planner.state import TaskState, WorkOutput
from subgraphs.base import checked_result, plan_markdown
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
    graph = StateGraph(TaskState, context_schema=RunContext, output_schema=WorkOutput)
    graph.add_node("execute", execute)
    graph.add_edge(START, "execute")
    graph.add_edge("execute", END)
    return graph.compile()


__all__ = ["Plan", "build_graph"]
