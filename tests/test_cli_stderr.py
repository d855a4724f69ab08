"""stderr piped to a file or a CI log is never folded at 80 columns: paths and messages stay whole lines."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from conftest import run_cli


def test_a_long_path_on_piped_stderr_is_one_unbroken_line(tmp_path: Path, make_repo: Callable[..., Path]) -> None:
    home = tmp_path / ("a-rather-long-folder-name-" * 4).rstrip("-") / "planner-home"
    repo = make_repo({"requirements.txt": "requests==2.30.0\n"})
    done = run_cli("dispatch", "vulnerability-remediation", "--repo", str(repo),
                   env={"PLANNER_HOME": str(home), "PLANNER_ADVISORIES": "", "COLUMNS": ""})
    status = [line for line in done.stderr.splitlines() if line.startswith("status:")]
    assert len(status) == 1 and str(home / "runs") in status[0], done.stderr  # the report's path, whole
    assert any(line.startswith("not evaluated: no advisory source") and line.endswith("PLANNER_ADVISORIES)")
               for line in done.stderr.splitlines()), done.stderr
