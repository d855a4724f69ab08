"""An opt-in wall-clock budget per probe, for workers that gather many untrusted repositories.

The parse limits (repocontext.bounded, the probes' read cap) already bound each probe's work by the size of
what it reads; this is the backstop for whatever they miss. It is off unless PLANNER_PROBE_BUDGET_S is set,
because a wall-clock limit makes the output depend on the machine's speed and load, and a RepoContext must
not. Over budget, the probe's keys are left out and an error diagnostic says so; its run is recorded as not
reusable, so the next gather runs it again instead of carrying the gap forward.

Enforced with SIGALRM, so only in a process's main thread (the CLI, and the daemon's forked children);
elsewhere the budget is not applied. A signal is handled between Python bytecodes: a single long C call
(libyaml composing one file) finishes first, which the parse limits keep short.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import FrameType

from repocontext.model import Diagnostic

BUDGET_ENV = "PLANNER_PROBE_BUDGET_S"
MESSAGE = "probe exceeded its time budget"


class OverBudget(Exception):
    def __init__(self, seconds: float) -> None:
        super().__init__(f"{MESSAGE} of {seconds:g} s")
        self.seconds = seconds


def seconds() -> float | None:
    """The budget from PLANNER_PROBE_BUDGET_S, or None (no budget) when unset, invalid or not positive."""
    try:
        value = float(os.environ.get(BUDGET_ENV, ""))
    except ValueError:
        return None
    return value if value > 0 else None


def _enforceable() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextmanager
def time_budget(limit: float | None) -> Iterator[None]:
    """Raise OverBudget inside the block once `limit` seconds have passed (None: no limit)."""
    if limit is None or not _enforceable():
        yield
        return

    def expire(signum: int, frame: FrameType | None) -> None:
        raise OverBudget(limit)

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def exceeded(diagnostics: Sequence[Diagnostic]) -> bool:
    """Whether these diagnostics of one probe run say it ran out of time (its output is then incomplete)."""
    return any(d.level == "error" and d.message.startswith(MESSAGE) for d in diagnostics)
