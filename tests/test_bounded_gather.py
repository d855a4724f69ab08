"""Hostile files in a real repository, end to end: `planner gather` (a subprocess, with a timeout and a cap
on its address space) finishes quickly, names each file it refused in a diagnostic, and still produces what
the other files give. And a task-class file nested too deep is a file:line error that blocks no other class."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from conftest import run_cli
from test_bounded import alias_bomb

MEMORY_CAP = 1 << 30  # a gather of this repository needs ~400 MB of address space; the bombs used gigabytes
LIMIT_S = 60  # the old code ran for minutes; the bounded gather takes about a second on a busy machine


def _capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def _gather(repo: Path) -> dict:
    done = subprocess.run([sys.executable, "-m", "planner", "gather", str(repo), "--json"], capture_output=True,
                          text=True, timeout=LIMIT_S, preexec_fn=_capped, env=os.environ.copy())
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


HOSTILE = {
    "web/docker-compose.yml": "x-bomb:\n" + alias_bomb(indent="  ") + "services:\n  web:\n    image: nginx\n"
                              "    environment: *a9\n",
    "ui/package.json": '{"name": "ui", "dependencies": {"left-pad": "1.3.0"}}\n',
    "ui/pnpm-lock.yaml": "lockfileVersion: '6.0'\n" + alias_bomb() + "dependencies:\n  left-pad:\n"
                         "    specifier: 1.3.0\n    version: 1.3.0\npackages:\n  /left-pad@1.3.0:\n"
                         "    resolution: {integrity: sha512-x}\n    dependencies: *a9\n",
    "k8s/deploy.yaml": "apiVersion: v1\nkind: Pod\n" + alias_bomb() + "spec: {containers: *a9}\n",
    "deep/package.json": '{"name": "deep", "x": ' + "[" * 5000 + "]" * 5000 + "}\n",
    "deep/pyproject.toml": '[project]\nname = "deep"\nx = ' + "[" * 5000 + "]" * 5000 + "\n",
    ".pre-commit-config.yaml": "repos: " + "[" * 900 + "]" * 900 + "\n",
    "big/docker-compose.yml": "services:\n  web:\n    image: nginx\n" + "# padding\n" * 60_000,
    "huge/pnpm-lock.yaml": "lockfileVersion: '6.0'\n" + "# padding\n" * 250_000,
    "requirements.txt": "requests==2.30.0\n",
    "Dockerfile": "FROM python:3.11-slim\nCMD [" + "[" * 100_000 + "]" * 100_000 + "]\n",
    "app/Dockerfile": "FROM python:3.11-slim\nCOPY app.py /app.py\nCMD [\"python\", \"/app.py\"]\n",
}


def test_gather_of_hostile_files_is_quick_and_names_each_one(home: Path, make_repo: Callable[..., Path]) -> None:
    context = _gather(make_repo(HOSTILE))  # how fast: bench/failfast.py
    refused = {(d["file"], d["probe"]): d["message"] for d in context["diagnostics"] if d.get("file")}
    assert "alias" in refused[("web/docker-compose.yml", "containers")]
    assert "alias" in refused[("ui/pnpm-lock.yaml", "dependencies")]
    assert "alias" in refused[("k8s/deploy.yaml", "containers")]
    assert "nests deeper" in refused[("deep/package.json", "dependencies")]
    assert "nests deeper" in refused[("deep/pyproject.toml", "dependencies")]
    assert "nests deeper" in refused[(".pre-commit-config.yaml", "conventions")]
    assert "larger than" in refused[("big/docker-compose.yml", "containers")]
    assert "larger than 2,000,000 bytes" in refused[("huge/pnpm-lock.yaml", "dependencies")]
    # What the other files say is all there.
    assert [d["version"] for d in context["dependencies"]["requests"]] == ["2.30.0"]
    assert "left-pad" in context["dependencies"]
    paths = {d["path"] for d in context["containers"]["dockerfiles"]}
    assert {"Dockerfile", "app/Dockerfile"} <= paths
    kinds = {m["path"]: m["kinds"] for m in context["containers"]["deployments"]}
    assert kinds["k8s/deploy.yaml"] == ["Pod"]  # read from its lines, as for templated YAML


def test_a_task_class_nested_too_deep_is_a_line_error_and_blocks_no_other(
        home: Path, tccm_dir: Callable[..., Path], make_repo: Callable[..., Path]) -> None:
    head = "task_class: {name}\nversion: 1\ndescription: d\nbudget: "
    tccm_dir({"deep": head.format(name="deep") + "[" * 5000 + "]" * 5000 + "\n",
              "deeper": head.format(name="deeper") + "[" * 900 + "]" * 900 + "\n",
              "bomb": head.format(name="bomb") + "\nx-bomb:\n" + alias_bomb(indent="  ")})
    validated = run_cli("task-classes", "validate")
    assert validated.returncode == 1 and "Traceback" not in validated.stderr
    assert "deep.yaml:4: invalid YAML" in validated.stderr and "nesting depth" in validated.stderr
    assert "deeper.yaml:4: nests deeper than 32 levels" in validated.stderr
    assert "bomb.yaml:6: YAML anchors and aliases are not allowed" in validated.stderr
    listed = {row["task_class"]: row for row in json.loads(run_cli("task-classes", "list", "--json").stdout)}
    assert listed["deeper"]["valid"] is False and "deeper.yaml:4" in listed["deeper"]["errors"][0]
    assert listed["distroless-migration"]["valid"] is True
    repo = make_repo({"Dockerfile": "FROM python:3.11-slim\nCMD [\"python\"]\n"})
    refused = run_cli("dispatch", "deeper", "--repo", str(repo))
    assert refused.returncode == 1 and "deeper.yaml:4: nests deeper" in refused.stderr
    other = run_cli("dispatch", "distroless-migration", "--repo", str(repo))
    assert other.returncode == 0, other.stderr
