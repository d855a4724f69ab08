"""Run one portfolio job in this process (a pool process or a Celery worker)."""

from __future__ import annotations

import os
import socket
import time
from functools import lru_cache
from pathlib import Path
from typing import Any, TypedDict

from planner.config import Settings
from planner.errors import ExitCode, PlannerError
from planner.portfolio.model import Job, Result, Shipped

ADVISORY_RECHECK_S = 30.0  # a worker re-checks its advisory sources for changes at most this often


def options_for(job: Job) -> dict[str, Any]:
    # portfolio_key names the job in the run's options, so a rerun can supersede a killed attempt's run
    return {"no_gather": False, "verify": False, "regenerate": False,
            "advisories": os.pathsep.join(job.advisories) or None, "portfolio": job.portfolio_id,
            "portfolio_key": job.key}


@lru_cache(maxsize=4)
def chat_model(spec: str) -> Any:
    """The worker's LLM (PLANNER_MODEL), made once per process: a worker runs many repositories."""
    from planner.chain.llm import init_model

    return init_model(spec)


def summarize(state: dict[str, Any]) -> dict[str, Any]:
    """Findings and versions chosen, from the run's work items (whatever the task class puts in data), and each
    item's outcome with the columns its TCCM's `report:` declares."""
    from planner.advisories.source import AdvisorySource
    from planner.portfolio.outcomes import coverage_rows, item_rows

    outcomes = state.get("outcomes") or []
    findings = sum(len((o["item"].get("data") or {}).get("findings") or []) for o in outcomes)
    versions = {str(data["package"]): str(data["target"]) for o in outcomes
                if (data := o["item"].get("data") or {}).get("package") and data.get("target")}
    columns = ((state.get("tccm") or {}).get("report") or {}).get("columns") or []
    prompts = {k.removeprefix("prompt:"): v for k, v in (state.get("artifacts") or {}).items()
               if k.startswith("prompt:")}
    coverage = state.get("coverage") or {}
    source = AdvisorySource.model_validate(coverage["advisories"]).line() if coverage.get("advisories") else None
    return {"findings": findings, "items": len(outcomes), "versions": versions, "advisories": source,
            "items_detail": item_rows(outcomes, columns, prompts) + coverage_rows(coverage, str(state.get("status")))}


def ship(settings: Settings, run_id: str) -> Shipped:
    """Everything the coordinator needs to show this run: its row, artifacts, provenance and examples."""
    from planner.store.runs import EXACT_PATCH, RunStore

    runs = RunStore(settings.home)
    folder = runs.artifacts(run_id)
    # The exact patch stays on the worker (0600): it holds what the shown copies redact.
    artifacts = {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*"))
                 if p.is_file() and p.name != EXACT_PATCH}
    record = settings.home / "runs" / f"{run_id}.json"
    return Shipped(row=runs.get(run_id), artifacts=artifacts,
                   provenance=record.read_text(encoding="utf-8") if record.is_file() else None,
                   examples=examples_of(settings.home, run_id))


def examples_of(home: Path, run_id: str) -> list[dict[str, Any]]:
    from planner.store.examples import SolvedExamples

    store = SolvedExamples(home / "examples.sqlite")
    try:
        rows = store.db.execute("SELECT task_class, fingerprint, plan, patch FROM examples WHERE run_id = ?",
                                (run_id,)).fetchall()
    finally:
        store.close()
    return [{"task_class": t, "fingerprint": f, "plan": p, "patch": patch} for t, f, p, patch in rows]


class _Base(TypedDict):
    """What every Result of one job starts from."""

    repo: str
    key: str
    commit: str | None
    worker: str


def execute(job: Job, settings: Settings, shipping: bool) -> Result:
    """Dispatch the job's task class on its repository. `shipping`: the worker's PLANNER_HOME is not the
    coordinator's, so the run's records travel back in the result."""
    from planner.run.dispatch import EXIT, dispatch  # the graph stack, only in processes that run
    from repocontext.osv.load import hold_fingerprints

    hold_fingerprints(ADVISORY_RECHECK_S)
    started = time.monotonic()
    base = _Base(repo=job.repo, key=job.key, commit=job.commit, worker=f"{socket.gethostname()}:{os.getpid()}")
    try:
        model = chat_model(settings.model) if settings.model else None
        state = dispatch(settings, job.task_class, Path(job.repo), job.inputs, options_for(job), model,
                         settings.model)
    except PlannerError as exc:
        return Result(**base, status="error", exit_code=int(exc.exit_code), error=exc.message,
                      seconds=round(time.monotonic() - started, 3))
    status = str(state.get("status") or "failed")
    return Result(**base, status=status, exit_code=int(state.get("exit_code") or EXIT.get(status, ExitCode.FAILED)),
                  run_id=state.get("run_id"), error=state.get("error"), patch=state.get("patch") or "",
                  report=state.get("report") or "", **summarize(state), seconds=round(time.monotonic() - started, 3),
                  shipped=ship(settings, state["run_id"]) if shipping and state.get("run_id") else None)
