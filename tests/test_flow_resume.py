"""A flow killed mid-run (SIGKILL during its verify step) continues with `planner runs resume`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from conftest import run_cli
from test_flow_dispatch import FILES, FIXER, plan

from planner.errors import ExitCode

SCRIPT = """
import sys
from pathlib import Path
sys.path.insert(0, {tests!r})
from fake_llm import fake_planner
from planner.config import Settings
from planner.run.dispatch import dispatch

def show(kind, data):
    if kind in ("run", "verify"):
        print(kind, data.get("run_id", ""), flush=True, file=sys.stderr)

dispatch(Settings.from_env(), "readme-fixer", Path({repo!r}), {{}}, {{"verify": True}}, fake_planner({plan!r}),
         "fake:planner", show)
"""


def _wait(process: subprocess.Popen[str], marker: str, count: int) -> list[str]:
    seen: list[str] = []
    deadline = time.monotonic() + 60
    assert process.stderr is not None
    while time.monotonic() < deadline and sum(line.startswith(marker) for line in seen) < count:
        line = process.stderr.readline()
        if not line:
            raise AssertionError("".join(seen))
        seen.append(line)
    return seen


def test_killed_mid_flow_resumes_where_it_was(home: Path, tccm_dir: Callable[..., Path],
                                              make_repo: Callable[..., Path]) -> None:
    tccm_dir({"readme-fixer": FIXER.replace("MAX", "10")})
    # the tests pass only on the fixed README, slowly: the run is killed while they run
    repo = make_repo({**FILES, "Makefile": "test:\n\tgrep -q '^# widget$$' README.md && sleep 3\n"})
    script = SCRIPT.format(tests=str(Path(__file__).parent), repo=str(repo), plan=plan("widget"))
    process = subprocess.Popen([sys.executable, "-c", script], stderr=subprocess.PIPE, text=True,
                               env=os.environ.copy())
    seen = _wait(process, "verify", 2)  # baseline, then the test of the planned edit
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    run_id = seen[0].split()[1]

    resumed = run_cli("runs", "resume", run_id, "--json")  # no model: the LLM state is not run again
    assert resumed.returncode == ExitCode.OK, resumed.stderr
    assert json.loads(resumed.stdout)["status"] == "succeeded"
    shown = json.loads(run_cli("runs", "show", run_id, "--json").stdout)
    flow = [(s["stage"], s["outcome"]) for s in shown["stages"] if s["stage"].startswith("flow:")]
    assert flow == [("flow:triage", "routed"), ("flow:baseline", "failed"), ("flow:propose", "planned"),
                    ("flow:test", "passed"), ("flow:judge", "routed")]
    assert len(shown["llm_calls"]) == 1 and "+# widget" in shown["patch"]
