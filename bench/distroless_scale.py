"""Benchmark: `planner dispatch distroless-migration` on one repository holding many Dockerfiles, whole process.

The three real multi-service trees of ../shared/corpus (docker/awesome-compose, instana/robot-shop,
dockersamples/example-voting-app: 52 Dockerfiles in about ten languages) are unpacked side by side into ONE
git repository, so a single dispatch migrates all of them, as a user's monorepo would. Each round times a
bare process (`python -m planner dispatch distroless-migration --repo REPO --json`, PLANNER_DAEMON=off) in a
fresh PLANNER_HOME (the gather is part of it), and records wall time, CPU time (user+sys of the process and
its children) and the load average. Medians are printed with the items' outcome, and the patch is checked
with `git apply --check`.
Run: python bench/distroless_scale.py [--rounds N] [--daemon]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from realworld import CORPUS, GIT, ROOT

TREES = ("awesome-compose", "robot-shop", "example-voting-app")


def combined(work: Path) -> Path | None:
    """The corpus trees in one committed repository (None when the corpus is absent)."""
    repo = work / "services"
    for name in TREES:
        archive = CORPUS / f"{name}.tar.gz"
        if not archive.is_file():
            print(f"missing {archive}: nothing to measure")
            return None
        (repo / name).mkdir(parents=True)
        subprocess.run(["tar", "xzf", str(archive), "-C", str(repo / name)], check=True)
    subprocess.run([*GIT, "-C", str(repo), "init", "-q"], check=True)
    subprocess.run([*GIT, "-C", str(repo), "add", "-A"], check=True)
    subprocess.run([*GIT, "-C", str(repo), "commit", "-qm", "services"], check=True)
    return repo


def dispatch(repo: Path, home: Path, daemon: Path | None) -> tuple[float, dict]:
    """(wall s, the --json result) of one whole-process dispatch (CPU: the caller's children times)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLANNER_") and k != "PYTHONDONTWRITEBYTECODE"}
    env.update({"PLANNER_HOME": str(home), "PYTHONPATH": str(ROOT), "PLANNER_DAEMON": "off"})
    if daemon is not None:
        env.update({"PLANNER_DAEMON": "", "PLANNER_DAEMON_DIR": str(daemon)})
    command = [sys.executable, "-m", "planner", "dispatch", "distroless-migration", "--repo", str(repo), "--json"]
    start = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - start
    try:
        return wall, json.loads(done.stdout)
    except ValueError:
        raise SystemExit(f"dispatch printed no JSON (exit {done.returncode}): {done.stderr.strip()[-400:]}") from None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--daemon", action="store_true", help="also time each round with `planner daemon` running")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="dlscale-") as folder:
        work = Path(folder)
        repo = combined(work)
        if repo is None:
            return 0
        files = subprocess.run([*GIT, "-C", str(repo), "ls-files"], capture_output=True, text=True,
                               check=True).stdout.splitlines()
        dockerfiles = [f for f in files if f.rsplit("/", 1)[-1].lower().startswith("dockerfile")
                       or f.lower().endswith(".dockerfile")]
        print(f"one repository: {len(files)} files, {len(dockerfiles)} Dockerfiles; {args.rounds} rounds")
        daemon = work / "daemon" if args.daemon else None
        if daemon is not None:
            subprocess.run([sys.executable, "-m", "planner", "daemon", "start"], cwd=ROOT, check=True,
                           env={**os.environ, "PLANNER_DAEMON_DIR": str(daemon), "PYTHONPATH": str(ROOT)})
        times: dict[str, list[tuple[float, float, float]]] = {"bare": [], "daemon": []}
        result: dict = {}
        for n in range(args.rounds):
            for label in ("bare", "daemon") if daemon else ("bare",):
                home = work / f"home-{label}-{n}"
                load = os.getloadavg()[0]
                before = os.times()
                wall, result = dispatch(repo, home, daemon if label == "daemon" else None)
                after = os.times()
                cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
                times[label].append((wall, cpu, load))
                shutil.rmtree(home, ignore_errors=True)
        if daemon is not None:
            subprocess.run([sys.executable, "-m", "planner", "daemon", "stop"], cwd=ROOT, check=False,
                           env={**os.environ, "PLANNER_DAEMON_DIR": str(daemon), "PYTHONPATH": str(ROOT)})
        statuses = Counter(item.get("status") for item in result.get("items") or [])
        applies = "no patch"
        if result.get("patch"):
            (work / "all.patch").write_text(result["patch"], encoding="utf-8")
            check = subprocess.run([*GIT, "-C", str(repo), "apply", "--check", str(work / "all.patch")],
                                   capture_output=True, text=True)
            applies = ("applies (git apply --check)" if check.returncode == 0
                       else f"does NOT apply: {check.stderr[-200:]}")
        print(f"items: {dict(sorted(statuses.items()))}; patch {applies}")
        for label, samples in times.items():
            if not samples:
                continue
            walls, cpus, loads = zip(*samples, strict=True)
            wall = statistics.median(walls)
            print(f"  {label:<7} median {wall:5.2f} s wall (min {min(walls):.2f}, max {max(walls):.2f}), "
                  f"CPU {statistics.median(cpus):.2f} s, {1000 * wall / len(dockerfiles):.0f} ms per Dockerfile, "
                  f"load {min(loads):.1f}-{max(loads):.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
