"""The generic subgraph: runs any task class that exists only as a TCCM (with `worker` instructions).

One work item for the whole task; the plan comes from the chain (recipes, solved
examples, then the LLM guided by the TCCM's `worker` text); this graph checks that
its edits apply and writes the item's result and report section. A flow's
`regenerate` side-effect is `regenerate` here (subgraphs/relock.py).
"""

from __future__ import annotations

from typing import Any

from planner.bundle.model import Bundle
from planner.chain.work import WorkItem
from planner.run.state import TaskState
from planner.run.taskbase import checked_result, plan_markdown, single_step_graph
from subgraphs.relock import regenerate

__all__ = ["build_graph", "execute", "regenerate", "split_work"]


def split_work(bundle: Bundle, inputs: dict[str, str]) -> list[WorkItem]:
    return [WorkItem(id="task", title=f"{bundle.task_class}", data={"inputs": dict(sorted(inputs.items()))})]


def execute(state: TaskState) -> dict[str, Any]:
    result, plan = checked_result(state)
    if plan is not None and result.status != "failed":
        result.report = plan_markdown(result.item, plan)
    return {"results": [result.model_dump()]}


def build_graph() -> Any:
    return single_step_graph(execute)
