"""What the full and the incremental tests combine share: one test file's entry, from its scan and lookups.

The two differ only in how they look things up (indexes over every file, or
point lookups over a few); the rules themselves live here once, so the
incremental path cannot drift from the full one.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Protocol

from repocontext.callsites import go, js, testfiles, testfiles_langs
from repocontext.callsites.common import FileScan
from repocontext.probe import ProbeContext
from repocontext.probes.call_sites import Layout, scanned


@dataclass
class TestFile:
    __test__ = False  # not a pytest class
    path: str
    kind: str  # "python" | "js" | "go" | one of testfiles_langs.OTHER_KINDS
    framework: str
    scan: FileScan
    modules: list[str] = field(default_factory=list)
    targets: set[str] = field(default_factory=set)  # repository files it imports (or, other languages, tests)
    inline: bool = False  # Rust: the file holds its own unit tests (it covers itself)


class SiteLookup(Protocol):
    def in_file(self, path: str) -> list[tuple[str, str]]:
        """[(group, "file:line")] for the third-party sites in a non-test file; [] for a test file."""
        ...

    def imported(self, path: str) -> Iterable[str]:
        """The third-party groups a test file imports."""
        ...

    def own(self, path: str) -> list[tuple[str, str]]:
        """[(group, "file:line")] for the third-party sites in any file, test or not."""
        ...


def directory(path: str) -> str:
    return path.rpartition("/")[0]


@lru_cache(maxsize=1 << 16)  # a site is covered by every test reaching its file: asked thousands of times
def site_order(where: str) -> tuple[str, int]:
    path, _, line = where.rpartition(":")
    return path, int(line)


def is_test_result(result: Any) -> bool:
    """Whether a per-file result is a test file's (a scan with its kind)."""
    return isinstance(result, Mapping) and "kind" in result and "sites" in result


def make_test(path: str, result: Any, layout: Layout, js_default: Callable[[], str]) -> TestFile | None:
    """The test file a per-file result describes, with its framework; None when it is no test file."""
    scan = scanned(path, result, layout) if is_test_result(result) else None
    if scan is None:
        return None
    kind = result["kind"]
    if kind == "python":
        framework = testfiles.python_framework(scan.imports, scan.test_case, path)
    elif kind in testfiles_langs.OTHER_KINDS:  # decided by `analyze`, which may have read the source
        return TestFile(path, kind, str(result.get("framework") or kind), scan, inline=bool(result.get("inline")))
    else:
        framework = "go" if kind == "go" else testfiles.js_framework(scan.imports, js_default())
    return TestFile(path, kind, framework, scan)


def entry_of(test: TestFile, sites: SiteLookup) -> tuple[dict[str, Any], set[str]]:
    """A test's `tests.files` entry (targets resolved) and the groups it is listed under in `by_module`."""
    covered: set[str] = set()
    other = test.kind in testfiles_langs.OTHER_KINDS
    # Other languages: every site of its own counts (a Ruby spec uses a gem's constants without `require`, a
    # Rust test a crate's paths without `use`); Rust targets count even when they hold tests themselves.
    groups = {key for key, _ in sites.own(test.path)} if other else set(sites.imported(test.path))
    lookup = sites.own if test.kind == "rust" else sites.in_file
    for target in test.targets:
        for key, where in lookup(target):
            covered.add(where)
            groups.add(key)
    entry = {"path": test.path, "framework": test.framework, "modules": test.modules,
             "covers": sorted(covered, key=site_order)}
    return entry, groups


class Resolver:
    """Resolves what each test imports to repository files, and lists its imported modules; subclasses say
    which files a Python name, a Go directory and a Go import path stand for."""

    def __init__(self, ctx: ProbeContext) -> None:
        self.ctx = ctx
        self._by_symbol: dict[str, frozenset[str]] = {}

    def _symbol_files(self, symbol: str) -> frozenset[str]:
        """The files any prefix of a dotted symbol names (`a.b.c`: a.b.c, a.b, a), once per symbol: the
        tests of a suite use the same symbols over and over."""
        found = self._by_symbol.get(symbol)
        if found is None:
            parts = symbol.split(".")
            found = self._by_symbol[symbol] = frozenset(
                file for end in range(len(parts), 0, -1) for file in self.files_named(".".join(parts[:end])))
        return found

    def files_named(self, name: str) -> Iterable[str]:  # pragma: no cover - interface
        raise NotImplementedError

    def go_in_dir(self, path: str) -> Iterable[str]:  # pragma: no cover - interface
        raise NotImplementedError

    def go_importing(self, import_path: str) -> Iterable[str]:  # pragma: no cover - interface
        raise NotImplementedError

    def resolve(self, tests: Iterable[TestFile]) -> None:
        for test in tests:
            if test.kind in testfiles_langs.OTHER_KINDS:
                self._other(test)
            else:
                getattr(self, f"_{test.kind}")(test)

    def _other(self, test: TestFile) -> None:
        """Rust, Ruby, PHP, Java/Kotlin, C#: the subject files by path and imports (`testfiles_langs`); the
        files are listed in `modules` too, as JS lists what it resolves (the incremental update finds the tests
        of a changed file there)."""
        repo = testfiles_langs.Paths(self.ctx.has, self.ctx.named)
        test.targets = testfiles_langs.subjects(test.path, test.kind, test.scan.imports, test.inline, repo)
        modules = set(testfiles_langs.external_imports(test.kind, test.scan.imports))
        test.modules = sorted(modules | (test.targets - {test.path}))

    def _python(self, test: TestFile) -> None:
        for site in test.scan.sites:
            test.targets.update(self._symbol_files(site.symbol))
        test.modules = sorted({m for m in test.scan.imports if m.partition(".")[0] not in sys.stdlib_module_names})

    def _js(self, test: TestFile) -> None:
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

    def _go(self, test: TestFile) -> None:
        test.targets.update(self.go_in_dir(directory(test.path)))
        for path in test.scan.imports:
            test.targets.update(self.go_importing(path))
        test.modules = sorted({p for p in test.scan.imports if not go.is_std(p)})
