"""Benchmark: vulnerability remediation across a fleet of repositories (not a timed test).

Generates N small git repositories (bench/fleet.py: requirements.txt / pyproject / package.json /
go.mod pins with known-vulnerable versions, some Dockerfiles, some clean), then runs
`planner portfolio dispatch vulnerability-remediation` across them, whole-process, on

- the embedded engine: a local pool of --workers processes;
- the Celery engine: --workers `planner worker` processes (concurrency 1 each) against a real
  redis-server on loopback, which the bench starts itself (or --redis-url URL; a redis-server
  must be on PATH otherwise, and the Celery half is skipped saying so).

Each engine gets a fresh PLANNER_HOME (and each worker its own). Printed per engine: wall time,
runs/min over the whole portfolio (coordinator start to report), p50/p95 of the per-repository
run time (as the worker measured it), and outcomes by status.
Run: python bench/portfolio.py [--repos 1000] [--workers 2] [--engines local,celery]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fleet import make_fleet, write_advisories  # noqa: E402

PYPA = ROOT.parent / "shared" / "advisories" / "pypa"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {**os.environ, "PLANNER_HOME": str(home), **extra}
    for name in ("PLANNER_REDIS_URL", "PLANNER_MODEL", "PLANNER_ENGINE"):
        env.pop(name, None)
    return env


@contextmanager
def redis_server(base: Path) -> Iterator[str]:
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError("no redis-server on PATH (apt-get install redis-server, or pass --redis-url)")
    port, folder = _free_port(), base / "redis"
    folder.mkdir()
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                             "--dir", str(folder)], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError(f"redis-server did not start on port {port}") from None
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/1"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@contextmanager
def celery_workers(count: int, broker: str, base: Path) -> Iterator[None]:
    procs, logs = [], []
    for i in range(count):
        log = base / f"worker{i}.log"
        logs.append(log)
        with log.open("w") as out:
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "planner", "worker", "--concurrency", "1", "--loglevel", "INFO"],
                stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                # the fleet is under base: the worker's roots (its default, the working directory, is not)
                env=_env(base / f"worker{i}-home", PLANNER_BROKER_URL=broker, PLANNER_REPO_ROOTS=str(base))))
    try:
        deadline = time.monotonic() + 120
        while not all("ready." in log.read_text(errors="replace") for log in logs):
            if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                raise RuntimeError("a Celery worker did not start: " + logs[0].read_text(errors="replace")[-500:])
            time.sleep(0.2)
        yield
    finally:
        for proc in procs:  # our own workers only: each leads its own process group (its pool children)
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)


def dispatch(fleet: Path, advisories: list[Path], home: Path, engine: str, workers: int,
             broker: str | None = None) -> tuple[float, dict]:
    args = [sys.executable, "-m", "planner", "portfolio", "dispatch", "vulnerability-remediation", "--repos",
            str(fleet), "--engine", engine, "--workers", str(workers), "--json"]
    for source in advisories:
        args += ["--advisories", str(source)]
    env = _env(home, **({"PLANNER_BROKER_URL": broker} if broker else {}))
    started = time.perf_counter()
    proc = subprocess.run(args, capture_output=True, text=True, env=env, check=False)
    wall = time.perf_counter() - started
    if not proc.stdout.strip():
        raise RuntimeError(f"{engine}: no report (exit {proc.returncode}): {proc.stderr.strip()[-500:]}")
    return wall, json.loads(proc.stdout)


def summary(engine: str, wall: float, report: dict) -> dict[str, object]:
    rows = report["repositories"]
    seconds = sorted(r.get("seconds") or 0.0 for r in rows)
    p95 = seconds[min(len(seconds) - 1, round(0.95 * (len(seconds) - 1)))]
    return {"engine": engine, "repos": len(rows), "wall_s": round(wall, 1),
            "runs_per_min": round(len(rows) / wall * 60), "p50_s": round(statistics.median(seconds), 3),
            "p95_s": round(p95, 3), "statuses": dict(sorted(Counter(r["status"] for r in rows).items()))}


def run_engine(engine: str, args: argparse.Namespace, fleet: Path, advisories: list[Path], base: Path) -> dict:
    home = base / f"{engine}-home"
    if engine == "local":
        return summary(engine, *dispatch(fleet, advisories, home, "local", args.workers))
    with redis_server(base) if not args.redis_url else _given(args.redis_url) as broker, \
            celery_workers(args.workers, broker, base):
        return summary(engine, *dispatch(fleet, advisories, home, "celery", args.workers, broker))


@contextmanager
def _given(url: str) -> Iterator[str]:
    yield url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repos", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2, help="pool processes / Celery workers")
    parser.add_argument("--engines", default="local,celery")
    parser.add_argument("--redis-url", help="an existing Redis for the broker (default: start a redis-server)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-portfolio-") as tmp:
        base = Path(tmp)
        started = time.perf_counter()
        fleet = base / "fleet"
        make_fleet(fleet, args.repos)
        pypi = PYPA if PYPA.is_dir() else ROOT / "examples" / "advisories"
        advisories = [write_advisories(base / "advisories"), pypi]
        print(f"{args.repos} repositories generated in {time.perf_counter() - started:.1f} s; advisories: "
              f"{', '.join(str(a) for a in advisories)}; {args.workers} workers; {os.cpu_count()} CPUs", flush=True)
        for engine in args.engines.split(","):
            try:
                result = run_engine(engine.strip(), args, fleet, advisories, base)
            except RuntimeError as exc:
                print(f"  {engine}: skipped: {exc}", flush=True)
                continue
            print(f"  {result['engine']:<7} {result['wall_s']:>7.1f} s  {result['runs_per_min']:>5} runs/min  "
                  f"p50 {result['p50_s']:.3f} s  p95 {result['p95_s']:.3f} s per repository  {result['statuses']}",
                  flush=True)


if __name__ == "__main__":
    main()
