"""bench/realworld.py's own judgement: which versions OSV records affect, and the lowest unaffected
version in a release line (records written here; no corpus needed)."""

from __future__ import annotations

import importlib.util
import json
import sys
import tarfile
from pathlib import Path
from types import ModuleType

import pytest
import yaml

BENCH = Path(__file__).resolve().parent.parent / "bench" / "realworld.py"


@pytest.fixture(scope="module")
def rw() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_realworld", BENCH)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def record(id_: str, *events: dict[str, str], versions: tuple[str, ...] = (), name: str = "Django",
           **extra: object) -> dict[str, object]:
    affected = {"package": {"name": name, "ecosystem": "PyPI"},
                "ranges": [{"type": "ECOSYSTEM", "events": list(events)}], "versions": list(versions)}
    return {"id": id_, "affected": [affected], **extra}


RECORDS = [
    # 0 … <1.8.15, and 1.9 … <1.9.10
    record("PYSEC-A", {"introduced": "0"}, {"fixed": "1.8.15"}, {"introduced": "1.9"}, {"fixed": "1.9.10"}),
    # 1.8.16 … 1.8.17 (last_affected), so 1.8.18 is fine
    record("PYSEC-B", {"introduced": "1.8.16"}, {"last_affected": "1.8.17"}),
    # only listed versions: 1.9.12
    record("PYSEC-C", versions=("1.9.12",)),
    # a withdrawn record and another package's record must not count
    record("PYSEC-W", {"introduced": "0"}, {"fixed": "9.9"}, withdrawn="2020-01-01T00:00:00Z"),
    record("PYSEC-O", {"introduced": "0"}, {"fixed": "9.9"}, name="django-filter"),
    # a pre-release fix and a later release with a fix in the 2.x line
    record("PYSEC-D", {"introduced": "2.0"}, {"fixed": "2.0.3rc1"}, {"fixed": "2.0.4"}),
]


def test_record_affects_ranges_versions_and_last_affected(rw: ModuleType) -> None:
    a, b, c, w, o, _ = RECORDS
    assert rw.record_affects(a, "django", "1.8.14") and not rw.record_affects(a, "django", "1.8.15")
    assert rw.record_affects(a, "django", "1.9.9") and not rw.record_affects(a, "django", "1.9.10")
    assert not rw.record_affects(a, "django", "1.10")
    assert rw.record_affects(b, "django", "1.8.17") and not rw.record_affects(b, "django", "1.8.18")
    assert not rw.record_affects(b, "django", "1.8.15")
    assert rw.record_affects(c, "Django", "1.9.12") and not rw.record_affects(c, "django", "1.9.13")
    assert not rw.record_affects(w, "django", "1.0") and not rw.record_affects(o, "django", "1.0")
    assert rw.record_affects(o, "django_filter", "1.0")  # names are compared PEP 503-normalized
    assert not rw.record_affects(a, "django", "not a version")
    assert rw.affecting(RECORDS, "django", "1.8.16") == ["PYSEC-B"]
    assert rw.affecting(RECORDS, "django", "1.7.1") == ["PYSEC-A"]


def test_lowest_unaffected_looks_in_the_minor_line_then_major_then_any(rw: ModuleType) -> None:
    # 1.8.15, the first fix in the 1.8 line, is named and no record affects it
    assert rw.lowest_unaffected_in_line(RECORDS, "django", "1.8.3") == ("1.8.15", "major.minor")
    # above 1.8.16, 1.8.17 is affected (last_affected) and 1.8.18 is named by no record: the 1.x line, where
    # 1.9 is affected (PYSEC-A introduced again at 1.9), so 1.9.10
    assert rw.lowest_unaffected_in_line(RECORDS, "django", "1.8.16") == ("1.9.10", "major")
    # in the 1.9 line
    assert rw.lowest_unaffected_in_line(RECORDS, "django", "1.9.2") == ("1.9.10", "major.minor")
    # above 1.9.12 nothing in 1.x is named → any line: 2.0 is affected (PYSEC-D), the rc is skipped → 2.0.4
    assert rw.lowest_unaffected_in_line(RECORDS, "django", "1.9.12") == ("2.0.4", "any")
    # a pre-release counts when the current version is one
    assert rw.lowest_unaffected_in_line(RECORDS, "django", "2.0.1rc1")[0] == "2.0.3rc1"
    assert rw.lowest_unaffected_in_line(RECORDS, "django", "2.0.4") == (None, "none")
    assert rw.lowest_unaffected_in_line([], "django", "1.0") == (None, "none")


def test_records_load_from_the_package_folder(rw: ModuleType, tmp_path: Path) -> None:
    folder = tmp_path / "vulns" / "Django"
    folder.mkdir(parents=True)
    for r in RECORDS:
        (folder / f"{r['id']}.yaml").write_text(yaml.safe_dump(r))
    (tmp_path / "vulns" / "other").mkdir()
    (tmp_path / "vulns" / "other" / "X.yaml").write_text(yaml.safe_dump(record("PYSEC-X", {"introduced": "0"})))
    loaded = rw.load_records(tmp_path, "django")
    assert sorted(r["id"] for r in loaded) == ["PYSEC-A", "PYSEC-B", "PYSEC-C", "PYSEC-D"]
    assert rw.affecting(loaded, "django", "1.9.12") == ["PYSEC-C"]


def test_patched_versions_and_install_lines(rw: ModuleType) -> None:
    patch = "--- a/r.txt\n+++ b/r.txt\n-Django==1.7.10\n+Django==1.7.11\n+django-filter==2.4\n+ django_x>=3\n"
    assert rw.patched_versions(patch, "django") == ["1.7.11"]
    assert rw.patched_versions(patch, "django-x") == ["3"]
    dockerfile = ("FROM debian\nRUN apt-get update && apt-get install -y --no-install-recommends \\\n"
                  "    git=1:2.3 \\\n    # a comment\n    libpq-dev $EXTRA ./local.deb\n"
                  "RUN <<EOF\napk add --virtual .deps build-base curl\nEOF\n")
    assert [(m, p) for _, m, p in rw.installed_packages(dockerfile)] == [
        ("apt-get", "git"), ("apt-get", "libpq-dev"), ("apk", "build-base"), ("apk", "curl")]
    migration = {"packages": [{"old": "git", "new": ["git"]}, {"old": "libpq-dev", "new": ["postgresql-dev"]},
                              {"old": "build-base", "new": [], "note": "provided by the -dev image"}],
                 "unmapped": [{"name": "curl", "reason": "no Wolfi package known"}]}
    new = "FROM x\nRUN apk add --no-cache git\n"
    assert rw.dropped_packages(dockerfile, new, migration, []) == [
        "libpq-dev: mapped to postgresql-dev but postgresql-dev is in no new apk add",
        "curl: unmapped (no Wolfi package known)"]


# bench/realworld_ecosystems.py: its own OSV reading on real records, and the well-formedness of its cases

ECOSYSTEMS_BENCH = BENCH.parent / "realworld_ecosystems.py"
ROOT = BENCH.parent.parent
SHARED = ROOT.parent / "shared"


@pytest.fixture(scope="module")
def eco() -> ModuleType:
    sys.path.insert(0, str(BENCH.parent))
    spec = importlib.util.spec_from_file_location("bench_realworld_ecosystems", ECOSYSTEMS_BENCH)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _shared_record(ecosystem: str, name: str) -> dict[str, object]:
    path = SHARED / "advisories" / ecosystem / name
    if not path.is_file():
        pytest.skip(f"{path} is absent (the shared advisories corpus is not here)")
    return json.loads(path.read_text(encoding="utf-8"))


def test_judge_reads_a_real_rustsec_record(eco: ModuleType) -> None:
    # RUSTSEC-2021-0093 (crossbeam-deque): < 0.7.4, and 0.8.0 … < 0.8.1 (SEMVER, introduced "0.0.0-0")
    record = _shared_record("crates.io", "RUSTSEC-2021-0093.json")
    assert eco.affects(record, "crates.io", "crossbeam-deque", "0.7.3")
    assert not eco.affects(record, "crates.io", "crossbeam-deque", "0.7.4")
    assert eco.affects(record, "crates.io", "crossbeam-deque", "0.8.0")
    assert not eco.affects(record, "crates.io", "crossbeam-deque", "0.8.1")
    assert not eco.affects(record, "crates.io", "crossbeam-epoch", "0.8.0")
    assert eco.lowest_unaffected([record], "crates.io", "crossbeam-deque", "0.8.0") == "0.8.1"
    assert eco.lowest_unaffected([record], "crates.io", "crossbeam-deque", "0.6.3") == "0.7.4"


def test_judge_reads_a_real_rubysec_record(eco: ModuleType) -> None:
    # CVE-2024-47889 (actionmailer): 3.0.0 … < 6.1.7.9, 6.1.8 … < 7.0.8.5, 7.1 … < 7.1.4.1, 7.2 … < 7.2.1.1
    record = _shared_record("RubyGems", "RUBYSEC-CVE-2024-47889.json")
    assert eco.affects(record, "RubyGems", "actionmailer", "7.1.4")
    assert not eco.affects(record, "RubyGems", "actionmailer", "7.1.4.1")  # Gem::Version: 7.1.4.1 > 7.1.4
    assert not eco.affects(record, "RubyGems", "actionmailer", "2.3.18")
    assert not eco.affects(record, "RubyGems", "actionmailer", "8.0.0")
    assert eco.lowest_unaffected([record], "RubyGems", "actionmailer", "7.1.3") == "7.1.4.1"
    assert eco.lowest_unaffected([record], "RubyGems", "actionmailer", "6.1.7.8") == "6.1.7.9"


def test_rewound_replaces_exactly_once(eco: ModuleType) -> None:
    edits = [{"file": "Cargo.lock", "old": 'version = "1.13.1"', "new": 'version = "1.5.4"'}]
    assert eco.rewound('a\nversion = "1.13.1"\n', edits, "Cargo.lock") == 'a\nversion = "1.5.4"\n'
    assert eco.rewound("untouched", edits, "other") == "untouched"
    with pytest.raises(ValueError, match="occurs 2 times"):
        eco.rewound('version = "1.13.1"\nversion = "1.13.1"\n', edits, "Cargo.lock")


def test_capped_case_is_right_only_when_the_parent_is_named_and_no_unreachable_command(eco: ModuleType) -> None:
    named = {"blockers": [{"message": "upgrade cc to a release that allows shlex 1.3.0"}],
             "plan_data": {"regenerate": []}, "data": {"package": "shlex"}}
    assert eco.capped_right(named, "blocked", "shlex", "cc")
    assert not eco.capped_right(named, "succeeded", "shlex", "cc")
    unreachable = {**named, "plan_data": {"regenerate": [{"command": "cargo update -p shlex --precise 1.3.0"}]}}
    assert not eco.capped_right(unreachable, "needs_regeneration", "shlex", "cc")
    # a parent named only in the dependency path (data) is not named to the user
    silent = {"blockers": [], "data": {"declarations": [{"path": ["cc", "shlex"]}]}}
    assert not eco.capped_right(silent, "blocked", "shlex", "cc")


def _case_files() -> list[Path]:
    return sorted((ROOT / "bench" / "cases").glob("*.json"))


@pytest.mark.parametrize("path", _case_files(), ids=lambda p: p.stem)
def test_bench_cases_are_well_formed(path: Path) -> None:
    cases = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(cases, list)
    for case in cases:
        assert {"tarball", "package", "from", "advisories"} <= set(case), case
        assert isinstance(case.get("allow_major", False), bool)
        if case.get("advisories_dir"):
            assert (ROOT / case["advisories_dir"]).is_dir(), case["advisories_dir"]
        rewinds = case.get("rewind") or []
        assert all(set(e) == {"file", "old", "new"} and e["old"] != e["new"] for e in rewinds), case
        if not rewinds:
            continue
        archive = SHARED / "corpus" / case["tarball"]
        if not archive.is_file():
            pytest.skip(f"{archive} is absent (the shared corpus is not here)")
        with tarfile.open(archive) as tar:
            names = tar.getnames()
            top = {n.split("/")[0] for n in names}
            prefix = f"{top.pop()}/" if len(top) == 1 and any("/" in n for n in names) else ""
            for edit in rewinds:
                member = tar.extractfile(prefix + edit["file"])
                assert member is not None, edit["file"]
                text = member.read().decode("utf-8")
                assert text.count(edit["old"]) == 1, (case["package"], edit["file"], edit["old"][:60])
