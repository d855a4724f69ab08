"""Benchmark: dispatch throughput through the recipe path, with per-step timings.

Copies examples/shop into a temp git repo, gathers it once, then dispatches
vulnerability-remediation N times in-process (two vulnerable packages → two
parallel work items per run, both planned by the manifest-upgrade recipe).
Run: python bench/dispatch.py [--runs N]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from planner import service  # noqa: E402
from planner.config import Settings  # noqa: E402
from planner.run.dispatch import dispatch  # noqa: E402

GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com"]


def _repo(tmp: Path) -> Path:
    repo = tmp / "shop"
    shutil.copytree(ROOT / "examples" / "shop", repo)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "shop"]):
        subprocess.run([*GIT, "-C", str(repo), *args], check=True)
    return repo


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo = _repo(Path(tmp))
        settings = Settings(home=Path(tmp) / "home", task_class_dirs=Settings.from_env().task_class_dirs)
        options = {"advisories": str(ROOT / "examples" / "advisories")}
        service.gather_repo(settings, repo, options=options)
        steps: dict[str, list[float]] = defaultdict(list)
        totals: list[float] = []
        for _ in range(args.runs):
            last = time.perf_counter()
            started = last

            def on_event(kind: str, data: dict[str, Any]) -> None:
                nonlocal last
                if kind == "node" and not data["namespace"]:
                    now = time.perf_counter()
                    steps[data["node"]].append((now - last) * 1000)
                    last = now

            state = dispatch(settings, "vulnerability-remediation", repo, {}, options, on_event=on_event)
            assert state["status"] == "succeeded", state.get("error")
            totals.append(time.perf_counter() - started)
        per_minute = 60 / statistics.mean(totals)
        print(f"dispatch (recipe path, 2 work items per run): {per_minute:.0f} runs/min; "
              f"p50 {statistics.median(totals) * 1000:.0f} ms per run over {args.runs} runs")
        for name, samples in steps.items():
            print(f"  {name:<20} p50 {statistics.median(samples):7.1f} ms")


if __name__ == "__main__":
    main()
