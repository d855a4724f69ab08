"""Graph state. Everything here is JSON-able, so every checkpoint is plain data.

RunState is the supervisor's; WorkState is one work item's trip through the
chain and its task subgraph (fanned out with Send); TaskState is what a task
class's subgraph sees. List fields that several branches write to carry an
`operator.add` reducer, so parallel branches join instead of overwriting.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

Record = dict[str, Any]


# The statuses a work item can end with that need a person, worst first: a run takes the worst of its items'
# (supervisor.join), a fleet report orders its groups by it (portfolio/outcomes.py extends it).
SEVERITY = ("failed", "over_budget", "needs_llm", "blocked", "needs_regeneration")

class RunInputs(TypedDict, total=False):
    """What every level shares: the run's identity, inputs, TCCM and bundle (a Send carries these)."""

    run_id: str
    task_class: str
    repo: str
    inputs: dict[str, str]
    options: dict[str, Any]  # no_gather, verify, regenerate (+ regenerate_timeout), model (spec string), advisories
    tccm: Record  # the resolved TCCM (model_dump)
    bundle: Record  # the Context Bundle (model_dump), including its rendered text
    # a recipe class whose must_read does not fit: its recipes still run (they read whole files); only the
    # LLM, which needs what must_read promises, is refused (the item is then over_budget with this reason)
    budget_note: str


class WorkOutput(TypedDict, total=False):
    """What a work branch hands back to the supervisor."""

    results: Annotated[list[Record], operator.add]  # one ItemResult per work item
    stages: Annotated[list[Record], operator.add]  # chain stage outcomes, for provenance
    requests: Annotated[list[Record], operator.add]  # may_read requests and their outcomes
    llm_calls: Annotated[list[Record], operator.add]  # the cost ledger
    bundles: Annotated[list[Record], operator.add]  # per-item bundles (inputs narrowed), for provenance


class RunState(RunInputs, WorkOutput, total=False):
    repocontext: Record  # commit, gathered_at, freshness, mode
    hot_views: str  # what the hot views did for the run-level bundle ("unavailable (why)" when Redis failed)
    items: list[Record]  # work items (WorkItem.model_dump)
    per_item: list[str]  # set when the items were listed from the RepoContext: the inputs that scope each one
    note: str  # why a run has no work item, for the report
    coverage: Record  # what the run read (planner/advisories/source.py Coverage), for a class that says
    outcomes: list[Record]  # the joined results, in item order, after merging edits
    patch: str
    report: str
    verification: Record
    # running | succeeded | no_changes | not_applicable | not_evaluated | needs_regeneration | blocked
    # | needs_llm | over_budget | failed
    status: str
    exit_code: int  # for a run that failed before its items: the exit code of the error that stopped it
    error: str
    artifacts: dict[str, str]  # name → path under PLANNER_HOME/runs/<id>/


class WorkState(RunInputs, WorkOutput, total=False):
    item: Record
    plan: Record | None  # Plan.model_dump once a stage produced one
    pending: str  # why no plan yet (e.g. "needs_llm", "over_budget")
    error: str  # the error behind `pending` (e.g. the budget error naming the entries and sizes)
    over_budget: str  # the budget error of the item's bundle: recipes still run (uncapped bundle), no LLM is asked
    prompt: str  # the exact prompt the LLM stage sent, or would have sent
    declined: list[Record]  # Decline.model_dump per recipe that did not apply ("name@version: reason", file, line)


class TaskState(WorkState, total=False):
    """What a task class's subgraph reads and writes."""

    result: Record
