"""Portfolio runs on real Celery workers against a real redis-server (PLANNER_TEST_REDIS_URL, started by
.ci/run): a worker pair, and a worker killed mid-portfolio. The broker uses another DB number."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from celery_helpers import REDIS, VISIBILITY_S, Worker, broker_url, flush
from conftest import run_cli
from portfolio_helpers import ADVISORIES, make_fleet

from planner.store.runs import RunStore

pytestmark = pytest.mark.skipif(not REDIS, reason="PLANNER_TEST_REDIS_URL not set (.ci/run starts a redis-server)")


@pytest.fixture
def workers(tmp_path: Path) -> Iterator[list[Worker]]:
    flush()
    pair = [Worker(tmp_path / f"worker{i}-home", tmp_path / f"worker{i}.log") for i in range(2)]
    try:
        deadline = time.monotonic() + 90
        while not all("ready." in w.text() for w in pair):
            assert time.monotonic() < deadline, [w.text()[-2000:] for w in pair]
            assert all(w.proc.poll() is None for w in pair), [w.text()[-2000:] for w in pair]
            time.sleep(0.2)
        yield pair
    finally:
        for worker in pair:
            worker.stop()
        flush()


def _coordinator(fleet: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PLANNER_BROKER_URL": broker_url(), "PLANNER_CELERY_VISIBILITY_TIMEOUT": VISIBILITY_S}
    return subprocess.Popen([sys.executable, "-m", "planner", "portfolio", "dispatch", "vulnerability-remediation",
                             "--repos", str(fleet), "--advisories", str(ADVISORIES), "--engine", "celery",
                             "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _one_run_per_repo(report: dict, fleet: Path) -> None:
    assert report["state"] == "finished" and report["done"] == report["repos"]
    assert all(r["status"] == "succeeded" for r in report["repositories"]), report["repositories"]
    runs = json.loads(run_cli("runs", "list", "--json").stdout)  # the coordinator's PLANNER_HOME
    assert sorted(r["repo"] for r in runs) == sorted(str(p.resolve()) for p in fleet.iterdir())
    assert {r["id"] for r in runs} == {r["run_id"] for r in report["repositories"]}


def test_worker_pair_runs_a_portfolio(home: Path, tmp_path: Path, workers: list[Worker]) -> None:
    fleet = make_fleet(tmp_path, vulnerable=4)
    proc = _coordinator(fleet)
    out, err = proc.communicate(timeout=240)
    assert proc.returncode == 0, err
    report = json.loads(out)
    _one_run_per_repo(report, fleet)
    some = report["repositories"][0]
    assert "PyYAML==5.4" in some["patch"] and some["versions"]["pyyaml"] == "5.4"
    shown = run_cli("runs", "show", some["run_id"])  # shipped back: report and provenance are here
    assert "pyyaml" in shown.stdout.lower()
    assert run_cli("provenance", some["run_id"]).returncode == 0


def test_a_worker_killed_mid_portfolio_loses_nothing_and_duplicates_nothing(
        home: Path, tmp_path: Path, workers: list[Worker]) -> None:
    fleet = make_fleet(tmp_path, vulnerable=4, padding=300)
    proc = _coordinator(fleet)
    deadline = time.monotonic() + 120
    while not any("received" in w.text() for w in workers):
        assert time.monotonic() < deadline and proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        time.sleep(0.05)
    victim = next(w for w in workers if "received" in w.text())
    victim.kill()
    out, err = proc.communicate(timeout=240)
    assert proc.returncode == 0, err
    report = json.loads(out)
    _one_run_per_repo(report, fleet)
    # the job the victim held was redelivered: every recorded run was made by the survivor
    survivor = next(w for w in workers if w is not victim)
    made_by_survivor = {r["id"] for r in RunStore(survivor.home).list()}
    assert {r["run_id"] for r in report["repositories"]} <= made_by_survivor
    victim_runs = RunStore(victim.home).list() if (victim.home / "runs.sqlite").exists() else []
    assert all(r["status"] != "succeeded" for r in victim_runs)  # it died mid-run, before finishing
