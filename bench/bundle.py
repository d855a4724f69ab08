"""Benchmark: gather a synthetic 10,000-file repo, then bundle builds cold and warm, and in parallel.

Every build goes through the same steps as `service.build_bundle` (TCCM,
repository, hot views, provenance record in memory; nothing written to disk):

- cold: hot views off. The RepoContext is read from PLANNER_HOME again and
  everything is rendered from scratch (no in-process caching between builds).
- slices: the first build of a (task class, inputs) at a commit: pre-rendered
  slices from Redis, the rest from the RepoContext; the bundle is not stored.
- warm, fetched: the assembled bundle comes from Redis and is parsed (a process
  that has not seen it yet). Checks HEAD, the snapshot, every file it read.
- warm: the same checks and a Redis round trip, but this process has already
  parsed that content (a long-running planner).
- parallel: N processes start together and each builds both bundles against
  the one Redis; any exception, "unavailable" or differing bytes is an error.

Run: python bench/bundle.py [--files N] [--builds N] [--cold-builds N] [--redis auto|embedded|URL] [--parallel N]
`auto` uses PLANNER_REDIS_URL, else starts a private redis-server when one is installed, else the embedded default.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import redis
import synthetic

from planner import service, tokens
from planner.bundle.model import Bundle
from planner.config import Settings
from planner.hotviews import bundles as hot
from planner.hotviews import parsed
from planner.store.provenance import record_for

CASES: tuple[tuple[str, dict[str, str]], ...] = (("vulnerability-remediation", {"package": "requests"}),
                                                 ("distroless-migration", {}))


def percentile(samples: list[float], pct: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))]


def build(settings: Settings, repo: Path, name: str, inputs: Mapping[str, str], mode: hot.Mode) -> tuple[Bundle, str]:
    """service.build_bundle with a hot-view mode: TCCM, repository, build, provenance record."""
    tccm = service.task_class(settings, name)
    root = service.repo_root(repo)
    bundle, view, status = hot.build_bundle(settings, tccm, root, inputs, mode=mode)
    record_for(bundle, tccm, view, hot_views=status)
    return bundle, status


def timed(runs: int, step: Callable[[], Any], before: Callable[[], None] | None = None) -> list[float]:
    samples = []
    for _ in range(runs):
        if before is not None:
            before()
        started = time.perf_counter()
        step()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def summary(label: str, samples: list[float]) -> str:
    return (f"  {label:<16} p50 {percentile(samples, 50):9.2f} ms  p95 {percentile(samples, 95):9.2f} ms  "
            f"mean {statistics.mean(samples):9.2f} ms  ({len(samples)} builds)")


@contextmanager
def redis_server(choice: str) -> Iterator[str | None]:
    """The Redis URL to use (None: the embedded default); starts and stops a private server for `auto`."""
    if choice == "embedded":
        yield None
        return
    if choice != "auto":
        yield choice
        return
    if os.environ.get("PLANNER_REDIS_URL"):
        yield os.environ["PLANNER_REDIS_URL"]
        return
    binary = shutil.which("redis-server")
    if binary is None:
        yield None
        return
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with tempfile.TemporaryDirectory() as directory:
        process = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly",
                                    "no", "--dir", directory], stdout=subprocess.DEVNULL)
        client = redis.Redis(port=port)
        for _ in range(100):
            try:
                client.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.05)
        try:
            yield f"redis://127.0.0.1:{port}/0"
        finally:
            process.terminate()
            process.wait()


def _parallel_worker(settings: Settings, repo: Path, expected: dict[str, str], barrier: Any, queue: Any,
                     rounds: int) -> None:
    parsed.clear()  # each process fetches from Redis itself at least once
    barrier.wait()
    errors, samples = [], []
    for _ in range(rounds):
        for name, inputs in CASES:
            started = time.perf_counter()
            try:
                bundle, _, record = service.build_bundle(settings, name, repo, inputs)
            except Exception as exc:  # noqa: BLE001 - a benchmark counts every failure as an error
                errors.append(f"{name}: {exc.__class__.__name__}: {exc}")
                continue
            samples.append((time.perf_counter() - started) * 1000)
            if bundle.sha256 != expected[name] or "unavailable" in (record.hot_views or ""):
                errors.append(f"{name}: {record.hot_views} sha {bundle.sha256[:12]}")
    queue.put((errors, samples))


def parallel(settings: Settings, repo: Path, expected: dict[str, str], workers: int, rounds: int) -> None:
    ctx = multiprocessing.get_context("fork")
    barrier, queue = ctx.Barrier(workers), ctx.Queue()
    procs = [ctx.Process(target=_parallel_worker, args=(settings, repo, expected, barrier, queue, rounds))
             for _ in range(workers)]
    started = time.perf_counter()
    for proc in procs:
        proc.start()
    results = [queue.get(timeout=600) for _ in procs]
    for proc in procs:
        proc.join()
    wall = time.perf_counter() - started
    errors = [e for errs, _ in results for e in errs]
    samples = [s for _, ss in results for s in ss]
    crashed = sum(proc.exitcode != 0 for proc in procs)
    print(f"parallel: {workers} processes x {rounds} x {len(CASES)} builds = {len(samples)} ok, "
          f"{len(errors) + crashed} errors, {wall:.2f} s wall; per build p50 {percentile(samples, 50):.2f} ms, "
          f"p95 {percentile(samples, 95):.2f} ms")
    for error in errors[:5]:
        print(f"  error: {error}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--builds", type=int, default=200, help="warm builds per case")
    parser.add_argument("--cold-builds", type=int, default=200, help="cold and slices builds per case")
    parser.add_argument("--redis", default="auto", help="auto, embedded, or a redis:// URL")
    parser.add_argument("--parallel", type=int, default=50, help="processes building at once (0: skip)")
    parser.add_argument("--rounds", type=int, default=2, help="builds of each case per parallel process")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, redis_server(args.redis) as url:
        repo = synthetic.build(Path(tmp) / "repo", files=args.files)
        written = time.time()
        settings = Settings(home=Path(tmp) / "home", task_class_dirs=Settings.from_env().task_class_dirs,
                            redis_url=url)
        tokens.encoding()  # load the BPE once, as a long-lived process would
        started = time.perf_counter()
        context, _ = service.gather_repo(settings, repo)
        gather_s = time.perf_counter() - started
        print(f"repo: {len(context.files)} files; hot views: {url or 'embedded'}")
        print(f"gather (full, cold, includes warming the hot views): {gather_s:.2f} s")
        report = hot.warm(settings, repo.resolve())
        print(f"warm: {report.slices} slices from {report.templates} keys, {report.bytes:,} bytes, "
              f"{report.elapsed_ms:.0f} ms")
        time.sleep(max(0.0, hot.RACY_S - (time.time() - written)))  # let file stats become trustworthy
        expected = {}
        for name, inputs in CASES:
            cold = timed(args.cold_builds, lambda n=name, i=inputs: build(settings, repo, n, i, "off"))
            sliced = timed(args.cold_builds, lambda n=name, i=inputs: build(settings, repo, n, i, "slices"))
            reference, _ = build(settings, repo, name, inputs, "off")
            stored, status = build(settings, repo, name, inputs, "all")  # stores the bundle
            fetched = timed(args.builds, lambda n=name, i=inputs: build(settings, repo, n, i, "all"), parsed.clear)
            warm = timed(args.builds, lambda n=name, i=inputs: build(settings, repo, n, i, "all"))
            hit, hit_status = build(settings, repo, name, inputs, "all")
            assert stored.text == reference.text == hit.text and hit_status == "hit: bundle", (status, hit_status)
            expected[name] = reference.sha256
            print(f"bundle {name} {dict(inputs) or ''}: {reference.totals.tokens} tokens, {reference.totals.files} "
                  f"files, {len(reference.entries)} entries, {len(hit.model_dump_json()):,} bytes as JSON")
            for label, samples in (("cold", cold), ("slices", sliced), ("warm, fetched", fetched), ("warm", warm)):
                print(summary(label, samples))
            print(f"  warm/cold p50 ratio: {percentile(warm, 50) / percentile(cold, 50):.4f} "
                  f"(fetched: {percentile(fetched, 50) / percentile(cold, 50):.4f})")
        if args.parallel:
            parallel(settings, repo, expected, args.parallel, args.rounds)


if __name__ == "__main__":
    main()
