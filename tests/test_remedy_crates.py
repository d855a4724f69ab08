"""choose_remedy on every real RustSec record: for each crate, at each version an advisory's range starts at,
the chosen version is above it, no advisory with a fix affects it, and no lower named fix qualifies.

Judged by this file's own reading of the records (SEMVER ranges, `introduced` / `fixed` events in order,
precedence from ranges_cargo's Cargo-side version parser), not by repocontext.osv.evaluate.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from repocontext.osv.load import advisories
from repocontext.osv.remedy import choose_remedy
from repocontext.osv.schema import Advisory
from subgraphs.vulnerability_remediation.ranges_cargo import PreKey, pre_key, version
from tests.datapaths import SHARED

RUSTSEC = SHARED / "advisories" / "crates.io"
Key = tuple[int, int, int, PreKey]


def key(text: str) -> Key:
    v = version("0.0.0-0" if text == "0" else text)
    return (v.major, v.minor, v.patch, pre_key(v.pre))


def events(advisory: Advisory, name: str) -> list[list[tuple[str, str]]]:
    """Each SEMVER range of `name` as its (kind, version) events."""
    found = []
    for affected in advisory.affected:
        if affected.package.name != name:
            continue
        for rng in affected.ranges:
            assert rng.type == "SEMVER", advisory.id  # every RustSec record, as of this snapshot
            found.append([(k, str(v)) for e in rng.events for k, v in e.model_dump(exclude_none=True).items()])
    return found


def affects(advisory: Advisory, name: str, at: str) -> bool:
    for evs in events(advisory, name):
        inside = False
        for kind, bound in sorted(evs, key=lambda e: key(e[1])):
            if key(at) >= key(bound):
                inside = kind == "introduced"
        if inside:
            return True
    return False


@pytest.mark.skipif(not RUSTSEC.is_dir(), reason="the shared corpus advisories are absent")
def test_remedy_on_every_rustsec_record() -> None:
    by_crate: dict[str, list[Advisory]] = defaultdict(list)
    for _, advisory in advisories(Path(RUSTSEC), []):
        for affected in {a.package.name for a in advisory.affected if not advisory.withdrawn}:
            by_crate[affected].append(advisory)
    checked = 0
    for name, records in sorted(by_crate.items()):
        starts = {v for a in records for evs in events(a, name) for k, v in evs if k == "introduced" and "-" not in v
                  and v != "0"}
        fixes = {v for a in records for evs in events(a, name) for k, v in evs if k == "fixed" and "-" not in v}
        for installed in sorted(starts, key=key):
            remedy = choose_remedy(records, "crates.io", name, installed)
            if not remedy.affected_by or remedy.version is None:
                continue
            checked += 1
            fixed = [a for a in records if a.id not in remedy.unfixed]
            assert key(remedy.version) > key(installed), (name, installed, remedy.version)
            assert not any(affects(a, name, remedy.version) for a in fixed), (name, installed, remedy.version)
            lower = [f for f in fixes if key(installed) < key(f) < key(remedy.version)
                     and not any(affects(a, name, f) for a in fixed)]
            assert lower == [], (name, installed, remedy.version, lower)
    assert checked > 150, checked
