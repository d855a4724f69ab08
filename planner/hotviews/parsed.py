"""Parsed bundles kept in the process, by content hash, so a warm build need not re-parse megabytes.

An assembled bundle can carry megabytes of RepoContext slices (all call
sites of a package, say); parsing that JSON costs tens of milliseconds, more
than the whole warm budget. Redis stays the authority: every build still asks
Redis whether the bundle is current (its key exists for this renderer, repo,
commit and snapshot; its content hash) and checks the files it read; only the
parse is skipped when this process has already parsed that very content.
Callers get their own top-level containers; bundles are otherwise treated as
immutable throughout the planner (changes go through model_copy).
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from planner.bundle.model import Bundle

MAX_ITEMS = 64
MAX_BYTES = 256 * 1024 * 1024  # of JSON parsed

_lock = threading.Lock()
_held: OrderedDict[str, tuple[Bundle, int]] = OrderedDict()


def _copy(bundle: Bundle) -> Bundle:
    return bundle.model_copy(update={"entries": list(bundle.entries), "slices": dict(bundle.slices),
                                     "files": dict(bundle.files), "inputs": dict(bundle.inputs)})


def get(etag: str) -> Bundle | None:
    with _lock:
        held = _held.get(etag)
        if held is None:
            return None
        _held.move_to_end(etag)
    return _copy(held[0])


def put(etag: str, bundle: Bundle, size: int) -> Bundle:
    """Keep `bundle` (parsed from `size` bytes); returns a copy for the caller."""
    with _lock:
        _held[etag] = (bundle, size)
        _held.move_to_end(etag)
        total = sum(s for _, s in _held.values())
        while len(_held) > MAX_ITEMS or (total > MAX_BYTES and len(_held) > 1):
            _, (_, dropped) = _held.popitem(last=False)
            total -= dropped
    return _copy(bundle)


def clear() -> None:
    with _lock:
        _held.clear()
