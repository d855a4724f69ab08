"""The distroless-migration subgraph: check the plan's edit → set the item's status → write its report.

What the migration could not convert (`DockerfileMigration.blockers`) makes the item `blocked`, one
Blocker per problem (the supervisor then keeps its edits out of the patch), unless the user passed
keep_unconverted=true: then the item keeps its status (the commands stay as written under TODO comments,
nothing is dropped) and each one is listed in the item's notes. A build check the written file fails
(`DockerfileMigration.checks`, verify.py) blocks the item in every case: it would not build."""

from __future__ import annotations

from typing import Any

from planner.chain.work import Blocker, ItemResult
from planner.run.state import TaskState
from planner.run.taskbase import checked_result, plan_markdown, single_step_graph
from subgraphs.distroless_migration import report
from subgraphs.distroless_migration.models import DockerfileMigration


def _settle(result: ItemResult, migration: DockerfileMigration) -> None:
    found = [Blocker(kind=b.kind, file=b.file, line=b.line, message=b.message, fix=b.fix) for b in migration.blockers]
    failed = [Blocker(kind=b.kind, file=b.file, line=b.line, message=b.message, fix=b.fix) for b in migration.checks]
    if migration.blocked:
        result.status = "blocked"
        result.blockers = failed + (found if not migration.keep_unconverted else [])
        if migration.keep_unconverted:
            result.notes += [f"kept unconverted ({b.kind}) at {b.where}: {b.message}; fix: {b.fix}" for b in found]
    else:
        result.notes += [f"kept unconverted ({b.kind}) at {b.where}: {b.message}; fix: {b.fix}" for b in found]
        if found:  # the build checks skip the RUNs under those TODOs: say what that means
            result.notes.append("keep_unconverted=true: the Dockerfile does not build as written until each "
                                "TODO(planner) above is resolved")


def execute(state: TaskState) -> dict[str, Any]:
    result, plan = checked_result(state)
    if plan is not None and result.status != "failed":
        raw = (plan.data or {}).get("migration")
        if raw:
            migration = DockerfileMigration.model_validate(raw)
            _settle(result, migration)
            result.report = report.render(migration, result.status)
            if result.status == "no_changes":
                result.report += "\nAlready on Chainguard images: nothing to change.\n"
        else:
            result.report = plan_markdown(result.item, plan)
    return {"results": [result.model_dump()]}


def build_graph() -> Any:
    return single_step_graph(execute)
