"""What the 1,000-package lockfile benchmarks share: best-of timing, the probe on a real git tree, the report.

Each bench/gather_<ecosystem>.py makes its synthetic manifest and lockfile and hands them to `report_lock`,
which times the lockfile parser alone (what a forked worker does) and the dependencies probe through
`repocontext.gather.gather` (file index, the manifest's and the lock's parse, the records' dump), best of
--rounds each, wall and CPU, and prints both against the 100 ms budget.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from repocontext.deps.common import declared

BUDGET_MS = 100


def best(rounds: int, work: Callable[[], object]) -> tuple[float, float]:
    """(wall ms, CPU ms) of the fastest of `rounds` runs."""
    runs = []
    for _ in range(rounds):
        wall, cpu = time.perf_counter(), time.process_time()
        work()
        runs.append(((time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000))
    return min(runs)


def probe(files: dict[str, str], rounds: int) -> tuple[float, float]:
    """The dependencies probe alone on a committed git work tree holding `files`."""
    from repocontext.gather import gather
    from repocontext.probes.dependencies import DependenciesProbe

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name, text in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
        author = ["-c", "user.email=b@b", "-c", "user.name=b"]
        for step in (["init", "-q"], ["add", "-A"], [*author, "commit", "-qm", "b"]):
            subprocess.run(["git", *step], cwd=root, check=True)
        return best(rounds, lambda: gather(root, probes=[DependenciesProbe()], workers=1))


def print_probe(files: dict[str, str], rounds: int) -> None:
    wall, cpu = probe(files, rounds)
    print(f"  probe (index + dependencies probe, in process): {wall:.1f} ms wall, {cpu:.1f} ms CPU "
          f"(budget {BUDGET_MS} ms)")


def arguments(doc: str, unit: str) -> argparse.Namespace:
    """--<unit> N (default 1,000) and --rounds N (default 7)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument(f"--{unit}", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=7)
    return parser.parse_args()


def report_lock(manifest: tuple[str, str], lock: tuple[str, str], parse_manifest: Callable[[str, str], Any],
                parse_lock: Callable[[str, str, Any], Any], count: str, rounds: int) -> None:
    """Time and print the parse of `lock` (path, text), with the declarations of `manifest`, and the probe."""
    names = declared(parse_manifest(*manifest).deps)
    records = len(parse_lock(*lock, names).deps)
    wall, cpu = best(rounds, lambda: parse_lock(*lock, names))
    print(f"{lock[0]}: {count}, {records} records, {len(lock[1]) // 1024} KiB")
    print(f"  parse: {wall:.1f} ms wall, {cpu:.1f} ms CPU")
    print_probe(dict([manifest, lock]), rounds)
