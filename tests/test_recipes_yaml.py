"""YAML recipes end to end: the shipped classes on their example repositories, a class written in a test
(as a user would) dispatched with no model, work items from YAML, and not_applicable."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import commit_all, git

from planner.config import Settings
from planner.run.dispatch import EXIT, dispatch
from planner.store.provenance import ProvenanceStore

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _copy(example: str, tmp_path: Path) -> Path:
    repo = tmp_path / example
    shutil.copytree(EXAMPLES / example, repo)
    git(repo, "init", "-q", "-b", "main")
    commit_all(repo, "initial")
    return repo


def _applies(repo: Path, patch: str) -> None:
    done = subprocess.run(["git", "apply", "--check", "-"], cwd=repo, input=patch, text=True, capture_output=True)
    assert done.returncode == 0, done.stderr


def test_yaml_safe_load_on_its_example(home: Path, tmp_path: Path) -> None:
    repo = _copy("yamlload", tmp_path)
    state = dispatch(Settings.from_env(), "yaml-safe-load", repo, {}, {})
    assert state["status"] == "succeeded", state.get("error")
    patch = state["patch"]
    assert "+        return yaml.safe_load(handle)\n" in patch
    assert "+    return list(yaml.safe_load_all(text))\n" in patch
    assert "+    return yaml.safe_load(stream=text)\n" in patch
    assert "Loader=yaml.FullLoader" not in patch and "yaml.SafeLoader" not in patch  # a Loader: left alone
    _applies(repo, patch)
    record = ProvenanceStore(Settings.from_env().home).get(state["run_id"])
    recipe = next(s for s in record.stages if s.stage == "recipe_match")
    assert recipe.outcome == "matched" and "yaml-safe-load@1" in recipe.reason
    assert "yaml-safe-load@1" in state["report"]


def test_a_class_with_recipes_and_nothing_to_do_is_not_applicable(home: Path, make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"app.py": "import json\nprint(json.loads('1'))\n"})
    state = dispatch(Settings.from_env(), "yaml-safe-load", repo, {}, {})
    assert state["status"] == "not_applicable" and not state["patch"]
    assert EXIT["not_applicable"] == 0
    assert "match nothing" in state["report"]
    assert [s["outcome"] for s in state["stages"]] == ["not_applicable"]  # never asks for an LLM


def test_python_version_bump_moves_every_pin_together(home: Path, tmp_path: Path) -> None:
    repo = _copy("pyversion", tmp_path)
    state = dispatch(Settings.from_env(), "python-version-bump", repo, {"python_version": "3.12"}, {})
    assert state["status"] == "succeeded", state.get("error")
    patch = state["patch"]
    assert '+          python-version: "3.12"  # keep in step with .python-version\n' in patch
    assert "-3.10\n+3.12\n" in patch
    assert "+FROM python:3.12-slim AS build\n" in patch
    assert "+FROM --platform=linux/amd64 docker.io/library/python:3.12-slim\n" in patch
    assert '["3.9", "3.10"]' not in patch  # a matrix is a person's call
    _applies(repo, patch)


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff is not installed")
def test_pyupgrade_runs_ruff_in_a_copy(home: Path, tmp_path: Path) -> None:
    repo = _copy("pyupgrade", tmp_path)
    before = (repo / "pkg/shapes.py").read_text()
    state = dispatch(Settings.from_env(), "pyupgrade", repo, {}, {})
    if state["status"] == "failed" and "unshare" in (state.get("error") or state["report"]):
        pytest.skip("no network namespaces here")
    assert state["status"] == "succeeded", state["report"]
    assert "+def count_sides(shapes: list[Shape]) -> dict[str, int]:\n" in state["patch"]
    assert "+        super().__init__()\n" in state["patch"]
    assert (repo / "pkg/shapes.py").read_text() == before  # ran in a throwaway copy
    _applies(repo, state["patch"])


HELD_OUT = """
task_class: print-to-logging
version: 1
description: Replace print(x) by logger.info(x).
must_read:
  - glob: "**/*.py"
budget: {max_files: 10, max_tokens: 20000, per_file_max_tokens: 5000}
recipes:
  - id: print-to-logging@0.1.0
    files: ["src/**/*.py"]
    ast-grep:
      id: print-to-logger
      language: python
      rule:
        pattern: print($A)
        inside: {kind: function_definition, stopBy: end}
      fix: logger.info($A)
  - id: strip-trailing-todo@2
    files: ["src/**/*.py"]
    replace:
      pattern: '[ \\t]+# TODO$'
      with: ''
"""


def test_a_class_written_in_yaml_runs_with_no_model(home: Path, tccm_dir: Callable[..., Path],
                                                    make_repo: Callable[..., Path]) -> None:
    tccm_dir({"print-to-logging": HELD_OUT})
    repo = make_repo({"src/app/main.py": "def main(x):\n    print(x)  # TODO\n    print(print(x))\n\nprint('top')\n",
                      "tests/test_main.py": "def test():\n    print(1)\n"})
    state = dispatch(Settings.from_env(), "print-to-logging", repo, {}, {})
    assert state["status"] == "succeeded", state["report"]
    patch = state["patch"]
    assert "+    logger.info(x)\n" in patch
    assert "+    logger.info(logger.info(x))\n" in patch  # nested: applied until nothing changes
    assert "logger.info('top')" not in patch and "tests/test_main.py" not in patch  # outside a function; files:
    _applies(repo, patch)
    assert "print-to-logging@0.1.0, strip-trailing-todo@2" in state["report"]


PER_FILE = HELD_OUT.replace("print-to-logging", "print-per-file", 1).replace(
    "recipes:", "work_items: {per: file, of: \"src/**/*.py\"}\nrecipes:")
PER_MATCH = HELD_OUT.replace("print-to-logging", "print-per-match", 1).replace(
    "recipes:", "work_items: {per: match}\nrecipes:")


def test_work_items_per_file_and_per_match(home: Path, tccm_dir: Callable[..., Path],
                                           make_repo: Callable[..., Path]) -> None:
    tccm_dir({"print-per-file": PER_FILE, "print-per-match": PER_MATCH})
    repo = make_repo({"src/a.py": "def f():\n    print(1)\n\n\ndef g():\n    print(2)\n",
                      "src/b.py": "def h():\n    print(3)\n", "src/c.py": "X = 1\n"})
    by_file = dispatch(Settings.from_env(), "print-per-file", repo, {}, {})
    assert by_file["status"] == "succeeded", by_file["report"]
    statuses = {o["item"]["id"]: o["status"] for o in by_file["outcomes"]}
    assert statuses == {"file:src/a.py": "succeeded", "file:src/b.py": "succeeded", "file:src/c.py": "not_applicable"}
    by_match = dispatch(Settings.from_env(), "print-per-match", repo, {}, {})
    assert by_match["status"] == "succeeded", by_match["report"]
    assert [o["item"]["id"] for o in by_match["outcomes"]] == ["match:src/a.py:2", "match:src/a.py:6",
                                                               "match:src/b.py:2"]
    assert by_match["patch"] == by_file["patch"]
    _applies(repo, by_match["patch"])


def test_an_empty_work_item_source_is_not_applicable(home: Path, tccm_dir: Callable[..., Path],
                                                     make_repo: Callable[..., Path]) -> None:
    tccm_dir({"print-per-file": PER_FILE})
    repo = make_repo({"lib/x.py": "print(1)\n"})
    state = dispatch(Settings.from_env(), "print-per-file", repo, {}, {})
    assert state["status"] == "not_applicable" and state["items"] == []
    assert "no file matches" in state["report"]


MINIMAL = """
task_class: eq-none
version: 1
description: Compare with None by identity.
recipes:
  - id: eq-none@1
    files: "**/*.py"
    ast-grep:
      id: eq-none
      language: Python
      rule: {pattern: $X == None}
      fix: $X is None
  - id: license-year@1
    files: ["LICENSE"]
    replace: {pattern: 'Copyright \\(c\\) (?P<year>[0-9]{4})', with: 'Copyright (c) \\g<year>-2026', count: 1}
"""


def test_a_minimal_class_needs_no_bands_nor_budget(home: Path, tccm_dir: Callable[..., Path],
                                                   make_repo: Callable[..., Path], tmp_path: Path) -> None:
    tccm_dir({"eq-none": MINIMAL})
    repo = make_repo({"pkg/m.py": "def f(x):\n    return [y for y in x if y == None] if x == None else x\n",
                      "LICENSE": "Copyright (c) 2019 A\nCopyright (c) 2020 B\n"})
    state = dispatch(Settings.from_env(), "eq-none", repo, {}, {})
    assert state["status"] == "succeeded", state["report"]
    assert "+    return [y for y in x if y is None] if x is None else x\n" in state["patch"]
    assert "+Copyright (c) 2019-2026 A\n" in state["patch"] and "+Copyright (c) 2020-2026" not in state["patch"]
    plain = tmp_path / "plain"  # not a git repository, nothing to do
    plain.mkdir()
    (plain / "a.py").write_text("x = 1\n")
    state = dispatch(Settings.from_env(), "eq-none", plain, {}, {})
    assert state["status"] == "not_applicable"
    assert "eq-none@1: 1 file(s) considered; license-year@1: no file matches its files" in state["report"]


def test_recipes_run_when_must_read_is_over_budget(home: Path, tccm_dir: Callable[..., Path],
                                                   make_repo: Callable[..., Path]) -> None:
    tight = MINIMAL.replace("recipes:", "must_read:\n  - glob: \"**/*.py\"\n"
                            "budget: {max_files: 1, max_tokens: 1000, per_file_max_tokens: 500}\nrecipes:")
    tccm_dir({"eq-none": tight})
    repo = make_repo({f"m{i}.py": "def f(x):\n    return x == None\n" for i in range(3)})
    state = dispatch(Settings.from_env(), "eq-none", repo, {}, {})
    assert state["status"] == "succeeded", state["report"]
    assert state["patch"].count("+    return x is None\n") == 3
    assert "does not fit the budget" in state["report"]
    (repo / "m0.py").write_text("def f(x):\n    return x\n")  # now only an LLM could go on: refused, named
    (repo / "m1.py").write_text("def f(x):\n    return x\n")
    (repo / "m2.py").write_text("def f(x):\n    return x\n")
    none = dispatch(Settings.from_env(), "eq-none", repo, {}, {})
    assert none["status"] == "not_applicable"


PER_KEY = """
task_class: base-python-per-image
version: 1
description: One item per Dockerfile the RepoContext knows.
inputs:
  python_version: {description: target, required: true}
work_items: {per: key, of: containers.dockerfiles}
recipes:
  - id: dockerfile-python@1
    files_of: containers.dockerfiles
    replace:
      pattern: '^(?P<from>FROM[ \\t]+python:)3\\.[0-9]+'
      with: '\\g<from>${inputs.python_version}'
"""


def test_work_items_per_key_and_deterministic_plans(home: Path, tccm_dir: Callable[..., Path],
                                                    make_repo: Callable[..., Path]) -> None:
    tccm_dir({"base-python-per-image": PER_KEY})
    repo = make_repo({"a/Dockerfile": "FROM python:3.10-slim\n", "b/Dockerfile": "FROM python:3.11\nRUN true\n",
                      "c/Dockerfile": "FROM alpine:3.20\n"})
    runs = [dispatch(Settings.from_env(), "base-python-per-image", repo, {"python_version": "3.13"}, {})
            for _ in range(2)]
    first = runs[0]
    assert first["status"] == "succeeded", first["report"]
    statuses = [(o["item"]["data"]["files"], o["status"]) for o in first["outcomes"]]
    assert statuses == [(["a/Dockerfile"], "succeeded"), (["b/Dockerfile"], "succeeded"),
                        (["c/Dockerfile"], "not_applicable")]
    assert "+FROM python:3.13-slim\n" in first["patch"] and "+FROM python:3.13\n" in first["patch"]
    assert runs[1]["patch"] == first["patch"]
    assert [o["plan"] for o in runs[1]["outcomes"]] == [o["plan"] for o in first["outcomes"]]
