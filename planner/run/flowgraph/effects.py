"""Side-effect states: named, allow-listed deterministic steps, each checked against the policy first.

- apply: the plan's edits applied in memory and checked against the policy (a flow can branch on
  `apply.failed` and send the plan back to an action, naming the rule);
- verify: the repo's test command on the patched tree, in a throwaway copy, in the sandbox
  (planner/patch/verify.py); only under --verify (the run's `verify` option), else "not run";
- regenerate: the lockfiles of the manifests the plan edits, rewritten by their own tools in a
  throwaway copy, in the sandbox (the task module's regenerate, subgraphs/relock.py by default); the plan
  then holds the regenerated files; only under --regenerate, else each lockfile is a blocker naming its
  command (the item ends needs_regeneration);
- regather: a fresh RepoContext for the repository.
A side-effect the policy does not allow — or one that needs the network (regenerate) under a policy
without `network: true` — blocks the item with a blocker naming the rule; it is never skipped quietly.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from planner import service
from planner.bundle.view import reader
from planner.errors import PlannerError
from planner.flow.model import END
from planner.patch import verify as verification
from planner.patch.plan import Edit, EditError, Plan, apply_edits
from planner.policy import kinds
from planner.policy.enforce import check_edits, check_side_effect, from_state
from planner.run.flowgraph.states import Step, Visit
from planner.run.taskmodule import REGENERATE_TIMEOUT_S, for_tccm
from repocontext.probes.conventions import verify_command
from repocontext.store import RepoContextStore, StoreError


def _context(visit: Visit) -> Any:
    try:
        return RepoContextStore(visit.runtime.context.settings.home).load_lazy(Path(visit.state["repo"]))
    except StoreError:
        return None


def _patched(visit: Visit) -> dict[str, str]:
    """path → text with the current plan applied (raises EditError)."""
    edits = [Edit.model_validate(e) for e in (visit.state.get("plan") or {}).get("edits") or []]
    return {path: after for path, (_, after) in apply_edits(reader(visit.state["repo"]), edits).items()}


def apply(visit: Visit) -> dict[str, Any]:
    plan = visit.state.get("plan")
    if not plan:
        return {"ran": False, "ok": False, "failed": True, "error": "there is no plan to apply"}
    try:
        files = _patched(visit)
    except EditError as exc:
        return {"ran": True, "ok": False, "failed": True, "error": str(exc)}
    policy, _ = from_state(visit.state.get("tccm"), visit.state.get("inputs") or {})
    found = check_edits(policy, plan.get("edits") or [], visit.state["item"], kinds.facts(_context(visit))) \
        if policy else []
    if found:
        error = "; ".join(f"{v.rule}: {v.message}" for v in found)
        return {"ran": True, "ok": False, "failed": True, "error": error, "refused": sorted({v.rule for v in found})}
    return {"ran": True, "ok": True, "failed": False, "error": "", "files": sorted(files)}


def _option(visit: Visit, name: str) -> bool:
    return bool((visit.state.get("options") or {}).get(name))


def verify(visit: Visit) -> dict[str, Any]:
    if not _option(visit, "verify"):  # a side effect runs only when its flag asked for it, whoever dispatched
        return {"ran": False, "passed": None, "failed": False,
                "reason": "not run: pass --verify to run the repository's tests (sandboxed, no network)"}
    context = _context(visit) or {}
    command = verify_command(context.get("conventions") or {}, [str(visit.item.data.get("ecosystem") or "")])
    if not command:
        return {"ran": False, "passed": None, "failed": False, "reason": "the repository declares no test command"}
    try:
        files = _patched(visit)
    except EditError as exc:
        return {"ran": False, "passed": None, "failed": True, "reason": f"the plan does not apply: {exc}"}
    visit.runtime.context.on_event("verify", {"command": command, "tests": [], "item": visit.item.id})
    result = verification.run(Path(visit.state["repo"]), files, command, [])
    if result.get("refused"):
        return {"ran": False, "passed": None, "failed": True, "reason": result["output_tail"]}
    if result["passed"] is None:  # it never reached the tests (no network, not installed): said, not blamed
        return {"ran": False, "passed": None, "failed": False, "command": result["command"],
                "reason": result.get("reason") or result["output_tail"]}
    return {"ran": True, "passed": result["passed"], "failed": not result["passed"], "command": result["command"],
            "exit_code": result["exit_code"], "seconds": result["seconds"], "output": result["output_tail"][-2000:]}


def regenerate(visit: Visit) -> dict[str, Any]:
    plan = visit.state.get("plan")
    if not plan:
        return {"ran": False, "ok": False, "failed": True, "error": "there is no plan whose lockfiles to regenerate"}
    try:
        _patched(visit)
    except EditError as exc:
        return {"ran": False, "ok": False, "failed": True, "error": f"the plan does not apply: {exc}"}
    timeout = float((visit.state.get("options") or {}).get("regenerate_timeout") or REGENERATE_TIMEOUT_S)
    # how to regenerate is the task class's to say (its module, else the generic one): asked through the contract;
    # without --regenerate nothing runs, and the lockfiles become blockers naming their commands
    return for_tccm(visit.state["tccm"]).regenerate(Path(visit.state["repo"]), Plan.model_validate(plan),
                                                    visit.item.data, timeout, execute=_option(visit, "regenerate"))


def regather(visit: Visit) -> dict[str, Any]:
    try:
        context, _ = service.gather_repo(visit.runtime.context.settings, Path(visit.state["repo"]), warm=False)
    except PlannerError as exc:
        return {"ran": False, "error": exc.message}
    return {"ran": True, "commit": context.meta.commit}


EFFECTS = {"apply": apply, "verify": verify, "regenerate": regenerate, "regather": regather}


def _summary(effect: str, outcome: dict[str, Any]) -> str:
    if not outcome.get("ran") and str(outcome.get("reason") or "").startswith("not run"):
        return "not run"
    if effect == "verify":
        return "passed" if outcome.get("passed") else "failed" if outcome.get("failed") else "not run"
    if effect == "apply" or (effect == "regenerate" and not outcome.get("failed")):
        return ("ok" if outcome.get("ran") else "not needed") if outcome.get("ok") else "failed"
    return "done" if outcome.get("ran") and not outcome.get("failed") else "failed"


def side_effect(visit: Visit) -> Step:
    effect = visit.spec.effect or ""
    policy, _ = from_state(visit.state.get("tccm"), visit.state.get("inputs") or {})
    refused = check_side_effect(policy, effect)  # the side-effects it lists, and the network it grants
    if refused:
        visit.record["refused"] = {**refused.model_dump(), "effect": effect, "state": visit.name}
        return Step(END, "refused", f"{refused.rule}: {refused.message}")
    outcome = EFFECTS[effect](visit)
    update = {"plan": outcome.pop("plan")} if "plan" in outcome else {}  # regenerate rewrites the plan
    visit.record[effect] = outcome
    target, why = visit.route()
    detail = outcome.get("error") or outcome.get("reason") or outcome.get("command") or ""
    if effect == "regenerate" and outcome.get("files") and not detail:
        detail = "regenerated " + ", ".join(outcome["files"])
    reason = "; ".join(x for x in (f"{effect}: {detail}".rstrip(": "), why) if x)
    return Step(target, _summary(effect, outcome), reason, update)
