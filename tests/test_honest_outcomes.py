"""Every outcome is told as it is: --json answers in JSON on failure too, Ctrl-C names the run to resume,
a run killed before its first checkpoint resumes from the start, a refused --apply is not a success, and
run lists keep their creation order within a second."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from planner.config import Settings
from planner.run.dispatch import resume
from planner.store.runs import RunStore
from tests.conftest import write_files

ROOT = Path(__file__).resolve().parents[1]
ADVISORIES = str(ROOT / "examples" / "advisories")
FILES = {
    "requirements.txt": "requests==2.30.0\n",
    "app/net.py": "import requests\n\n\ndef fetch(u):\n    return requests.get(u)\n",
}


def _planner(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "planner", *args], capture_output=True, text=True,
                          env={**os.environ, "PLANNER_DAEMON": "off", **(env or {})}, timeout=300)


def test_every_json_failure_is_one_json_object(make_repo: Callable[..., Path], home: Path, tmp_path: Path) -> None:
    repo = make_repo(FILES)
    cases = [
        (["dispatch", "no-such-class", "--repo", str(repo), "--json"], 2, "unknown task class"),
        (["dispatch", "vulnerability-remediation", "--repo", str(tmp_path / "gone"), "--json"], 2, "does not exist"),
        (["dispatch", "vulnerability-remediation", "--repo", str(repo), "--input", "pakage=x", "--json"], 2,
         "did you mean 'package'"),
        (["dispatch", "vulnerability-remediation", "--repo", str(repo), "--bogus-flag", "--json"], 2,
         "No such option"),
        (["runs", "show", "nope", "--json"], 2, "does not exist"),
    ]
    for argv, code, words in cases:
        done = _planner(*argv)
        assert done.returncode == code, (argv, done.stderr)
        answer = json.loads(done.stdout)  # exactly one object: json.loads refuses trailing data
        assert answer["exit_code"] == code and words in answer["error"], (argv, answer)


def test_a_refused_apply_is_a_failed_run_and_a_dirty_tree_is_refused_first(make_repo: Callable[..., Path],
                                                                             home: Path) -> None:
    repo = make_repo(FILES)
    write_files(repo, {"app/net.py": FILES["app/net.py"] + "# work in progress\n"})
    done = _planner("dispatch", "vulnerability-remediation", "--repo", str(repo), "--advisories", ADVISORIES,
                    "--apply", "--json")
    assert done.returncode == 2
    assert "uncommitted changes" in json.loads(done.stdout)["error"]
    assert RunStore(home).list() == []  # refused before the run: nothing recorded, the user's work untouched
    assert "work in progress" in (repo / "app/net.py").read_text()


def test_a_run_killed_before_its_first_checkpoint_starts_over_on_resume(make_repo: Callable[..., Path],
                                                                          home: Path) -> None:
    repo = make_repo(FILES)
    runs = RunStore(home)
    # what a process killed right after recording its run leaves: a row, no checkpoint, no process
    runs.create("20260101-000000-abcdef", "vulnerability-remediation", str(repo), {},
                {"advisories": ADVISORIES, "model": None})
    runs.set_status("20260101-000000-abcdef", "interrupted")
    state = resume(Settings.from_env().for_one_run(), "20260101-000000-abcdef")
    assert state["status"] == "succeeded" and "+requests==" in state["patch"]
    assert RunStore(home).get("20260101-000000-abcdef")["status"] == "succeeded"


def test_ctrl_c_names_the_run_to_resume(make_repo: Callable[..., Path], home: Path,
                                        tmp_path: Path) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    # a verify command that waits: the run is inside a node (after checkpoints) when Ctrl-C arrives; the marker
    # is written in the sandboxed copy, the only place the command can write
    repo = make_repo({**FILES, "Makefile": "test:\n\ttouch started && sleep 30\n"})
    proc = subprocess.Popen([sys.executable, "-m", "planner", "dispatch", "vulnerability-remediation", "--repo",
                             str(repo), "--advisories", ADVISORIES, "--verify", "--json"],
                            env={**os.environ, "PLANNER_DAEMON": "off", "TMPDIR": str(temp)},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 240
    copies = temp / f"tccm-planner-{os.getuid()}"
    while not list(copies.glob("verify-*/repo/started")) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert list(copies.glob("verify-*/repo/started")), proc.communicate()[1]
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    run_id = json.loads(out)["run_id"]
    assert f"interrupted: resume with `planner runs resume {run_id}`" in err
    assert RunStore(home).get(run_id)["status"] == "interrupted"
    assert subprocess.run(["pgrep", "-f", "^sleep 30$"], capture_output=True).returncode == 1  # stopped with it
    assert list(copies.iterdir()) == []  # and its copy removed


def test_runs_made_in_one_second_are_listed_in_creation_order(home: Path) -> None:
    runs = RunStore(home)
    ids = [f"20260101-000000-{n:06x}" for n in (0xFFFFFF, 0x000001, 0x800000)]  # ids sort otherwise
    for run_id in ids:
        runs.create(run_id, "vulnerability-remediation", "/r", {}, {})
    assert [r["id"] for r in RunStore(home).list()] == ids
    assert [r["id"] for r in RunStore(home).summaries()] == ids
