"""The coordinator: create a portfolio, hand its unfinished repositories to an engine, record results."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from planner import service
from planner.config import Settings
from planner.errors import EnvironmentProblem, PlannerError
from planner.inputs import check_inputs, check_sources
from planner.portfolio import collect, repos
from planner.portfolio.broker import BrokerDown, broker_url
from planner.portfolio.model import Engine, Entry, Job, Result, Spec, run_key
from planner.portfolio.store import PortfolioStore

Events = Callable[[str, dict[str, Any]], None]


class Runner(Protocol):
    name: str

    def live(self, known: dict[str, str]) -> dict[str, str]: ...

    def run(self, jobs: list[Job], on_start: Callable[[Job, str | None], None],
            on_result: Callable[[Result], None], reattach: dict[str, str] | None = None) -> None: ...


def engine_name(given: str | None) -> Engine:
    name = (given or os.environ.get("PLANNER_ENGINE") or "local").strip().lower()
    if name == "local":
        return "local"
    if name == "celery":
        return "celery"
    raise PlannerError(f"engine {name!r}: expected local or celery")


def make_runner(engine: Engine, workers: int, broker: str | None) -> Runner:
    if engine == "local":
        from planner.portfolio.engine_local import LocalEngine

        return LocalEngine(workers)
    from planner.extras import require

    require("portfolio", "the celery engine")
    from planner.portfolio.engine_celery import CeleryEngine

    return CeleryEngine(broker_url(broker))


def create(settings: Settings, task_class: str, source: Path, inputs: dict[str, str], advisories: list[str],
           apply: bool, engine: Engine, workers: int) -> Spec:
    from planner.store.provenance import new_id

    tccm = service.task_class(settings, task_class)  # an unknown task class fails before anything is recorded
    check_inputs(tccm, inputs)  # and so do an input it does not accept and a source that is not there
    check_sources(os.pathsep.join(advisories))
    found = repos.discover(source)
    spec = Spec(id=f"pf-{new_id()}", task_class=task_class, tccm_sha256=tccm.sha256, inputs=inputs,
                advisories=advisories, apply=apply, engine=engine, workers=workers, repos_source=str(source))
    entries = []
    for position, repo in enumerate(found):
        commit = repos.head(repo)
        entries.append(Entry(repo=str(repo), position=position, commit=commit,
                             key=run_key(spec.id, str(repo), commit, spec.tccm_sha256, inputs, advisories)))
    store = PortfolioStore(settings.home)
    try:
        store.create(spec, entries)
    finally:
        store.close()
    return spec


def jobs_for(spec: Spec, entries: list[Entry]) -> list[Job]:
    return [Job(portfolio_id=spec.id, repo=e.repo, task_class=spec.task_class, inputs=spec.inputs,
                advisories=spec.advisories, commit=e.commit, key=e.key) for e in entries if e.result is None]


def run(settings: Settings, spec: Spec, runner: Runner, on_event: Events) -> None:
    """Run every repository without a recorded result. Pauses (and raises) when the broker goes away."""
    store = PortfolioStore(settings.home)
    try:
        collect.apply_pending(store, spec)
        entries = store.entries(spec.id)
        jobs = jobs_for(spec, entries)
        # resume: a job sent before that is still queued, held by a worker or finished in the backend is
        # waited for, never sent twice
        live = runner.live({e.key: e.task_id for e in entries if e.result is None and e.task_id})
        store.set_state(spec.id, "running")
        on_event("start", {"id": spec.id, "jobs": len(jobs), "engine": runner.name, "reattached": len(live)})

        def started(job: Job, task_id: str | None) -> None:
            store.mark(spec.id, job.repo, "queued", task_id)

        def finished(result: Result) -> None:
            recorded = collect.record(settings, store, spec, result)
            on_event("result" if recorded else "duplicate", {"repo": result.repo, "status": result.status})

        try:
            runner.run(jobs, started, finished, live)
        except BrokerDown as exc:
            store.set_state(spec.id, "paused", str(exc))
            raise EnvironmentProblem(f"{exc}; portfolio {spec.id} paused — `planner portfolio resume {spec.id}` "
                                     "continues it") from None
        except KeyboardInterrupt:
            store.set_state(spec.id, "paused", "interrupted")
            raise
        left = sum(1 for e in store.entries(spec.id) if e.result is None)
        store.set_state(spec.id, "finished" if not left else "paused",
                        None if not left else f"{left} repositories without a result")
    finally:
        store.close()
