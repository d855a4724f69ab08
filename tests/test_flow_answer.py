"""Past needs_llm without a model, for a class with a flow (base-image-bump): `planner runs answer` puts the
answer where the action state's model plan would go, and `planner examples add` files the example under the
bundle the dispatch's own solved_example_rag stage looks up (after the gather a dispatch makes)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import run_cli

DOCKERFILE = 'FROM python:3.11.4-slim\nCOPY app.py /app/app.py\nCMD ["python", "/app/app.py"]\n'
PLAN = """summary: python 3.11.4 -> 3.11.9
used_entries: ["must_read:0:Dockerfile"]
edits:
  - {file: Dockerfile, old: "FROM python:3.11.4-slim", new: "FROM python:3.11.9-slim"}
"""
FIX = """diff --git a/Dockerfile b/Dockerfile
--- a/Dockerfile
+++ b/Dockerfile
@@ -1,3 +1,3 @@
-FROM python:3.11.4-slim
+FROM python:3.11.9-slim
 COPY app.py /app/app.py
 CMD ["python", "/app/app.py"]
"""


def _repo(make_repo: Callable[..., Path]) -> Path:
    return make_repo({"Dockerfile": DOCKERFILE, "app.py": "print('hi')\n"})


def _json(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    stdout = done.stdout
    assert stdout, done.stderr
    loaded = json.loads(stdout)
    assert isinstance(loaded, dict)
    return loaded


def _flow(run_id: str) -> list[tuple[str, str]]:
    shown = _json(run_cli("runs", "show", run_id, "--json"))
    stages = shown["stages"]
    assert isinstance(stages, list)
    return [(s["stage"], s["outcome"]) for s in stages]


def test_runs_answer_moves_a_flow_run_on(home: Path, make_repo: Callable[..., Path], tmp_path: Path) -> None:
    repo = _repo(make_repo)
    first = run_cli("dispatch", "base-image-bump", "--repo", str(repo), "--json")
    assert first.returncode == 4, first.stderr
    run_id = str(_json(first)["run_id"])
    assert ("flow:propose", "needs_llm") in _flow(run_id)
    plan = tmp_path / "plan.yaml"
    plan.write_text(PLAN)
    done = run_cli("runs", "answer", run_id, "--plan", str(plan), "--json")
    assert done.returncode == 0, done.stderr
    result = _json(done)
    assert result["status"] == "succeeded"
    patch = str(result["patch"])
    assert "-FROM python:3.11.4-slim" in patch and "+FROM python:3.11.9-slim" in patch
    flow = _flow(str(result["run_id"]))
    # the answer stood where the model's plan would, and went through the flow's own check
    assert ("flow:propose", "planned") in flow and ("flow:check", "ok") in flow and flow[-1] == ("flow:done", "marked")
    report = run_cli("runs", "show", str(result["run_id"])).stdout
    assert "Planned by hand (`planner runs answer`)" in report


def test_runs_answer_on_a_flow_is_checked_and_given_once(home: Path, make_repo: Callable[..., Path],
                                                         tmp_path: Path) -> None:
    repo = _repo(make_repo)
    run_id = str(_json(run_cli("dispatch", "base-image-bump", "--repo", str(repo), "--json"))["run_id"])
    stale = tmp_path / "stale.yaml"
    stale.write_text(PLAN.replace('old: "FROM python:3.11.4-slim"', 'old: "FROM python:3.10.1-slim"'))
    rejected = run_cli("runs", "answer", run_id, "--plan", str(stale), "--json")
    assert rejected.returncode != 0 and _json(rejected)["status"] == "failed"
    assert "3.10.1-slim" in rejected.stdout  # the edit that does not apply is named
    outside = tmp_path / "outside.yaml"  # the policy allows Dockerfiles only: the flow's check refuses it
    outside.write_text(PLAN + '  - {file: app.py, old: "hi", new: "hello"}\n')
    refused = run_cli("runs", "answer", run_id, "--plan", str(outside), "--json")
    result = _json(refused)
    assert refused.returncode != 0 and result["status"] == "blocked", refused.stdout
    assert "policy.file_kinds" in refused.stdout and "+FROM" not in str(result["patch"])
    flow = _flow(str(result["run_id"]))
    # refused, the flow comes back to propose once: the same answer is not taken as a new plan
    assert [o for s, o in flow if s == "flow:propose"] == ["planned", "answered"]


def test_examples_add_serves_a_flow_class_on_a_never_gathered_repo(home: Path, make_repo: Callable[..., Path],
                                                                    tmp_path: Path) -> None:
    repo = _repo(make_repo)
    fix = tmp_path / "fix.diff"
    fix.write_text(FIX)
    added = run_cli("examples", "add", "base-image-bump", "--repo", str(repo), "--patch", str(fix), "--json")
    assert added.returncode == 0, added.stderr
    example = str(_json(added)["id"])
    done = run_cli("dispatch", "base-image-bump", "--repo", str(repo), "--json")
    assert done.returncode == 0, done.stderr
    result = _json(done)
    assert result["status"] == "succeeded" and "+FROM python:3.11.9-slim" in str(result["patch"])
    flow = _flow(str(result["run_id"]))
    assert ("solved_example_rag", "retrieved") in flow and ("flow:check", "ok") in flow
    assert "flow:propose" not in [s for s, _ in flow]  # triage saw the example's plan: no model was needed
    items = result["items"]
    assert isinstance(items, list) and items[0]["source"] == "solved_example"
    assert items[0]["plan_data"]["example_run"] == example
    report = run_cli("runs", "show", str(result["run_id"])).stdout
    assert f"Planned by the solved example `{example}`" in report
