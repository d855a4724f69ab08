"""`planner hotviews list | warm | stats` and the hot-view line in `planner bundle`, as a user runs them.

Most commands run in-process through the real entry point (`planner.cli.main`:
exit codes, one-line errors); one test runs separate processes, where the
embedded server and a real one differ: only a real server outlives a command.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import run_cli
from conftest import run_main as cli
from hotviews_support import HotBackend, free_port

from planner import service
from planner.config import Settings

pytest_plugins = ["hotviews_fixtures"]

FILES = {"requirements.txt": "requests==2.30.0\n", "Dockerfile": "FROM python:3.11-slim\nCMD python app.py\n"}


def test_list_shows_the_ranked_slice_set(home: Path, capsys: pytest.CaptureFixture[str],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _ = cli(capsys, monkeypatch, "hotviews", "list")
    assert code == 0 and "dependencies.${inputs.package}" in out and "containers.dockerfiles" in out
    code, out, _ = cli(capsys, monkeypatch, "hotviews", "list", "--json")
    rows = json.loads(out)["slices"]
    assert [r["rank"] for r in rows] == list(range(1, len(rows) + 1))
    assert {r["key"] for r in rows} >= {"dependencies.${inputs.package}", "vulnerabilities[package=${inputs.package}]",
                                        "containers.shell_evidence[file=${inputs.dockerfile}]"}


def test_warm_list_and_stats(hv_backend: HotBackend, make_repo: Callable[..., Path],
                             capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(FILES)
    service.gather_repo(Settings.from_env(), repo)
    code, out, _ = cli(capsys, monkeypatch, "hotviews", "warm", str(repo), "--json")
    report = json.loads(out)
    assert code == 0 and report["slices"] >= 4 and report["backend"] == (hv_backend.url or "embedded")
    code, out, _ = cli(capsys, monkeypatch, "hotviews", "warm", str(repo))
    assert code == 0 and f"{report['slices']} slices" in out
    assert ("embedded Redis: in-process" in out) == (hv_backend.kind == "embedded")
    code, out, _ = cli(capsys, monkeypatch, "hotviews", "list", "--repo", str(repo), "--json")
    rows = {r["key"]: r["warmed"] for r in json.loads(out)["slices"]}
    assert rows["containers.dockerfiles[path=${inputs.dockerfile}]"] == 2  # widened, and the one Dockerfile
    assert rows["dependencies.${inputs.package}"] >= 2
    code, out, _ = cli(capsys, monkeypatch, "hotviews", "stats", "--json")
    stats = json.loads(out)
    assert code == 0 and stats["reachable"] and stats["warms"] == 3 and stats["slices"] == report["slices"]
    code, out, _ = cli(capsys, monkeypatch, "hotviews", "stats")
    assert code == 0 and f"slices: {report['slices']}" in out and "memory:" in out


def test_a_dead_server_is_one_line_and_never_fails_the_main_job(home: Path, make_repo: Callable[..., Path],
                                                                capsys: pytest.CaptureFixture[str],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANNER_REDIS_URL", f"redis://:pw-not-shown@127.0.0.1:{free_port()}/0")
    repo = make_repo(FILES)
    assert cli(capsys, monkeypatch, "gather", str(repo))[0] == 0
    code, out, _ = cli(capsys, monkeypatch, "bundle", "vulnerability-remediation", "--repo", str(repo), "-i",
                       "package=requests", "--json")
    record = json.loads(out)
    assert code == 0 and record["hot_views"].startswith("unavailable (ConnectionError") and record["entries"]
    for args in (("hotviews", "warm", str(repo)), ("hotviews", "stats")):
        code, out, err = cli(capsys, monkeypatch, *args)
        assert code == 6 and err.startswith("error: hot views: Redis unavailable (")
        assert len(err.strip().splitlines()) == 1 and "pw-not-shown" not in err + out


def test_only_a_real_server_outlives_a_command(hv_backend: HotBackend, make_repo: Callable[..., Path]) -> None:
    repo = make_repo(FILES)
    assert run_cli("gather", str(repo)).returncode == 0  # warms, in that process
    result = run_cli("bundle", "distroless-migration", "--repo", str(repo), "--json")
    assert result.returncode == 0, result.stderr
    expected = "slice hit(s)" if hv_backend.kind == "redis" else "slices not warmed in this process (embedded Redis)"
    assert expected in json.loads(result.stdout)["hot_views"]


def test_a_run_with_redis_down_says_so_in_its_provenance(home: Path, make_repo: Callable[..., Path],
                                                          capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANNER_REDIS_URL", f"redis://127.0.0.1:{free_port()}/0")
    repo = make_repo(FILES)
    advisories = str(Path(__file__).resolve().parents[1] / "examples" / "advisories")
    code, out, _ = cli(capsys, monkeypatch, "dispatch", "vulnerability-remediation", "--repo", str(repo),
                       "--advisories", advisories, "--json")
    run = json.loads(out)
    assert code == 0 and run["status"] == "succeeded"  # degraded, never failed
    code, out, _ = cli(capsys, monkeypatch, "provenance", run["run_id"], "--json")
    record = json.loads(out)
    assert record["hot_views"].startswith("unavailable (ConnectionError"), record["hot_views"]
