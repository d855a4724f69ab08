"""The compiled advisory index: same answers as loading the sources, rebuilt when they change, never fatal."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from repocontext.osv.index import IndexedDB, open_db
from repocontext.osv.load import fingerprint, load
from tests import datapaths

PYPA = datapaths.PYPA


def record(ident: str, name: str, fixed: str, aliases: list[str] | None = None,
           modified: str = "2024-01-01T00:00:00Z") -> dict[str, object]:
    return {"id": ident, "aliases": aliases or [], "modified": modified, "summary": f"{name} bug",
            "affected": [{"package": {"ecosystem": "PyPI", "name": name},
                          "ranges": [{"type": "ECOSYSTEM", "events": [{"introduced": "0"}, {"fixed": fixed}]}]}]}


@pytest.fixture
def sources(tmp_path: Path) -> Path:
    root = tmp_path / "advisories"
    (root / "django").mkdir(parents=True)
    (root / "flask").mkdir()
    (root / "django" / "PYSEC-1.json").write_text(json.dumps(record("PYSEC-1", "Django", "3.2.1", ["CVE-1"])))
    (root / "django" / "GHSA-1.json").write_text(json.dumps(record("GHSA-1", "django", "3.2.2", ["CVE-1"])))
    (root / "flask" / "PYSEC-2.json").write_text(json.dumps(record("PYSEC-2", "Flask", "2.2.5")))
    (root / "flask" / "broken.json").write_text("{not json")
    return root


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "index"
    monkeypatch.setenv("PLANNER_ADVISORY_INDEX", str(folder))
    return folder


def test_the_index_answers_as_the_sources_do(sources: Path, index: Path) -> None:
    direct = load(sources)
    built = open_db(sources)
    assert isinstance(built, IndexedDB) and list(index.glob("*.sqlite")) == [index / f"{fingerprint(sources)}.sqlite"]
    again = IndexedDB.open(index / f"{fingerprint(sources)}.sqlite")  # what a later process opens
    assert again is not None
    assert len(again) == len(direct) == 3
    assert [a.id for a in again.for_package("PyPI", "DJANGO")] == ["GHSA-1", "PYSEC-1"]
    assert again.for_package("PyPI", "django") == direct.for_package("PyPI", "django")
    assert [a.id for a in again.find("cve-1")] == ["GHSA-1", "PYSEC-1"]
    assert again.get("PYSEC-2") == direct.get("PYSEC-2") and again.get("CVE-404") is None
    assert again.source("PYSEC-2") == direct.source("PYSEC-2") == str(sources / "flask" / "PYSEC-2.json")
    assert [(i.source, i.reason) for i in again.issues] == [(i.source, i.reason) for i in direct.issues] != []
    assert again.affecting("PyPI", "django", "3.2.0") == direct.affecting("PyPI", "django", "3.2.0")
    assert list(again) == list(direct)


def test_a_changed_source_rebuilds_and_the_old_index_stays_findable(sources: Path, index: Path) -> None:
    first = fingerprint(sources)
    open_db(sources)
    time.sleep(0.01)
    (sources / "flask" / "PYSEC-3.json").write_text(json.dumps(record("PYSEC-3", "flask", "3.0.1")))
    assert fingerprint(sources) != first
    db = open_db(sources)
    assert [a.id for a in db.for_package("PyPI", "flask")] == ["PYSEC-2", "PYSEC-3"]
    assert sorted(p.stem for p in index.glob("*.sqlite")) == sorted([first, fingerprint(sources)])


def test_a_corrupt_index_is_rebuilt(sources: Path, index: Path) -> None:
    index.mkdir()
    (index / f"{fingerprint(sources)}.sqlite").write_bytes(b"this is not a database")
    db = open_db(sources)
    assert [a.id for a in db.for_package("PyPI", "flask")] == ["PYSEC-2"]
    assert IndexedDB.open(index / f"{fingerprint(sources)}.sqlite") is not None


def test_an_unwritable_index_folder_costs_only_speed(sources: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("PLANNER_ADVISORY_INDEX", str(blocker / "index"))
    db = open_db(sources)
    assert not isinstance(db, IndexedDB)
    assert [a.id for a in db.for_package("PyPI", "django")] == ["GHSA-1", "PYSEC-1"]


def test_the_index_is_read_only(sources: Path, index: Path) -> None:
    db = open_db(sources)
    with pytest.raises(TypeError, match="read-only"):
        db.add(next(iter(db)))


def test_only_the_newest_indexes_are_kept(sources: Path, index: Path) -> None:
    index.mkdir()
    for n in range(12):
        stale = index / f"{n:064x}.sqlite"
        stale.write_bytes(b"")
        os.utime(stale, ns=(n * 10**9, n * 10**9))
    open_db(sources)
    kept = sorted(p.stem for p in index.glob("*.sqlite"))
    assert len(kept) == 8 and fingerprint(sources) in kept
    assert f"{0:064x}" not in kept and f"{11:064x}" in kept


@pytest.mark.skipif(not (PYPA / "vulns").is_dir(), reason=f"pypa advisory snapshot absent at {PYPA}")
def test_the_real_snapshot_round_trips(index: Path) -> None:
    direct = load(PYPA)
    open_db(PYPA)
    indexed = IndexedDB.open(index / f"{fingerprint(PYPA)}.sqlite")
    assert indexed is not None and len(indexed) == len(direct) > 2000
    packages = sorted({(e.package.ecosystem, e.package.name) for a in direct for e in a.affected if e.package})
    for ecosystem, name in packages:
        assert indexed.for_package(ecosystem, name) == direct.for_package(ecosystem, name), name
