"""Benchmark: a whole-process, bare dispatch that has nothing to do (not a timed test; issue 27: ≤ 0.5 s).

A small git repository whose pinned dependencies have no known vulnerability; each figure is the median of
N fresh `python -m planner` processes with PLANNER_DAEMON=off, as wall seconds and CPU seconds (the child's
user + system time: the machine may be shared, CPU time is what the process itself cost):
1. `dispatch vulnerability-remediation` in a new PLANNER_HOME: the run gathers the repository first;
2. the same again: the RepoContext is fresh, nothing is gathered;
3. `dispatch distroless-migration` on the same repository (no Dockerfile), RepoContext fresh.
Advisories: the PyPA snapshot (../shared/advisories/pypa) when present, else examples/advisories; their
compiled index (PLANNER_ADVISORY_INDEX) is made once, before anything is measured, as a user's is.

Bytecode is written once first (to a temporary PYTHONPYCACHEPREFIX), as after a pip install. `--before DIR`
measures another checkout as well (e.g. `git archive COMMIT | tar -x -C DIR`), round by round interleaved with
this one, so a busy machine weighs on both alike.
Run: python bench/noop_dispatch.py [--rounds N] [--before DIR] [--advisories PATH]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
PYPA = HERE.parent / "shared" / "advisories" / "pypa"
SAFE = {"requirements.txt": "requests==2.32.3\nurllib3==2.2.2\nidna==3.7\ncertifi==2024.7.4\n",
        "app.py": "import requests\n\nprint(requests.get('https://example.com').status_code)\n",
        "README.md": "A service with nothing vulnerable pinned.\n"}
GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@example.com", "GIT_COMMITTER_NAME": "bench",
           "GIT_COMMITTER_EMAIL": "b@example.com"}
FIGURES = ("first dispatch (gathers)", "dispatch again (fresh)", "distroless, no Dockerfile")


def make_repo(root: Path) -> Path:
    root.mkdir(parents=True)
    for name, text in SAFE.items():
        (root / name).write_text(text)
    env = {**os.environ, **GIT_ENV}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "safe pins"]):
        subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=env)
    return root


def timed(tree: Path, args: list[str], home: Path, cache: Path) -> tuple[float, float, int]:
    """(wall s, CPU s, exit code) of one `python -m planner ARGS` from `tree`, without a daemon."""
    env = {**os.environ, "PLANNER_HOME": str(home), "PYTHONPYCACHEPREFIX": str(cache), "PYTHONPATH": str(tree),
           "PLANNER_DAEMON": "off", "PLANNER_ADVISORY_INDEX": str(cache.parent / "advisory-index")}
    for name in ("PLANNER_REDIS_URL", "PYTHONDONTWRITEBYTECODE", "PLANNER_ADVISORIES"):
        env.pop(name, None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "planner", *args], cwd=tree, env=env, capture_output=True,
                          check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.returncode


def one_round(tree: Path, repo: Path, advisories: Path, base: Path, label: str, i: int) -> list[tuple[float, float]]:
    home, cache = base / f"home-{label}-{i}", base / f"pycache-{label}"
    remediation = ["dispatch", "vulnerability-remediation", "--repo", str(repo), "--advisories", str(advisories)]
    samples = []
    for args in (remediation, remediation, ["dispatch", "distroless-migration", "--repo", str(repo)]):
        wall, cpu, code = timed(tree, args, home, cache)
        if code != 0:
            raise SystemExit(f"{label}: `planner {' '.join(args)}` exited {code}")
        samples.append((wall, cpu))
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--before", type=Path, help="another checkout, measured as 'before'")
    parser.add_argument("--advisories", type=Path, default=PYPA if PYPA.is_dir() else HERE / "examples" / "advisories")
    args = parser.parse_args()
    trees = ([("before", args.before.resolve())] if args.before else []) + [("after", HERE)]
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        repo = make_repo(base / "repo")
        for label, tree in trees:  # bytecode written and advisories compiled once, as an install would
            timed(tree, ["gather", str(repo), "--advisories", str(args.advisories)], base / "warm",
                  base / f"pycache-{label}")
        results: dict[str, list[list[tuple[float, float]]]] = {label: [] for label, _ in trees}
        for i in range(args.rounds):
            for label, tree in trees:
                results[label].append(one_round(tree, repo, args.advisories, base, label, i))
    print(f"no-op dispatch, whole process, PLANNER_DAEMON=off; advisories {args.advisories}; "
          f"median of {args.rounds}, seconds wall / CPU")
    for n, figure in enumerate(FIGURES):
        shown = "  ".join(f"{label} {statistics.median(r[n][0] for r in rounds):.2f} / "
                          f"{statistics.median(r[n][1] for r in rounds):.2f}" for label, rounds in results.items())
        print(f"  {figure:<28} {shown}")


if __name__ == "__main__":
    main()
