"""Benchmark: full and incremental gather.

1. Synthetic 10,000-file mixed-language repo: full gather (files/s), then a
   commit touching 10 files and an in-process re-gather (ms), repeated.
2. A realistic repository: real third-party source (several installed
   packages copied from site-packages into a git repo, with their real
   pyproject/requirements/Dockerfile added), full and incremental.

Each gather figure is `service.gather_repo` end to end without warming the
hot views: index + secret scan ("files"), each probe, the final model
("assemble", full gathers only), reading the previous snapshot ("load") and
writing the snapshot and probe cache ("save"). Warming the hot views after a
gather (what the git hooks do next) is timed on its own ("hot views warm").
The tokenizer is loaded once up front, as a long-lived process would (its
first load is reported separately).
Run: python bench/gather.py [--files N] [--rounds N] [--only synthetic|realistic]
"""

from __future__ import annotations

import argparse
import gc
import importlib
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import synthetic

from planner import service, tokens
from planner.config import Settings
from repocontext.store import RepoContextStore

REAL_PACKAGES = ("langchain_core", "langgraph", "pydantic", "rich", "typer", "yaml", "packaging", "redis")


class Phases:
    """Wall time per phase of one gather_repo call, from the progress callback and a few wrappers;
    time in cyclic garbage collections is counted too ("gc", also inside the phases)."""

    def __init__(self) -> None:
        self.times: dict[str, float] = defaultdict(float)
        self._step: str | None = None
        self._since = 0.0
        self._gc_started = 0.0
        gc.callbacks.append(self._gc)

    def _gc(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._gc_started = time.perf_counter()
        else:
            self.times["gc"] += time.perf_counter() - self._gc_started

    def progress(self, step: str, done: int, total: int) -> None:
        now = time.perf_counter()
        if self._step is not None:
            self.times[self._step] += now - self._since
        self._step, self._since = ("assemble" if step == "done" else step), now

    def close(self) -> None:
        """End the open phase (the last one runs until the gather returns, i.e. until `save` starts)."""
        if self._step is not None:
            self.times[self._step] += time.perf_counter() - self._since
            self._step = None

    def wrap(self, name: str, func: Callable[..., Any], closes: bool = False) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            if closes:
                self.close()
            started = time.perf_counter()
            try:
                return func(*args, **kwargs)
            finally:
                self.times[name] += time.perf_counter() - started
        return timed


PHASES = Phases()


def _instrument() -> None:
    """Time the store and the hot views around the gather (bench only; the code under test is unchanged)."""
    RepoContextStore.save = PHASES.wrap("save", RepoContextStore.save, closes=True)
    RepoContextStore.save_regathered = PHASES.wrap("save", RepoContextStore.save_regathered, closes=True)
    RepoContextStore.save_cache = PHASES.wrap("save", RepoContextStore.save_cache)
    RepoContextStore.load_raw = PHASES.wrap("load", RepoContextStore.load_raw)
    RepoContextStore.load_lazy = PHASES.wrap("load", RepoContextStore.load_lazy)
    RepoContextStore.load_cache = PHASES.wrap("load", RepoContextStore.load_cache)


def _settings(home: Path) -> Settings:
    return Settings(home=home, task_class_dirs=Settings.from_env().task_class_dirs)


def _touch(repo: Path, count: int, round_: int) -> None:
    paths = sorted(p for p in repo.rglob("*.py") if ".git" not in p.parts)[:count]
    for path in paths:
        with path.open("a") as handle:
            handle.write(f"\n# touched {round_}\n")
    synthetic.git(repo, "add", "-A")
    synthetic.git(repo, "commit", "-q", "-m", f"touch {count} files ({round_})")


def _timed_gather(settings: Settings, repo: Path) -> tuple[Any, float, dict[str, float], float]:
    """(result, seconds, phases, seconds warming the hot views afterwards)."""
    PHASES.times.clear()
    started = time.perf_counter()
    context, _ = service.gather_repo(settings, repo, progress=PHASES.progress, warm=False)
    elapsed = time.perf_counter() - started
    PHASES.close()
    phases = dict(PHASES.times)
    started = time.perf_counter()
    service.warm_hot_views(settings, repo.resolve())
    return context, elapsed, phases, time.perf_counter() - started


def _breakdown(phases: list[dict[str, float]]) -> str:
    names = list(dict.fromkeys(n for p in phases for n in p))
    return ", ".join(f"{n} {statistics.median(p.get(n, 0.0) for p in phases) * 1000:.0f}" for n in names)


def measure(name: str, repo: Path, home: Path, rounds: int) -> None:
    settings = _settings(home)
    context, full, phases, warm = _timed_gather(settings, repo)
    print(f"{name}: {len(context.files)} files, full gather {full:.2f} s = {len(context.files) / full:,.0f} files/s")
    print(f"  full, ms: {_breakdown([phases])}; then hot views warm {warm * 1000:.0f}")
    samples, breakdowns, warms = [], [], []
    for round_ in range(rounds):
        _touch(repo, 10, round_)
        context, elapsed, phases, warm = _timed_gather(settings, repo)
        samples.append(elapsed * 1000)
        breakdowns.append(phases)
        warms.append(warm * 1000)
    reused = sorted(n for n, r in context.meta.probes.items() if r.reused)
    updated = ", ".join(getattr(context, "incremental", [])) or "none (full gather)"
    print(f"{name}: re-gather after a 10-file commit: median {statistics.median(samples):.0f} ms "
          f"(min {min(samples):.0f}, max {max(samples):.0f}; probes reused: {', '.join(reused) or 'none'}; "
          f"updated from the changed files: {updated})")
    print(f"  re-gather, median ms: {_breakdown(breakdowns)}; then hot views warm {statistics.median(warms):.0f}")


def realistic(root: Path) -> Path:
    root.mkdir()
    for package in REAL_PACKAGES:
        module = importlib.import_module(package)
        source = Path(next(iter(module.__path__)))
        shutil.copytree(source, root / "src" / package, ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyc"))
    (root / "requirements.txt").write_text("langchain-core==1.0.0\npydantic==2.7.0\nPyYAML==5.3.1\nrich>=13\n")
    (root / "Dockerfile").write_text("FROM python:3.11-slim\nCOPY . /app\nRUN pip install -r /app/requirements.txt\n"
                                     "CMD python -m app\n")
    synthetic.commit_tree(root, "real code")
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=10_000, help="size of the synthetic repository")
    parser.add_argument("--rounds", type=int, default=5, help="incremental re-gathers per repository")
    parser.add_argument("--only", choices=("synthetic", "realistic"))
    args = parser.parse_args()
    started = time.perf_counter()
    tokens.encoding()
    print(f"tokenizer load (once per process, not in the figures): {(time.perf_counter() - started) * 1000:.0f} ms")
    _instrument()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        if args.only in (None, "synthetic"):
            measure("synthetic", synthetic.build(base / "synthetic", files=args.files), base / "home1", args.rounds)
        if args.only in (None, "realistic"):
            measure("realistic", realistic(base / "realistic"), base / "home2", args.rounds)


if __name__ == "__main__":
    main()
