"""Benchmark: the YAML-only recipe classes on real repositories, with no model configured.

For each (task class, repository[, inputs]) given, dispatches in-process (a fresh PLANNER_HOME, so the
first run gathers) and prints one markdown row: status, files changed, matches (recipe changes), whether
`git apply --check` takes the patch, whether the changed Python files still compile, and the time.
Run: python bench/recipes.py CLASS=REPO[,NAME=VALUE...] ...
e.g. python bench/recipes.py yaml-safe-load=../corpus/mkdocs python-version-bump=../pythondotorg,python_version=3.13
"""

from __future__ import annotations

import os
import py_compile
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from planner.config import Settings  # noqa: E402
from planner.run.dispatch import dispatch  # noqa: E402


def _compiles(repo: Path, patch: str, files: list[str]) -> str:
    """Apply the patch in a scratch worktree and byte-compile the changed .py files."""
    python = [f for f in files if f.endswith(".py")]
    if not python:
        return "n/a"
    with tempfile.TemporaryDirectory() as scratch:
        subprocess.run(["git", "worktree", "add", "-q", "--detach", scratch], cwd=repo, check=True)
        try:
            subprocess.run(["git", "apply", "-"], cwd=scratch, input=patch, text=True, check=True)
            for name in python:
                py_compile.compile(str(Path(scratch, name)), doraise=True)
        except (subprocess.CalledProcessError, py_compile.PyCompileError) as exc:
            return f"no ({exc})"
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", scratch], cwd=repo, check=False)
    return "yes"


def row(task_class: str, repo: Path, inputs: dict[str, str]) -> str:
    started = time.perf_counter()
    state = dispatch(Settings.from_env(), task_class, repo, inputs, {})
    seconds = time.perf_counter() - started
    patch = state.get("patch") or ""
    plans = [o.get("plan") or {} for o in state.get("outcomes", [])]
    rows = [r for p in plans for r in (p.get("data") or {}).get("recipes", [])]
    files = sorted({f for r in rows for f in r["changed"]})
    matches = sum(r["matches"] for r in rows)
    applies = "-"
    if patch:
        check = subprocess.run(["git", "apply", "--check", "-"], cwd=repo, input=patch, text=True,
                               capture_output=True)
        applies = "yes" if check.returncode == 0 else f"no ({check.stderr.strip()[:80]})"
    compiles = _compiles(repo, patch, files) if patch else "-"
    shown = ",".join(f"{k}={v}" for k, v in inputs.items())
    return (f"| {task_class} | {repo.name}{' ' + shown if shown else ''} | {state.get('status')} | {len(files)} | "
            f"{matches} | {applies} | {compiles} | {seconds:.1f} s |")


def main(argv: list[str]) -> None:
    os.environ.setdefault("PLANNER_HOME", tempfile.mkdtemp(prefix="bench-recipes-"))
    print("| class | repository | status | files changed | matches | git apply --check | compiles | time |")
    print("|---|---|---|---|---|---|---|---|")
    for spec in argv:
        task_class, _, rest = spec.partition("=")
        repo, *pairs = rest.split(",")
        inputs = dict(p.split("=", 1) for p in pairs)
        print(row(task_class, Path(repo).resolve(), inputs), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
