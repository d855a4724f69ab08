"""Process-parallel per-file work, for the large uncached batches of a gather.

Fork only: the children inherit the work function and the items (nothing but
chunk numbers is sent to them) and send back their results, which are joined
in item order, so the outcome is exactly that of a plain loop. A plain loop is
used instead for batches whose estimated work is under the break-even point,
with one worker, where fork is unavailable, and in a process running other
threads (a forked child can deadlock on a lock another thread held at the fork).

`start_map` returns at once: the gather starts the per-file analyses of every
probe before the serial probes run, and takes their results when it needs them
(`Pending.result`). The parent starts no thread of its own, so a later batch may
fork again.
"""

from __future__ import annotations

import gc
import os
import signal
import struct
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any

WORKERS_ENV = "PLANNER_GATHER_WORKERS"  # "1" turns process parallelism off
MAX_WORKERS = 8
MIN_ITEMS = 2  # fewer items are never worth a process
# Forking the workers, sending results back and joining them costs 7-17 ms on a 2-core machine (measured
# with a gather's modules loaded): work estimated under this many seconds stays in this process.
BREAK_EVEN_S = 0.03
CHUNKS_PER_WORKER = 8  # small enough chunks to balance uneven files
FORK_S = 0.01  # a single call worth forking for (start_call): one fork of an 8,000-file gather's process, ~5 ms

# The chunk numbers a child reads from the task pipe: 4 bytes each, all written before the children fork.
_CHUNK = struct.Struct("<I")


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
    """Whether this process may fork workers: it can (POSIX), no other thread runs, and it is not a
    multiprocessing pool's worker (daemonic: its pool may terminate it and would leave our children)."""
    if not hasattr(os, "fork") or threading.active_count() != 1:
        return False
    multiprocessing = sys.modules.get("multiprocessing")  # not imported: this is no pool's worker
    return multiprocessing is None or not multiprocessing.current_process().daemon


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
    return start_map(func, items, workers, costs).result()


def start_map(func: Callable[[Any], Any], items: Sequence[Any], workers: int,
              costs: float | Sequence[float], nice: int = 0) -> Pending:
    """`map_ordered`, started: when parallelism pays, the workers are forked now and compute while this
    process goes on; otherwise nothing runs until `Pending.result` computes the items in this process.
    `nice`: added to the workers' niceness, so that work needed later yields the cores to work needed first."""
    each = [costs / len(items) if items else 0.0] * len(items) if isinstance(costs, float | int) else costs
    pending = Pending(func, items, nice)
    if pays(workers, len(items), sum(each)):
        pending.fork(chunks(each, workers * CHUNKS_PER_WORKER), workers)
    return pending


def start_call(func: Callable[[Any], Any], arg: Any, workers: int, seconds: float) -> Pending:
    """`func(arg)`, started in one forked worker when that pays (about `seconds` of work, more than a fork
    costs, with a core to spare), so that this process goes on meanwhile; `Pending.result` waits for it (or
    computes it here, when no worker took it yet)."""
    pending = Pending(func, [arg])
    if workers > 1 and seconds >= FORK_S and can_fork():
        pending.fork([[0]], 2)
    return pending


class WorkerDied(RuntimeError):
    """A worker process ended without sending its results (killed, or out of memory)."""


class Pending:
    """A map's results, computed by forked workers (`fork`) and this process, or by `result` alone when none
    was forked.

    The work is cut into chunks whose numbers wait in one pipe. The workers take them as they free up, so a
    slow chunk does not hold back the rest, and each sends all of its results, pickled, through its own pipe
    once the chunks run out: a worker never waits on this process while there is work left. `result` takes
    the chunks still waiting and computes them here (this process would otherwise only wait, and its
    results need no pickling), then reads the workers' results, reaps them and joins all in item order."""

    def __init__(self, func: Callable[[Any], Any], items: Sequence[Any], nice: int = 0) -> None:
        self._func, self._items, self._nice = func, items, nice
        self._planned: list[list[int]] = []
        self._workers: list[tuple[int, int]] = []  # (pid, read end of its result pipe)
        self._tasks: int | None = None  # the read end of the chunk numbers' pipe, while this process may take some
        self._results: list[Any] | None = None
        self._forked = False

    @property
    def forked(self) -> bool:
        """Whether workers were forked (they may have been reaped since)."""
        return self._forked

    @property
    def pids(self) -> list[int]:
        """The workers not yet reaped."""
        return [pid for pid, _ in self._workers]

    def fork(self, planned: list[list[int]], workers: int) -> None:
        """Start `workers` - 1 processes (at least one) on the chunks `planned`; this process is the last
        worker, from the moment it asks for the results."""
        self._planned = planned
        tasks_r, tasks_w = os.pipe()
        os.write(tasks_w, b"".join(_CHUNK.pack(n) for n in range(len(planned))))  # a few bytes: never blocks
        os.close(tasks_w)  # every reader sees the end of the work once the numbers are taken
        self._tasks = tasks_r
        try:
            for _ in range(max(1, min(workers - 1, len(planned) - 1))):
                results_r, results_w = os.pipe()
                pid = os.fork()
                if pid == 0:  # the child: it never returns
                    os.close(results_r)
                    self._serve(tasks_r, results_w)
                os.close(results_w)
                self._workers.append((pid, results_r))
                self._forked = True
        except BaseException:
            self.cancel()
            raise

    def _serve(self, tasks: int, out: int) -> None:
        import pickle  # here and in _collect: a gather that never forks never imports it (~1 ms of start-up)

        code = 0
        if self._nice:
            os.nice(self._nice)
        try:
            done: list[tuple[int, list[Any]]] = []
            while len(raw := os.read(tasks, _CHUNK.size)) == _CHUNK.size:
                number = _CHUNK.unpack(raw)[0]
                done.append((number, [self._func(self._items[i]) for i in self._planned[number]]))
            payload = pickle.dumps((True, done), pickle.HIGHEST_PROTOCOL)
        except BaseException as exc:  # noqa: BLE001 - sent to the parent, which raises it
            payload = _pickled_error(exc)
        try:
            with os.fdopen(out, "wb") as stream:
                stream.write(payload)
        except BaseException:  # noqa: BLE001 - the parent is gone: nothing to tell
            code = 1
        os._exit(code)  # no atexit handlers, no flushing of the parent's buffers

    def result(self) -> list[Any]:
        """The results in item order; raises what `func` raised (or WorkerDied) as a plain loop would."""
        if self._results is None:
            if not self._workers:
                self._results = [self._func(item) for item in self._items]
            else:
                self._results = self._collect()
        return self._results

    def _collect(self) -> list[Any]:
        import pickle

        found: list[Any] = [None] * len(self._items)
        failure: BaseException | None = None
        try:
            assert self._tasks is not None
            while len(raw := os.read(self._tasks, _CHUNK.size)) == _CHUNK.size:  # the chunks no worker took
                for index in self._planned[_CHUNK.unpack(raw)[0]]:
                    found[index] = self._func(self._items[index])
            os.close(self._tasks)
            self._tasks = None
            while self._workers:
                pid, fd = self._workers[0]
                payload = _read_all(fd)
                _, status = os.waitpid(pid, 0)
                self._workers.pop(0)
                os.close(fd)
                if not payload:
                    failure = failure or WorkerDied(f"a gather worker process ended without its results "
                                                    f"({_ended(status)})")
                    continue
                ok, part = pickle.loads(payload)
                if not ok:
                    failure = failure or part
                    continue
                for number, values in part:
                    for index, value in zip(self._planned[number], values, strict=True):
                        found[index] = value
        except BaseException:  # interrupted (a signal, the time budget): no worker is left behind
            self.cancel()
            raise
        if failure is not None:
            raise failure
        return found

    def cancel(self) -> None:
        """Stop the workers, if any, and reap them (the caller gave up on the results)."""
        if self._tasks is not None:
            os.close(self._tasks)
            self._tasks = None
        for pid, fd in self._workers:
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            os.close(fd)
            os.waitpid(pid, 0)
        self._workers = []


def _read_all(fd: int) -> bytes:
    parts = []
    while part := os.read(fd, 1 << 20):
        parts.append(part)
    return b"".join(parts)


def _pickled_error(exc: BaseException) -> bytes:
    import pickle

    try:
        return pickle.dumps((False, exc), pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 - an exception that does not pickle: its type and message
        return pickle.dumps((False, RuntimeError(f"{type(exc).__name__}: {exc}")), pickle.HIGHEST_PROTOCOL)


def _ended(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"killed by signal {os.WTERMSIG(status)}"
    return f"exit status {os.waitstatus_to_exitcode(status)}"
