"""The task-module contract's shared part: what every task subgraph starts from — check a plan's edits against
the repository and write an ItemResult (pending outcomes included), and a one-node subgraph for classes whose
whole job is checking and reporting a plan. Lives in the engine, so the engine never imports a task class."""

from __future__ import annotations

from typing import Any, Protocol

from planner.bundle.view import reader
from planner.chain.recipes import Decline
from planner.chain.work import Blocker, ItemResult, ItemStatus, WorkItem
from planner.patch.plan import EditError, Plan, apply_edits
from planner.run.context import RunContext
from planner.run.gates import paths
from planner.run.state import TaskState, WorkOutput


def pending_result(state: TaskState) -> ItemResult | None:
    """The result for an item that reached no plan (over budget, needs an LLM, or the chain failed)."""
    item = WorkItem.model_validate(state["item"])
    if state.get("plan"):
        return None
    pending = state.get("pending") or "failed"
    if pending == "over_budget":
        why = state.get("error") or "the item's must_read does not fit the budget"
        declined = [Decline.model_validate(d) for d in state.get("declined") or []]
        known = _known_facts(item) + [f"- not planned by a recipe: {d.reason}" for d in declined]
        facts = "".join(f"{line}\n" for line in known)
        blocker = Blocker(kind="over-budget", message=why, fix="narrow the TCCM's must_read or raise its budget")
        return ItemResult(item=item, status="over_budget", error=why, blockers=[blocker],
                          report=f"### {item.title}\n\n**Over budget:** {why}\n\n{facts}")
    if pending == "not_applicable":
        why = state.get("error") or "the task class has nothing to do here"
        return ItemResult(item=item, status="not_applicable", report=f"### {item.title}\n\nNot applicable: {why}\n",
                          notes=[why])
    declined = [Decline.model_validate(d) for d in state.get("declined") or []]
    if pending == "needs_llm" and declined:
        # A recipe knows why it cannot do this item: that is a blocker a person can act on (or a model can try,
        # once configured), not an unexplained gap. Only an item no recipe had a word for needs an LLM.
        blockers = [Blocker(kind="recipe-declined", file=d.file, line=d.line, message=d.reason,
                            fix="remove the cause, or configure a model (--model provider:name) to let an LLM plan it")
                    for d in declined]
        shown = "".join(f"- {d.file + ':' + str(d.line) + ': ' if d.file and d.line else ''}{d.reason}\n"
                        for d in declined)
        return ItemResult(item=item, status="blocked", report=f"### {item.title}\n\n**Blocked:**\n\n{shown}",
                          error="; ".join(d.reason for d in declined), prompt=state.get("prompt"), blockers=blockers)
    status: ItemStatus = "needs_llm" if pending == "needs_llm" else "failed"
    why = ("no recipe or solved example applies and no model is configured (--model or PLANNER_MODEL); "
           "the exact prompt is saved with the run") if status == "needs_llm" else pending
    return ItemResult(item=item, status=status, report=f"### {item.title}\n\n{why}\n", error=why,
                      prompt=state.get("prompt"))


def _known_facts(item: WorkItem) -> list[str]:
    """What the item's own data already says (a target, advisories), shown even when no plan was made."""
    data = item.data or {}
    lines = []
    if data.get("target"):
        lines.append(f"- target: {' '.join(str(x) for x in (data.get('package'), data['target']) if x)}")
    if data.get("installed"):
        lines.append(f"- installed: {', '.join(map(str, data['installed']))}")
    if data.get("advisories"):
        lines.append(f"- advisories: {', '.join(map(str, data['advisories']))}")
    return lines


def checked_result(state: TaskState) -> tuple[ItemResult, Plan | None]:
    """Apply the plan's edits in memory; a plan that no longer applies fails the item (nothing is written)."""
    pending = pending_result(state)
    if pending is not None:
        return pending, None
    item = WorkItem.model_validate(state["item"])
    plan = Plan.model_validate(state["plan"])
    refused = paths.refusals(state["repo"], paths.edit_files(plan.edits))
    if refused:  # a link or a path out of the repository: blocked, naming each file, never read or written
        result = ItemResult(item=item, status="blocked", source=plan.source, plan=plan.model_dump(),
                            report=f"### {item.title}\n\n{plan.summary}\n")
        paths.block(result, refused)
        return result, plan
    try:
        files = apply_edits(reader(state["repo"]), plan.edits)
    except EditError as exc:
        return ItemResult(item=item, status="failed", source=plan.source, plan=plan.model_dump(),
                          error=str(exc), report=f"### {item.title}\n\nThe plan does not apply: {exc}\n"), plan
    changed = any(before != after for before, after in files.values())
    return ItemResult(item=item, status="succeeded" if changed else "no_changes", source=plan.source,
                      plan=plan.model_dump(), edits=[e.model_dump() for e in plan.edits],
                      notes=list(plan.notes)), plan


def plan_markdown(item: WorkItem, plan: Plan) -> str:
    lines = [f"### {item.title}", "", plan.summary, ""]
    example = plan.data.get("example_run")
    shown = f"the solved example `{example}` (similarity {plan.data.get('score')})" if example else "a solved example"
    origin = {"recipe": f"recipe `{plan.recipe}`", "solved_example": shown,
              "llm": "hand (`planner runs answer`)" if plan.data.get("answered_by") else "the LLM"}
    lines.append(f"Planned by {origin.get(plan.source or '', 'unknown')}.")
    if plan.steps:
        lines += ["", *[f"{i}. {step}" for i, step in enumerate(plan.steps, 1)]]
    if plan.edits:
        lines += ["", "Files changed:", *sorted({f"- `{e.file}`" for e in plan.edits})]
    if plan.notes:
        lines += ["", "Notes:", *[f"- {note}" for note in plan.notes]]
    if plan.used_entries:
        lines += ["", "Context used: " + ", ".join(f"`{e}`" for e in plan.used_entries)]
    return "\n".join(lines) + "\n"


class Execute(Protocol):
    """A task class's one step, as the graph calls it (by keyword: `state=`)."""

    def __call__(self, state: TaskState) -> dict[str, Any]: ...


def single_step_graph(execute: Execute) -> Any:
    """A task subgraph with one node: for task classes whose whole job is checking and reporting a plan."""
    from langgraph.graph import END, START, StateGraph  # only where the graph is built: listing work needs none

    graph = StateGraph(TaskState, context_schema=RunContext, output_schema=WorkOutput)
    graph.add_node("execute", execute)
    graph.add_edge(START, "execute")
    graph.add_edge("execute", END)
    return graph.compile()
