"""Carrying slices over from the repository's previous warm instead of rendering them again.

A slice is a function of the renderer (in every key's name), the TCCMs in service (the slices key's
last part) and the one RepoContext section its key walks into. A stored section is a content-addressed
part (or, split, one part per member), so the section's manifest entry fingerprints its content: a
spec whose section has the same fingerprint as in the previous warm gets the previous warm's slices,
byte for byte, and only the specs over a changed section are rendered. After a commit that touches
source files but no lockfile, that is every dependency slice (most of a warm's time).

The previous warm's hash names its section fingerprints in CARRY, the last field written: a hash with
CARRY was written whole. A warm that hit the slice caps is not carried from (some slices are missing).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import orjson

from planner.bundle.hotslice import HotSlice
from planner.hotviews import naming
from planner.hotviews.backend import data, text
from planner.tccm.entry import input_refs, split_key

if TYPE_CHECKING:
    import redis

    from planner.hotviews.slices import SliceSpec

CARRY = "__carry__"  # field of a slices hash: {"sections": {section: fingerprint}, "complete": bool}
Variant = tuple[dict[str, str], HotSlice]


def section_of(key: str) -> str | None:
    """The RepoContext section a key walks into; None when its first segment is an input (any section)."""
    first = split_key(key)[0]
    return None if input_refs(first) or first.startswith("[") else first


def prints(context: Mapping[str, Any], specs: list[SliceSpec]) -> dict[str, str]:
    """Fingerprints of the sections the specs read, for a stored (lazy) snapshot; {} for anything else."""
    part_of = getattr(context, "part_of", None)
    if part_of is None:
        return {}
    found: dict[str, str] = {}
    for section in sorted({s for s in map(section_of, (spec.key for spec in specs)) if s is not None}):
        try:
            entry = part_of(section)
        except KeyError:
            continue  # not in this snapshot: its slices are simply absent
        found[section] = hashlib.sha256(orjson.dumps(entry, option=orjson.OPT_SORT_KEYS)).hexdigest()[:32]
    return found


def _previous_key(r: redis.Redis, snap: naming.Snapshot, set_hash: str, current: str) -> str | None:
    """The repository's other slices hash for this renderer and TCCM set (a warm retires all but one)."""
    head, tail = f"{naming.PREFIX}:{naming.renderer_version()}:{snap.repo_id}:", f":slices:{set_hash}"
    names = sorted(text(k) for k in r.smembers(naming.repo_index(snap.repo_id)))
    return next((n for n in names if n.startswith(head) and n.endswith(tail) and n != current), None)


def _order(variant: Variant) -> tuple[bool, list[str]]:
    inputs = variant[0]
    return bool(inputs), sorted(inputs.values())  # as slices.render_all makes them: widened first, then by value


def carried(r: redis.Redis, snap: naming.Snapshot, set_hash: str, current: str, now: Mapping[str, str],
            specs: list[SliceSpec]) -> dict[str, list[Variant]]:
    """Spec key → its slices from the previous warm, for every spec whose section is unchanged."""
    previous = _previous_key(r, snap, set_hash, current) if now else None
    raw = r.hget(previous, CARRY) if previous else None
    before = orjson.loads(raw) if raw else {}
    if not previous or not before.get("complete"):
        return {}
    same = {s for s, fingerprint in now.items() if before["sections"].get(s) == fingerprint}
    wanted = {spec.key for spec in specs if section_of(spec.key) in same}
    if not wanted:
        return {}
    found: dict[str, list[Variant]] = {key: [] for key in wanted}
    for field, value in r.hgetall(previous).items():
        if data(field).startswith(b"["):
            key, inputs = orjson.loads(field)
            if key in found:
                found[key].append(({k: v for k, v in inputs.items() if v}, HotSlice(**orjson.loads(value))))
    return {key: sorted(variants, key=_order) for key, variants in found.items()}
