"""Is a package version affected by an advisory? The OSV schema's "Evaluation" algorithm.

A version is affected when it is listed in an `affected[].versions` list or lies in
a SEMVER/ECOSYSTEM range: the range's events are sorted by version (`introduced:
"0"` first, equal versions keep record order) and walked; `introduced` opens,
`fixed` closes exclusively, `last_affected` closes inclusively, and when a range has
`limit` events the version must be below one of them (`*` is infinity). GIT ranges
need the repository's commit graph and are skipped with a note. Withdrawn
advisories never affect anything.

Besides the verdict, an evaluation names the interval(s) that contain the version
and their `fixed` versions: for django 3.2.19 and the events introduced 3.2 / fixed
3.2.20 / introduced 4.0 / fixed 4.1.10 that is 3.2.20, not 4.1.10.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from repocontext.osv.schema import Advisory, Affected, Range
from repocontext.osv.severity import SeverityInfo, severity_of
from repocontext.osv.versions import (
    InvalidVersion,
    Scheme,
    ecosystem_key,
    normalize_name,
    scheme_for,
    sort_key,
)

ORDERED_RANGE_TYPES = frozenset({"SEMVER", "ECOSYSTEM"})
_CLOSERS = ("fixed", "last_affected")


class Interval(BaseModel):
    """One affected interval of a range: [introduced, fixed) or [introduced, last_affected]."""

    range_type: str
    introduced: str  # "0": from the first version
    fixed: str | None = None
    last_affected: str | None = None

    def describe(self) -> str:
        low = "" if self.introduced == "0" else f">={self.introduced}"
        high = f"<{self.fixed}" if self.fixed else f"<={self.last_affected}" if self.last_affected else ""
        return ", ".join(p for p in (low, high) if p) or "all versions"


class Evaluation(BaseModel):
    advisory_id: str
    ecosystem: str
    package: str
    version: str
    affected: bool = False
    withdrawn: bool = False
    in_versions_list: bool = False
    checked: bool = False  # a versions list or an orderable range was actually consulted
    intervals: list[Interval] = Field(default_factory=list)  # the intervals containing the version
    fixed: list[str] = Field(default_factory=list)  # fixed versions of those intervals
    all_fixed: list[str] = Field(default_factory=list)  # every fixed version the record names for the package
    severity: SeverityInfo = Field(default_factory=SeverityInfo)
    notes: list[str] = Field(default_factory=list)  # skipped GIT ranges, unorderable versions


def entries_for(advisory: Advisory, ecosystem: str, name: str) -> list[Affected]:
    """The `affected` entries of an advisory that name this package."""
    eco, wanted = ecosystem_key(ecosystem), normalize_name(ecosystem, name)
    memo = _memo(advisory)
    found = memo.get((eco, wanted))
    if found is None:
        found = memo[(eco, wanted)] = [
            entry for entry in advisory.affected
            if entry.package is not None and ecosystem_key(entry.package.ecosystem) == eco
            and normalize_name(ecosystem, entry.package.name) == wanted
        ]
    return found


def evaluate(advisory: Advisory, ecosystem: str, name: str, version: str) -> Evaluation | None:
    """How `advisory` bears on `name` at `version`; None when the advisory does not name the package."""
    entries = entries_for(advisory, ecosystem, name)
    if not entries:
        return None
    head: dict[str, Any] = {"advisory_id": advisory.id, "ecosystem": ecosystem, "package": name, "version": version,
            "severity": _severity(advisory, entries[0]).model_copy()}  # a copy: callers may edit results
    if advisory.withdrawn:
        note = f"{advisory.id} was withdrawn on {advisory.withdrawn}; skipped"
        return Evaluation.model_construct(**head, withdrawn=True, notes=[note])
    scheme = scheme_for(ecosystem)
    state = _State()
    for entry in entries:
        _evaluate_entry(advisory.id, entry, ecosystem, version, state)
    all_fixed = _sorted_versions(scheme, [f for entry in entries for f in _entry_fixed(entry)])
    fixed = [i.fixed for i in state.intervals if i.fixed]
    if not fixed and state.listed and not state.intervals:
        # Listed but in no orderable range (e.g. GIT-only): the next fix above the version is the best guess.
        fixed = _fixes_above(scheme, version, all_fixed)[:1]
    # Built from already-typed values: model_construct skips re-validation (a third of the cost).
    return Evaluation.model_construct(
        **head, affected=state.listed or bool(state.intervals), in_versions_list=state.listed,
        checked=state.checked, intervals=state.intervals, fixed=_sorted_versions(scheme, fixed),
        all_fixed=all_fixed, notes=list(dict.fromkeys(state.notes)),
    )


def affects(advisory: Advisory, ecosystem: str, name: str, version: str) -> bool:
    """Whether `evaluate(advisory, ecosystem, name, version)` is an affecting, not withdrawn evaluation, without
    building it (its severity copy and its sorted fixed versions): a remedy judges every candidate version
    against every advisory of the package, and most pairs do not affect."""
    entries = entries_for(advisory, ecosystem, name)
    if not entries or advisory.withdrawn:
        return False
    state = _State()
    for entry in entries:
        _evaluate_entry(advisory.id, entry, ecosystem, version, state)
    return state.listed or bool(state.intervals)


@dataclass
class _State:
    listed: bool = False
    checked: bool = False
    intervals: list[Interval] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _evaluate_entry(advisory_id: str, entry: Affected, ecosystem: str, version: str, state: _State) -> None:
    if entry.versions:
        state.checked = True
        state.listed = state.listed or _in_versions(entry, scheme_for(ecosystem), version)
    for rng in entry.ranges:
        kind = rng.type.upper()
        if kind not in ORDERED_RANGE_TYPES:
            state.notes.append(f"{advisory_id}: {kind or 'untyped'} range skipped (cannot order it offline)")
            continue
        try:
            interval = containing_interval(rng, scheme_for(ecosystem, kind), version)
        except InvalidVersion as exc:
            state.notes.append(f"{advisory_id}: {kind} range skipped: {exc}")
            continue
        state.checked = True
        if interval is not None:
            state.intervals.append(interval)


@dataclass(frozen=True)
class _Ordered:
    """A range's events sorted once per ordering scheme: (kind, value, key); key None for introduced "0"."""

    events: list[tuple[str, str, Any]]
    limits: list[Any]  # keys of the limit events; empty when there are none
    unlimited: bool  # no limit events, or a "*" one


def containing_interval(rng: Range, scheme: Scheme, version: str) -> Interval | None:
    """The interval of an ordered range that contains `version`, per the schema's walk; raises InvalidVersion."""
    ordered = _ordered(rng, scheme)
    key = sort_key(scheme, version)
    if not ordered.unlimited and not any(key < limit for limit in ordered.limits):
        return None
    opened: int | None = None
    for index, (kind, _, bound) in enumerate(ordered.events):
        if kind == "introduced":
            if bound is None or key >= bound:
                opened = index
        elif kind == "fixed":
            if key >= bound:
                opened = None
        elif key > bound:  # last_affected
            opened = None
    return None if opened is None else _interval_at(rng.type.upper(), ordered.events, opened)


def _interval_at(range_type: str, events: list[tuple[str, str, Any]], opened: int) -> Interval:
    start = opened
    while start > 0 and events[start - 1][0] == "introduced":
        start -= 1  # consecutive introduced events open one interval
    closer = next(((kind, value) for kind, value, _ in events[opened + 1:] if kind in _CLOSERS), None)
    return Interval.model_construct(
        range_type=range_type, introduced=events[start][1],
        fixed=closer[1] if closer and closer[0] == "fixed" else None,
        last_affected=closer[1] if closer and closer[0] == "last_affected" else None,
    )


def _ordered(rng: Range, scheme: Scheme) -> _Ordered:
    memo = _memo(rng)
    found = memo.get(scheme)
    if found is None:
        try:
            found = _order(rng, scheme)
        except InvalidVersion as exc:
            found = str(exc)
        memo[scheme] = found
    if isinstance(found, str):
        raise InvalidVersion(found)
    return found


def _order(rng: Range, scheme: Scheme) -> _Ordered:
    events: list[tuple[str, str, Any]] = []
    limits: list[Any] = []
    star = False  # a "*" limit is infinity
    for event in rng.events:
        kind, value = event.kind, event.value
        if kind is None or value is None:
            continue
        if kind == "limit":
            star = star or "*" in value
            if "*" not in value:
                limits.append(sort_key(scheme, value))
            continue
        events.append((kind, value, None if kind == "introduced" and value == "0" else sort_key(scheme, value)))
    if scheme == "gem":
        events = _without_inverted(events)
    # "0" first; otherwise by version, equal versions keep record order (list.sort is stable).
    events.sort(key=lambda e: (0,) if e[2] is None else (1, e[2]))
    return _Ordered(events=events, limits=limits, unlimited=star or not limits)


def _without_inverted(events: list[tuple[str, str, Any]]) -> list[tuple[str, str, Any]]:
    """Drop each introduced event followed, in record order, by a fix that sorts below it. RubySec's records
    write a line's fix in its own pre-release (`introduced: "3.1"`, `fixed: "3.1.0.rc6"`): in Gem order the
    fix is below the opening, and the schema's sorted walk would leave every later version affected (Rails 8
    by a 2011 advisory of the 3.1 release candidates). The pair is an empty interval."""
    kept: list[tuple[str, str, Any]] = []
    for event in events:
        last = kept[-1] if kept else None
        if (last is not None and last[0] == "introduced" and last[2] is not None and event[0] == "fixed"
                and event[2] < last[2]):
            kept.pop()
            continue
        kept.append(event)
    return kept


def _entry_fixed(entry: Affected) -> list[str]:
    memo = _memo(entry)
    if "fixed" not in memo:
        memo["fixed"] = [e.fixed for r in entry.ranges if r.type.upper() in ORDERED_RANGE_TYPES
                         for e in r.events if e.fixed is not None]
    return memo["fixed"]


def _severity(advisory: Advisory, entry: Affected) -> SeverityInfo:
    memo = _memo(entry)
    if "severity" not in memo:
        memo["severity"] = severity_of(advisory, entry)
    return memo["severity"]


def _in_versions(entry: Affected, scheme: Scheme, version: str) -> bool:
    memo = _memo(entry)
    index = memo.get(("versions", scheme))
    if index is None:
        keys = {_key_or_none(scheme, v) for v in entry.versions}
        keys.discard(None)
        index = memo[("versions", scheme)] = (frozenset(entry.versions), frozenset(keys))
    if version in index[0]:
        return True
    key = _key_or_none(scheme, version)
    return key is not None and key in index[1]


def _key_or_none(scheme: Scheme, version: str) -> Any:
    try:
        return sort_key(scheme, version)
    except InvalidVersion:
        return None


def _sorted_versions(scheme: Scheme, versions: list[str]) -> list[str]:
    """Sorted by the ecosystem's order; versions it cannot parse go last, by text."""
    def order(v: str) -> tuple[int, Any, str]:
        key = _key_or_none(scheme, v)
        return (0, key, v) if key is not None else (1, 0, v)

    return sorted(dict.fromkeys(versions), key=order)


def _fixes_above(scheme: Scheme, version: str, fixed: list[str]) -> list[str]:
    key = _key_or_none(scheme, version)
    if key is None:
        return []
    return [v for v in fixed if (other := _key_or_none(scheme, v)) is not None and other > key]


# Derived data per record part (sorted events, version sets, severity), keyed by object id and
# dropped when the part is garbage-collected. Records are treated as immutable once loaded.
_MEMO: dict[int, dict[Any, Any]] = {}


def _memo(part: object) -> dict[Any, Any]:
    key = id(part)
    found = _MEMO.get(key)
    if found is None:
        found = _MEMO[key] = {}
        weakref.finalize(part, _MEMO.pop, key, None).atexit = False  # nothing to clean at exit
    return found
