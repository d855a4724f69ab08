"""The `planner` CLI end to end, as a subprocess: output, JSON, exit codes, one-line errors."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import run_cli

from planner.errors import ExitCode

FILES = {
    "requirements.txt": "requests==2.30.0\n",
    "app.py": "import requests\n",
    "Dockerfile": "FROM python:3.11-slim\nCMD python app.py\n",
    ".env": "TOKEN=abc\n",
}


def _no_traceback(text: str) -> None:
    assert "Traceback" not in text


def test_task_classes_list_show_schema(home: Path) -> None:
    listed = run_cli("task-classes", "list", "--json")
    assert listed.returncode == 0
    names = {row["task_class"] for row in json.loads(listed.stdout)}
    assert {"vulnerability-remediation", "distroless-migration"} <= names
    shown = run_cli("task-classes", "show", "distroless-migration", "--json")
    assert json.loads(shown.stdout)["budget"]["max_tokens"] > 0
    table = run_cli("task-classes", "show", "vulnerability-remediation")
    assert "must_read" in table.stdout and "key:vulnerabilities" in table.stdout
    schema = json.loads(run_cli("task-classes", "schema").stdout)
    assert schema["title"] == "Task-Class Context Manifest" and "budget" in schema["properties"]


def test_validate_exit_codes(home: Path, tmp_path: Path) -> None:
    ok = run_cli("task-classes", "validate")
    assert ok.returncode == 0 and "valid" in ok.stdout
    bad = tmp_path / "bad-class.yaml"
    bad.write_text("task_class: bad-class\nversion: 1\ndescription: x\nbudgett: {}\n")
    result = run_cli("task-classes", "validate", str(bad))
    assert result.returncode == ExitCode.INVALID
    lines = result.stderr.strip().splitlines()
    assert any("bad-class.yaml:4: budgett: unknown field" in line for line in lines)
    assert all(line.startswith("error: ") for line in lines)
    _no_traceback(result.stderr)
    as_json = json.loads(run_cli("task-classes", "validate", str(bad), "--json").stdout)
    assert as_json["valid"] is False and as_json["errors"][0]["field"] in ("budgett", "budget")


def test_validate_via_task_class_path(home: Path, tccm_dir: Callable[..., Path]) -> None:
    directory = tccm_dir({"broken": "task_class: broken\nversion: 1\nextends: ghost\n"})
    result = run_cli("task-classes", "validate", env={"PLANNER_TASK_CLASS_PATH": str(directory)})
    assert result.returncode == ExitCode.INVALID
    assert "broken.yaml:3: extends: unknown task class 'ghost'" in result.stderr


def test_gather_bundle_provenance_runs(home: Path, make_repo: Callable[..., Path]) -> None:
    repo = make_repo(FILES)
    gathered = run_cli("gather", str(repo), "--json")
    assert gathered.returncode == 0, gathered.stderr
    context = json.loads(gathered.stdout)
    assert context["meta"]["commit"] and [d["path"] for d in context["denied"]] == [".env"]
    assert "TOKEN=abc" not in gathered.stdout
    again = run_cli("gather", str(repo), "--json")  # a re-gather: the whole snapshot is printed all the same
    assert again.returncode == 0, again.stderr
    regathered = json.loads(again.stdout)
    assert regathered["meta"]["probes"]["call_sites"]["reused"] and regathered["files"] == context["files"]
    assert {k: v for k, v in regathered.items() if k != "meta"} == {k: v for k, v in context.items() if k != "meta"}
    built = run_cli("bundle", "distroless-migration", "--repo", str(repo), "--json")
    assert built.returncode == 0, built.stderr
    record = json.loads(built.stdout)
    assert record["mode"] == "repocontext" and record["repocontext"]["freshness"] == "fresh"
    dockerfile = [e for e in record["entries"] if e["target"] == "Dockerfile"]
    assert dockerfile and dockerfile[0]["status"] == "included" and "FROM python:3.11-slim" in record["text"]
    table = run_cli("bundle", "vulnerability-remediation", "--repo", str(repo), "-i", "package=requests")
    assert table.returncode == 0 and "total:" in table.stdout and "requirements.txt" in table.stdout
    runs = json.loads(run_cli("runs", "list", "--json").stdout)
    assert [r["task_class"] for r in runs] == ["distroless-migration", "vulnerability-remediation"]
    shown = json.loads(run_cli("provenance", record["id"], "--json").stdout)
    assert shown["entries"] == record["entries"] and shown["tccm"]["sha256"] == record["tccm"]["sha256"]
    human = run_cli("provenance", runs[1]["id"][:18])
    assert human.returncode == 0 and "vulnerability-remediation" in human.stdout


def test_bad_input_is_one_line_with_exit_code(home: Path, tmp_path: Path, make_repo: Callable[..., Path]) -> None:
    missing = run_cli("gather", str(tmp_path / "nowhere"))
    assert missing.returncode == ExitCode.BAD_INPUT
    assert missing.stderr.strip().count("\n") == 0 and "does not exist" in missing.stderr
    repo = make_repo(FILES)
    unknown = run_cli("bundle", "no-such-class", "--repo", str(repo))
    assert unknown.returncode == ExitCode.BAD_INPUT and "unknown task class 'no-such-class'" in unknown.stderr
    bad_input = run_cli("bundle", "distroless-migration", "--repo", str(repo), "-i", "novalue")
    assert bad_input.returncode == ExitCode.BAD_INPUT and "expected NAME=VALUE" in bad_input.stderr
    no_record = run_cli("provenance", "does-not-exist")
    assert no_record.returncode == ExitCode.BAD_INPUT and "does not exist" in no_record.stderr
    for result in (missing, unknown, bad_input, no_record):
        _no_traceback(result.stderr)


def test_budget_overflow_exit_code(home: Path, tccm_dir: Callable[..., Path], make_repo: Callable[..., Path]) -> None:
    directory = tccm_dir({"tiny": """
        task_class: tiny
        version: 1
        description: too small
        must_read:
          - glob: requirements.txt
        budget: {max_files: 5, max_tokens: 10, per_file_max_tokens: 10}
    """})
    repo = make_repo(FILES)
    result = run_cli("bundle", "tiny", "--repo", str(repo), env={"PLANNER_TASK_CLASS_PATH": str(directory)})
    assert result.returncode == ExitCode.BUDGET
    assert "must_read of tiny needs" in result.stderr and "must_read:0:requirements.txt=" in result.stderr
    _no_traceback(result.stderr)


def test_unwritable_home_is_a_clear_error(tmp_path: Path, make_repo: Callable[..., Path]) -> None:
    repo = make_repo(FILES)
    blocker = tmp_path / "home-is-a-file"
    blocker.write_text("x")
    result = run_cli("gather", str(repo), env={"PLANNER_HOME": str(blocker)})
    assert result.returncode == ExitCode.ENVIRONMENT and "cannot write RepoContext" in result.stderr
    _no_traceback(result.stderr)


def test_default_home_is_outside_the_repository(tmp_path: Path, make_repo: Callable[..., Path],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Without PLANNER_HOME, running from a repository's root writes nothing into it: state goes to the
    user's state folder ($XDG_STATE_HOME/tccm-planner)."""
    repo = make_repo({"requirements.txt": "requests==2.30.0\n", "app.py": "import requests\n"})
    monkeypatch.delenv("PLANNER_HOME", raising=False)
    state = tmp_path / "state"
    result = run_cli("gather", ".", env={"XDG_STATE_HOME": str(state), "PLANNER_REDIS_URL": "off"}, cwd=repo)
    assert result.returncode == 0, result.stderr
    status = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--ignored"], capture_output=True,
                            text=True, check=True).stdout
    assert status == ""
    assert list((state / "tccm-planner" / "repos").iterdir())
