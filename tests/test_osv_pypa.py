"""Against the real Python Packaging Advisory Database snapshot in shared/advisories/pypa."""

from __future__ import annotations

import pytest

from repocontext.osv.db import AdvisoryDB
from repocontext.osv.load import load
from repocontext.osv.remedy import choose_remedy
from tests import datapaths

PYPA = datapaths.PYPA

pytestmark = pytest.mark.skipif(not (PYPA / "vulns").is_dir(), reason=f"pypa advisory snapshot absent at {PYPA}")


@pytest.fixture(scope="module")
def db() -> AdvisoryDB:
    return load(PYPA)


def test_loads_every_record_without_issues(db: AdvisoryDB) -> None:
    files = sorted((PYPA / "vulns").rglob("*.yaml"))
    assert len(db) == len(files) > 2600
    assert db.issues == []
    assert {a.id for a in db} == {f.stem for f in files}


def test_django_release_line_intervals_pick_the_containing_fix(db: AdvisoryDB) -> None:
    # PYSEC-2023-100 (CVE-2023-36053): introduced 4.2 fixed 4.2.3, 4.0 → 4.1.10, 3.2 → 3.2.20.
    by_id = {e.advisory_id: e for e in db.affecting("PyPI", "Django", "3.2.19")}
    hit = by_id["PYSEC-2023-100"]
    assert hit.fixed == ["3.2.20"]
    assert hit.all_fixed == ["3.2.20", "4.1.10", "4.2.3"]
    assert [i.describe() for i in hit.intervals] == [">=3.2, <3.2.20"]
    middle = {e.advisory_id: e for e in db.affecting("PyPI", "django", "4.1.9")}["PYSEC-2023-100"]
    assert middle.fixed == ["4.1.10"]
    assert "PYSEC-2023-100" not in {e.advisory_id for e in db.affecting("PyPI", "django", "3.2.20")}


def test_zero_introduced_and_second_line(db: AdvisoryDB) -> None:
    # PYSEC-2011-1: introduced 0 fixed 1.2.7, introduced 1.3 fixed 1.3.1.
    assert {e.advisory_id: e.fixed for e in db.affecting("PyPI", "django", "1.0.1")}["PYSEC-2011-1"] == ["1.2.7"]
    assert {e.advisory_id: e.fixed for e in db.affecting("PyPI", "django", "1.3")}["PYSEC-2011-1"] == ["1.3.1"]
    assert "PYSEC-2011-1" not in {e.advisory_id for e in db.affecting("PyPI", "django", "1.2.7")}


def test_last_affected_record(db: AdvisoryDB) -> None:
    # PYSEC-2022-42969: py, introduced 0, last_affected 1.11.0 (no fix).
    hit = {e.advisory_id: e for e in db.affecting("PyPI", "py", "1.11.0")}["PYSEC-2022-42969"]
    assert hit.fixed == [] and hit.intervals[0].last_affected == "1.11.0"
    remedy = choose_remedy(db.for_package("PyPI", "py"), "PyPI", "py", "1.11.0")
    assert remedy.no_fix and remedy.version is None


def test_alias_lookup_by_cve_and_ghsa(db: AdvisoryDB) -> None:
    by_cve = db.get("CVE-2023-36053")
    assert by_cve is not None and by_cve.id == "PYSEC-2023-100"
    by_ghsa = db.get("ghsa-wpjr-j57x-wxfw")
    assert by_ghsa is not None and by_ghsa.id == "PYSEC-2020-31"
    by_pysec = db.get("pysec-2020-31")
    assert by_pysec is not None and "CVE-2020-13254" in by_pysec.aliases


def test_withdrawn_record_never_affects(db: AdvisoryDB) -> None:
    # PYSEC-2023-73 (redis) was withdrawn; its range says every version.
    assert db.get("PYSEC-2023-73") is not None
    assert "PYSEC-2023-73" not in {e.advisory_id for e in db.affecting("PyPI", "redis", "4.5.0")}


def test_django_remedy_stays_in_the_release_line(db: AdvisoryDB) -> None:
    remedy = choose_remedy(db.for_package("PyPI", "django"), "PyPI", "django", "3.2.19")
    assert remedy.same_line and remedy.version is not None
    assert remedy.version.startswith("3.2.")
    assert "PYSEC-2023-100" in {h.id for h in remedy.affected_by}
    # The choice clears every advisory naming django.
    assert not db.affecting("PyPI", "django", remedy.version)


def test_affects_is_an_affecting_evaluation_on_every_record_and_its_fixes(db: AdvisoryDB) -> None:
    """`affects` (the remedy's cheap test) answers as `evaluate` does, for every pypa record's packages at their
    own fixed and introduced versions and around them (withdrawn records included)."""
    from repocontext.osv.evaluate import affects, evaluate

    checked = affecting = 0
    for advisory in db:
        for entry in advisory.affected:
            if entry.package is None:
                continue
            versions = {"0", "999.0", *entry.versions[:3]}
            events = [e for r in entry.ranges for e in r.events]
            versions |= {v for e in events for v in (e.introduced, e.fixed, e.last_affected) if v}
            for version in sorted(versions):
                found = evaluate(advisory, "PyPI", entry.package.name, version)
                expected = found is not None and not found.withdrawn and found.affected
                assert affects(advisory, "PyPI", entry.package.name, version) == expected, (advisory.id, version)
                checked += 1
                affecting += expected
    assert checked > 10_000 and 0 < affecting < checked
