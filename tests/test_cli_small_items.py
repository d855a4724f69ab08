"""Small CLI promises (issue 41): `--version`, validate counting files, `list` showing inputs, `--apply` without
a git identity as an environment problem, and a missing tool named with how to install it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path

import pytest
from conftest import run_cli

CLASS = """\
task_class: {name}
version: 1
description: Title the README.
inputs:
  title: {{description: the new title, required: true}}
  note: a free note
recipes:
  - id: {name}@1
    files: [/README.md]
    replace: {{pattern: '\\A# .*$', with: '# ${{inputs.title}}', count: 1}}
"""


def test_version_prints_the_installed_version() -> None:
    done = run_cli("--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"planner (tccm-planner) {version('tccm-planner')}"


def test_validate_counts_the_files_of_a_directory(home: Path, tmp_path: Path) -> None:
    folder = tmp_path / "classes"
    folder.mkdir()
    for name in ("title-one", "title-two"):
        (folder / f"{name}.yaml").write_text(CLASS.format(name=name))
    done = run_cli("task-classes", "validate", str(folder))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ok: 2 task class file(s) valid" in done.stdout
    assert json.loads(run_cli("task-classes", "validate", str(folder), "--json").stdout)["checked"] == 2


def test_list_shows_the_inputs_each_class_accepts(home: Path, tccm_dir: Callable[..., Path]) -> None:
    tccm_dir({"title-one": CLASS.format(name="title-one")})
    rows = {r["task_class"]: r for r in json.loads(run_cli("task-classes", "list", "--json").stdout)}
    assert rows["title-one"]["inputs"] == {"note": {"description": "a free note", "required": False},
                                           "title": {"description": "the new title", "required": True}}
    assert "python_version" in rows["python-version-bump"]["inputs"]
    table = run_cli("task-classes", "list", env={"COLUMNS": "400"}).stdout
    line = next(line for line in table.splitlines() if "title-one" in line)
    assert "note, title*" in line


def test_apply_without_a_git_identity_is_an_environment_problem(make_repo: Callable[..., Path],
                                                                tmp_path: Path) -> None:
    classes = tmp_path / "classes"
    classes.mkdir()
    (classes / "title-one.yaml").write_text(CLASS.format(name="title-one"))
    repo = make_repo({"README.md": "# old\n"})
    empty_home = tmp_path / "no-identity"
    empty_home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "EMAIL"))}
    env.update(HOME=str(empty_home), XDG_CONFIG_HOME=str(empty_home), GIT_CONFIG_NOSYSTEM="1",
               # git would otherwise make up user@host where the host has a domain name
               GIT_CONFIG_COUNT="1", GIT_CONFIG_KEY_0="user.useConfigOnly", GIT_CONFIG_VALUE_0="true",
               PLANNER_HOME=str(tmp_path / "planner-home"), PLANNER_TASK_CLASS_PATH=str(classes),
               PLANNER_DAEMON="off")
    done = subprocess.run([sys.executable, "-m", "planner", "dispatch", "title-one", "--repo", str(repo),
                           "-i", "title=Widget", "--apply"], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 6, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "git has no identity" in done.stderr and "git config --global user.email" in done.stderr
    branches = subprocess.run(["git", "-C", str(repo), "branch", "--list", "planner/*"], capture_output=True,
                              text=True).stdout
    assert branches == ""  # refused before the run: nothing committed


def test_pyupgrade_without_ruff_says_how_to_install_it(home: Path, make_repo: Callable[..., Path],
                                                       tmp_path: Path) -> None:
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    repo = make_repo({"app.py": "from typing import List\nx: List[int] = []\n"})
    bare = tmp_path / "bin"  # git and the sandbox's tools, but no ruff
    bare.mkdir()
    for tool in ("git", "bwrap", "unshare"):
        found = shutil.which(tool)
        if found:
            (bare / tool).symlink_to(found)
    done = run_cli("dispatch", "pyupgrade", "--repo", str(repo), env={"PATH": str(bare), "PLANNER_DAEMON": "off"})
    if "sandbox" in done.stderr + done.stdout and "ruff" not in done.stderr + done.stdout:
        pytest.skip("no sandbox here: " + done.stderr.strip())
    out = done.stdout + done.stderr
    assert done.returncode != 0 and "'ruff' is not installed" in out and "pip install ruff" in out, out


def test_the_docs_say_yaml_only_classes_run_their_recipes_first() -> None:
    text = (Path(__file__).resolve().parents[1] / "docs" / "task-classes.md").read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| anything else |"))
    assert "recipes:` first" in row and row.index("recipes") < row.index("LLM")
    assert "runs through the LLM path" not in text
