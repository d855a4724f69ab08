"""Patching the call_sites groups for a few changed files, as the full combine would have built them.

Full-combine facts this relies on (files added in path order, each file's
sites in site order): a group's `sites` are sorted by file and contiguous per
file, so one file's sites are found by bisect; its `first_party` is the
classification of its first site (the one that created it); its `aliases`
are the union of its sites' classifications; a group exists only while it has
sites; its `via` (Rust, Ruby, PHP, JVM and C# groups only) is that of its first
site. Every site's classification is a function of the site (file language,
symbol, group), so any site can be classified again to check these.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

from repocontext.probe import CannotIncrement, json_equal

Classified = tuple[bool, tuple[str, ...], str | None]  # (first party, aliases, via) of one site
Reclassify = Callable[[str, Mapping[str, Any]], Classified]  # (group key, site) → its classification

_FILE = itemgetter("file")


@dataclass
class FileSites:
    """One version of one file's sites, by group, in site order, each with its classification."""

    by_group: dict[str, list[tuple[dict[str, Any], Classified]]] = field(default_factory=dict)

    def sites(self, key: str) -> list[dict[str, Any]]:
        return [site for site, _ in self.by_group.get(key, ())]


def patch_groups(groups: Mapping[str, Any], edits: Mapping[str, tuple[FileSites, FileSites]],
                 reclassify: Reclassify) -> dict[str, Any]:
    """The groups after replacing each edited file's old sites by its new ones; `edits`: path → (old, new).

    Groups no edit touches, and touched groups whose sites came out equal, are the very objects of `groups`.
    Raises CannotIncrement when `groups` does not hold the old sites where expected, or when a group would
    change owner (its first_party flips: a group shared by two languages lost its first file).
    """
    touched: dict[str, list[str]] = {}  # group → edited paths with sites in it (before or after), sorted
    for path in sorted(edits):
        old, new = edits[path]
        for key in dict.fromkeys([*old.by_group, *new.by_group]):
            touched.setdefault(key, []).append(path)
    patched: dict[str, Any] = {}
    for key, paths in touched.items():
        patched[key] = _patch_group(key, groups.get(key), [(p, *edits[p]) for p in paths], reclassify)
    merged: dict[str, Any] = {}
    for key in sorted({*groups, *patched}):
        group = patched[key] if key in patched else groups[key]
        if group is not None:
            merged[key] = group
    return merged


def _patch_group(key: str, group: Any, edits: list[tuple[str, FileSites, FileSites]],
                 reclassify: Reclassify) -> Any:
    """One group after its edits: the same object when nothing changed, None when it has no sites left."""
    if group is not None and not isinstance(group, Mapping):
        raise CannotIncrement(f"group {key!r} is not a mapping")
    sites: Sequence[Any] = group["sites"] if group is not None else ()
    spans = [_span(sites, path, old.sites(key)) for path, old, _ in edits]
    if group is not None and all(old.sites(key) == new.sites(key) for _, old, new in edits):
        return group
    rebuilt: list[Any] = []
    cursor = 0
    for (low, high), (_, _, new) in zip(spans, edits, strict=True):
        rebuilt.extend(sites[cursor:low])
        rebuilt.extend(new.sites(key))
        cursor = high
    rebuilt.extend(sites[cursor:])
    if not rebuilt:
        return None
    fresh = {id(site): found for _, _, new in edits for site, found in new.by_group.get(key, ())}
    first = rebuilt[0]
    if group is not None and sites and first is sites[0]:
        first_party, via = bool(group["first_party"]), group.get("via")
    else:
        _, _, via = classified = fresh[id(first)] if id(first) in fresh else reclassify(key, first)
        first_party = classified[0]
    if group is not None and (first_party != bool(group["first_party"]) or via != group.get("via")):
        raise CannotIncrement(f"group {key!r} would change first_party or via")
    aliases = _aliases(key, group, rebuilt, fresh, reclassify, {path for path, _, _ in edits})
    patched = {"module": key, "aliases": aliases, "first_party": first_party, "sites": rebuilt}
    if via is not None:
        patched["via"] = via
    return patched


def _span(sites: Sequence[Any], path: str, expected: list[dict[str, Any]]) -> tuple[int, int]:
    """Where `path`'s sites lie in `sites`; raises CannotIncrement unless they are exactly `expected`."""
    low = bisect_left(sites, path, key=_FILE)
    high = bisect_right(sites, path, lo=low, key=_FILE)
    if high - low != len(expected) or not all(json_equal(expected[i], sites[low + i]) for i in range(len(expected))):
        raise CannotIncrement(f"previous call sites of {path} differ from its previous result")
    return low, high


def _aliases(key: str, group: Any, sites: list[Any], fresh: dict[int, Classified], reclassify: Reclassify,
             edited: set[str]) -> list[str]:
    """The union of the sites' aliases. What the new sites and the first site give is sure; an alias only the
    removed sites might have given is kept when some untouched site still gives it (searched, rarely)."""
    found = {alias for _, aliases, _ in fresh.values() for alias in aliases}
    first = sites[0]
    found.update(fresh[id(first)][1] if id(first) in fresh else reclassify(key, first)[1])
    missing = set(group["aliases"] if group is not None else ()) - found
    for site in sites:
        if not missing:
            break
        if site["file"] not in edited:
            gives = set(reclassify(key, site)[1])
            found |= gives & missing
            missing -= gives
    return sorted(found)
