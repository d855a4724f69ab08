"""Benchmark: load the pypa advisory snapshot and evaluate versions against it.

Usage: python bench/advisories.py [PATH]   (default: ../shared/advisories/pypa)

Prints the load time (best of 3), the compiled index (build once, then open + first lookup in a fresh
process: the cost every later CLI process pays; target ≤ 50 ms), and two throughputs:
- raw evaluations/s: `evaluate(advisory, package, version)` over every package each
  record names, with up to 6 versions per package taken from the record itself
  (listed versions, range bounds, and a version past the last bound);
- lookups/s: `db.affecting(ecosystem, package, version)`, the probe's call, for the
  same (package, version) pairs, each evaluating every advisory naming the package.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from repocontext.osv.db import AdvisoryDB
from repocontext.osv.evaluate import evaluate
from repocontext.osv.load import load
from repocontext.osv.schema import Advisory

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "advisories" / "pypa"


def sample_versions(advisory: Advisory) -> list[tuple[str, str, str]]:
    """(ecosystem, package, version) triples drawn from the record itself."""
    triples: list[tuple[str, str, str]] = []
    for entry in advisory.affected:
        if entry.package is None:
            continue
        bounds = [e.value for r in entry.ranges if r.type != "GIT" for e in r.events if e.value not in (None, "0")]
        picks = [*entry.versions[:2], *entry.versions[-1:], *bounds[:2], "999.0"]
        triples.extend((entry.package.ecosystem, entry.package.name, str(v)) for v in picks[:6])
    return triples


def _consume(results: Iterable[object]) -> None:
    for _ in results:  # results are dropped as they come, as the probe does
        pass


def best_of(runs: int, action: Callable[[], object]) -> tuple[float, float]:
    """Best wall-clock and best CPU seconds of `runs` runs (CPU time is steadier on a busy machine)."""
    wall = cpu = float("inf")
    for _ in range(runs):
        start, start_cpu = time.perf_counter(), time.process_time()
        action()
        wall = min(wall, time.perf_counter() - start)
        cpu = min(cpu, time.process_time() - start_cpu)
    return wall, cpu


OPEN = """
import sys, time
start = time.perf_counter()
from repocontext.osv.load import fingerprint
from repocontext.osv.index import open_db
stamped = time.perf_counter()
stamp = fingerprint(sys.argv[1])
opened = time.perf_counter()
db = open_db(sys.argv[1], stamp)
found = db.for_package("PyPI", "django")
done = time.perf_counter()
print(f"{opened - stamped:.4f} {done - opened:.4f} {len(found)} {type(db).__name__}")
"""


def index_figures(path: Path) -> None:
    """Build the index once, then time, in fresh processes, the fingerprint and the open + first lookup."""
    with tempfile.TemporaryDirectory() as folder:
        env = {**os.environ, "PLANNER_ADVISORY_INDEX": folder}
        root = str(Path(__file__).resolve().parents[1])
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", OPEN, str(path)], env=env, cwd=root, check=True, capture_output=True)
        print(f"index: built in {time.perf_counter() - start:.2f} s (one process, load included)")
        runs = []
        for _ in range(5):
            out = subprocess.run([sys.executable, "-c", OPEN, str(path)], env=env, cwd=root, check=True,
                                 capture_output=True, text=True).stdout.split()
            runs.append((float(out[0]), float(out[1]), out[2], out[3]))
        stamp = sorted(r[0] for r in runs)[2]
        opened = sorted(r[1] for r in runs)[2]
        verdict = "ok" if opened <= 0.05 else "MISSED"
        print(f"index: later process (median of 5): fingerprint {stamp * 1000:.1f} ms, open + for_package(django) "
              f"{opened * 1000:.1f} ms ({runs[0][2]} advisories, {runs[0][3]}), target ≤ 50 ms {verdict}")


def main() -> int:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    if not path.exists():
        print(f"advisory data not found at {path}", file=sys.stderr)
        return 1
    holder: dict[str, AdvisoryDB] = {}
    load_s, load_cpu = best_of(3, lambda: holder.update(db=load(path)))
    db = holder["db"]
    db.find("warm-up")  # builds the lookup indexes
    print(f"load: {len(db)} advisories, {len(db.issues)} issues, best of 3: {load_s:.3f} s wall, {load_cpu:.3f} s CPU")

    index_figures(path)
    work = [(a, t) for a in db for t in sample_versions(a)]
    eval_s, eval_cpu = best_of(3, lambda: _consume(evaluate(a, *t) for a, t in work))
    print(f"evaluate: {len(work)} evaluations, best of 3: {eval_s:.3f} s wall = {len(work) / eval_s:,.0f}/s, "
          f"{eval_cpu:.3f} s CPU = {len(work) / eval_cpu:,.0f} evaluations/s")

    pairs = sorted({t for _, t in work})
    counted: list[int] = []
    look_s, look_cpu = best_of(3, lambda: counted.append(sum(len(db.evaluate(*p)) for p in pairs)))
    print(f"lookup: {len(pairs)} package versions ({counted[-1]} evaluations), best of 3: {look_s:.3f} s wall, "
          f"{look_cpu:.3f} s CPU = {len(pairs) / look_cpu:,.0f} lookups/s, {counted[-1] / look_cpu:,.0f} evaluations/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
