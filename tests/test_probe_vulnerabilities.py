"""The vulnerabilities probe end to end: gather() on a real git repo with stub dependencies."""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from repocontext.gather import gather
from repocontext.model import Dependency, RepoContext
from repocontext.probe import Probe, ProbeContext, ProbeOutput
from repocontext.probes.vulnerabilities import VulnerabilitiesProbe

VECTOR = "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H"


class StubDependencies(Probe):
    """Stands in for the real dependency probe: produces a fixed `dependencies` section."""

    name = "dependencies"
    version = "1"
    produces = ("dependencies",)

    def __init__(self, deps: list[Dependency]) -> None:
        self.deps = deps

    def run(self, ctx: ProbeContext) -> ProbeOutput:
        section: dict[str, list[dict[str, Any]]] = {}
        for dep in self.deps:
            section.setdefault(dep.name, []).append(dep.model_dump())
        return ProbeOutput(values={"dependencies": section})


def dep(name: str, version: str | None, file: str, line: int | None = 1, direct: bool = True,
        ecosystem: str = "PyPI") -> Dependency:
    return Dependency(ecosystem=ecosystem, name=name, version=version, file=file, line=line, direct=direct,
                      constraint=f"=={version}" if version else ">=1")


def write_advisories(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    records = {
        "PYSEC-9000-1": {
            "id": "PYSEC-9000-1", "modified": "2024-01-01T00:00:00Z", "aliases": ["GHSA-zzzz", "CVE-9000-1"],
            "details": "Django ReDoS\nin validators.", "severity": [{"type": "CVSS_V3", "score": VECTOR}],
            "affected": [{"package": {"ecosystem": "PyPI", "name": "Django"}, "ranges": [{
                "type": "ECOSYSTEM",
                "events": [{"introduced": "4.0"}, {"fixed": "4.1.10"}, {"introduced": "3.2"}, {"fixed": "3.2.20"}],
            }]}],
        },
        "GHSA-only-old": {
            "id": "GHSA-only-old", "modified": "2024-01-01T00:00:00Z", "summary": "Old django bug",
            "database_specific": {"severity": "LOW"},
            "affected": [{"package": {"ecosystem": "PyPI", "name": "django"}, "ranges": [{"type": "ECOSYSTEM",
                          "events": [{"introduced": "0"}, {"fixed": "3.2.25"}]}]}],
        },
        "NPM-1": {
            "id": "NPM-1", "modified": "2024-01-01T00:00:00Z",
            "affected": [{"package": {"ecosystem": "npm", "name": "lodash"}, "ranges": [{"type": "SEMVER", "events": [
                {"introduced": "0"}, {"fixed": "4.17.21"}]}]}],
        },
        "WITHDRAWN-1": {
            "id": "WITHDRAWN-1", "modified": "2024-01-01T00:00:00Z", "withdrawn": "2024-02-01T00:00:00Z",
            "affected": [{"package": {"ecosystem": "PyPI", "name": "django"}, "versions": ["3.2.19"]}],
        },
    }
    for ident, record in records.items():
        (folder / f"{ident}.json").write_text(json.dumps(record), encoding="utf-8")
    return folder


DEPS = [
    dep("django", "3.2.19", "requirements.txt", 3),
    dep("django", "3.2.19", "services/api/requirements.txt", 1),
    dep("django", "4.1.9", "poetry.lock", None, direct=False),
    dep("django", None, "setup.cfg", 7),  # a range, not a version: not evaluated
    dep("requests", "2.31.0", "requirements.txt", 4),
    dep("lodash", "4.17.20", "package-lock.json", 12, direct=False, ecosystem="npm"),
]


def run(repo: Path, options: dict[str, str] | None, deps: list[Dependency] = DEPS,
        previous: dict[str, Any] | None = None) -> RepoContext:
    return gather(repo, probes=[StubDependencies(deps), VulnerabilitiesProbe()], options=options, previous=previous)


def own(ctx: RepoContext, level: str | None = None) -> list[str]:
    return [d.message for d in ctx.diagnostics if d.probe == "vulnerabilities" and (level is None or d.level == level)]


def test_without_a_source_the_section_is_empty_with_an_info(make_repo: Callable[..., Path]) -> None:
    ctx = run(make_repo({"requirements.txt": "django==3.2.19\n"}), None)
    assert ctx.vulnerabilities == {}
    assert own(ctx, "info") == [
        "no advisory source given (gather option 'advisories'); vulnerabilities not evaluated"]


def test_findings_keys_files_and_fixes(make_repo: Callable[..., Path], tmp_path: Path) -> None:
    repo = make_repo({"requirements.txt": "django==3.2.19\n"})
    ctx = run(repo, {"advisories": str(write_advisories(tmp_path / "osv"))})
    # PYSEC-9000-1 hits two installed versions of django: both findings are kept, keyed apart.
    assert list(ctx.vulnerabilities) == [
        "GHSA-only-old", "NPM-1", "PYSEC-9000-1/django@3.2.19", "PYSEC-9000-1/django@4.1.9"]
    line_32 = ctx.vulnerabilities["PYSEC-9000-1/django@3.2.19"]
    assert line_32.fixed == ["3.2.20"] and line_32.all_fixed == ["3.2.20", "4.1.10"]
    assert line_32.files == ["requirements.txt:3", "services/api/requirements.txt:1"]
    assert line_32.aliases == ["CVE-9000-1", "GHSA-zzzz"]
    assert line_32.direct and line_32.installed_version == "3.2.19" and line_32.ecosystem == "PyPI"
    assert line_32.severity == "CRITICAL" and line_32.cvss == VECTOR and line_32.score == 9.8
    assert line_32.summary == "Django ReDoS in validators."
    assert line_32.affected_ranges == [">=3.2, <3.2.20"]
    line_41 = ctx.vulnerabilities["PYSEC-9000-1/django@4.1.9"]
    assert line_41.fixed == ["4.1.10"] and line_41.files == ["poetry.lock"] and not line_41.direct
    old = ctx.vulnerabilities["GHSA-only-old"]
    assert old.severity == "LOW" and old.summary == "Old django bug" and old.fixed == ["3.2.25"]
    assert old.installed_version == "3.2.19" and old.cvss is None
    npm = ctx.vulnerabilities["NPM-1"]
    assert (npm.package, npm.ecosystem, npm.fixed) == ("lodash", "npm", ["4.17.21"])
    assert npm.files == ["package-lock.json:12"] and not npm.direct
    assert "WITHDRAWN-1" not in ctx.vulnerabilities
    assert own(ctx) == []


def test_single_hit_is_keyed_by_id(make_repo: Callable[..., Path], tmp_path: Path) -> None:
    repo = make_repo({"a.txt": "x\n"})
    ctx = run(repo, {"advisories": str(write_advisories(tmp_path / "osv"))}, deps=[dep("django", "3.2.1", "req.txt")])
    assert list(ctx.vulnerabilities) == ["GHSA-only-old", "PYSEC-9000-1"]
    assert ctx.vulnerabilities["PYSEC-9000-1"].files == ["req.txt:1"]


def test_invalid_version_and_broken_source_are_diagnostics(make_repo: Callable[..., Path], tmp_path: Path) -> None:
    folder = write_advisories(tmp_path / "osv")
    (folder / "broken.json").write_text("{nope", encoding="utf-8")
    repo = make_repo({"a.txt": "x\n"})
    deps = [dep("django", "not a version!", "req.txt", 2)]
    ctx = run(repo, {"advisories": os.pathsep.join([str(folder), str(tmp_path / "missing")])}, deps=deps)
    assert ctx.vulnerabilities == {}
    warnings = own(ctx, "warning")
    assert any(m.startswith("django not a version!: invalid PEP 440 version") for m in warnings)
    assert any("broken.json: cannot parse" in m for m in warnings)
    assert any("missing: no such file or directory" in m for m in warnings)
    bad = next(d for d in ctx.diagnostics if d.message.startswith("django not a version!"))
    assert (bad.file, bad.line) == ("req.txt", 2)


def test_changed_advisory_source_reruns_the_probe(make_repo: Callable[..., Path], tmp_path: Path) -> None:
    folder = write_advisories(tmp_path / "osv")
    repo = make_repo({"a.txt": "x\n"})
    options = {"advisories": str(folder)}
    first = run(repo, options)
    again = run(repo, options, previous=first.model_dump())
    assert again.meta.probes["vulnerabilities"].reused
    assert again.vulnerabilities == first.vulnerabilities
    record = json.loads((folder / "NPM-1.json").read_text())
    record["affected"][0]["ranges"][0]["events"][1]["fixed"] = "4.17.100"
    (folder / "NPM-1.json").write_text(json.dumps(record), encoding="utf-8")
    changed = run(repo, options, previous=again.model_dump())
    assert not changed.meta.probes["vulnerabilities"].reused
    assert changed.vulnerabilities["NPM-1"].fixed == ["4.17.100"]


def test_the_source_is_fingerprinted_once_per_gather(make_repo: Callable[..., Path], tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The probe's own fingerprint and its run both need the source's; a snapshot has thousands of files."""
    walks: list[str] = []
    load = importlib.import_module("repocontext.osv.load")  # the module (the package exports a `load` function)
    real = load.fingerprint
    monkeypatch.setattr(load, "fingerprint", lambda source: walks.append(source) or real(source))
    folder = write_advisories(tmp_path / "osv")
    ctx = run(make_repo({"a.txt": "x\n"}), {"advisories": str(folder)})
    assert "NPM-1" in ctx.vulnerabilities and walks == [str(folder)]
    run(make_repo({"b.txt": "y\n"}), {"advisories": str(folder)})
    assert walks == [str(folder)] * 2  # a later gather walks it again: the source may have changed


def test_output_is_deterministic(make_repo: Callable[..., Path], tmp_path: Path) -> None:
    repo = make_repo({"a.txt": "x\n"})
    options = {"advisories": str(write_advisories(tmp_path / "osv"))}
    one = run(repo, options).model_dump(include={"vulnerabilities", "diagnostics"})
    two = run(repo, options, deps=list(reversed(DEPS))).model_dump(include={"vulnerabilities", "diagnostics"})
    assert json.dumps(one, sort_keys=False) == json.dumps(two, sort_keys=False)


def test_probe_contract() -> None:
    probe = VulnerabilitiesProbe()
    assert probe.name == "vulnerabilities"
    assert probe.requires == ("dependencies",)
    assert probe.options == ("advisories",)
    assert probe.produces == ("vulnerabilities",)
