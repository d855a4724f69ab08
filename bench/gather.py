"""Benchmark: full and incremental gather.

1. Synthetic 10,000-file mixed-language repo: full gather (files/s), then a
   commit touching 10 files and an in-process incremental re-gather (ms).
2. A realistic repository: real third-party source (several installed
   packages copied from site-packages into a git repo, with their real
   pyproject/requirements/Dockerfile added), full and incremental.
Run: python bench/gather.py
"""

from __future__ import annotations

import importlib
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import synthetic

from planner import service
from planner.config import Settings

REAL_PACKAGES = ("langchain_core", "langgraph", "pydantic", "rich", "typer", "yaml", "packaging", "redis")


def _settings(home: Path) -> Settings:
    return Settings(home=home, task_class_dirs=Settings.from_env().task_class_dirs)


def _touch(repo: Path, count: int, round_: int) -> None:
    paths = sorted(p for p in repo.rglob("*.py") if ".git" not in p.parts)[:count]
    for path in paths:
        with path.open("a") as handle:
            handle.write(f"\n# touched {round_}\n")
    synthetic.git(repo, "add", "-A")
    synthetic.git(repo, "commit", "-q", "-m", f"touch {count} files ({round_})")


def measure(name: str, repo: Path, home: Path) -> None:
    settings = _settings(home)
    started = time.perf_counter()
    context, _ = service.gather_repo(settings, repo)
    full = time.perf_counter() - started
    print(f"{name}: {len(context.files)} files, full gather {full:.2f} s = {len(context.files) / full:,.0f} files/s")
    samples = []
    for round_ in range(5):
        _touch(repo, 10, round_)
        started = time.perf_counter()
        context, _ = service.gather_repo(settings, repo)
        samples.append((time.perf_counter() - started) * 1000)
    reused = sorted(n for n, r in context.meta.probes.items() if r.reused)
    print(f"{name}: incremental re-gather after a 10-file commit: median {statistics.median(samples):.0f} ms "
          f"(min {min(samples):.0f}, max {max(samples):.0f}; probes reused: {', '.join(reused) or 'none'})")


def realistic(root: Path) -> Path:
    root.mkdir()
    for package in REAL_PACKAGES:
        module = importlib.import_module(package)
        source = Path(next(iter(module.__path__)))
        shutil.copytree(source, root / "src" / package, ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyc"))
    (root / "requirements.txt").write_text("langchain-core==1.0.0\npydantic==2.7.0\nPyYAML==5.3.1\nrich>=13\n")
    (root / "Dockerfile").write_text("FROM python:3.11-slim\nCOPY . /app\nRUN pip install -r /app/requirements.txt\n"
                                     "CMD python -m app\n")
    synthetic.git(root, "init", "-q", "-b", "main")
    synthetic.git(root, "add", "-A")
    synthetic.git(root, "commit", "-q", "-m", "real code")
    return root


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        measure("synthetic", synthetic.build(base / "synthetic", files=10_000), base / "home1")
        measure("realistic", realistic(base / "realistic"), base / "home2")


if __name__ == "__main__":
    main()
