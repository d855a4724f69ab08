"""Portfolio runs on the embedded engine (a local process pool): no server needed."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from conftest import git, run_cli
from portfolio_helpers import ADVISORIES, branches, make_fleet, portfolio_json

from planner.errors import ExitCode
from planner.portfolio.model import Entry, Result, Spec
from planner.portfolio.store import PortfolioStore


def test_dispatch_status_report_resume_apply(home: Path, tmp_path: Path) -> None:
    fleet = make_fleet(tmp_path, vulnerable=2, clean=1)
    (fleet / "shop1" / "local-notes.txt").write_text("uncommitted work\n")
    git(fleet / "shop1", "add", "local-notes.txt")  # staged, uncommitted: --apply must leave it alone
    code, report, stderr = portfolio_json("dispatch", "vulnerability-remediation", "--repos", str(fleet),
                                          "--advisories", str(ADVISORIES), "--apply", "--workers", "2")
    assert stderr.startswith("portfolio pf-")
    assert code == 0, (stderr, report)
    assert report["state"] == "finished" and report["status"] == "succeeded" and report["done"] == report["repos"] == 3
    rows = {Path(r["repo"]).name: r for r in report["repositories"]}
    assert rows["clean0"]["status"] == "no_changes"
    assert rows["shop0"]["status"] == "succeeded" and rows["shop0"]["versions"] == {"pyyaml": "5.4",
                                                                                  "requests": "2.31.0"}
    assert rows["shop0"]["findings"] == 2 and "PyYAML==5.4" in rows["shop0"]["patch"]
    assert branches(fleet / "shop0") == [f"planner/vulnerability-remediation/{report['id']}"]
    assert rows["shop1"]["branch"] is None and "uncommitted" in rows["shop1"]["apply_error"]
    assert (fleet / "shop1" / "local-notes.txt").read_text() == "uncommitted work\n"
    assert report["totals"]["by_status"] == {"no_changes": 1, "succeeded": 2}
    # every run shows in `planner runs` and has provenance
    runs = json.loads(run_cli("runs", "list", "--json").stdout)
    assert sorted(r["id"] for r in runs) == sorted(r["run_id"] for r in report["repositories"])
    assert run_cli("provenance", rows["shop0"]["run_id"]).returncode == 0
    # resume: nothing left to run, and still one branch per repository
    code, again, _ = portfolio_json("resume", report["id"][:12])
    assert code == 0 and [r["run_id"] for r in again["repositories"]] == [r["run_id"] for r in
                                                                          report["repositories"]]
    assert len(branches(fleet / "shop0")) == 1
    status = run_cli("portfolio", "status", report["id"])
    assert "3/3" in status.stdout and "succeeded" in status.stdout
    listed = json.loads(run_cli("portfolio", "list", "--json").stdout)
    assert listed[0]["id"] == report["id"] and listed[0]["done"] == 3


def test_results_are_recorded_once_per_key(home: Path) -> None:
    store = PortfolioStore(home)
    spec = Spec(id="pf-x", task_class="t", tccm_sha256="h")
    store.create(spec, [Entry(repo="/r", position=0, key="k1")])
    first = Result(repo="/r", key="k1", status="succeeded", run_id="a")
    assert store.record("pf-x", first)
    assert not store.record("pf-x", first.model_copy(update={"run_id": "b"}))  # a redelivered duplicate
    assert not store.record("pf-x", first.model_copy(update={"key": "other"}))  # a different repo state
    [entry] = store.entries("pf-x")
    assert entry.result is not None and entry.result.run_id == "a"


def test_bad_input_is_one_line(home: Path, tmp_path: Path) -> None:
    listing = tmp_path / "repos.txt"
    listing.write_text("# fleet\nmissing-repo\n")
    proc = run_cli("portfolio", "dispatch", "vulnerability-remediation", "--repos", str(listing))
    assert proc.returncode == ExitCode.BAD_INPUT and proc.stderr.startswith("error: ")
    assert "repos.txt:2" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    unknown = run_cli("portfolio", "dispatch", "no-such-class", "--repos", str(tmp_path))
    assert unknown.returncode == ExitCode.BAD_INPUT and "Traceback" not in unknown.stderr
    celery = run_cli("portfolio", "dispatch", "vulnerability-remediation", "--repos", str(tmp_path), "--engine",
                     "celery", env={"PLANNER_BROKER_URL": ""})
    assert celery.returncode == ExitCode.BAD_INPUT and "PLANNER_BROKER_URL" in celery.stderr


def test_broker_down_pauses_and_resume_continues(home: Path, tmp_path: Path) -> None:
    fleet = make_fleet(tmp_path, vulnerable=1)
    proc = run_cli("portfolio", "dispatch", "vulnerability-remediation", "--repos", str(fleet), "--advisories",
                   str(ADVISORIES), "--engine", "celery", env={"PLANNER_BROKER_URL": "redis://127.0.0.1:1/0"})
    assert proc.returncode == ExitCode.ENVIRONMENT, proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 2  # progress + error
    assert "unreachable" in proc.stderr and "paused" in proc.stderr
    portfolio_id = proc.stdout.split()[1]
    status = json.loads(run_cli("portfolio", "status", portfolio_id, "--json").stdout)
    assert status["status"] == "paused" and status["done"] == 0
    code, report, _ = portfolio_json("resume", portfolio_id, "--engine", "local")  # or the broker, once back
    assert code == 0 and report["state"] == "finished" and report["repositories"][0]["status"] == "succeeded"


def _running_pool_pid(home: Path, coordinator: int) -> tuple[str, int] | None:
    """A run in progress in a pool process (the pool shares this PLANNER_HOME): its id and process."""
    db_path = home / "runs.sqlite"
    if not db_path.exists():
        return None
    db = sqlite3.connect(db_path, timeout=5)
    try:
        row = db.execute("SELECT id, pid FROM runs WHERE status = 'running' AND pid IS NOT NULL AND pid != ?",
                         (coordinator,)).fetchone()
    except sqlite3.OperationalError:
        return None  # the store is still being created
    finally:
        db.close()
    return (str(row[0]), int(row[1])) if row else None


def test_a_killed_pool_process_leaves_no_second_run(home: Path, tmp_path: Path) -> None:
    fleet = make_fleet(tmp_path, vulnerable=3, padding=300)
    proc = subprocess.Popen([sys.executable, "-m", "planner", "portfolio", "dispatch", "vulnerability-remediation",
                             "--repos", str(fleet), "--advisories", str(ADVISORIES), "--workers", "2", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while (found := _running_pool_pid(home, proc.pid)) is None:
        assert time.monotonic() < deadline and proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        time.sleep(0.05)
    killed_run, pid = found
    os.kill(pid, signal.SIGKILL)  # a pool process this test's coordinator started, lost mid-run
    out, err = proc.communicate(timeout=240)
    assert proc.returncode == 0, err
    report = json.loads(out)
    assert report["done"] == 3 and {r["status"] for r in report["repositories"]} == {"succeeded"}
    runs = json.loads(run_cli("runs", "list", "--json").stdout)
    by_status = {r["id"]: r["status"] for r in runs}
    assert by_status[killed_run] == "superseded"  # not left "interrupted" beside its rerun
    kept = [r for r in runs if r["status"] != "superseded"]
    assert sorted(r["repo"] for r in kept) == sorted(str(p.resolve()) for p in fleet.iterdir())
    assert {r["id"] for r in kept} == {r["run_id"] for r in report["repositories"]}
    resumed = run_cli("runs", "resume", killed_run)
    assert resumed.returncode != 0 and "superseded" in resumed.stderr and "Traceback" not in resumed.stderr
