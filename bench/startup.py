"""Benchmark: whole-process CLI start-up (not a timed test).

Four figures, each the median of several runs of a fresh `python -m planner` process:
1. `planner --help`, and `planner dispatch --help` (what a mistyped dispatch also costs);
2. `planner gather REPO` after a one-file commit on a ~1,700-file real repository (installed
   packages' source copied into a git repo; the first gather is not timed);
3. `planner dispatch vulnerability-remediation` on the bundled example (examples/shop, in a copy).
Each is measured without a daemon (PLANNER_DAEMON=off) and, for this checkout, again with
`planner daemon` running (the command is handed to a warm process; the client process is timed).

Bytecode is written once first (to a temporary PYTHONPYCACHEPREFIX), as after a pip install.
`--before DIR` runs the same commands from DIR's checkout as well (its .venv if it has one, else this
Python; e.g. `git worktree add --detach /tmp/before afc4389`, the commit before lazy imports), so
before/after come from the same machine at the same time.
Run: python bench/startup.py [--rounds N] [--before /path/to/other/checkout]
A dispatch with nothing to do (no vulnerable package, no Dockerfile) is measured by bench/noop_dispatch.py.
"""

from __future__ import annotations

import argparse
import importlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from synthetic import commit_tree, git

HERE = Path(__file__).resolve().parent.parent
PACKAGES = ("celery", "kombu", "langchain_core", "langgraph", "pydantic", "rich", "redis", "yaml", "typer",
            "packaging", "hypothesis", "langsmith", "click", "fakeredis", "semver")
def real_repo(root: Path) -> Path:
    """Real third-party source in one git repository, with manifests a maintainer would have."""
    for name in PACKAGES:
        try:
            source = Path(next(iter(importlib.import_module(name).__path__)))
        except (ImportError, StopIteration):
            continue
        shutil.copytree(source, root / "src" / name, ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyc"))
    (root / "requirements.txt").write_text("pydantic==2.7.0\nPyYAML==5.3.1\nrich>=13\nredis==5.0.0\n")
    (root / "Dockerfile").write_text("FROM python:3.11-slim\nCOPY . /app\nRUN pip install -r /app/requirements.txt\n")
    return commit_tree(root, "real code")


def timed(python: str, tree: Path, args: list[str], home: Path, daemon: Path | None = None) -> float:
    # Bytecode as an installed tool has it (pip compiles on install), kept outside the trees measured.
    env = {**os.environ, "PLANNER_HOME": str(home), "PYTHONPYCACHEPREFIX": str(home.parent / "pycache"),
           "PYTHONPATH": str(tree)}  # the tree's own code, ahead of any editable install
    for name in ("PLANNER_REDIS_URL", "PYTHONDONTWRITEBYTECODE"):
        env.pop(name, None)
    env.update({"PLANNER_DAEMON": "", "PLANNER_DAEMON_DIR": str(daemon)} if daemon else {"PLANNER_DAEMON": "off"})
    start = time.perf_counter()
    subprocess.run([python, "-m", "planner", *args], cwd=tree, env=env, capture_output=True, check=False)
    return time.perf_counter() - start


def measure(label: str, tree: Path, repo: Path, base: Path, rounds: int,
            daemon: Path | None = None) -> dict[str, float]:
    own = tree / ".venv" / "bin" / "python"
    python = str(own) if own.exists() else sys.executable
    home = base / f"home-{label}"
    timed(python, tree, ["dispatch", "--help"], home)  # writes the bytecode once, as an install would
    if daemon:
        timed(python, tree, ["daemon", "start"], home, daemon)
    figures = {"--help": statistics.median(timed(python, tree, ["--help"], home, daemon) for _ in range(rounds))}
    figures["dispatch --help"] = statistics.median(timed(python, tree, ["dispatch", "--help"], home, daemon)
                                                   for _ in range(rounds))
    timed(python, tree, ["gather", str(repo)], home, daemon)  # the first, full gather is not what is measured
    samples = []
    for i in range(rounds):
        target = repo / "src" / "yaml" / "__init__.py"
        target.write_text(target.read_text() + f"\n# bench edit {label} {i}\n")
        git(repo, "commit", "-q", "-am", f"edit {label} {i}")
        samples.append(timed(python, tree, ["gather", str(repo)], home, daemon))
    figures["gather after a one-file commit"] = statistics.median(samples)
    samples = []
    for i in range(rounds):
        shop = base / f"shop-{label}-{i}"
        shutil.copytree(tree / "examples" / "shop", shop)
        samples.append(timed(python, tree, ["dispatch", "vulnerability-remediation", "--repo", str(shop),
                                            "--advisories", str(tree / "examples" / "advisories")],
                             base / f"dispatch-{label}-{i}", daemon))
    figures["dispatch on examples/shop"] = statistics.median(samples)
    if daemon:
        timed(python, tree, ["daemon", "stop"], home, daemon)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before", type=Path, help="another checkout with its own .venv, measured as 'before'")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        repo = real_repo(base / "real")
        files = sum(1 for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts)
        print(f"real repository: {files} files; median of {args.rounds} runs, whole process, seconds")
        trees = ([("before", args.before.resolve())] if args.before else []) + [("after", HERE)]
        results = {label: measure(label, tree, repo, base, args.rounds) for label, tree in trees}
        results["after, daemon"] = measure("daemon", HERE, repo, base, args.rounds, base / "daemon")
    for name in results["after"]:
        shown = "  ".join(f"{label} {figures[name]:.2f}" for label, figures in results.items())
        print(f"  {name:<32} {shown}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
