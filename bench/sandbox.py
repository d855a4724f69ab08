"""Benchmark: what the sandbox adds to one step (not a timed test). Issue 40's target: ≤ 50 ms per step.

Each round runs the same step twice, interleaved: through planner/sandbox.py as a run does (bubblewrap,
prlimit, scrubbed environment) and with --no-sandbox's path (prlimit and the environment only), in a
work folder holding a copy of examples/shop. Steps: `true` (the bare cost) and `sh -c 'ls -R . | wc -l'`
(a program that reads the copy). Prints the median and p90 wall time of each and the median CPU time
(user + system of the children, from rusage) per step.
Run: python bench/sandbox.py [--rounds N]
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))

from planner import sandbox  # noqa: E402 - after the path is set

STEPS = {"true": ["true"], "read the copy": ["sh", "-c", "ls -R . | wc -l"]}


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _one(argv: list[str], work: Path, isolated: bool) -> tuple[float, float]:
    sandbox.allow_unsandboxed(not isolated)
    cpu, started = _children_cpu(), time.perf_counter()
    done = sandbox.run(sandbox.Step(argv, work, timeout=60))
    wall = time.perf_counter() - started
    if done.exit_code != 0:
        raise SystemExit(f"{argv} failed ({done.isolation}): {done.output[-300:]}")
    return wall, _children_cpu() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=41)
    args = parser.parse_args()
    sandbox.check_available()
    with sandbox.workspace("bench") as folder:
        work = folder / "repo"
        shutil.copytree(HERE / "examples" / "shop", work)
        print(f"{'step':<15} {'mode':<10} {'median ms':>10} {'p90 ms':>8} {'cpu ms':>8}")
        for name, argv in STEPS.items():
            samples: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
            _one(argv, work, True)  # warm the page cache and the availability probe
            for _ in range(args.rounds):
                for isolated in (True, False):
                    samples[isolated].append(_one(argv, work, isolated))
            medians = {}
            for isolated in (False, True):
                walls = sorted(w for w, _ in samples[isolated])
                cpus = [c for _, c in samples[isolated]]
                medians[isolated] = statistics.median(walls)
                print(f"{name:<15} {'bwrap' if isolated else 'none':<10} {medians[isolated] * 1000:>10.1f} "
                      f"{walls[int(len(walls) * 0.9)] * 1000:>8.1f} {statistics.median(cpus) * 1000:>8.1f}")
            print(f"{name:<15} {'added':<10} {(medians[True] - medians[False]) * 1000:>10.1f}")


if __name__ == "__main__":
    main()
