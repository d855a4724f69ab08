"""The last nodes: verify the joined patch, then write report, artifacts, provenance, examples."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from planner.advisories.source import AdvisorySource
from planner.bundle.model import Bundle
from planner.bundle.view import reader
from planner.chain.work import ItemResult
from planner.patch import verify as verification
from planner.patch.plan import Edit, Plan, apply_edits
from planner.policy.enforce import check_side_effect, from_state
from planner.run.context import NodeRuntime
from planner.run.stages import fingerprint
from planner.run.state import RunState
from planner.run.supervisor import PATCHED
from planner.store.examples import SolvedExamples
from planner.store.provenance import ProvenanceRecord, ProvenanceStore, RepoContextRef, StageRecord, TCCMRef
from planner.store.runs import RunStore
from planner.store.telemetry import Telemetry, usage_rows
from repocontext.probes.conventions import verify_command
from repocontext.secrets import redact_tree
from repocontext.store import RepoContextStore


def _outcomes(state: RunState) -> list[ItemResult]:
    return [ItemResult.model_validate(r) for r in state.get("outcomes", [])]


def _test_command(runtime: NodeRuntime, repo: Path, ecosystems: set[str]) -> str | None:
    context: Mapping[str, Any] = RepoContextStore(runtime.context.settings.home).load_lazy(repo) or {}  # one section
    return verify_command(context.get("conventions") or {}, ecosystems)


def verify(state: RunState, runtime: NodeRuntime) -> dict[str, Any]:
    if not state["options"].get("verify") or not state.get("patch"):
        return {}
    repo = Path(state["repo"])
    refused = check_side_effect(from_state(state.get("tccm"), state["inputs"])[0], "verify")
    if refused:
        return {"verification": {"passed": None, "reason": f"refused by {refused.rule}: {refused.message}"}}
    patched = [r for r in _outcomes(state) if r.status in PATCHED]
    command = _test_command(runtime, repo, {str(r.item.data.get("ecosystem") or "") for r in patched})
    if not command:
        return {"verification": {"passed": None, "reason": "the repository declares no test command"}}
    edits = [Edit.model_validate(e) for r in patched for e in r.edits]
    files = {path: after for path, (_, after) in apply_edits(reader(state["repo"]), edits).items()}
    tests = sorted({t for r in _outcomes(state) for t in r.covering_tests})
    runtime.context.on_event("verify", {"command": command, "tests": tests})
    return {"verification": verification.run(repo, files, command, tests)}


def compose_report(state: RunState) -> str:
    outcomes, bundle = _outcomes(state), state.get("bundle") or {}
    title = {"succeeded": "", "no_changes": " (no changes needed)", "not_applicable": " (not applicable)",
             "needs_llm": " (needs an LLM)",
             "failed": " (failed)", "blocked": " (blocked)", "over_budget": " (over budget)",
             "needs_regeneration": " (lockfiles need regeneration)",
             "not_evaluated": " (not evaluated)"}.get(state.get("status", ""), "")
    lines = [f"# {state['task_class']}{title}", ""]
    if state.get("error"):
        lines += [f"**Error:** {state['error']}", ""]
    coverage = state.get("coverage") or {}
    if state.get("status") == "not_evaluated":
        lines += [f"**Not evaluated:** {coverage.get('reason')}.", ""]
    elif state.get("note") and not outcomes:
        lines += [f"Nothing to do: {state['note']}.", ""]
    lines += [r.report for r in outcomes]
    check = state.get("verification")
    if check:
        verdict = "passed" if check.get("passed") else "not run" if check.get("passed") is None else "FAILED"
        lines += ["## Verification", "", f"`{check.get('command', '-')}`: {verdict}. {check.get('reason', '')}", ""]
    totals = bundle.get("totals") or {}
    repo = state.get("repocontext") or {}
    lines += ["## Context", "",
              f"- TCCM `{state['task_class']}` v{(state.get('tccm') or {}).get('version', '?')}, bundle "
              f"{totals.get('tokens', 0)}/{totals.get('max_tokens', 0)} tokens, mode {bundle.get('mode', '-')}",
              f"- RepoContext {repo.get('commit') or 'none'} ({repo.get('freshness', 'none')})",
              *(f"- RepoContext note: {note}" for note in repo.get("skipped") or ()),
              *_coverage_lines(coverage),
              f"- Run `{state['run_id']}`: `planner provenance {state['run_id']}`", ""]
    if (state.get("options") or {}).get("no_sandbox"):
        lines[-1:-1] = ["- **Sandbox OFF** (`--no-sandbox`): recipe commands, verification and lockfile "
                        "regeneration ran with the operator's rights"]
    return "\n".join(lines)


def _coverage_lines(coverage: dict[str, Any]) -> list[str]:
    """The advisory source (and a stale snapshot's warning) and each file not evaluated, for the Context list."""
    if not coverage:
        return []
    source = AdvisorySource.model_validate(coverage["advisories"])
    lines = [f"- Advisories: {source.line()}"]
    if source.warning:
        lines.append(f"- **Warning:** {source.warning}")
    return lines + [f"- {line}" for line in coverage.get("not_evaluated") or ()]


def _record(state: RunState, runtime: NodeRuntime) -> ProvenanceRecord:
    bundle = Bundle.model_validate(state["bundle"])
    loaded = {r["entry"] for r in state.get("requests", []) if r.get("outcome") == "loaded"}
    entries = [e.model_copy(update={"status": "requested"}) if e.id in loaded else e for e in bundle.entries]
    tccm, repo = state["tccm"], state.get("repocontext") or {}
    return ProvenanceRecord(
        id=state["run_id"], kind="run", created_at=datetime.now(UTC).isoformat(timespec="microseconds"),
        task_class=state["task_class"],
        status=state.get("status", "failed"),
        tccm=TCCMRef(task_class=tccm["task_class"], path=tccm["path"], version=tccm["version"],
                     sha256=tccm["sha256"], chain=list(tccm.get("chain", []))),
        repocontext=RepoContextRef(repo=state["repo"], repo_id=repo.get("repo_id"), commit=repo.get("commit"),
                                   gathered_at=repo.get("gathered_at"), freshness=repo.get("freshness", "none"),
                                   dirty=repo.get("dirty")),
        # inputs redacted: a secret-looking value passed in (and refused in a patch) is not kept in the record
        mode=bundle.mode, inputs=redact_tree(dict(sorted(state["inputs"].items()))), entries=entries,
        totals=bundle.totals,
        bundle_sha256=bundle.sha256, stages=[StageRecord(**s) for s in state.get("stages", [])],
        requests=list(state.get("requests", [])), llm_calls=list(state.get("llm_calls", [])),
        item_bundles=sorted(state.get("bundles", []), key=lambda b: b["item"]), hot_views=_hot_views(state),
        sandbox=_sandbox(state),
    )


def _sandbox(state: RunState) -> str:
    return "none (--no-sandbox)" if (state.get("options") or {}).get("no_sandbox") else "bwrap"


def _hot_views(state: RunState) -> str | None:
    """The run's hot-view status: the run-level bundle's, plus any item bundle's Redis failure (a run must
    show that it ran degraded, not `null` as if hot views were off)."""
    status = state.get("hot_views")
    failed = sorted({b["hot_views"] for b in state.get("bundles", []) if "unavailable" in (b.get("hot_views") or "")})
    if failed:
        status = f"{status or 'not used'}; item bundles: {', '.join(failed)}"
    return status


def _write_back(state: RunState, runtime: NodeRuntime) -> None:
    if not state.get("bundle"):
        return
    bundle = Bundle.model_validate(state["bundle"])
    store = SolvedExamples(runtime.context.settings.home / "examples.sqlite")
    try:
        for result in _outcomes(state):
            if result.status == "succeeded" and result.plan:
                store.add(state["task_class"], fingerprint(state["task_class"], result.item, bundle),
                          Plan.model_validate(result.plan), state.get("patch", ""), state["run_id"])
    finally:
        store.close()


def finalize(state: RunState, runtime: NodeRuntime) -> dict[str, Any]:
    runs = RunStore(runtime.context.settings.home)
    run_id, report = state["run_id"], compose_report(state)
    artifacts = {"report": str(runs.write_artifact(run_id, "report.md", report))}
    if state.get("patch"):
        artifacts["patch"] = str(runs.write_artifact(run_id, "patch.diff", state["patch"]))
        exact = runs.write_exact_patch(run_id, state["patch"])
        if exact is not None:
            artifacts["patch_exact"] = str(exact)
    for result in _outcomes(state):
        if result.prompt:
            artifacts[f"prompt:{result.item.id}"] = str(runs.write_artifact(
                run_id, f"prompt-{result.item.id.replace('/', '_')}.md", result.prompt))
    ledger = list(state.get("llm_calls", []))
    ledger_text = json.dumps(redact_tree(ledger), indent=2) + "\n"  # redacted before encoding, as examples are
    artifacts["ledger"] = str(runs.write_artifact(run_id, "ledger.json", ledger_text))
    provenance = ProvenanceStore(runtime.context.settings.home)
    if state.get("bundle") and state.get("tccm") and not provenance.exists(run_id):  # idempotent on resume
        provenance.append(_record(state, runtime), runs)
    if state.get("status") == "succeeded":
        _write_back(state, runtime)
    if state.get("bundle") and state.get("status") not in ("needs_llm", "running", None):
        telemetry = Telemetry(runtime.context.settings.home)
        try:
            telemetry.record(usage_rows({**state, "run_id": run_id}))
        finally:
            telemetry.close()
    runs.set_status(run_id, state.get("status", "failed"))
    return {"report": report, "artifacts": artifacts}
