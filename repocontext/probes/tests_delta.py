"""The tests section after a few changed files, from the previous section and the current call_sites.

A test's entry depends on its own scan, on the layout (paths, manifests: kept
unchanged, else no increment), and on the third-party sites of the files it
targets. So after a change the entries to work out again are those of the
changed test files and of the unchanged tests that target a changed file;
everything else is kept as is. The second set is found without the unchanged
tests' scans:
  * Python tests target F by a site symbol with one of F's import names as a
    dotted prefix. Those sites are in call_sites (first-party groups too),
    under the group of the name's top-level module or a namespace group below
    it, unless that top is a standard-library name (then: no increment).
  * JS tests, and those of Rust, Ruby, PHP, Java/Kotlin and C#, target only
    files listed in their previous `modules` (the latter's targets follow
    from paths and their own scan alone: `callsites.testfiles_langs`; a Rust
    file gaining or losing inline tests is itself a changed test).
  * Go tests target the files of their own directory and of the import paths
    in their previous `modules` (no increment when such an import path looks
    like the standard library: `modules` leaves those out).
The tests found are worked out again from their scans (the cache, via
`result`) with the same code as the full combine (`tests_common`), using point
lookups (`PathFacts`, bisect in the sorted group site lists) for the indexes
the full combine builds over every file.
"""

from __future__ import annotations

import sys
from bisect import bisect_left, bisect_right, insort
from collections.abc import Callable, Iterable, Mapping, Sequence
from operator import itemgetter
from typing import Any, TypeGuard

from repocontext.callsites import go
from repocontext.callsites.pathfacts import LookupLayout, PathFacts
from repocontext.probe import ABSENT, CannotIncrement, ProbeContext, json_equal
from repocontext.probes.call_sites import MANIFESTS, manifest_layout
from repocontext.probes.tests_common import Resolver, directory, entry_of, is_test_result, make_test

VITEST = ("**/vitest.config.*", "**/vitest.workspace.*")
_FILE = itemgetter("file")
_PATH = itemgetter("path")


class _PointSites:
    """SiteLookup over the call_sites groups by bisect (each group's sites are sorted by file)."""

    def __init__(self, call_sites: Mapping[str, Any], is_test: Callable[[str], bool]) -> None:
        self.is_test = is_test
        self.groups: list[tuple[str, Sequence[Any]]] = []  # third-party groups: (key, sites)
        for key, group in call_sites.items():
            sites = group.get("sites", []) if isinstance(group, Mapping) and not group.get("first_party") else ()
            if sites:
                self.groups.append((key, sites))
        self._memo: dict[str, list[tuple[str, Mapping[str, Any]]]] = {}

    def _sites(self, path: str) -> list[tuple[str, Mapping[str, Any]]]:
        if path not in self._memo:
            found: list[tuple[str, Mapping[str, Any]]] = []
            for key, sites in self.groups:
                if sites[0]["file"] <= path <= sites[-1]["file"]:  # most groups are ruled out here
                    low = bisect_left(sites, path, key=_FILE)
                    found.extend((key, sites[i]) for i in range(low, bisect_right(sites, path, lo=low, key=_FILE)))
            self._memo[path] = found
        return self._memo[path]

    def in_file(self, path: str) -> list[tuple[str, str]]:
        if self.is_test(path):
            return []
        return [(key, f"{site['file']}:{site['line']}") for key, site in self._sites(path)]

    def imported(self, path: str) -> Iterable[str]:
        return {key for key, site in self._sites(path) if site.get("kind") == "import"}

    def own(self, path: str) -> list[tuple[str, str]]:
        return [(key, f"{site['file']}:{site['line']}") for key, site in self._sites(path)]


class _PointTargets(Resolver):
    """Resolution by point lookups: any file a name or directory stands for (files without third-party sites
    or that are tests cover nothing, as in the full combine)."""

    def __init__(self, ctx: ProbeContext, layout: LookupLayout) -> None:
        super().__init__(ctx)
        self.facts = layout.facts
        self.go_modules = layout.go_modules

    def files_named(self, name: str) -> Iterable[str]:
        return self.facts.files_named(name)

    def go_in_dir(self, path: str) -> Iterable[str]:
        return self.facts.go_files_in(path)

    def go_importing(self, import_path: str) -> Iterable[str]:
        dirs = self.facts.go_dirs_importable_as(import_path, self.go_modules)
        return [path for folder in dirs for path in self.facts.go_files_in(folder)]


class _Update:
    """One incremental update; raises CannotIncrement where the full combine is needed."""

    def __init__(self, ctx: ProbeContext, previous: Mapping[str, Any], changes: Mapping[str, tuple[Any, Any]],
                 result: Callable[[str], Any]) -> None:
        files, by_module, paths = previous.get("files"), previous.get("by_module"), ctx.sorted_paths()
        if not _is_sequence(files) or not isinstance(by_module, Mapping) or paths is None:
            raise CannotIncrement("no previous tests section, or the index is not in path order")
        for path, (old, new) in changes.items():
            name = path.rpartition("/")[2]
            if old is ABSENT or new is ABSENT or name in MANIFESTS or name.startswith(("vitest.config.",
                                                                                         "vitest.workspace.")):
                raise CannotIncrement(f"{path}: the layout may have changed")
        self.ctx, self.files, self.by_module, self.changes, self.result = ctx, files, by_module, changes, result
        self.call_sites: Mapping[str, Any] = ctx.upstream.get("call_sites") or {}
        self.layout = manifest_layout(ctx, PathFacts(paths, ctx.has, ctx.named), result)
        self._was: dict[str, bool] = {}

    def was_test(self, path: str) -> bool:
        """Whether `path` has an entry in the previous `files` (sorted by path)."""
        if path not in self._was:
            index = bisect_left(self.files, path, key=_PATH)
            self._was[path] = index < len(self.files) and self.files[index]["path"] == path
        return self._was[path]

    def is_test(self, path: str) -> bool:
        return is_test_result(self.changes[path][1]) if path in self.changes else self.was_test(path)

    def run(self) -> dict[str, Any]:
        affected = {p for p, (old, new) in self.changes.items() if is_test_result(old) or is_test_result(new)}
        affected |= self._python_targeting() | self._js_go_targeting()
        if not affected:  # the usual case: nothing to work out again, every part stays as it was
            return {"files": self.files, "by_module": self.by_module}
        sites = _PointSites(self.call_sites, self.is_test)
        resolver = _PointTargets(self.ctx, self.layout)
        entries: dict[str, dict[str, Any] | None] = {}
        groups: dict[str, set[str]] = {}
        for path in sorted(affected):
            result = self.changes[path][1] if path in self.changes else self.result(path)
            test = make_test(path, result, self.layout, self._js_default)
            if test is None:
                entries[path] = None
                continue
            resolver.resolve([test])
            entries[path], groups[path] = entry_of(test, sites)
        return {"files": _splice(self.files, entries), "by_module": _regroup(self.by_module, affected, groups)}

    def _python_targeting(self) -> set[str]:
        """Unchanged Python tests with a site whose symbol has an import name of a changed .py file as prefix."""
        wanted: dict[str, set[str]] = {}  # top-level name → import names of changed files under it
        for path in self.changes:
            if path.endswith(".py"):
                for name in self.layout.facts.import_names(path):
                    top = name.partition(".")[0]
                    if top in sys.stdlib_module_names:
                        raise CannotIncrement(f"{name}: sites under a standard-library name are not kept")
                    wanted.setdefault(top, set()).add(name)
        keys = sorted(self.call_sites) if wanted else []
        found: set[str] = set()
        for top, names in wanted.items():
            for key in [top, *keys[bisect_left(keys, top + "."):bisect_left(keys, top + "/")]]:
                group = self.call_sites.get(key)
                if isinstance(group, Mapping):
                    found |= self._tests_using(group.get("sites", ()), names)
        return found

    def _tests_using(self, sites: Iterable[Mapping[str, Any]], names: set[str]) -> set[str]:
        found: set[str] = set()
        for site in sites:
            file = site["file"]
            if file in found or not file.endswith(".py") or file in self.changes:
                continue
            parts = site["symbol"].split(".")
            if any(".".join(parts[:end]) in names for end in range(1, len(parts) + 1)) and self.was_test(file):
                found.add(file)
        return found

    def _js_go_targeting(self) -> set[str]:
        """Unchanged JS (and Rust, Ruby, PHP, JVM, C#) tests listing a changed file in `modules`; unchanged Go
        tests in a changed .go file's directory or listing its import path."""
        go_dirs = {directory(p) for p in self.changes if p.endswith(".go")}
        go_imports = set()
        for folder in go_dirs:
            imported = go.import_path_of_dir(folder, self.layout.go_modules)
            if imported and go.is_std(imported):
                raise CannotIncrement(f"{imported}: left out of `modules`, so its importers are unknown")
            if imported:
                go_imports.add(imported)
        found: set[str] = set()
        for entry in self.files:
            path = entry["path"]
            if path.endswith(".py") or path in self.changes:
                continue
            if path.endswith(".go"):
                hit = directory(path) in go_dirs or any(m in go_imports for m in entry["modules"])
            else:
                hit = any(m in self.changes for m in entry["modules"])
            if hit:
                found.add(path)
        return found

    def _js_default(self) -> str:
        """"vitest" when a vitest config exists or a package.json mentions vitest, as the full combine decides."""
        if self.ctx.matching_paths(VITEST):
            return "vitest"
        declared = (self.result(path) for path in self.ctx.named("package.json"))
        return "vitest" if any(isinstance(r, dict) and r.get("vitest") for r in declared) else "jest"


def update_tests(ctx: ProbeContext, previous: Any, changes: Mapping[str, tuple[Any, Any]],
                 result: Callable[[str], Any]) -> dict[str, Any] | None:
    """The `tests` section after `changes`, or None when the full combine is needed; `result(path)` gives an
    unchanged input file's per-file result."""
    if not isinstance(previous, Mapping):
        return None
    try:
        return _Update(ctx, previous, changes, result).run()
    except CannotIncrement:
        return None


def _is_sequence(value: Any) -> TypeGuard[Sequence[Any]]:
    return isinstance(value, Sequence) and not isinstance(value, str)


def _splice(files: Sequence[Any], entries: dict[str, dict[str, Any] | None]) -> list[Any]:
    """The previous entries (sorted by path) with `entries` put in: replaced, added, or removed (None).
    A recomputed entry equal to the previous one stays the previous object."""
    out: list[Any] = []
    cursor = 0
    for path in sorted(entries):
        index = bisect_left(files, path, lo=cursor, key=_PATH)
        out.extend(files[cursor:index])
        present = index < len(files) and files[index]["path"] == path
        entry = entries[path]
        if entry is not None:
            out.append(files[index] if present and json_equal(files[index], entry) else entry)
        cursor = index + 1 if present else index
    out.extend(files[cursor:])
    return out


def _regroup(by_module: Mapping[str, Sequence[str]], affected: set[str],
             groups: dict[str, set[str]]) -> dict[str, Any]:
    """`by_module` with the affected tests taken out of every list and put back under their new groups;
    lists that do not change stay the previous objects, lists left empty go."""
    added: dict[str, list[str]] = {}
    for path, keys in groups.items():
        for key in keys:
            added.setdefault(key, []).append(path)
    out: dict[str, Any] = {}
    for key in sorted({*by_module, *added}):
        before: Sequence[str] = by_module.get(key, ())
        kept = [p for p in before if p not in affected] if any(_holds(before, p) for p in affected) else None
        if kept is None and key not in added:
            out[key] = before
            continue
        paths = list(before) if kept is None else kept
        for path in added.get(key, ()):
            insort(paths, path)
        if paths:
            out[key] = before if list(before) == paths else paths
    return out


def _holds(paths: Sequence[str], path: str) -> bool:
    index = bisect_left(paths, path)
    return index < len(paths) and paths[index] == path
