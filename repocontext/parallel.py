"""Process-parallel per-file work, for the large uncached batches of a first gather.

Fork only: the children inherit the work function and the items (nothing but
index ranges is sent to them) and send back their results, which are joined
in item order, so the outcome is exactly that of a plain loop. A plain loop is
used instead for batches whose estimated work is under the break-even point,
with one worker, where fork is unavailable, and in a process running other
threads (a forked child can deadlock on a lock another thread held at the fork).
"""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

WORKERS_ENV = "PLANNER_GATHER_WORKERS"  # "1" turns process parallelism off
MAX_WORKERS = 8
MIN_ITEMS = 2  # fewer items are never worth a process
# Forking the workers, sending results back and joining them costs 7-17 ms on a 2-core machine (measured
# with a gather's modules loaded): work estimated under this many seconds stays in this process.
BREAK_EVEN_S = 0.03
CHUNKS_PER_WORKER = 8  # small enough chunks to balance uneven files

# What the children run, set in the parent just before the fork (children read their inherited copy).
_job: tuple[Callable[[Any], Any], Sequence[Any]] | None = None


def default_workers() -> int:
    """PLANNER_GATHER_WORKERS when set, else the CPUs this process may use (at most MAX_WORKERS)."""
    raw = os.environ.get(WORKERS_ENV, "").strip()
    if raw.isdigit():
        return max(1, int(raw))
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, MAX_WORKERS))


def can_fork() -> bool:
    # Imported here: a small repository's gather never forks, and multiprocessing costs it ~3 ms to import.
    import multiprocessing

    # A daemonic process (a multiprocessing pool's worker) may not have children of its own.
    return ("fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1
            and not multiprocessing.current_process().daemon)


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic GC: gathering allocates many small acyclic objects, and repeated collections over
    the growing result (and a large previous snapshot) would otherwise dominate."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _run_chunk(indices: list[int]) -> list[Any]:
    assert _job is not None
    func, items = _job
    return [func(items[i]) for i in indices]


def chunks(costs: Sequence[float], parts: int) -> list[list[int]]:
    """Item indices in about `parts` chunks of about equal cost, the costliest items first.

    Workers take the next chunk as they free up, so large items each get a chunk of their own, early, and
    the small ones fill in after: in path order a `dist/` folder's few large bundles sat in one chunk, and
    one worker parsed them all while the other idled. With equal costs: contiguous chunks of equal count."""
    order = sorted(range(len(costs)), key=lambda i: (-costs[i], i))
    target = sum(costs) / max(parts, 1)
    found: list[list[int]] = []
    current: list[int] = []
    filled = 0.0
    for index in order:
        current.append(index)
        filled += costs[index]
        if filled >= target:
            found.append(current)
            current, filled = [], 0.0
    if current:
        found.append(current)
    return found


def pays(workers: int, items: int, seconds: float) -> bool:
    """Whether `items` needing about `seconds` of work in all are worth spreading over `workers` processes."""
    return workers > 1 and items >= MIN_ITEMS and seconds >= BREAK_EVEN_S and can_fork()


def map_ordered(func: Callable[[Any], Any], items: Sequence[Any], workers: int,
                costs: float | Sequence[float]) -> list[Any]:
    """`[func(item) for item in items]`, computed by `workers` forked processes when that pays off.

    `costs`: the caller's estimate of each item's work in one process (from the bytes to read, at a
    measured rate), or of the whole batch's: their sum against the break-even point, not a count of items,
    decides (see BREAK_EVEN_S), and per-item costs balance the workers (see `chunks`).
    `func` and its results must not depend on state the children change (each child has its own copy
    of the process); results travel back pickled. An exception in `func` is raised here, as in a loop.
    """
    each = [costs / len(items) if items else 0.0] * len(items) if isinstance(costs, float | int) else costs
    if not pays(workers, len(items), sum(each)):
        return [func(item) for item in items]
    import multiprocessing

    global _job
    _job = (func, items)
    planned = chunks(each, workers * CHUNKS_PER_WORKER)
    try:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            parts = pool.map(_run_chunk, planned, chunksize=1)
    finally:
        _job = None
    results: list[Any] = [None] * len(items)
    for indices, part in zip(planned, parts, strict=True):
        for index, result in zip(indices, part, strict=True):
            results[index] = result
    return results
