"""Benchmark: gather a synthetic 10,000-file repo, then cold bundle builds.

"Cold" means the RepoContext is already gathered and stored, but every build
reads it from PLANNER_HOME again and renders from scratch (no hot views, no
in-process caching between builds). Run: python bench/bundle.py [--files N] [--builds N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import synthetic

from planner import service, tokens
from planner.config import Settings


def percentile(samples: list[float], pct: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--builds", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo = synthetic.build(Path(tmp) / "repo", files=args.files)
        settings = Settings(home=Path(tmp) / "home", task_class_dirs=Settings.from_env().task_class_dirs)
        tokens.encoding()  # load the BPE once, as a long-lived process would
        started = time.perf_counter()
        context, _ = service.gather_repo(settings, repo)
        gather_s = time.perf_counter() - started
        print(f"repo: {len(context.files)} files")
        print(f"gather (full, cold): {gather_s:.2f} s = {len(context.files) / gather_s:,.0f} files/s")
        started = time.perf_counter()
        service.gather_repo(settings, repo)
        print(f"gather (again, nothing changed): {time.perf_counter() - started:.2f} s")
        for task_class, inputs in (("vulnerability-remediation", {"package": "requests"}),
                                   ("distroless-migration", {})):
            samples = []
            for _ in range(args.builds):
                started = time.perf_counter()
                bundle, _, _ = service.build_bundle(settings, task_class, repo, inputs)
                samples.append((time.perf_counter() - started) * 1000)
            print(f"bundle {task_class}: p50 {percentile(samples, 50):.1f} ms, p95 {percentile(samples, 95):.1f} ms, "
                  f"mean {statistics.mean(samples):.1f} ms over {args.builds} builds "
                  f"({bundle.totals.tokens} tokens, {bundle.totals.files} files, "
                  f"{len(bundle.entries)} entries)")


if __name__ == "__main__":
    main()
