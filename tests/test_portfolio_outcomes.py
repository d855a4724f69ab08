"""A fleet report groups repositories by outcome and reason, worst first, with the class's own columns."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from pathlib import Path

from conftest import POETRY_REQUESTS, commit_all, git, run_cli
from portfolio_helpers import ADVISORIES, portfolio_json

from planner.portfolio.outcomes import groups, item_rows, worst


def _repo(fleet: Path, name: str, files: dict[str, str]) -> None:
    repo = fleet / name
    repo.mkdir(parents=True)
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text, encoding="utf-8")
    git(repo, "init", "-q", "-b", "main")
    commit_all(repo, "initial")


def test_a_fleet_with_several_outcomes_reads_worst_first(home: Path, tmp_path: Path) -> None:
    fleet = tmp_path / "fleet"
    _repo(fleet, "a-fixed", {"requirements.txt": "requests==2.30.0\n"})
    _repo(fleet, "b-major", {"requirements.txt": "PyYAML==3.13\n"})
    _repo(fleet, "c-locked", POETRY_REQUESTS)
    _repo(fleet, "d-clean", {"requirements.txt": "requests==2.31.0\n"})
    code, started, _ = portfolio_json("dispatch", "vulnerability-remediation", "--repos", str(fleet),
                                      "--advisories", str(ADVISORIES), "--workers", "2")
    assert code != 0  # something needs a person
    code, summary, _ = portfolio_json("report", started["id"])
    by_repo = {Path(r["repo"]).name: r["status"] for r in summary["repositories"]}
    why = {Path(r["repo"]).name: r.get("error") or r.get("reason") for r in summary["repositories"]}
    assert by_repo == {"a-fixed": "succeeded", "b-major": "blocked", "c-locked": "needs_regeneration",
                       "d-clean": "no_changes"}, why  # a failure says each repository's error
    assert summary["status"] == "blocked" and summary["state"] == "finished"  # the worst outcome, not "finished"
    assert summary["columns"] == ["package", "from", "to", "advisories"]
    first = summary["groups"][0]
    assert first["status"] == "blocked" and "allow_major" in (first["fix"] or "") + first["reason"]
    assert [Path(r["repo"]).name for r in first["repositories"]] == ["b-major"]
    assert first["repositories"][0]["run_id"] and first["repositories"][0]["columns"]["package"] == "pyyaml"
    regen = next(g for g in summary["groups"] if g["status"] == "needs_regeneration")
    assert "poetry update --lock requests" in (regen["fix"] or "")
    fixed = next(g for g in summary["groups"] if g["status"] == "succeeded")
    assert fixed["repositories"][0]["columns"] == {"package": "requests", "from": "2.30.0", "to": "2.31.0",
                                                   "advisories": "PYSEC-2023-74"}
    text = run_cli("portfolio", "report", started["id"])
    order = [text.stdout.index(word) for word in ("blocked (1)", "needs_regeneration (1)", "succeeded (1)")]
    assert order == sorted(order) and "to act:" in text.stdout
    table = list(csv.DictReader(io.StringIO(run_cli("portfolio", "report", started["id"], "--csv").stdout)))
    fixed_row = next(r for r in table if r["repository"].endswith("a-fixed"))
    assert fixed_row["item_status"] == "succeeded" and fixed_row["to"] == "2.31.0" and fixed_row["run_id"]


def test_groups_cover_every_outcome_and_name_the_prompt() -> None:
    outcomes = [
        {"item": {"id": "x", "data": {"path": "a/Dockerfile"}}, "status": "needs_llm"},
        {"item": {"id": "y", "data": {"path": "b/Dockerfile"}}, "status": "failed",
         "error": "the plan does not apply\n.."},
        {"item": {"id": "z", "data": {"path": "c/Dockerfile"}}, "status": "not_applicable"},
        {"item": {"id": "w", "data": {"path": "d/Dockerfile"}}, "status": "blocked",
         "blockers": [{"kind": "unmapped-package", "file": "d/Dockerfile", "line": 3, "message": "no Wolfi name",
                       "fix": "add it to a mapping file"}]},
    ]
    items = item_rows(outcomes, [{"title": "Dockerfile", "value": "data.path"}], {"x": "/home/runs/r1/prompt-x.md"})
    grouped = groups([{"repo": "/r", "status": "failed", "run_id": "r1", "items_detail": items}])
    assert [g["status"] for g in grouped] == ["failed", "needs_llm", "blocked", "not_applicable"]
    assert grouped[1]["fix"] == "/home/runs/r1/prompt-x.md"
    assert grouped[2]["repositories"][0]["where"] == "d/Dockerfile:3"
    assert grouped[0]["reason"] == "the plan does not apply"
    assert worst(["succeeded", "not_applicable", "needs_regeneration"]) == "needs_regeneration"


TITLE_FIX = """
task_class: title-fix
version: 1
description: Retitle Markdown files from the old name to the new one.
policy:
  paths: [README.md]
recipes:
  - id: retitle@1
    files: ["README.md", "docs/*.md"]
    replace: {pattern: '^# Old name$', with: '# New name'}
report:
  columns:
    - {title: item, value: id}
"""


def test_a_yaml_class_fleet_reads_succeeded_blocked_and_not_applicable(
        home: Path, tmp_path: Path, tccm_dir: Callable[..., Path]) -> None:
    tccm_dir({"title-fix": TITLE_FIX})
    fleet = tmp_path / "fleet"
    _repo(fleet, "a-readme", {"README.md": "# Old name\n"})
    _repo(fleet, "b-docs-only", {"README.md": "# Other\n", "docs/guide.md": "# Old name\n"})
    _repo(fleet, "c-nothing", {"README.md": "# Something else\n"})
    dispatched, started, _ = portfolio_json("dispatch", "title-fix", "--repos", str(fleet), "--workers", "2")
    _, summary, _ = portfolio_json("report", started["id"])
    by_repo = {Path(r["repo"]).name: r["status"] for r in summary["repositories"]}
    assert by_repo == {"a-readme": "succeeded", "b-docs-only": "blocked", "c-nothing": "not_applicable"}
    assert summary["status"] == "blocked" and dispatched == 8  # exit code of the worst outcome
    assert [g["status"] for g in summary["groups"]] == ["blocked", "succeeded", "not_applicable"]
    blocked = summary["groups"][0]
    where = blocked["repositories"][0]["where"] or ""
    assert blocked["reason"].startswith("policy:") and "docs/guide.md" in blocked["reason"] + where
    assert "recipes match nothing" in summary["groups"][2]["reason"]
