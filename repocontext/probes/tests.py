"""Test files, their framework, what they import, and which third-party call sites they exercise.

Coverage rule (static, by imports; nothing is run). A test covers a call
site of a third-party module in a non-test file F when
  * the test imports F: Python — a name the test imports or uses, or one of
    its dotted prefixes, is a module name of F (package-derived, or
    path-derived with `src/`/`lib/` dropped: `from pkg.a import f`,
    `import pkg.a`, `from pkg import a` and `pkg.a.f()` all cover
    `src/pkg/a.py`); JS/TS — a relative import resolves to F; Go — F is in
    the test's own directory (same package) or in a directory whose import
    path the test imports; or
Re-exports are not followed: `from pkg import f` covers `pkg/__init__.py`,
not the module `f` comes from. `by_module[X]` lists the tests covering a call
site of X or importing X directly, so "the tests for X" is one lookup. (A
test that imports X itself is listed under X but does not list every call
site of X in `covers`: that would grow as tests × call sites.)
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from repocontext.callsites import go, js, testfiles
from repocontext.callsites.common import FileScan, python_import_names
from repocontext.model import FileRecord
from repocontext.probe import PerFileProbe, ProbeContext, ProbeOutput
from repocontext.probes.call_sites import (
    SOURCE_GLOBS,
    RepoLayout,
    analyze_manifest,
    gc_paused,
    language_of,
    scan_source,
    scanned,
)


@dataclass
class _Test:
    path: str
    kind: str  # "python" | "js" | "go"
    framework: str
    scan: FileScan
    modules: list[str] = field(default_factory=list)
    targets: set[str] = field(default_factory=set)  # repository files it imports


class _Sites:
    """Third-party call sites from the `call_sites` section: those in non-test files by file, and the groups
    each test file imports."""

    def __init__(self, call_sites: Mapping[str, Any], tests: set[str]) -> None:
        self.by_file: dict[str, list[tuple[str, Mapping[str, Any]]]] = {}  # non-test file → [(group, site)]
        self.imported_by: dict[str, set[str]] = {}  # test file → third-party groups it imports
        for key, group in call_sites.items():
            if not isinstance(group, Mapping) or group.get("first_party"):
                continue
            for site in group.get("sites", []):
                file = site["file"]
                if file not in tests:
                    found = self.by_file.get(file)
                    if found is None:
                        self.by_file[file] = [(key, site)]
                    else:
                        found.append((key, site))
                elif site.get("kind") == "import":
                    self.imported_by.setdefault(file, set()).add(key)

    def in_file(self, path: str) -> list[tuple[str, str]]:
        """[(group, "file:line")] for the third-party sites in a non-test file."""
        return [(key, f"{site['file']}:{site['line']}") for key, site in self.by_file.get(path, ())]


def _directory(path: str) -> str:
    return path.rpartition("/")[0]


def _site_order(where: str) -> tuple[str, int]:
    path, _, line = where.rpartition(":")
    return path, int(line)


class TestsProbe(PerFileProbe):
    __test__ = False  # not a pytest class
    name = "tests"
    version = "1"
    inputs = (*SOURCE_GLOBS, "**/package.json", "**/go.mod", "**/vitest.config.*", "**/vitest.workspace.*")
    requires = ("call_sites",)
    produces = ("tests",)

    def run_cached(self, ctx: ProbeContext, cache: Mapping[str, Any]) -> tuple[ProbeOutput, dict[str, Any]]:
        with gc_paused():
            return super().run_cached(ctx, cache)

    def analysis_is_cheap(self, ctx: ProbeContext) -> bool:
        return "call_sites" in ctx.analysed  # test files' scans come from call_sites; the rest is path checks

    def analyze(self, ctx: ProbeContext, record: FileRecord) -> dict[str, Any] | None:
        """A test file's scan (plain JSON, cached by blob id), a manifest's facts, or None."""
        path = record.path
        if path.rpartition("/")[2].startswith(("vitest.config.", "vitest.workspace.")):
            return {"vitest": True}
        manifest = analyze_manifest(ctx, path)
        if manifest is not None:
            return manifest
        kind = testfiles.kind_of_test(path) if language_of(path) else None
        if kind is None and not testfiles.may_hold_unittest(path):
            return None
        scanned_json = ctx.analysed.get("call_sites", {}).get(f"{path}\0{record.sha}", _UNKNOWN)
        if scanned_json is not _UNKNOWN:  # call_sites scanned this very blob in this gather: same scan
            return _from_scan(ctx, path, kind, scanned_json)
        text = ctx.read_text(path)
        if text is None or (kind is None and "TestCase" not in text):
            return None
        result = scan_source(path, text)
        if result.error or (kind is None and not result.test_case):
            return None  # call_sites reports parse errors
        return {"kind": kind or "python", **result.as_json()}

    def combine(self, ctx: ProbeContext, results: dict[str, Any]) -> ProbeOutput:
        layout = RepoLayout.from_results(results)
        tests = _tests(results, layout)
        sites = _Sites(ctx.upstream.get("call_sites") or {}, {t.path for t in tests})
        _Targets(ctx, layout, sites).resolve(tests)
        files, by_module = [], {}
        for test in tests:
            covered: set[str] = set()
            groups = set(sites.imported_by.get(test.path, ()))
            for target in test.targets:
                for key, where in sites.in_file(target):
                    covered.add(where)
                    groups.add(key)
            for key in groups:
                by_module.setdefault(key, []).append(test.path)
            files.append({"path": test.path, "framework": test.framework, "modules": test.modules,
                          "covers": sorted(covered, key=_site_order)})
        return ProbeOutput(values={"tests": {
            "files": files, "by_module": {k: sorted(by_module[k]) for k in sorted(by_module)},
        }})


_UNKNOWN = object()


def _from_scan(ctx: ProbeContext, path: str, kind: str | None, scan: Any) -> dict[str, Any] | None:
    """What `analyze` returns, given call_sites' result for the same file (its scan, or None when unread)."""
    if not isinstance(scan, dict) or scan.get("error") or (kind is None and not scan.get("test_case")):
        return None
    if kind is None and "TestCase" not in (ctx.read_text(path) or ""):
        return None  # as analyze decides (a class can derive from *TestCase without the word, via NFKC)
    return {"kind": kind or "python", **scan}


def _tests(results: Mapping[str, Any], layout: RepoLayout) -> list[_Test]:
    """The test files among per-file results, with their framework; vitest is the JS default when declared."""
    js_default = "vitest" if any(isinstance(r, dict) and r.get("vitest") for r in results.values()) else "jest"
    found: list[_Test] = []
    for path, result in results.items():
        scan = scanned(path, result, layout) if isinstance(result, dict) and "kind" in result else None
        if scan is None:
            continue
        kind = result["kind"]
        if kind == "python":
            framework = testfiles.python_framework(scan.imports, scan.test_case, path)
        else:
            framework = "go" if kind == "go" else testfiles.js_framework(scan.imports, js_default)
        found.append(_Test(path, kind, framework, scan))
    return found


class _Targets:
    """Resolves what each test imports to repository files, and lists its imported modules."""

    def __init__(self, ctx: ProbeContext, layout: RepoLayout, sites: _Sites) -> None:
        self.ctx = ctx
        self.layout = layout
        self.py_names: dict[str, set[str]] = {}
        self.go_by_dir: dict[str, set[str]] = {}  # directory → non-test files with third-party sites
        self.go_by_import: dict[str, set[str]] = {}  # import path → the same
        for path in sites.by_file:
            if path.endswith(".py"):
                for name in python_import_names(path, layout.packages):
                    self.py_names.setdefault(name, set()).add(path)
            elif path.endswith(".go"):
                directory = _directory(path)
                self.go_by_dir.setdefault(directory, set()).add(path)
                imported = go.import_path_of_dir(directory, layout.go_modules)
                if imported:
                    self.go_by_import.setdefault(imported, set()).add(path)

    def resolve(self, tests: list[_Test]) -> None:
        for test in tests:
            getattr(self, f"_{test.kind}")(test)

    def _python(self, test: _Test) -> None:
        for site in test.scan.sites:
            parts = site.symbol.split(".")
            for end in range(len(parts), 0, -1):
                test.targets.update(self.py_names.get(".".join(parts[:end]), ()))
        test.modules = sorted({m for m in test.scan.imports if m.partition(".")[0] not in sys.stdlib_module_names})

    def _js(self, test: _Test) -> None:
        modules: set[str] = set()
        for spec in test.scan.imports:
            if js.is_relative(spec):
                target = testfiles.resolve_js(test.path, spec, lambda p: self.ctx.record(p) is not None)
                if target:
                    test.targets.add(target)
                    modules.add(target)
            elif js.package_name(spec):
                modules.add(spec)
        test.modules = sorted(modules)

    def _go(self, test: _Test) -> None:
        test.targets.update(self.go_by_dir.get(_directory(test.path), ()))
        for path in test.scan.imports:
            test.targets.update(self.go_by_import.get(path, ()))
        test.modules = sorted({p for p in test.scan.imports if not go.is_std(p)})
