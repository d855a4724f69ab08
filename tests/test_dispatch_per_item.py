"""Work items before the budget (issue 11): items are listed from the RepoContext, each gets its own bundle,
and the budget is judged per item, so a repository with a hundred Dockerfiles runs."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from conftest import run_cli

from planner.config import Settings
from planner.errors import ExitCode
from planner.run.dispatch import dispatch
from planner.store.provenance import ProvenanceStore

SMALL = "FROM python:3.12-slim\nWORKDIR /app\nCOPY . .\nCMD [\"python\", \"-m\", \"app\"]\n"


def big_dockerfile() -> str:
    lines = ["FROM python:3.12-slim", "WORKDIR /app"]
    lines += [f"ENV SETTING_{n}=\"value number {n} with some words to weigh\"" for n in range(900)]
    return "\n".join([*lines, "COPY . .", 'CMD ["python", "-m", "app"]']) + "\n"


def test_a_hundred_dockerfiles_run_one_item_each(home: Path, make_repo: Callable[..., Path]) -> None:
    repo = make_repo({f"svc{n:03d}/Dockerfile": SMALL for n in range(100)})
    state = dispatch(Settings.from_env(), "distroless-migration", repo, {}, {})
    assert state["status"] == "succeeded", state.get("error")
    assert len(state["outcomes"]) == 100 and {o["status"] for o in state["outcomes"]} == {"succeeded"}
    assert state["patch"].count("diff --git") == 100
    record = ProvenanceStore(Settings.from_env().home).get(state["run_id"])
    per_item = [e for e in record.entries if e.status == "per_item"]
    assert {e.selector for e in per_item} >= {"files_of:containers.dockerfiles[path=${inputs.dockerfile}]",
                                              "key:containers.shell_evidence[file=${inputs.dockerfile}]"}
    assert len(record.item_bundles) == 100
    for item in record.item_bundles:
        loaded = [e["target"] for e in item["entries"] if e["status"] == "included" and e["kind"] == "file"]
        assert loaded == [item["item"]]  # exactly its own Dockerfile
        assert item["totals"]["tokens"] <= item["totals"]["max_tokens"]


def test_a_dockerfile_over_the_per_file_cap_is_still_migrated(home: Path, make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"Dockerfile": big_dockerfile()})
    state = dispatch(Settings.from_env(), "distroless-migration", repo, {}, {})
    assert state["status"] == "succeeded", state.get("outcomes")
    assert "+FROM cgr.dev/chainguard/python" in state["patch"]
    record = ProvenanceStore(Settings.from_env().home).get(state["run_id"])
    [item] = record.item_bundles
    assert any(e["target"] == "Dockerfile" and e["status"] == "truncated" for e in item["entries"])
    [recipe] = [s for s in record.stages if s.stage == "recipe_match"]
    assert recipe.reads == [{"file": "Dockerfile", "why": "the bundle holds a cut copy", "outcome": "read"}]


def test_over_budget_is_judged_per_item_and_never_hides_a_recipe_plan(home: Path, make_repo: Callable[..., Path],
                                                                      tccm_dir: Callable[..., Path]) -> None:
    """Issue 22 §1: an item whose LLM bundle is over budget is still planned by a recipe (with a note); only an
    item no recipe plans ends over_budget (exit 3), with what its data already says."""
    tccm_dir({"distroless-migration": "task_class: distroless-migration\nversion: tight\n"
              "extends: distroless-migration\nbudget: {max_tokens: 420, per_file_max_tokens: 400}\n"})
    declined = big_dockerfile().replace("FROM python:3.12-slim", "FROM tiangolo/uvicorn-gunicorn-fastapi:python3.10")
    repo = make_repo({"small/Dockerfile": SMALL, "big/Dockerfile": big_dockerfile(), "odd/Dockerfile": declined})
    result = run_cli("dispatch", "distroless-migration", "--repo", str(repo), "--json")
    out = json.loads(result.stdout)
    assert result.returncode == ExitCode.BUDGET, result.stderr
    status = {i["id"]: i["status"] for i in out["items"]}
    assert status == {"big/Dockerfile": "succeeded", "odd/Dockerfile": "over_budget", "small/Dockerfile": "succeeded"}
    [big] = [i for i in out["items"] if i["id"] == "big/Dockerfile"]
    assert any("over budget" in n for n in big["notes"]) and "big/Dockerfile" in out["patch"]
    [odd] = [i for i in out["items"] if i["id"] == "odd/Dockerfile"]
    assert odd["blockers"][0]["kind"] == "over-budget" and "must_read" in odd["blockers"][0]["message"]
    assert "+FROM cgr.dev/chainguard/python" in out["patch"] and "odd/Dockerfile" not in out["patch"]


def test_a_compose_file_concerns_only_the_dockerfiles_below_it(home: Path, make_repo: Callable[..., Path]) -> None:
    compose = "services:\n  web:\n    build: ./app\n    command: sh -c 'python -m app'\n"
    repo = make_repo({"one/compose.yaml": compose, "one/app/Dockerfile": SMALL, "two/app/Dockerfile": SMALL})
    state = dispatch(Settings.from_env(), "distroless-migration", repo, {}, {})
    data = {o["item"]["id"]: o["item"]["data"] for o in state["outcomes"]}
    assert [e["file"] for e in data["one/app/Dockerfile"]["deployment_evidence"]] == ["one/compose.yaml"]
    assert data["two/app/Dockerfile"]["deployment_evidence"] == []


def test_an_item_every_recipe_declines_is_blocked_with_the_reasons(home: Path, make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"Dockerfile": "FROM tiangolo/uvicorn-gunicorn-fastapi:python3.10\nCOPY ./app /app\n"})
    result = run_cli("dispatch", "distroless-migration", "--repo", str(repo), "--json")
    out = json.loads(result.stdout)
    assert result.returncode == ExitCode.BLOCKED
    [item] = out["items"]
    assert item["status"] == "blocked"
    [blocker] = item["blockers"]
    assert blocker["kind"] == "recipe-declined" and "tiangolo/uvicorn-gunicorn-fastapi" in blocker["message"]
    assert "--model" in blocker["fix"]
