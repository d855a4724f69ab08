"""Stage 7 telemetry: per-entry usefulness over runs, suggestions, and the `planner learn report` CLI."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import run_cli
from fake_llm import fake_planner
from test_dispatch_generic import FILES, PLAN, README_TITLE

from planner.config import Settings
from planner.run.dispatch import dispatch
from planner.store.telemetry import Telemetry


def test_requested_may_read_and_unused_must_read_are_flagged(home: Path, tccm_dir: Callable[..., Path],
                                                            make_repo: Callable[..., Path],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANNER_RAG_THRESHOLD", "1.01")  # force the LLM each time
    directory = tccm_dir({"readme-title": README_TITLE})
    repo = make_repo(FILES)
    asking = {**PLAN, "edits": [], "requests": ["may_read:0:docs/guide.md"]}
    cites_readme_only = {**PLAN, "used_entries": ["must_read:0:README.md"]}
    for _ in range(3):
        state = dispatch(Settings.from_env(), "readme-title", repo, {}, {}, fake_planner(asking, cites_readme_only),
                         "fake:x")
        assert state["status"] == "succeeded"
    telemetry = Telemetry(Settings.from_env().home)
    stats = {(s.band, s.selector): s for s in telemetry.report("readme-title")}
    telemetry.close()
    assert stats[("may_read", "glob:docs/**")].requested == 3
    assert stats[("may_read", "glob:docs/**")].suggestion == "requested in most runs: move to should_read"
    readme = stats[("must_read", "glob:README.md")]
    assert readme.used == 3 and readme.suggestion is None
    assert stats[("must_read", "glob:pyproject.toml")].suggestion == "never used: move to should_read"
    before = (directory / "readme-title.yaml").read_text()
    result = run_cli("learn", "report", "readme-title", "--json", env={"PLANNER_TASK_CLASS_PATH": str(directory)})
    rows = json.loads(result.stdout)
    assert result.returncode == 0 and {r["selector"] for r in rows} >= {"glob:README.md", "glob:docs/**"}
    assert (directory / "readme-title.yaml").read_text() == before  # advice only: the TCCM is never edited


def test_report_without_runs(home: Path) -> None:
    result = run_cli("learn", "report")
    assert result.returncode == 0 and "no finished runs" in result.stdout


def test_the_call_sites_and_tests_a_report_lists_count_as_used(home: Path, make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"requirements.txt": "requests==2.30.0\n",
                      "app/__init__.py": "",
                      "app/net.py": "import requests\n\n\ndef fetch(u):\n    return requests.get(u)\n",
                      "tests/test_net.py": "from app.net import fetch\n\n\ndef test_fetch():\n    assert fetch\n"})
    advisories = str(Path(__file__).resolve().parents[1] / "examples" / "advisories")
    for _ in range(3):
        state = dispatch(Settings.from_env().for_one_run(), "vulnerability-remediation", repo, {},
                         {"advisories": advisories})
        assert state["status"] == "succeeded" and "app/net.py:5" in state["report"]
    telemetry = Telemetry(Settings.from_env().home)
    stats = {(s.band, s.selector): s for s in telemetry.report("vulnerability-remediation")}
    telemetry.close()
    sites = stats[("should_read", "key:call_sites.${inputs.package}")]
    assert sites.used == 3 and sites.suggestion is None  # not "loaded but rarely used: move to may_read"
    assert stats[("should_read", "key:tests.by_module")].used == 3
