"""Process-parallel per-file work, for the large uncached batches of a first gather.

Fork only: the children inherit the work function and the items (nothing but
index ranges is sent to them) and send back their results, which are joined
in item order, so the outcome is exactly that of a plain loop. A plain loop is
used instead for small batches, with one worker, where fork is unavailable,
and in a process running other threads (a forked child can deadlock on a lock
another thread held at the fork).
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

WORKERS_ENV = "PLANNER_GATHER_WORKERS"  # "1" turns process parallelism off
MAX_WORKERS = 8
MIN_ITEMS = 400  # below this, starting the workers costs more than it saves
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
    return "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1


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


def _run_range(bounds: tuple[int, int]) -> list[Any]:
    assert _job is not None
    func, items = _job
    return [func(item) for item in items[bounds[0]:bounds[1]]]


def _ranges(total: int, parts: int) -> list[tuple[int, int]]:
    size = -(-total // parts)
    return [(start, min(start + size, total)) for start in range(0, total, size)]


def map_ordered(func: Callable[[Any], Any], items: Sequence[Any], workers: int) -> list[Any]:
    """`[func(item) for item in items]`, computed by `workers` forked processes when that pays off.

    `func` and its results must not depend on state the children change (each child has its own copy
    of the process); results travel back pickled. An exception in `func` is raised here, as in a loop.
    """
    if workers <= 1 or len(items) < MIN_ITEMS or not can_fork():
        return [func(item) for item in items]
    global _job
    _job = (func, items)
    try:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            parts = pool.map(_run_range, _ranges(len(items), workers * CHUNKS_PER_WORKER), chunksize=1)
    finally:
        _job = None
    return [result for part in parts for result in part]
