"""Loading advisories: directories, zip exports, scanner reports, malformed input."""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path
from typing import Any

from repocontext.osv.load import detect, fingerprint, load, split_sources
from repocontext.osv.yamlfast import load_yaml

YAML_RECORD = """\
id: PYSEC-2099-1
modified: 2099-01-02T03:04:05.123456Z
published: 2099-01-01T00:00:00Z
aliases:
- CVE-2099-0001
- GHSA-aaaa-bbbb-cccc
details: Something bad.
affected:
- package:
    ecosystem: PyPI
    name: Demo_Pkg
  ranges:
  - type: ECOSYSTEM
    events:
    - introduced: "0"
    - fixed: 1.10
  versions:
  - "1.0"
  - 1.9
unknown_future_field: {nested: [1, 2]}
"""


def record(ident: str, name: str = "demo", fixed: str = "2.0", **extra: Any) -> dict[str, Any]:
    return {
        "id": ident, "modified": "2024-01-01T00:00:00Z",
        "affected": [{"package": {"ecosystem": "PyPI", "name": name},
                      "ranges": [{"type": "ECOSYSTEM", "events": [{"introduced": "0"}, {"fixed": fixed}]}]}],
        **extra,
    }


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_directory_of_yaml_and_json_recursively(tmp_path: Path) -> None:
    write(tmp_path / "vulns" / "demo-pkg" / "PYSEC-2099-1.yaml", YAML_RECORD)
    write(tmp_path / "vulns" / "other" / "OSV-2.json", json.dumps(record("OSV-2", "other")))
    write(tmp_path / "vulns" / "other" / "OSV-3.yml", "id: OSV-3\naffected: []\n")
    write(tmp_path / "vulns" / "notes.txt", "not an advisory")
    write(tmp_path / ".git" / "x.json", "{broken")  # hidden folders are not advisory data
    db = load(tmp_path)
    assert [a.id for a in db] == ["OSV-2", "OSV-3", "PYSEC-2099-1"]
    assert db.issues == []
    adv = db.get("PYSEC-2099-1")
    assert adv is not None
    # Scalars stay strings: the unquoted 1.10 is not the float 1.1, timestamps are not datetimes.
    assert adv.affected[0].ranges[0].events[1].fixed == "1.10"
    assert adv.affected[0].versions == ["1.0", "1.9"]
    assert adv.modified == "2099-01-02T03:04:05.123456Z"
    assert db.source("PYSEC-2099-1", ) == str(tmp_path / "vulns" / "demo-pkg" / "PYSEC-2099-1.yaml")


def test_malformed_files_become_issues_not_exceptions(tmp_path: Path) -> None:
    write(tmp_path / "ok.json", json.dumps(record("OK-1")))
    write(tmp_path / "bad-json.json", "{not json")
    write(tmp_path / "bad-yaml.yaml", "id: [unclosed\n")
    write(tmp_path / "wrong-shape.json", json.dumps({"id": "BAD-1", "affected": "everything"}))
    write(tmp_path / "no-id.yaml", "summary: no id here\n")
    write(tmp_path / "scalar.yaml", "just a string\n")
    (tmp_path / "binary.json").write_bytes(b"\xff\xfe\x00garbage")
    (tmp_path / "dangling.json").symlink_to(tmp_path / "gone.json")
    write(tmp_path / "zz-last.json", json.dumps(record("OK-2")))  # loading goes on after every problem
    db = load(tmp_path)
    assert [a.id for a in db] == ["OK-1", "OK-2"]
    reasons = {Path(i.source).name: i.reason for i in db.issues}
    assert set(reasons) == {"bad-json.json", "bad-yaml.yaml", "wrong-shape.json", "no-id.yaml", "scalar.yaml",
                            "binary.json", "dangling.json"}
    assert reasons["dangling.json"].startswith("cannot read")
    assert reasons["wrong-shape.json"].startswith("malformed BAD-1: affected")
    assert "cannot parse" in reasons["bad-json.json"]


def test_yaml_with_anchors_uses_the_full_loader_with_string_scalars(tmp_path: Path) -> None:
    text = "id: A-1\nmodified: 2024-01-01T00:00:00Z\nbase: &b {x: 1.0}\ncopy: *b\nversions: !!python/none\n"
    assert load_yaml("id: A-1\nv: 1.0\nflag: true\nnothing: ~\n") == {"id": "A-1", "v": "1.0", "flag": True,
                                                                        "nothing": None}
    write(tmp_path / "anchors.yaml", text.replace("versions: !!python/none\n", ""))
    write(tmp_path / "unsafe.yaml", text)  # python tags are refused by the safe loader
    db = load(tmp_path)
    assert [a.id for a in db] == ["A-1"]
    assert db.issues and db.issues[0].source.endswith("unsafe.yaml")
    assert load_yaml("a: &x 4.0\nb: *x\n") == {"a": "4.0", "b": "4.0"}


def test_zip_export(tmp_path: Path) -> None:
    archive = tmp_path / "PyPI" / "all.zip"
    archive.parent.mkdir()
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("PYSEC-1.json", json.dumps(record("PYSEC-1", aliases=["CVE-1"])))
        zf.writestr("GHSA-2.json", json.dumps(record("GHSA-2", "other")))
        zf.writestr("broken.json", "{")
        zf.writestr("README.txt", "ignored")
    assert detect(archive) == "zip"
    db = load(archive)
    assert [a.id for a in db] == ["GHSA-2", "PYSEC-1"]
    assert db.get("cve-1") is not None
    assert [i.source for i in db.issues] == [f"{archive}!broken.json"]


def test_corrupt_zip_member_costs_only_itself(tmp_path: Path) -> None:
    archive = tmp_path / "all.zip"
    payload = json.dumps(record("BAD-CRC", fixed="9" * 50))
    with zipfile.ZipFile(archive, "w") as zf:  # stored, so the payload bytes are findable
        zf.writestr("A-BAD.json", payload)
        zf.writestr("B-OK.json", json.dumps(record("B-OK")))
    raw = archive.read_bytes()
    archive.write_bytes(raw.replace(b"9" * 50, b"8" * 50, 1))  # breaks the member's CRC
    db = load(archive)
    assert [a.id for a in db] == ["B-OK"]
    assert len(db.issues) == 1 and db.issues[0].source.endswith("!A-BAD.json")
    assert db.issues[0].reason.startswith("cannot read")


def test_osv_scanner_report(tmp_path: Path) -> None:
    vuln = record("GHSA-xxxx", "lib", fixed="1.2.3", aliases=["CVE-2020-1"], related=None)  # Go tools write null
    vuln["affected"][0]["package"]["ecosystem"] = "npm"
    vuln["affected"][0]["versions"] = None
    report = {"results": [{"source": {"path": "/x/package-lock.json", "type": "lockfile"}, "packages": [
        {"package": {"name": "lib", "version": "1.0.0", "ecosystem": "npm"}, "vulnerabilities": [vuln],
         "groups": [{"ids": ["GHSA-xxxx"]}]},
        {"package": {"name": "lib", "version": "1.1.0", "ecosystem": "npm"}, "vulnerabilities": [vuln]},
    ]}]}
    path = write(tmp_path / "osv-scanner.json", json.dumps(report))
    db = load(path)
    assert [a.id for a in db] == ["GHSA-xxxx"]
    hits = db.affecting("npm", "lib", "1.1.0")
    assert [h.fixed for h in hits] == [["1.2.3"]]


def test_pip_audit_report(tmp_path: Path) -> None:
    report = {"dependencies": [
        {"name": "Django", "version": "3.2.19", "vulns": [
            {"id": "PYSEC-2023-100", "fix_versions": ["3.2.20", "4.1.10", "4.2.3"], "aliases": ["CVE-2023-36053"],
             "description": "ReDoS in validators"}]},
        {"name": "flask", "version": "2.0.0", "vulns": [
            {"id": "GHSA-nofix", "fix_versions": [], "aliases": [], "description": "no fix yet"}]},
        {"name": "clean", "version": "1.0", "vulns": []},
        {"name": "skipped", "skip_reason": "not on PyPI"},
    ], "fixes": []}
    path = write(tmp_path / "audit.json", json.dumps(report))
    db = load(path)
    assert [a.id for a in db] == ["GHSA-nofix", "PYSEC-2023-100"]
    django = db.affecting("PyPI", "django", "3.2.19")
    assert [(h.advisory_id, h.fixed) for h in django] == [("PYSEC-2023-100", ["3.2.20"])]
    assert not db.affecting("PyPI", "django", "3.2.20")
    assert db.get("CVE-2023-36053") is not None
    flask = db.affecting("PyPI", "flask", "2.0.0")
    assert flask and flask[0].fixed == []  # no fix version known
    assert not db.affecting("PyPI", "flask", "2.0.1")  # only the reported version is known affected


def test_several_sources_joined_with_pathsep_and_missing_ones(tmp_path: Path) -> None:
    first = write(tmp_path / "a" / "A-1.json", json.dumps(record("A-1")))
    second = write(tmp_path / "b" / "B-1.json", json.dumps(record("B-1")))
    missing = tmp_path / "nope"
    joined = os.pathsep.join([str(first.parent), str(second), str(missing)])
    assert split_sources(joined) == [first.parent, second, missing]
    db = load(joined)
    assert [a.id for a in db] == ["A-1", "B-1"]
    assert [i.reason for i in db.issues] == ["no such file or directory"]


def test_list_documents_and_osv_query_answers(tmp_path: Path) -> None:
    write(tmp_path / "list.json", json.dumps([record("L-1"), record("L-2"), 5]))
    write(tmp_path / "query.json", json.dumps({"vulns": [record("Q-1")]}))
    db = load(tmp_path)
    assert [a.id for a in db] == ["L-1", "L-2", "Q-1"]
    assert len(db.issues) == 1 and "not OSV records" in db.issues[0].reason


def test_fingerprint_changes_with_size_or_mtime_not_otherwise(tmp_path: Path) -> None:
    path = write(tmp_path / "d" / "A-1.json", json.dumps(record("A-1")))
    before = fingerprint(tmp_path / "d")
    assert fingerprint(tmp_path / "d") == before
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    touched = fingerprint(tmp_path / "d")
    assert touched != before
    write(tmp_path / "d" / "B-1.json", json.dumps(record("B-1")))
    assert fingerprint(tmp_path / "d") != touched


def test_an_alias_bomb_or_a_deep_file_among_the_advisories_is_an_issue_and_loading_goes_on(tmp_path: Path) -> None:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
    # database_specific takes any mapping: before, the record validated and its expansion aborted the process
    write(tmp_path / "bomb.yaml", "id: BOMB-1\n" + "\n".join(lines) + "\ndatabase_specific: {laughs: *a9}\n")
    write(tmp_path / "deep.json", '{"id": "DEEP-1", "x": ' + "[" * 50_000 + "]" * 50_000 + "}")
    write(tmp_path / "ok.json", json.dumps(record("OK-1")))
    db = load(tmp_path)
    assert [a.id for a in db] == ["OK-1"]
    reasons = {Path(i.source).name: i.reason for i in db.issues}
    assert "alias" in reasons["bomb.yaml"] and "nests deeper" in reasons["deep.json"]
