"""The coordinator's side of a result: record it once, adopt a shipped run, make the --apply branch."""

from __future__ import annotations

import subprocess
from pathlib import Path

from planner.config import Settings
from planner.errors import PlannerError
from planner.portfolio.model import Result, Shipped, Spec
from planner.portfolio.store import PortfolioStore


def adopt(settings: Settings, shipped: Shipped) -> None:
    """Make a worker's run show in this PLANNER_HOME (`planner runs`, `planner provenance`) like a local one."""
    from planner.store.provenance import ProvenanceRecord, ProvenanceStore
    from planner.store.runs import RunStore

    runs = RunStore(settings.home)
    run_id = str(shipped.row["id"])
    if not runs.adopt(shipped.row):
        return  # already here: a worker sharing this PLANNER_HOME, or a duplicate delivery
    for name, text in shipped.artifacts.items():
        runs.write_artifact(run_id, Path(name).name, text)
    provenance = ProvenanceStore(settings.home)
    if shipped.provenance and not provenance.exists(run_id):
        provenance.append(ProvenanceRecord.model_validate_json(shipped.provenance), runs)
    if shipped.examples:
        learn(settings, run_id, shipped)


def learn(settings: Settings, run_id: str, shipped: Shipped) -> None:
    """Solved examples a worker learned come home, so later runs from this coordinator reuse them."""
    from planner.patch.plan import Plan
    from planner.store.examples import SolvedExamples

    store = SolvedExamples(settings.home / "examples.sqlite")
    try:
        for example in shipped.examples:
            store.add(example["task_class"], example["fingerprint"], Plan.model_validate_json(example["plan"]),
                      example["patch"], run_id)
    finally:
        store.close()


def supersede(settings: Settings, result: Result) -> None:
    """An attempt of this job whose process died (a killed pool process) left an interrupted run here; the
    recorded run replaces it, so each repository shows one run, not one per attempt."""
    from planner.store.runs import RunStore

    runs = RunStore(settings.home)
    try:
        runs.supersede(result.key, str(result.run_id))
    finally:
        runs.close()


def branch_name(spec: Spec) -> str:
    return f"planner/{spec.task_class}/{spec.id}"


def _branch_exists(repo: Path, branch: str) -> bool:
    proc = subprocess.run(["git", "-C", str(repo), "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}"],
                          capture_output=True, text=True, check=False)
    return proc.returncode == 0


def apply(spec: Spec, result: Result, home: Path | None = None) -> Result:
    """Commit the patch on the portfolio's branch. One branch per portfolio and repository: an existing one
    is from an earlier attempt of this portfolio and is kept, never duplicated. Never touches the work tree."""
    from planner.run.apply import apply_patch
    from planner.store.runs import exact_patch

    if not (spec.apply and result.status == "succeeded" and result.patch) or result.branch:
        return result
    repo, branch = Path(result.repo), branch_name(spec)
    if _branch_exists(repo, branch):
        return result.model_copy(update={"branch": branch, "apply_error": None})
    try:
        # The recorded patch has secret values redacted; the run's exact copy is in `home` when it ran there.
        patch = exact_patch(home, result.run_id, result.patch) if home else result.patch
        apply_patch(repo, patch, branch, f"{spec.task_class}: portfolio {spec.id}, run {result.run_id}\n\n"
                    + result.report[:4000])
    except PlannerError as exc:
        return result.model_copy(update={"apply_error": exc.message})
    return result.model_copy(update={"branch": branch, "apply_error": None})


def record(settings: Settings, store: PortfolioStore, spec: Spec, result: Result) -> bool:
    """Record one result (once), adopt its run, then apply. False for a duplicate delivery (its run is not
    adopted either, so every repository shows exactly one run)."""
    if not store.record(spec.id, result):
        return False
    if result.shipped is not None:
        adopt(settings, result.shipped)
    if result.run_id:
        supersede(settings, result)
    applied = apply(spec, result, settings.home)
    if applied is not result:
        store.update_result(spec.id, applied)
    return True


def apply_pending(store: PortfolioStore, spec: Spec) -> None:
    """`resume`: recorded successes whose branch was not made yet (the coordinator stopped in between)."""
    for entry in store.entries(spec.id):
        if entry.result is not None and spec.apply and not entry.result.branch:
            applied = apply(spec, entry.result, store.home)
            if applied is not entry.result:
                store.update_result(spec.id, applied)
