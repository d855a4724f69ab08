"""The embedded engine: a pool of local worker processes. No server needed.

Pool processes share the coordinator's PLANNER_HOME (SQLite in WAL mode takes concurrent
writers), so RepoContexts, runs and solved examples are shared directly, nothing is shipped.
A pool process that dies (killed, out of memory) breaks the pool: the jobs it had not
finished run again in a fresh pool, and the store records each repository once.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool

from planner.config import Settings
from planner.portfolio.model import Job, Result

POOL_RESTARTS = 3
OnResult = Callable[[Result], None]
OnStart = Callable[[Job, str | None], None]


def run_job(payload: str) -> str:
    """In a pool process: run one job against the shared PLANNER_HOME."""
    from planner.portfolio.execute import execute

    job = Job.model_validate_json(payload)
    return execute(job, Settings.from_env(), shipping=False).model_dump_json()


def _error(job: Job, message: str) -> Result:
    return Result(repo=job.repo, key=job.key, commit=job.commit, status="error", exit_code=5, error=message)


class LocalEngine:
    name = "local"

    def __init__(self, workers: int) -> None:
        self.workers = max(1, workers)

    def live(self, known: dict[str, str]) -> dict[str, str]:
        return {}  # a pool's jobs die with the coordinator that ran it: nothing is left running

    def run(self, jobs: list[Job], on_start: OnStart, on_result: OnResult,
            reattach: dict[str, str] | None = None) -> None:
        remaining = list(jobs)
        if not remaining:
            return
        for attempt in range(POOL_RESTARTS + 1):
            remaining = self._pool(remaining, on_start, on_result)
            if not remaining:
                return
            if attempt == POOL_RESTARTS:
                for job in remaining:
                    on_result(_error(job, f"a pool process died {POOL_RESTARTS + 1} times while running it"))

    def _pool(self, jobs: list[Job], on_start: OnStart, on_result: OnResult) -> list[Job]:
        """Run `jobs`; returns those left unfinished because the pool broke."""
        # spawn, not fork: the coordinator holds SQLite connections and threads a fork would copy
        context = multiprocessing.get_context("spawn")
        unfinished: list[Job] = []
        with ProcessPoolExecutor(max_workers=min(self.workers, len(jobs)), mp_context=context) as pool:
            futures: dict[Future[str], Job] = {}
            for job in jobs:
                futures[pool.submit(run_job, job.model_dump_json())] = job
                on_start(job, None)
            pending = set(futures)
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    job = futures[future]
                    try:
                        on_result(Result.model_validate_json(future.result()))
                    except BrokenProcessPool:
                        unfinished.append(job)
                    except Exception as exc:  # noqa: BLE001 - a bug in one run fails that repository only
                        on_result(_error(job, f"{exc.__class__.__name__}: {exc}"))
        return unfinished
