"""Which slices to pre-render, computed from the must_read entries of the TCCMs in service.

A slice is a must_read `key:` entry rendered as the builder would render it.
Slices are ranked by how many task classes name them in must_read (then by
key), and warmed in that order until MAX_SLICES or MAX_BYTES is reached.

A key scoped by a run input (`dependencies.${inputs.package}`) is rendered
once widened (the run gave no such input) and once per value the snapshot
holds at that point: each child name of the mapping (and each of its
`aliases`) for a `${inputs.x}` segment, each distinct field value for a
`[field=${inputs.x}]` filter, at most MAX_VALUES of them. A run whose input is
spelt otherwise (`PyYAML` for `pyyaml`) misses and falls through to the
RepoContext, as does a key with two different inputs (only its widened form is
rendered). Each slice is stored with the exact token count of its block under
every entry id the TCCMs in service give it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from planner.bundle import keys, render
from planner.bundle.hotslice import HotSlice
from planner.tccm.entry import input_refs, split_key
from planner.tccm.model import BANDS, TCCM
from repocontext.lazyjson import plain

MAX_VALUES = 500  # per input-scoped key
MAX_SLICES = 5_000  # per repository and commit
MAX_BYTES = 64 * 1024 * 1024  # of rendered bodies per repository and commit


@dataclass(frozen=True)
class SliceSpec:
    key: str  # as written in the TCCMs
    task_classes: tuple[str, ...]  # whose must_read names it
    ids: tuple[tuple[str, int], ...]  # (band, entry index) of every use in the TCCMs in service

    @property
    def inputs(self) -> tuple[str, ...]:
        return tuple(sorted(set(input_refs(self.key))))


def slice_set(tccms: Iterable[TCCM]) -> list[SliceSpec]:
    """The slices to pre-render, most shared first."""
    users: dict[str, set[str]] = {}
    ids: dict[str, set[tuple[str, int]]] = {}
    for tccm in tccms:
        for band in BANDS:
            for index, entry in enumerate(tccm.band(band)):
                key = entry.slice_key  # a files_of entry reads its key's records like a key entry
                if key is None:
                    continue
                ids.setdefault(key, set()).add((band, index))
                if band == "must_read":
                    users.setdefault(key, set()).add(tccm.task_class)
    specs = [SliceSpec(key, tuple(sorted(names)), tuple(sorted(ids[key]))) for key, names in users.items()]
    return sorted(specs, key=lambda s: (-len(s.task_classes), s.key))


def _join(segments: list[str]) -> str:
    return ".".join(segments).replace(".[", "[")


def _aliases(node: Mapping[str, Any]) -> Iterator[str]:
    for child in node.values():
        names = child.get("aliases") if isinstance(child, Mapping) else None
        if isinstance(names, list):
            yield from (str(n) for n in names if isinstance(n, str | int))


def _field_values(node: Any, field_name: str) -> Iterator[str]:
    children = node.values() if isinstance(node, Mapping) else node if isinstance(node, list) else []
    for child in children:
        value = child.get(field_name) if isinstance(child, Mapping) else None
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str | int | float) and not isinstance(item, bool):
                yield str(item)


def candidates(context: Mapping[str, Any], key: str) -> list[str]:
    """The values of a one-input key's input that name something in this snapshot."""
    refs = set(input_refs(key))
    if len(refs) != 1:
        return []
    name = refs.pop()
    segments = split_key(key)
    at = next(i for i, s in enumerate(segments) if input_refs(s))
    node = keys.resolve(context, _join(segments[:at]), {}).value if at else context
    segment, ref = segments[at], f"${{inputs.{name}}}"
    if segment == ref and isinstance(node, Mapping):
        found = {str(k) for k in node} | set(_aliases(node))
    elif segment.startswith("[") and segment.endswith(f"={ref}]"):
        found = set(_field_values(node, segment[1:].partition("=")[0]))
    else:
        return []
    return sorted(v for v in found if v)[:MAX_VALUES]


def render_slice(context: Mapping[str, Any], spec: SliceSpec, inputs: Mapping[str, str]) -> HotSlice | None:
    """The slice the builder would make for this key and these inputs, or None when it is missing."""
    resolved = keys.resolve(context, spec.key, inputs)
    if not resolved.found:
        return None
    body = render.render_value(resolved.value)
    counts = render.block_tokens((f"{band}:{index}:{resolved.key}" for band, index in spec.ids), body)
    return HotSlice(resolved.key, list(resolved.notes), body, plain(resolved.value), counts)


@dataclass
class Rendered:
    slices: list[tuple[SliceSpec, dict[str, str], HotSlice]]  # in rank order
    complete: bool  # False when MAX_SLICES or MAX_BYTES cut the set short
    carried: int = 0  # how many came from the previous warm instead of being rendered


def _variants(context: Mapping[str, Any], spec: SliceSpec) -> Iterator[tuple[dict[str, str], HotSlice]]:
    variants: list[dict[str, str]] = [{}]
    variants += [{spec.inputs[0]: value} for value in candidates(context, spec.key)]
    for inputs in variants:
        hot = render_slice(context, spec, inputs)
        if hot is not None:
            yield inputs, hot


def render_all(context: Mapping[str, Any], specs: list[SliceSpec],
               carried: Mapping[str, list[tuple[dict[str, str], HotSlice]]] | None = None) -> Rendered:
    """Every slice to warm, in rank order, within MAX_SLICES and MAX_BYTES; a spec found in `carried`
    (its slices from the previous warm, its section unchanged) is taken from there, not rendered."""
    out = Rendered([], complete=True)
    size = 0
    for spec in specs:
        reused = (carried or {}).get(spec.key)
        for inputs, hot in _variants(context, spec) if reused is None else reused:
            size += len(hot.body)
            if len(out.slices) + 1 > MAX_SLICES or size > MAX_BYTES:
                out.complete = False
                return out
            out.slices.append((spec, inputs, hot))
            out.carried += reused is not None
    return out
