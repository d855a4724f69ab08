"""`planner worker`: serve portfolio runs from a Celery broker (PLANNER_BROKER_URL)."""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer

from planner.errors import EnvironmentProblem


def worker_command(
    broker: Annotated[str | None, typer.Option(help="Broker URL, e.g. redis://host:6379/1 "
                                                    "(or PLANNER_BROKER_URL).")] = None,
    concurrency: Annotated[int, typer.Option(help="Runs at a time in this worker.")] = 1,
    pool: Annotated[str, typer.Option(help="Celery pool: prefork (default) or solo.")] = "prefork",
    loglevel: Annotated[str, typer.Option(help="Celery log level.")] = "WARNING",
    allow_class: Annotated[list[str] | None, typer.Option(
        "--allow-class", help="A task class this worker runs (repeatable; else PLANNER_WORKER_CLASSES, "
        "comma-separated, else every class on its task-class path at start-up). Jobs of others fail unrun.")] = None,
    root: Annotated[list[str] | None, typer.Option(
        "--root", help="A directory whose repositories this worker runs (repeatable; else PLANNER_REPO_ROOTS, "
        "else the working directory). Jobs on others fail unrun.")] = None,
) -> None:
    """Run portfolio jobs from the broker in this machine's PLANNER_HOME; each run's records go back to the
    coordinator. Any number of workers, on any machine that sees the broker and the repositories. A worker
    runs only the task classes and repositories it allows (--allow-class, --root)."""
    from planner.config import Settings
    from planner.extras import require
    from planner.portfolio.admission import Admission
    from planner.portfolio.broker import broker_url

    require("portfolio", "planner worker")
    from planner.portfolio.engine_celery import make_app

    url = broker_url(broker)
    admission = Admission.choose(Settings.from_env(), allow_class, root)
    admission.export()  # the pool processes read it from the environment
    sys.stderr.write(f"planner worker: runs {admission.describe()}\n")
    try:
        import planner.run.dispatch  # the graph stack, imported once before the pool forks
        import planner.run.graph  # noqa: F401 - (dispatch imports it only for a run with work)
    except ImportError as exc:
        raise EnvironmentProblem(f"cannot load the planner graph: {exc}") from None
    app = make_app(url)
    # Unique per process, so two workers on one host are two consumers; no gossip/mingle: nothing uses them.
    app.worker_main(["worker", f"--concurrency={max(1, concurrency)}", f"--pool={pool}", f"--loglevel={loglevel}",
                     f"--hostname=planner-{os.getpid()}@%h", "--without-gossip", "--without-mingle"])
