"""Reading and writing hot views. Every Redis call goes through `_call`: a failure marks the
store unavailable (with the reason) and the caller goes on without hot views.

Only what a bundle would show goes to Redis: rendered slices of the
RepoContext (which never holds secret content) and assembled bundles (whose
text the builder already cleared of secret files). Paths and stat data of the
files a bundle read travel with it; file contents the builder denied never do.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import orjson
from pydantic import BaseModel

from planner.bundle.hotslice import HotSlice
from planner.config import Settings
from planner.hotviews import carry, naming, slices
from planner.hotviews.backend import Backend, connect, data, errors, reason, text, ttl_seconds
from planner.tccm.model import BANDS, TCCM

if TYPE_CHECKING:
    import redis

T = TypeVar("T")
TEMPLATES = "__templates__"  # field of a slices hash: the keys that were warmed
CHUNK = 500  # hash fields per HSET


@dataclass
class SliceLookup:
    """The hot slices one build may use, fetched in one round trip before the build starts."""

    found: dict[str, HotSlice]
    templates: frozenset[str]
    hits: int = 0
    misses: int = 0

    def get(self, key: str, inputs: Mapping[str, str]) -> HotSlice | None:
        hot = self.found.get(naming.slice_field(key, inputs))
        if hot is not None:
            self.hits += 1
        elif key in self.templates:
            self.misses += 1  # warmed, but not for this input (or missing from the snapshot)
        return hot


class WarmReport(BaseModel):
    repo: str
    commit: str
    snapshot: str
    renderer: str
    tccm_set: str
    backend: str
    templates: int
    slices: int
    carried: int = 0  # slices taken unchanged from the previous warm (their section did not change)
    bytes: int
    bundles: int = 0
    removed_keys: int = 0
    ttl_s: int
    elapsed_ms: float = 0.0
    error: str | None = None


@dataclass
class BundleHead:
    etag: str  # content hash of the stored bundle JSON
    meta: dict[str, Any]  # the RepoContext meta provenance needs
    deps: list[list[Any]]  # [path, inode, size, mtime, ctime] (or [path] when absent) of every file it read


@dataclass
class HotViews:
    backend: Backend
    ttl: int
    error: str | None = None

    @classmethod
    def open(cls, settings: Settings) -> HotViews:
        return cls(connect(settings.redis_url), ttl_seconds())

    @property
    def usable(self) -> bool:
        return self.backend.client is not None and self.error is None

    def call(self, action: Callable[[redis.Redis], T]) -> T | None:
        """action(client), or None when Redis is off, failed earlier in this build, or fails now."""
        client = self.backend.client
        if client is None or self.error is not None:
            return None
        try:
            return action(client)
        except errors() as exc:
            self.error = reason(exc, self.backend.url)
            return None

    def ping(self) -> bool:
        return bool(self.call(lambda r: r.ping()))

    # --- slices ---------------------------------------------------------------------------------------------

    def slices(self, snap: naming.Snapshot, set_hash: str, tccm: TCCM, inputs: Mapping[str, str]) -> SliceLookup:
        keys = sorted({e.slice_key for band in BANDS for e in tccm.band(band) if e.slice_key is not None})
        fields = [TEMPLATES, *(naming.slice_field(k, inputs) for k in keys)]
        raw = self.call(lambda r: r.hmget(naming.slices_key(snap, set_hash), fields)) or [None] * len(fields)
        templates = frozenset(orjson.loads(raw[0])) if raw[0] else frozenset()
        found = {f: HotSlice(**orjson.loads(v)) for f, v in zip(fields[1:], raw[1:], strict=True) if v}
        return SliceLookup(found, templates)

    def warm(self, snap: naming.Snapshot, context: Mapping[str, Any], tccms: list[TCCM]) -> WarmReport:
        started = time.perf_counter()
        specs = slices.slice_set(tccms)
        set_hash = naming.tccm_set(tccms)
        key = naming.slices_key(snap, set_hash)
        sections = carry.prints(context, specs)
        previous = self.call(lambda r: carry.carried(r, snap, set_hash, key, sections, specs)) or {}
        rendered = slices.render_all(context, specs, previous)
        mapping: dict[str, bytes] = {TEMPLATES: orjson.dumps([s.key for s in specs])}
        for spec, inputs, hot in rendered.slices:
            mapping[naming.slice_field(spec.key, inputs)] = orjson.dumps(hot.__dict__)
        mapping[carry.CARRY] = orjson.dumps({"sections": sections, "complete": rendered.complete})  # written last
        report = WarmReport(repo=snap.repo_id, commit=snap.commit, snapshot=snap.fingerprint,
                            renderer=naming.renderer_version(), tccm_set=set_hash, backend=self.backend.shown,
                            templates=len(specs), slices=len(rendered.slices), carried=rendered.carried,
                            bytes=sum(len(hot.body) for _, _, hot in rendered.slices), ttl_s=self.ttl)
        removed = self.call(lambda r: self._write_slices(r, snap, key, mapping, report))
        report.removed_keys = removed or 0
        report.elapsed_ms = round((time.perf_counter() - started) * 1000, 1)
        report.error = self.error
        return report

    def _write_slices(self, r: redis.Redis, snap: naming.Snapshot, key: str, mapping: dict[str, bytes],
                      report: WarmReport) -> int:
        index = naming.repo_index(snap.repo_id)
        stale = [text(k) for k in r.smembers(index) if not text(k).startswith(snap.base + ":")]
        pipe = r.pipeline(transaction=False)
        if stale:  # a new commit (or snapshot, or renderer) retires the repository's older hot views
            pipe.delete(*stale)
            pipe.srem(index, *stale)
        pipe.delete(key)
        items = list(mapping.items())
        for start in range(0, len(items), CHUNK):
            pipe.hset(key, mapping=dict(items[start:start + CHUNK]))
        pipe.expire(key, self.ttl)
        pipe.set(naming.meta_key(snap), report.model_dump_json(), ex=self.ttl)
        pipe.sadd(index, key, naming.meta_key(snap))
        pipe.expire(index, self.ttl)
        pipe.hincrby(naming.STATS_KEY, "warms", 1)
        pipe.execute()
        return len(stale)

    # --- assembled bundles ----------------------------------------------------------------------------------

    def bundle_head(self, key: str) -> BundleHead | None:
        """The small part of a stored bundle (content hash, RepoContext meta, files read), or None."""
        def fetch(r: redis.Redis) -> list[Any]:
            pipe = r.pipeline(transaction=False)
            pipe.hmget(key, ["etag", "meta", "deps"])
            pipe.hincrby(naming.STATS_KEY, "bundle_lookups", 1)  # hits = lookups - misses: no extra round trip
            return pipe.execute()

        got = self.call(fetch)
        if not got or not all(got[0]):
            return None
        etag, meta, deps = got[0]
        return BundleHead(etag.decode(), orjson.loads(meta), orjson.loads(deps))

    def bundle_body(self, key: str) -> tuple[str, bytes] | None:
        """(content hash, bundle JSON), read together so they always match."""
        got = self.call(lambda r: r.hmget(key, ["etag", "bundle"]))
        if not got:
            return None
        etag, body = got
        if not etag or not body:
            return None
        return text(etag), data(body)

    def put_bundle(self, snap: naming.Snapshot, key: str, bundle_json: bytes, meta: Mapping[str, Any],
                   deps: list[list[Any]]) -> str | None:
        """Store an assembled bundle; returns its content hash, or None when Redis failed."""
        etag = hashlib.sha256(bundle_json).hexdigest()[:32]

        def write(r: redis.Redis) -> str:
            pipe = r.pipeline(transaction=False)
            pipe.hset(key, mapping={"etag": etag, "bundle": bundle_json, "meta": orjson.dumps(meta),
                                    "deps": orjson.dumps(deps)})
            pipe.expire(key, self.ttl)
            pipe.sadd(naming.repo_index(snap.repo_id), key)
            pipe.expire(naming.repo_index(snap.repo_id), self.ttl)
            pipe.execute()
            return etag

        return self.call(write)

    def count(self, **counters: int) -> None:
        """Add to the hit/miss counters (one round trip; nothing when all are zero)."""
        wanted = {k: v for k, v in counters.items() if v}
        if not wanted:
            return

        def add(r: redis.Redis) -> None:
            pipe = r.pipeline(transaction=False)
            for name, value in wanted.items():
                pipe.hincrby(naming.STATS_KEY, name, value)
            pipe.execute()

        self.call(add)

    def warmed(self, snap: naming.Snapshot, set_hash: str) -> dict[str, int] | None:
        """How many slices are warmed for this snapshot, by key as written; None when Redis failed."""
        fields = self.call(lambda r: r.hkeys(naming.slices_key(snap, set_hash)))
        if fields is None:
            return None
        counts: dict[str, int] = {}
        for raw in fields:
            if data(raw).startswith(b"["):  # a slice (the other fields are TEMPLATES and carry.CARRY)
                key = orjson.loads(raw)[0]
                counts[key] = counts.get(key, 0) + 1
        return counts
