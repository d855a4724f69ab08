"""`planner hotviews stats`: what the hot views hold and how often they served."""

from __future__ import annotations

from typing import Any

import redis
from pydantic import BaseModel

from planner.hotviews import naming
from planner.hotviews.backend import text
from planner.hotviews.carry import CARRY
from planner.hotviews.store import TEMPLATES, HotViews

COUNTERS = ("slice_hits", "slice_misses", "bundle_lookups", "bundle_misses", "warms")


class Stats(BaseModel):
    backend: str
    reachable: bool
    error: str | None = None
    renderer: str
    keys: int = 0  # hot-view keys under the namespace (every renderer version)
    repos: int = 0
    snapshots: int = 0  # warmed (repository, commit, snapshot) triples
    slices: int = 0
    bundles: int = 0
    value_bytes: int = 0  # bytes of the stored values themselves
    server_used_memory: int | None = None  # the whole server's, when it reports it (a real Redis)
    slice_hits: int = 0
    slice_misses: int = 0
    bundle_hits: int = 0
    bundle_misses: int = 0
    warms: int = 0

    @property
    def slice_hit_ratio(self) -> float | None:
        total = self.slice_hits + self.slice_misses
        return round(self.slice_hits / total, 4) if total else None

    @property
    def bundle_hit_ratio(self) -> float | None:
        total = self.bundle_hits + self.bundle_misses
        return round(self.bundle_hits / total, 4) if total else None

    def as_json(self) -> dict[str, Any]:
        return {**self.model_dump(), "slice_hit_ratio": self.slice_hit_ratio,
                "bundle_hit_ratio": self.bundle_hit_ratio}


def _sizes(r: redis.Redis, keys: list[bytes]) -> list[tuple[str, str, int, int]]:
    """(key, type, entries, value bytes) of each key."""
    pipe = r.pipeline(transaction=False)
    for key in keys:
        pipe.type(key)
    types = [t.decode() if isinstance(t, bytes) else str(t) for t in pipe.execute()]
    pipe = r.pipeline(transaction=False)
    for key, kind in zip(keys, types, strict=True):
        {"hash": pipe.hkeys, "string": pipe.strlen, "set": pipe.scard}.get(kind, pipe.exists)(key)
    firsts = pipe.execute()
    rows = []
    for key, kind, first in zip(keys, types, firsts, strict=True):
        if kind == "hash":
            pipe = r.pipeline(transaction=False)
            for name in first:
                pipe.hstrlen(key, name)
            rows.append((key.decode(), kind, len(first), sum(pipe.execute()) + sum(map(len, first))))
        else:
            rows.append((key.decode(), kind, int(first) if kind == "set" else 1, int(first) if kind == "string" else 0))
    return rows


def _collect(r: redis.Redis, stats: Stats) -> Stats:
    keys = sorted(r.scan_iter(match=f"{naming.PREFIX}:*", count=1000))
    for key, _kind, entries, size in _sizes(r, [k for k in keys if k.decode() != naming.STATS_KEY]):
        stats.keys += 1
        stats.value_bytes += size
        if key.startswith(f"{naming.PREFIX}:repo:"):
            stats.repos += 1
        elif ":slices:" in key:
            stats.slices += entries - int(bool(r.hexists(key, TEMPLATES))) - int(bool(r.hexists(key, CARRY)))
        elif ":bundle:" in key:
            stats.bundles += 1
        elif key.endswith(":meta"):
            stats.snapshots += 1
    counters = {text(k): int(v) for k, v in r.hgetall(naming.STATS_KEY).items()}
    stats.slice_hits, stats.slice_misses = counters.get("slice_hits", 0), counters.get("slice_misses", 0)
    stats.bundle_misses, stats.warms = counters.get("bundle_misses", 0), counters.get("warms", 0)
    stats.bundle_hits = max(counters.get("bundle_lookups", 0) - stats.bundle_misses, 0)
    try:
        stats.server_used_memory = int(r.info("memory")["used_memory"])
    except (redis.ResponseError, KeyError):
        stats.server_used_memory = None  # the embedded server has no INFO
    return stats


def collect(hot: HotViews) -> Stats:
    stats = Stats(backend=hot.backend.shown, reachable=False, renderer=naming.renderer_version())
    if hot.backend.client is None:
        stats.error = "hot views are off"
        return stats
    stats.reachable = hot.call(lambda r: _collect(r, stats)) is not None
    stats.error = hot.error
    return stats
