"""The last node of a flow: the item's result from where the flow ended.

A plan that applies is the item's result (the supervisor's policy gate still checks it); a flow
that ended on a failed test run fails the item; one whose last `regenerate` left a lockfile
unregenerated ends `needs_regeneration`, naming the command; one that hit `max_steps` is blocked,
naming the state it was in; a side-effect the policy refuses (not listed, or needing the network
the policy does not grant) blocks it, naming the rule — blocked, as the supervisor's gate blocks an
edit: nothing went wrong, the surface says no. Reflections stay out of the report and the patch.
"""

from __future__ import annotations

from typing import Any

from planner.chain.work import Blocker, ItemResult, WorkItem
from planner.patch.plan import Plan
from planner.run.flowgraph.facts import FlowGraphState, record_of
from planner.run.taskbase import checked_result, plan_markdown


def _refused(state: FlowGraphState, refused: dict[str, Any]) -> ItemResult:
    """Blocked before the side-effect ran; a plan made so far stays out of the patch (its edits are not
    the item's result), but the report shows it, so the refusal reads in context."""
    item = WorkItem.model_validate(state["item"])
    message = f"{refused['rule']}: {refused['message']}"
    where = f" in state `{refused['state']}`" if refused.get("state") else ""
    report = f"### {item.title}\n\n**Refused by the task class's policy{where}:** `{refused['rule']}`: " \
             f"{refused['message']}" + (f" ({refused['fix']})" if refused.get("fix") else "") + "\n"
    plan = state.get("plan")
    if plan:
        report += "\nThe plan so far (not in the patch):\n\n" + plan_markdown(item, Plan.model_validate(plan))
    return ItemResult(item=item, status="blocked", error=f"refused by policy: {message}", report=report,
                      blockers=[Blocker(kind="policy", message=message, fix=refused.get("fix"))])


def _settle(result: ItemResult, record: dict[str, Any]) -> None:
    tested = record.get("verify") or {}
    if result.status in ("succeeded", "no_changes") and tested.get("failed"):
        result.status = "failed"
        result.error = f"the tests failed on the last plan (`{tested.get('command')}`, exit {tested.get('exit_code')})"
        result.blockers.append(Blocker(kind="tests-failed", message=result.error, fix="fix the plan or the tests"))
    relocked = record.get("regenerate") or {}
    if result.status in ("succeeded", "no_changes") and relocked.get("blockers"):
        result.status = "needs_regeneration"  # the manifest edits stand; their lockfiles must be regenerated
        result.blockers += [Blocker.model_validate(b) for b in relocked["blockers"]]
    if record.get("limit") and result.status != "failed":
        result.status = "blocked"
        result.blockers.append(Blocker(kind="step-limit", message=record["limit"],
                                       fix="raise the flow's max_steps, or give the loop an earlier exit"))
        result.error = record["limit"]


def finish(state: FlowGraphState) -> dict[str, Any]:
    record = record_of(state)
    if record.get("refused"):
        result = _refused(state, record["refused"])
    elif not state.get("plan") and not state.get("pending"):  # e.g. a check-only flow of deterministic states
        item = WorkItem.model_validate(state["item"])
        result = ItemResult(item=item, status="no_changes", report=f"### {item.title}\n\nThe flow made no plan.\n")
        _settle(result, record)
    else:
        result, plan = checked_result(state)
        if plan is not None and result.status != "failed":
            result.report = plan_markdown(result.item, plan)
        _settle(result, record)
        if result.status in ("failed", "blocked") and result.error and plan is not None:
            result.report += f"\n**{result.status.capitalize()}:** {result.error}\n"
    result.report += f"\nFlow: {' → '.join(record['trace']) or '-'} ({record['steps']} steps)\n"
    return {"results": [result.model_dump()]}
