"""Celery portfolios across time, against a real redis-server and real `planner worker` processes: a fix one
worker learned is reused by the other, and `resume` never re-sends a job the broker still holds."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from celery_helpers import REDIS, Worker, broker_url, flush, queued
from conftest import commit_all, git, run_cli
from portfolio_helpers import ADVISORIES, make_fleet
from test_dispatch_generic import PLAN, README_TITLE

from planner.portfolio.store import PortfolioStore
from planner.store.examples import SolvedExamples

pytestmark = pytest.mark.skipif(not REDIS, reason="PLANNER_TEST_REDIS_URL not set (.ci/run starts a redis-server)")

FILES = {"README.md": "# old title\n\nSome text.\n", "pyproject.toml": "[project]\nname = 'widget'\n"}


@pytest.fixture
def broker() -> Iterator[str]:
    flush()
    try:
        yield broker_url()
    finally:
        flush()


@pytest.fixture
def started(tmp_path: Path) -> Iterator[Callable[..., Worker]]:
    """start(name, plan=None) → a ready worker with its own PLANNER_HOME; every one is stopped at the end."""
    running: list[Worker] = []

    def start(name: str, plan: dict | None = None) -> Worker:
        worker = Worker(tmp_path / f"{name}-home", tmp_path / f"{name}.log", plan=plan)
        running.append(worker)
        worker.wait_ready()
        return worker

    try:
        yield start
    finally:
        for worker in running:
            worker.stop()


def _readme_repo(base: Path, name: str) -> Path:
    folder = base / name
    repo = folder / "repo"
    repo.mkdir(parents=True)
    for rel, text in FILES.items():
        (repo / rel).write_text(text)
    git(repo, "init", "-q", "-b", "main")
    commit_all(repo, "initial")
    return folder


def _dispatch(task_class: str, repos: Path, *extra: str) -> dict:
    proc = run_cli("portfolio", "dispatch", task_class, "--repos", str(repos), "--engine", "celery", "--json",
                   *extra, env={"PLANNER_BROKER_URL": broker_url()})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_a_fix_learned_on_one_worker_is_reused_by_the_other(
        home: Path, tmp_path: Path, tccm_dir: Callable[..., Path], broker: str,
        started: Callable[..., Worker]) -> None:
    tccm_dir({"readme-title": README_TITLE})  # for the coordinator and, through the environment, the workers
    learner = started("learner", plan=PLAN)  # the only process with an LLM (a fake one)
    first = _dispatch("readme-title", _readme_repo(tmp_path, "first"))
    [row] = first["repositories"]
    assert row["status"] == "succeeded" and "+# widget" in row["patch"]
    learned = run_cli("provenance", row["run_id"], "--json")
    assert [s["outcome"] for s in json.loads(learned.stdout)["stages"]][-1] == "planned"  # by the LLM
    learner.stop()

    reuser = started("reuser")  # no model at all, its own PLANNER_HOME: it can only reuse what was shared
    second = _dispatch("readme-title", _readme_repo(tmp_path, "second"))
    [again] = second["repositories"]
    assert again["status"] == "succeeded" and again["patch"].endswith(row["patch"].split("\n", 2)[2])
    stages = json.loads(run_cli("provenance", again["run_id"], "--json").stdout)["stages"]
    assert [(s["stage"], s["outcome"]) for s in stages] == [("recipe_match", "no_match"),
                                                            ("solved_example_rag", "retrieved")]
    assert stages[-1]["example_run"] == row["run_id"]
    assert reuser.received() == 1 and learner.received() == 1
    # and the coordinator's own store has both, shipped back with the results
    store = SolvedExamples(home / "examples.sqlite")
    try:
        assert store.count() == 2
    finally:
        store.close()


def _wait_all_queued(portfolio_id: str, count: int) -> None:
    deadline = time.monotonic() + 60
    while True:
        store = PortfolioStore(Path(os.environ["PLANNER_HOME"]))
        try:
            entries = store.entries(portfolio_id)
        finally:
            store.close()
        if len(entries) == count and all(e.task_id for e in entries):
            return
        assert time.monotonic() < deadline, entries
        time.sleep(0.1)


def test_resume_waits_for_jobs_still_queued_instead_of_sending_them_again(
        home: Path, tmp_path: Path, broker: str, started: Callable[..., Worker]) -> None:
    fleet = make_fleet(tmp_path, vulnerable=3)
    env = {**os.environ, "PLANNER_BROKER_URL": broker, "COLUMNS": "200"}
    coordinator = subprocess.Popen(
        [sys.executable, "-m", "planner", "portfolio", "dispatch", "vulnerability-remediation", "--repos",
         str(fleet), "--advisories", str(ADVISORIES), "--engine", "celery"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    assert coordinator.stdout is not None
    portfolio_id = coordinator.stdout.readline().split()[1]
    _wait_all_queued(portfolio_id, 3)  # sent, and no worker yet to take them
    coordinator.send_signal(signal.SIGKILL)  # the coordinator's machine is lost
    coordinator.wait(timeout=30)
    assert queued() == 3

    resume = subprocess.Popen([sys.executable, "-m", "planner", "portfolio", "resume", portfolio_id],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert resume.stderr is not None
    line = resume.stderr.readline()
    assert line.startswith("3 repositories to run") and "3 still queued or running from before" in line, line
    assert queued() == 3  # nothing sent twice
    pair = [started("worker0"), started("worker1")]
    _out, err = resume.communicate(timeout=240)
    assert resume.returncode == 0, err
    assert sum(w.received() for w in pair) == 3  # each job ran once, on whichever worker took it
    report = json.loads(run_cli("portfolio", "report", portfolio_id, "--json").stdout)
    assert report["state"] == "finished" and [r["status"] for r in report["repositories"]] == ["succeeded"] * 3
    assert all(r["attempts"] == 1 for r in report["repositories"])
    runs = json.loads(run_cli("runs", "list", "--json").stdout)
    assert sorted(r["repo"] for r in runs) == sorted(str(p.resolve()) for p in fleet.iterdir())
