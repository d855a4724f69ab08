"""The TCCMs in service, parsed once per process and re-parsed when any of their files changes.

Parsing every TCCM file costs ~1-2 ms a build; the warm bundle path has a
2 ms budget in all. The memo is keyed by the working directory, the task-class
directories and (name, inode, size, mtime, ctime) of every YAML file in them,
so an edit, a new file or a removed one is seen on the next call. A file
modified in the last RACY_S seconds is never trusted to its stat (a same-size
rewrite within one timestamp tick would look unchanged): then nothing is kept.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from planner.config import Settings
from planner.errors import PlannerError
from planner.tccm.model import TCCM
from planner.tccm.registry import Registry

RACY_S = 2.0

_lock = threading.Lock()


@dataclass
class _Held:
    fingerprint: tuple[object, ...]
    by_name: dict[str, TCCM] = field(default_factory=dict)
    everything: list[TCCM] | None = None


_memo: dict[tuple[str, ...], _Held] = {}


def _fingerprint(directories: Sequence[Path]) -> tuple[tuple[object, ...], bool]:
    """(fingerprint, settled): settled is False when a file is too new to trust its stat."""
    parts: list[object] = []
    settled = True
    horizon = time.time_ns() - int(RACY_S * 1e9)
    for directory in directories:
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            parts.append((str(directory), None))
            continue
        for entry in entries:
            if not entry.name.endswith((".yaml", ".yml")):
                continue
            try:
                st = entry.stat()
            except OSError:
                continue
            settled = settled and max(st.st_mtime_ns, st.st_ctime_ns) < horizon
            parts.append((entry.path, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    return tuple(parts), settled


def _current(settings: Settings) -> tuple[tuple[str, ...], _Held, bool]:
    """(memo key, what is held for the current files (possibly nothing yet), settled)."""
    memo_key = (os.getcwd(), *map(str, settings.task_class_dirs))
    fingerprint, settled = _fingerprint(settings.task_class_dirs)
    with _lock:
        held = _memo.get(memo_key)
    if held is None or held.fingerprint != fingerprint:
        held = _Held(fingerprint)
    return memo_key, held, settled


def _keep(memo_key: tuple[str, ...], held: _Held, settled: bool) -> None:
    if settled:
        with _lock:
            _memo[memo_key] = held


def resolve(settings: Settings, name: str) -> TCCM:
    """registry(settings).get(name), memoised while no TCCM file changes."""
    memo_key, held, settled = _current(settings)
    if name not in held.by_name:
        tccm = Registry(settings.task_class_dirs).get(name)
        held = _Held(held.fingerprint, {**held.by_name, name: tccm}, held.everything)
        _keep(memo_key, held, settled)
    return held.by_name[name]


def in_service(settings: Settings) -> list[TCCM]:
    """Every TCCM that resolves (invalid ones are not in service), sorted by task class."""
    memo_key, held, settled = _current(settings)
    if held.everything is not None:
        return held.everything
    registry = Registry(settings.task_class_dirs)
    found: list[TCCM] = []
    for name in registry.names():
        try:
            found.append(registry.get(name))
        except PlannerError:
            continue
    _keep(memo_key, _Held(held.fingerprint, {**held.by_name, **{t.task_class: t for t in found}}, found), settled)
    return found


def clear() -> None:
    with _lock:
        _memo.clear()
