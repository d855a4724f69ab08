"""Test files, their framework, what they import, and which third-party call sites they exercise.

Coverage rule (static, by imports; nothing is run). A test covers a call
site of a third-party module in a non-test file F when
  * the test imports F: Python — a name the test imports or uses, or one of
    its dotted prefixes, is a module name of F (package-derived, or
    path-derived with `src/`/`lib/` dropped: `from pkg.a import f`,
    `import pkg.a`, `from pkg import a` and `pkg.a.f()` all cover
    `src/pkg/a.py`); JS/TS — a relative import resolves to F; Go — F is in
    the test's own directory (same package) or in a directory whose import
    path the test imports; Rust, Ruby, PHP, Java/Kotlin, C# — F is the test's
    subject (FooTest.java → Foo.java, mirror path first), a file a JVM import
    or PHP `use` names, or, Rust, the test file itself (inline `#[test]`s) or
    its crate's `src/lib.rs` (see `callsites.testfiles_langs`).
Re-exports are not followed: `from pkg import f` covers `pkg/__init__.py`,
not the module `f` comes from. `by_module[X]` lists the tests covering a call
site of X or importing X directly (for the five languages above: with any
site of X of its own, import or use: Ruby uses gems without `require`), so
"the tests for X" is one lookup. (A test that imports X itself is listed under X but does not list every call
site of X in `covers`: that would grow as tests × call sites.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from repocontext.callsites import go, testfiles, testfiles_langs
from repocontext.callsites.common import python_import_names
from repocontext.model import Diagnostic, FileRecord
from repocontext.probe import PerFileProbe, ProbeContext, ProbeOutput
from repocontext.probes.call_sites import (
    SOURCE_GLOBS,
    Layout,
    RepoLayout,
    analyze_manifest,
    gc_paused,
    language_of,
    redacted_scan,
    scan_source,
)
from repocontext.probes.tests_common import Resolver, TestFile, directory, entry_of, make_test


class _Sites:
    """Third-party call sites from the `call_sites` section: those in non-test files by file, and the groups
    each test file imports."""

    def __init__(self, call_sites: Mapping[str, Any], tests: set[str]) -> None:
        self.by_file: dict[str, list[tuple[str, Mapping[str, Any]]]] = {}  # non-test file → [(group, site)]
        self.imported_by: dict[str, set[str]] = {}  # test file → third-party groups it imports
        self.in_test: dict[str, list[tuple[str, str]]] = {}  # test file → [(group, "file:line")] of its sites
        self._in_file: dict[str, list[tuple[str, str]]] = {}
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
                    continue
                if site.get("kind") == "import":
                    self.imported_by.setdefault(file, set()).add(key)
                if language_of(file) in testfiles_langs.OTHER_KINDS:  # `own`: their tests count every site
                    self.in_test.setdefault(file, []).append((key, f"{file}:{site['line']}"))

    def in_file(self, path: str) -> list[tuple[str, str]]:
        """[(group, "file:line")] for the third-party sites in a non-test file (made once per file: many tests
        reach the same module)."""
        found = self._in_file.get(path)
        if found is None:
            found = self._in_file[path] = [(key, f"{site['file']}:{site['line']}")
                                           for key, site in self.by_file.get(path, ())]
        return found

    def imported(self, path: str) -> Iterable[str]:
        return self.imported_by.get(path, ())

    def own(self, path: str) -> list[tuple[str, str]]:
        return self.in_test.get(path) or self.in_file(path)


class TestsProbe(PerFileProbe):
    __test__ = False  # not a pytest class
    name = "tests"
    # 2: Rust, Ruby, PHP, Java/Kotlin and C# test files
    version = "2"
    inputs = (*SOURCE_GLOBS, "**/package.json", "**/go.mod", "**/vitest.config.*", "**/vitest.workspace.*")
    requires = ("call_sites",)
    incremental_upstream = ("call_sites",)
    analyses_reused_from = ("call_sites",)  # a test file's scan is the one call_sites made
    produces = ("tests",)

    def run_cached(self, ctx: ProbeContext, cache: Mapping[str, Any]) -> tuple[ProbeOutput, dict[str, Any]]:
        with gc_paused():
            return super().run_cached(ctx, cache)

    def analysis_is_cheap(self, ctx: ProbeContext) -> bool:
        # Test files' scans come from call_sites; the rest is path checks, and a substring search of each .rs
        # file for inline tests (ripgrep's ~100: ~15 ms).
        return "call_sites" in ctx.analysed

    def analyze(self, ctx: ProbeContext, record: FileRecord) -> dict[str, Any] | None:
        """A test file's scan (plain JSON, cached by blob id), a manifest's facts, or None."""
        path = record.path
        if path.rpartition("/")[2].startswith(("vitest.config.", "vitest.workspace.")):
            return {"vitest": True}
        manifest = analyze_manifest(ctx, path)
        if manifest is not None:
            return manifest
        kind = testfiles.kind_of_test(path) if language_of(path) else None
        if kind in testfiles_langs.OTHER_KINDS or (kind is None and path.endswith(".rs")):
            return _other_test(ctx, record, kind)
        if kind is None and not testfiles.may_hold_unittest(path):
            return None
        scanned_json = ctx.analysed.get("call_sites", {}).get(f"{path}\0{record.sha}", _UNKNOWN)
        if scanned_json is not _UNKNOWN:  # call_sites scanned this very blob in this gather: same scan
            return _from_scan(ctx, path, kind, scanned_json)
        text = ctx.read_source(path)
        if text is None or (kind is None and "TestCase" not in text):
            return None
        result = scan_source(path, text)
        if result.error or (kind is None and not result.test_case):
            return None  # call_sites reports parse errors
        return {"kind": kind or "python", **redacted_scan(result.as_json())}

    def combine(self, ctx: ProbeContext, results: dict[str, Any]) -> ProbeOutput:
        layout = RepoLayout.from_results(results)
        tests = _tests(results, layout)
        sites = _Sites(ctx.upstream.get("call_sites") or {}, {t.path for t in tests})
        _Targets(ctx, layout, sites).resolve(tests)
        files: list[dict[str, Any]] = []
        by_module: dict[str, list[str]] = {}
        for test in tests:
            entry, groups = entry_of(test, sites)
            for key in groups:
                by_module.setdefault(key, []).append(test.path)
            files.append(entry)
        return ProbeOutput(values={"tests": {
            "files": files, "by_module": {k: sorted(by_module[k]) for k in sorted(by_module)},
        }})

    def run_incremental(self, ctx: ProbeContext, previous: Mapping[str, Any], changes: Mapping[str, tuple[Any, Any]],
                        previous_diagnostics: Sequence[Diagnostic] = (),
                        result_of: Callable[[str], Any] | None = None) -> ProbeOutput | None:
        """The full combine's output from the previous `tests` section, the current `call_sites` and the
        changed files (see PerFileProbe and `tests_delta`).

        Contract: `call_sites` (ctx.upstream) is unchanged since `previous`, or was produced by
        CallSitesProbe.run_incremental in this gather (its changed files are then among `changes`: its
        inputs are a subset of ours). None when a file was added or removed, a package.json, go.mod or
        vitest config changed, or a change reaches tests the lookups cannot find. Unchanged entries of
        `files` and lists of `by_module` are the previous objects. This probe has no diagnostics.
        """
        from repocontext.probes.tests_delta import update_tests  # a first gather never updates

        found = update_tests(ctx, previous.get("tests"), changes, lambda path: self.result_for(ctx, path, result_of))
        return None if found is None else ProbeOutput(values={"tests": found})


_UNKNOWN = object()


def _from_scan(ctx: ProbeContext, path: str, kind: str | None, scan: Any) -> dict[str, Any] | None:
    """What `analyze` returns, given call_sites' result for the same file (its scan, or None when unread)."""
    if not isinstance(scan, dict) or scan.get("error") or (kind is None and not scan.get("test_case")):
        return None
    if kind is None and "TestCase" not in (ctx.read_source(path) or ""):
        return None  # as analyze decides (a class can derive from *TestCase without the word, via NFKC)
    return {"kind": kind or "python", **scan}


def _other_test(ctx: ProbeContext, record: FileRecord, kind: str | None) -> dict[str, Any] | None:
    """A Rust, Ruby, PHP, Java/Kotlin or C# test file's scan (call_sites' of the same blob when it made one)
    with its framework; a Rust file not named as a test only when its source holds inline tests."""
    path = record.path
    text: str | None = None
    if kind is None:  # a .rs file outside tests/: a test file when it holds #[test] / #[cfg(test)]
        text = ctx.read_source(path)
        if text is None or not testfiles_langs.has_inline_tests(text):
            return None
    scan = ctx.analysed.get("call_sites", {}).get(f"{path}\0{record.sha}", _UNKNOWN)
    if scan is _UNKNOWN:
        text = ctx.read_source(path) if text is None else text
        scan = None if text is None else redacted_scan(scan_source(path, text).as_json())
    if not isinstance(scan, dict) or scan.get("error"):
        return None
    found = kind or "rust"
    framework = testfiles_langs.framework(found, path, scan.get("imports", []),
                                          lambda: text if text is not None else ctx.read_source(path))
    return {"kind": found, "framework": framework, **({"inline": True} if kind is None else {}), **scan}


def _tests(results: Mapping[str, Any], layout: Layout) -> list[TestFile]:
    """The test files among per-file results, with their framework; vitest is the JS default when declared."""
    js_default = "vitest" if any(isinstance(r, dict) and r.get("vitest") for r in results.values()) else "jest"
    found = (make_test(path, result, layout, lambda: js_default) for path, result in results.items())
    return [test for test in found if test is not None]


class _Targets(Resolver):
    """Resolution over indexes of every non-test file with third-party sites."""

    def __init__(self, ctx: ProbeContext, layout: RepoLayout, sites: _Sites) -> None:
        super().__init__(ctx)
        self.py_names: dict[str, set[str]] = {}
        self.go_by_dir: dict[str, set[str]] = {}  # directory → non-test files with third-party sites
        self.go_by_import: dict[str, set[str]] = {}  # import path → the same
        for path in sites.by_file:
            if path.endswith(".py"):
                for name in python_import_names(path, layout.packages):
                    self.py_names.setdefault(name, set()).add(path)
            elif path.endswith(".go"):
                folder = directory(path)
                self.go_by_dir.setdefault(folder, set()).add(path)
                imported = go.import_path_of_dir(folder, layout.go_modules)
                if imported:
                    self.go_by_import.setdefault(imported, set()).add(path)

    def files_named(self, name: str) -> Iterable[str]:
        return self.py_names.get(name, ())

    def go_in_dir(self, path: str) -> Iterable[str]:
        return self.go_by_dir.get(path, ())

    def go_importing(self, import_path: str) -> Iterable[str]:
        return self.go_by_import.get(import_path, ())
