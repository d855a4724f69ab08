"""AdvisoryDB lookups: by package, by id or any alias, duplicate ids."""

from __future__ import annotations

from typing import Any

from repocontext.osv.db import AdvisoryDB
from repocontext.osv.schema import Advisory


def adv(ident: str, *, name: str = "pkg", ecosystem: str = "PyPI", aliases: list[str] | None = None,
        modified: str = "2024-01-01T00:00:00Z", **extra: Any) -> Advisory:
    return Advisory.model_validate({
        "id": ident, "aliases": aliases or [], "modified": modified,
        "affected": [{"package": {"ecosystem": ecosystem, "name": name},
                      "ranges": [{"type": "ECOSYSTEM", "events": [{"introduced": "0"}, {"fixed": "2.0"}]}]}],
        **extra,
    })


def make_db(*advisories: Advisory) -> AdvisoryDB:
    db = AdvisoryDB()
    for a in advisories:
        db.add(a, f"src/{a.id}")
    return db


def test_lookup_by_id_and_any_alias_case_insensitive() -> None:
    db = make_db(adv("PYSEC-2023-1", aliases=["CVE-2023-9", "GHSA-abcd-efgh-ijkl"]), adv("PYSEC-2023-2"))
    for name in ("PYSEC-2023-1", "pysec-2023-1", "cve-2023-9", "GHSA-ABCD-EFGH-IJKL", " CVE-2023-9 "):
        found = db.get(name)
        assert found is not None and found.id == "PYSEC-2023-1", name
    assert db.get("CVE-0000-0") is None
    assert "CVE-2023-9" in db and "CVE-0000-0" not in db


def test_shared_alias_finds_every_record() -> None:
    db = make_db(adv("PYSEC-1", aliases=["CVE-1"]), adv("GHSA-1", aliases=["CVE-1"]))
    assert [a.id for a in db.find("cve-1")] == ["GHSA-1", "PYSEC-1"]
    exact = db.get("PYSEC-1")
    assert exact is not None and exact.id == "PYSEC-1"


def test_lookup_by_package_normalises_per_ecosystem() -> None:
    db = make_db(adv("A-1", name="Foo_Bar"), adv("A-2", name="foo.bar"), adv("N-1", name="Foo_Bar", ecosystem="npm"))
    assert [a.id for a in db.for_package("pypi", "FOO-bar")] == ["A-1", "A-2"]
    assert [a.id for a in db.for_package("npm", "Foo_Bar")] == ["N-1"]
    assert db.for_package("npm", "foo_bar") == []


def test_affecting_filters_unaffected_and_withdrawn() -> None:
    db = make_db(adv("A-1"), adv("A-2", withdrawn="2024-02-01T00:00:00Z"))
    assert [e.advisory_id for e in db.evaluate("PyPI", "pkg", "1.0")] == ["A-1", "A-2"]
    assert [e.advisory_id for e in db.affecting("PyPI", "pkg", "1.0")] == ["A-1"]
    assert db.affecting("PyPI", "pkg", "2.0") == []


def test_duplicate_ids_keep_the_latest_modified() -> None:
    old = adv("A-1", aliases=["CVE-OLD"], modified="2024-01-01T00:00:00Z")
    new = adv("A-1", aliases=["CVE-NEW"], modified="2024-01-01T00:00:00.5Z")
    db = make_db(old)
    assert db.get("CVE-OLD") is not None
    db.add(new, "second")
    assert len(db) == 1
    assert db.get("CVE-NEW") is not None and db.get("CVE-OLD") is None  # index rebuilt
    assert db.source("A-1") == "second"
    db.add(old, "third")  # older: ignored
    assert db.source("A-1") == "second"
    stub = adv("A-1", modified="")  # a scanner stub never replaces a dated record
    db.add(stub, "stub")
    assert db.source("A-1") == "second"
