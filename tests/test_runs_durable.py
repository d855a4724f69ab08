"""Durable runs: a dispatch killed with SIGKILL mid-run resumes from its checkpoint and loses nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import run_cli

from planner.errors import ExitCode

ADVISORY = {"id": "PYSEC-2023-74", "modified": "2024-01-01T00:00:00Z", "aliases": ["CVE-2023-32681"],
            "affected": [{"package": {"ecosystem": "PyPI", "name": "requests"},
                          "ranges": [{"type": "ECOSYSTEM", "events": [{"introduced": "0"}, {"fixed": "2.31.0"}]}]}]}


def _start(repo: Path, advisories: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "planner", "dispatch", "vulnerability-remediation",
                             "--repo", str(repo), "--advisories", str(advisories), "--verify"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ.copy())


def _wait_for(process: subprocess.Popen[str], marker: str, seconds: float = 60) -> list[str]:
    seen: list[str] = []
    deadline = time.monotonic() + seconds
    assert process.stderr is not None
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        if not line:
            break
        seen.append(line)
        if marker in line:
            return seen
    raise AssertionError(f"{marker!r} never appeared: {''.join(seen)}")


def test_kill_9_mid_run_then_resume(home: Path, make_repo: Callable[..., Path], tmp_path: Path) -> None:
    advisories = tmp_path / "osv"
    advisories.mkdir()
    (advisories / "PYSEC-2023-74.json").write_text(json.dumps(ADVISORY))
    repo = make_repo({"requirements.txt": "requests==2.30.0\n", "Makefile": "test:\n\tsleep 4\n",
                      "app.py": "import requests\nrequests.get('https://example.com')\n"})
    process = _start(repo, advisories)
    seen = _wait_for(process, "verifying with")  # the verify node is running its (slow) test command
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    run_id = seen[0].split()[1]
    listed = {r["id"]: r for r in json.loads(run_cli("runs", "list", "--json").stdout)}
    assert listed[run_id]["status"] == "interrupted"

    resumed = run_cli("runs", "resume", run_id, "--json")
    assert resumed.returncode == ExitCode.OK, resumed.stderr
    out = json.loads(resumed.stdout)
    assert out["status"] == "succeeded" and out["verification"]["passed"] is True
    assert "+requests==2.31.0" in out["patch"]
    assert "resuming" not in resumed.stderr or "verify" in resumed.stderr  # quiet in --json mode
    shown = json.loads(run_cli("runs", "show", run_id, "--json").stdout)
    stages = [(s["stage"], s["outcome"]) for s in shown["stages"]]
    assert stages == [("scope_bundle", "built"), ("recipe_match", "matched")]  # work done once, not redone
    assert shown["run"]["status"] == "succeeded"
    again = run_cli("runs", "resume", run_id, "--json")  # a finished run resumes to the same result
    assert json.loads(again.stdout)["patch"] == out["patch"]


def test_resume_unknown_run_is_a_clear_error(home: Path) -> None:
    result = run_cli("runs", "resume", "no-such-run")
    assert result.returncode == ExitCode.BAD_INPUT and "does not exist" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("node", ["ensure_repocontext", "build_bundle", "work", "finalize"])
def test_kill_9_after_any_node_resumes_to_the_same_result(home: Path, make_repo: Callable[..., Path],
                                                          tmp_path: Path, node: str) -> None:
    """Records are written without an fsync each (WAL, synchronous=NORMAL; renames): a process killed right
    after any node still leaves a run that resumes to exactly what an uninterrupted run reports."""
    advisories = tmp_path / "osv"
    advisories.mkdir()
    (advisories / "PYSEC-2023-74.json").write_text(json.dumps(ADVISORY))
    repo = make_repo({"requirements.txt": "requests==2.30.0\n", "app.py": "import requests\n"})
    whole = run_cli("dispatch", "vulnerability-remediation", "--repo", str(repo), "--advisories", str(advisories),
                    "--json")
    expected = json.loads(whole.stdout)
    process = subprocess.Popen([sys.executable, "-m", "planner", "dispatch", "vulnerability-remediation",
                                "--repo", str(repo), "--advisories", str(advisories)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ.copy())
    seen = _wait_for(process, f"✓ {node}")
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    run_id = seen[0].split()[1]
    resumed = run_cli("runs", "resume", run_id, "--json")
    assert resumed.returncode == ExitCode.OK, resumed.stdout + resumed.stderr
    out = json.loads(resumed.stdout)
    assert (out["status"], out["patch"]) == (expected["status"], expected["patch"]) == ("succeeded", out["patch"])
    assert "+requests==2.31.0" in out["patch"]
    listed = {r["id"]: r["status"] for r in json.loads(run_cli("runs", "list", "--json").stdout)}
    assert listed[run_id] == "succeeded"
