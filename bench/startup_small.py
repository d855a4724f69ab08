"""Benchmark: the fixed cost of a bare `planner gather` on a two-file repository (not a timed test).

Issue 27's target is 0.15 s whole process: a fresh `python -m planner gather REPO` (no daemon, a fresh
PLANNER_HOME each run, so a full gather and no stored snapshot) on a git repository holding requirements.txt
(requests==2.31.0) and app.py importing requests. Prints the median wall time and the median CPU time
(user + system, from the child's rusage) of `--rounds` runs; bytecode is written once first, as after a
pip install. `--before DIR` measures another checkout the same way (e.g. `git worktree add --detach
/tmp/before main`), interleaved with this one so both see the same machine load.
Run: python bench/startup_small.py [--rounds N] [--before /path/to/other/checkout]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from synthetic import commit_tree

HERE = Path(__file__).resolve().parent.parent


def small_repo(root: Path) -> Path:
    root.mkdir()
    (root / "requirements.txt").write_text("requests==2.31.0\n")
    (root / "app.py").write_text('import requests\nrequests.get("x")\n')
    return commit_tree(root, "small")


def one_run(tree: Path, repo: Path, base: Path) -> tuple[float, float]:
    """(wall, cpu) seconds of one fresh `python -m planner gather REPO` from `tree`'s checkout."""
    home = Path(tempfile.mkdtemp(dir=base))
    env = {**os.environ, "PLANNER_HOME": str(home), "PYTHONPYCACHEPREFIX": str(base / f"pycache-{tree.name}"),
           "PYTHONPATH": str(tree), "PLANNER_DAEMON": "off"}
    for name in ("PLANNER_REDIS_URL", "PYTHONDONTWRITEBYTECODE"):
        env.pop(name, None)
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "planner", "gather", str(repo)], cwd=tree, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"gather failed in {tree}: {proc.stderr.read().decode() if proc.stderr else ''}")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--before", type=Path, help="another checkout, measured as 'before'")
    args = parser.parse_args()
    trees = ([("before", args.before.resolve())] if args.before else []) + [("after", HERE)]
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        repo = small_repo(base / "small")
        samples: dict[str, list[tuple[float, float]]] = {label: [] for label, _ in trees}
        for _, tree in trees:
            one_run(tree, repo, base)  # writes the bytecode once, as an install would
        for _ in range(args.rounds):
            for label, tree in trees:
                samples[label].append(one_run(tree, repo, base))
    print(f"bare `planner gather` on a two-file repository: median of {args.rounds} fresh processes")
    for label, runs in samples.items():
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        print(f"  {label:<7} wall {wall:.3f} s  cpu {cpu:.3f} s")


if __name__ == "__main__":
    main()
