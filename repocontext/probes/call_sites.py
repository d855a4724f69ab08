"""Call sites of imported modules in Python, JavaScript/TypeScript, Go, Rust, Ruby, PHP, Java/Kotlin and C# sources.

The section maps a module to where it is imported and used:
`call_sites.yaml.sites[*]` = {file, line (1-based), col (0-based byte offset),
symbol ("yaml.safe_load"), kind ("import" | "use")}. Groups are keyed by
top-level import name (Python), npm package name (JS/TS) or Go module path;
a Python name provided by a known distribution below top level
(`google.protobuf`) gets its own group. Left out: the Python standard
library, Node builtins, the Go standard library, relative / path-alias JS
imports, and minified bundles (`*.min.js`). The repository's own modules are
kept, marked `first_party`: Python packages and root-level (or src/lib-level)
modules, directories of loose scripts unless a declared dependency provides
that name (a `docker/` folder must not hide the `docker` SDK), npm package.json
names, go.mod module paths.
`aliases` lists the distributions that provide a module, so a TCCM key
`call_sites.PyYAML` can find the `yaml` group (see `callsites.common.lookup`).
A module name used by two ecosystems (npm `yaml` and PyPI `yaml`) is one group.
Rust, Ruby, PHP, Java/Kotlin and C# groups are keyed by the locked package a
reference maps onto (crate, gem, Composer package, Maven `groupId:artifactId`,
NuGet id; `callsites.packages`); references that map onto none are left out,
and such a group's `via` says how the mapping was made (and whether it is a guess).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from functools import partial
from itertools import pairwise
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Protocol

from repocontext import bounded
from repocontext.callsites import csharp, go, js, jvm, php, ruby, rust
from repocontext.callsites.common import (
    SOURCE_ROOTS,
    FileScan,
    RawSite,
    package_dirs,
    python_module_name,
    python_package,
    resolve_dotted,
    resolve_scan,
)
from repocontext.callsites.distributions import Providers
from repocontext.callsites.packages import ECOSYSTEMS, VIA, PackageIndex, reference
from repocontext.callsites.pathfacts import LookupLayout, PathFacts
from repocontext.callsites.python import scan_python
from repocontext.callsites.testfiles import JS_SUFFIXES
from repocontext.model import Diagnostic, FileRecord
from repocontext.parallel import gc_paused
from repocontext.paths import split_path
from repocontext.probe import ABSENT, CannotIncrement, PerFileProbe, ProbeContext, ProbeOutput
from repocontext.secrets import redact

if TYPE_CHECKING:  # the update from changed files alone imports it (a first gather never does)
    from repocontext.probes.call_sites_delta import Classified, FileSites

PY_GLOBS = ("**/*.py",)
JS_GLOBS = ("**/*.js", "**/*.mjs", "**/*.cjs", "**/*.jsx", "**/*.ts", "**/*.tsx")
GO_GLOBS = ("**/*.go",)
# Rust, Ruby, PHP, Java/Kotlin and C#: suffix → scanner language.
OTHER_LANGUAGES = {".rs": "rust", ".rb": "ruby", ".rake": "ruby", ".php": "php", ".java": "jvm", ".kt": "jvm",
                   ".kts": "jvm", ".cs": "csharp"}
SOURCE_GLOBS = PY_GLOBS + JS_GLOBS + GO_GLOBS + tuple(f"**/*{suffix}" for suffix in OTHER_LANGUAGES)


def language_of(path: str) -> str | None:
    """The scanner for a path; None for minified bundles (vendored build output, not source)."""
    if path.endswith((".min.js", ".min.mjs", ".min.cjs")):
        return None
    if path.endswith(".py"):
        return "python"
    if path.endswith(JS_SUFFIXES):
        return "js"
    if path.endswith(".go"):
        return "go"
    dot = path.rfind(".")
    return OTHER_LANGUAGES.get(path[dot:]) if dot > path.rfind("/") else None


class RepoLayout:
    """What is first-party: Python top-level names, npm workspace names, Go module paths."""

    def __init__(self, py_paths: list[str], npm_names: set[str], go_modules: dict[str, str],
                 php_autoload: tuple[tuple[str, str], ...] = ()) -> None:
        self.packages = package_dirs(py_paths)
        self.py_modules = {p: python_module_name(p, self.packages) for p in py_paths}
        # Packages and root-level modules are surely ours; a plain directory of scripts (`docker/`,
        # `scripts/`) only is when no declared dependency has that import name.
        self.py_top: set[str] = set()
        self.py_top_weak: set[str] = set()
        for path, module in self.py_modules.items():
            if not module:
                continue
            parent = split_path(path)[0]
            strong = parent in self.packages or parent in (".", *SOURCE_ROOTS)
            (self.py_top if strong else self.py_top_weak).add(module.partition(".")[0])
        self.npm_names = npm_names
        self.go_modules = go_modules  # directory of a go.mod → its module path
        self.php_autoload = php_autoload  # (namespace prefix, Composer package) of every composer.lock

    _last: tuple[tuple[Any, ...], RepoLayout] | None = None

    @classmethod
    def from_results(cls, results: Mapping[str, Any]) -> RepoLayout:
        """Built from per-file results: every .py path, and what `analyze_manifest` found. The call_sites and
        tests probes ask for the same layout in one gather (the same .py files and manifests): the last one
        built is kept, and handed out again for the same inputs (read-only: no caller changes a layout)."""
        py = [p for p in results if p.endswith(".py")]
        npm = {r["npm_name"] for r in results.values() if isinstance(r, dict) and r.get("npm_name")}
        go_mods = {p.rpartition("/")[0]: r["go_module"] for p, r in results.items()
                   if isinstance(r, dict) and r.get("go_module")}
        autoload = php_prefixes(results.values())
        key = (py, npm, go_mods, autoload)
        last = RepoLayout._last
        if last is not None and last[0] == key:
            return last[1]
        layout = cls(py, npm, go_mods, autoload)
        RepoLayout._last = (key, layout)
        return layout

    def package_of(self, path: str) -> str | None:
        return python_package(path, self.py_modules.get(path))


class Layout(Protocol):
    """What grouping reads of a layout: RepoLayout (from all files) or LookupLayout (point lookups). Read
    only: so a layout's set or lookup satisfies Container."""

    @property
    def py_top(self) -> Container[str]: ...
    @property
    def py_top_weak(self) -> Container[str]: ...
    @property
    def npm_names(self) -> Container[str]: ...
    @property
    def go_modules(self) -> dict[str, str]: ...
    @property
    def php_autoload(self) -> tuple[tuple[str, str], ...]: ...

    def package_of(self, path: str) -> str | None: ...


MANIFESTS = ("package.json", "go.mod", "composer.lock")


def php_prefixes(results: Iterable[Any]) -> tuple[tuple[str, str], ...]:
    """The (namespace prefix, package) pairs of the composer.lock results among `results`, sorted."""
    found = {(str(prefix), str(name)) for r in results if isinstance(r, Mapping)
             for prefix, name in r.get("php_autoload") or ()}
    return tuple(sorted(found))


def manifest_layout(ctx: ProbeContext, facts: PathFacts, result: Callable[[str], Any]) -> LookupLayout:
    """A LookupLayout with the npm names and Go modules of the manifests' results (`result(path)`)."""
    found = {path: result(path) for name in MANIFESTS for path in ctx.named(name)}
    npm = {r["npm_name"] for r in found.values() if isinstance(r, Mapping) and r.get("npm_name")}
    go_mods = {p.rpartition("/")[0]: r["go_module"] for p, r in found.items()
               if isinstance(r, Mapping) and r.get("go_module")}
    return LookupLayout(facts, npm, go_mods, php_prefixes(found.values()))


def analyze_manifest(ctx: ProbeContext, path: str) -> dict[str, Any] | None:
    """package.json: its name and whether it mentions vitest; go.mod: its module path; composer.lock: its
    packages' autoload namespace prefixes; else None."""
    name = path.rpartition("/")[2]
    if name not in MANIFESTS:
        return None
    text = ctx.read_text(path) or ""
    if name == "go.mod":
        return {"go_module": go.module_path(text)}
    try:
        data = bounded.json_loads(text)
    except ValueError:  # invalid, or over a limit (the dependencies probe reports it)
        data = None
    if name == "composer.lock":
        return {"php_autoload": [list(pair) for pair in php.autoload_prefixes(data)]}
    npm_name = data.get("name") if isinstance(data, dict) else None
    return {"npm_name": npm_name if isinstance(npm_name, str) and npm_name else None, "vitest": '"vitest"' in text}


def scan_source(path: str, text: str) -> FileScan:
    """Parse one source file with the scanner for its language (Python relative imports left relative)."""
    language = language_of(path)
    if language == "python":
        return scan_python(text)
    if language == "js":
        return js.scan_js(text, js.grammar_for(path))
    scanner = _SCANNERS.get(language or "")
    return scanner(path, text) if scanner is not None else FileScan()


_SCANNERS: dict[str, Callable[[str, str], FileScan]] = {
    "go": lambda _, text: go.scan_go(text),
    "rust": lambda _, text: rust.scan_rust(text),
    "ruby": lambda _, text: ruby.scan_ruby(text),
    "php": lambda _, text: php.scan_php(text),
    "jvm": lambda path, text: jvm.scan_jvm(text, jvm.grammar_for(path)),
    "csharp": lambda _, text: csharp.scan_csharp(text),
}


def redacted_scan(scan: dict[str, Any]) -> dict[str, Any]:
    """A scan of unredacted source (`ProbeContext.read_source`) with every secret-looking value in what it
    keeps (module and symbol names, imports, the error) redacted, so no secret enters the RepoContext."""
    strings = {text for row in scan["sites"] for text in row[:2]}
    strings.update(scan["imports"])
    if scan["error"]:
        strings.add(scan["error"])
    changed = {text: redact(text) for text in strings}
    changed = {text: new for text, new in changed.items() if new is not text and new != text}
    if not changed:
        return scan
    sites = [[changed.get(row[0], row[0]), changed.get(row[1], row[1]), *row[2:]] for row in scan["sites"]]
    return {**scan, "sites": sites,
            "imports": [changed.get(text, text) for text in scan["imports"]],
            "error": changed.get(scan["error"], scan["error"]) if scan["error"] else scan["error"]}


def scanned(path: str, result: Any, layout: Layout) -> FileScan | None:
    """A cached per-file result back as a FileScan, Python relative names resolved; None if not a scan."""
    if not isinstance(result, Mapping) or "sites" not in result:
        return None
    scan = FileScan.from_json(result)
    return resolve_scan(scan, layout.package_of(path)) if path.endswith(".py") else scan


_ROW_ORDER = itemgetter(2, 3, 4, 1)  # a cached row's (line, col, kind, symbol): the order of sites in a file


def resolved_rows(rows: Iterable[Sequence[Any]], package: str | None) -> list[Sequence[Any]]:
    """Cached Python rows with relative names made absolute (as `resolve_scan` does); unresolvable ones dropped."""
    out: list[Sequence[Any]] = []
    for row in rows:
        if not row[1].startswith("."):
            out.append(row)
            continue
        symbol, module = resolve_dotted(row[1], package), resolve_dotted(row[0], package)
        if symbol is not None and module is not None:
            out.append((module, symbol, row[2], row[3], row[4]))
    return out


def go_dependencies(dependencies: Mapping[str, Any] | None) -> list[str]:
    found = set()
    for records in (dependencies or {}).values():
        for record in records if isinstance(records, list) else ():
            if isinstance(record, Mapping) and record.get("ecosystem") == "Go" and record.get("name"):
                found.add(str(record["name"]))
    return sorted(found)


# (group key, first party, aliases, via): how one site is grouped; via only for the languages of `VIA`.
Classification = tuple[str, bool, list[str], str | None]


class Grouper:
    """Decides the group of each raw site (or that it is left out) and collects the groups."""

    def __init__(self, layout: Layout, dependencies: Mapping[str, Any] | None) -> None:
        self.layout = layout
        self.providers = Providers(dependencies)
        self.go_known = go_dependencies(dependencies) + sorted(layout.go_modules.values())
        self.packages = PackageIndex(dependencies, layout.php_autoload)
        self.groups: dict[str, dict[str, Any]] = {}
        self._by_language: dict[str, dict[str, Classification | None]] = {}  # language → ident → key

    def key(self, language: str, site: RawSite) -> Classification | None:
        """(group key, first party, aliases, via), or None when the site is left out; memoised per module."""
        return self.classify(language, site.module, site.symbol)

    def classify(self, language: str, module: str, symbol: str) -> Classification | None:
        if language == "python":
            top = symbol.partition(".")[0]
            ident = symbol if top in self.providers.namespace_roots else top
        else:
            ident = reference(language, symbol) if language in VIA else module
        memo = self._by_language.setdefault(language, {})
        if ident not in memo:
            memo[ident] = self._classify(language, ident)
        return memo[ident]

    def _classify(self, language: str, ident: str) -> Classification | None:
        if language == "python":
            top = ident.partition(".")[0]
            if top in sys.stdlib_module_names:
                return None
            if top in self.layout.py_top or (top in self.layout.py_top_weak and not self.providers.is_declared(top)):
                return top, True, [], None
            key = self.providers.group_key(ident)
            return key, False, self.providers.providers(key), None
        if language == "js":
            name = js.package_name(ident)
            if name is None:
                return None
            first = name in self.layout.npm_names
            return name, first, [] if first else [name], None
        if language in VIA:
            package = self.packages.match(language, ident)
            if package is None:
                return None
            first = self.packages.local(ECOSYSTEMS[language], package)
            return package, first, [] if first else [package], VIA[language]
        if go.is_std(ident):
            return None
        module = go.module_of(ident, self.go_known)
        first = module in self.layout.go_modules.values()
        return module, first, [] if first else [module], None

    def add(self, path: str, language: str, sites: list[RawSite]) -> None:
        self.add_rows(path, language, [(s.module, s.symbol, s.line, s.col, s.kind) for s in sites])

    def add_rows(self, path: str, language: str, rows: Iterable[Sequence[Any]]) -> None:
        """Add one file's sites given as cached rows (module, symbol, line, col, kind)."""
        # The hot loop of combine (once per site): classification inlined down to a memo lookup.
        groups, roots, python, other = self.groups, self.providers.namespace_roots, language == "python", \
            language in VIA
        memo = self._by_language.setdefault(language, {})
        for module, symbol, line, col, kind in rows:
            if python:
                top = symbol.partition(".")[0]
                ident = symbol if top in roots else top
            else:
                ident = reference(language, symbol) if other else module
            found = memo[ident] if ident in memo else self.classify(language, module, symbol)
            if found is None:
                continue
            key, first_party, aliases, via = found
            group = groups.get(key)
            if group is None:
                group = groups[key] = {"module": key, "aliases": set(), "first_party": first_party, "sites": []}
                if via is not None:  # how a Rust/Ruby/PHP/JVM/C# reference was mapped onto the package
                    group["via"] = via
            if aliases:
                group["aliases"].update(aliases)
            group["sites"].append({"file": path, "line": line, "col": col, "symbol": symbol, "kind": kind})

    def result(self, presorted: bool = False) -> dict[str, dict[str, Any]]:
        """The groups by key; `presorted`: sites were added file by file in path order, each file's sorted."""
        out = {}
        for key in sorted(self.groups):
            group = self.groups[key]
            group["aliases"] = sorted(group["aliases"])
            if not presorted:
                group["sites"].sort(key=lambda s: (s["file"], s["line"], s["col"], s["kind"], s["symbol"]))
            out[key] = group
        return out


# Content class → what loads its grammar and queries (CallSitesProbe.prepare).
_GRAMMARS: dict[str, Callable[[], None]] = {
    "go": go.warm, **{f"js:{name}": partial(js.warm, name) for name in ("javascript", "typescript", "tsx")},
    "rust": rust.warm, "ruby": ruby.warm, "php": php.warm, "csharp": csharp.warm,
    **{f"jvm:{name}": partial(jvm.warm, name) for name in ("java", "kotlin")},
}


class CallSitesProbe(PerFileProbe):
    name = "call_sites"
    # 2: JS/TS/Go syntax errors are reported (the cached scans carry partial_line); 3: Rust, Ruby, PHP, Java,
    # Kotlin and C# sources, composer.lock autoload prefixes
    version = "3"
    applies_to_tasks = ("vulnerability-remediation",)
    # package.json names and go.mod module paths decide what is first-party; composer.lock's autoload maps
    # which Composer package a PHP namespace belongs to.
    inputs = (*SOURCE_GLOBS, "**/package.json", "**/go.mod", "**/composer.lock")
    requires = ("dependencies",)
    produces = ("call_sites",)

    def run_cached(self, ctx: ProbeContext, cache: Mapping[str, Any]) -> tuple[ProbeOutput, dict[str, Any]]:
        with gc_paused():
            return super().run_cached(ctx, cache)

    def content_class(self, path: str) -> str | None:
        """The scanner (and grammar) a file gets, or the manifest kind: all of the path `analyze` uses."""
        name = path.rpartition("/")[2]
        if name in MANIFESTS:
            return name
        language = language_of(path)
        if language == "js":
            return f"js:{js.grammar_for(path)}"
        return f"jvm:{jvm.grammar_for(path)}" if language == "jvm" else str(language)

    def prepare(self, batch: Sequence[FileRecord]) -> None:
        """The tree-sitter grammars and fixed queries of the batch's languages (~10 ms a grammar), loaded
        before the workers fork."""
        for grammar in sorted(set(_GRAMMARS).intersection(self.content_class(record.path) for record in batch)):
            _GRAMMARS[grammar]()

    def analyze(self, ctx: ProbeContext, record: FileRecord) -> dict[str, Any] | None:
        """One file's imports and uses (plain JSON, cached by blob id), or a manifest's facts."""
        manifest = analyze_manifest(ctx, record.path)
        if manifest is not None:
            return manifest
        text = ctx.read_source(record.path) if language_of(record.path) else None
        return None if text is None else redacted_scan(scan_source(record.path, text).as_json())

    def combine(self, ctx: ProbeContext, results: dict[str, Any]) -> ProbeOutput:
        layout = RepoLayout.from_results(results)
        grouper = Grouper(layout, ctx.upstream.get("dependencies"))
        diagnostics: list[Diagnostic] = []
        # Works on the cached rows directly (no FileScan per file). Files in path order, each file's sites in
        # site order, make every group's site list sorted as it is built: no sort over all sites at the end.
        paths = list(results)
        in_order = all(a < b for a, b in pairwise(paths))
        for path, result in results.items():
            if not isinstance(result, Mapping) or "sites" not in result:
                continue
            if result.get("error") or result.get("partial_line"):
                diagnostics.append(self._parse_problem(path, result))
            if result.get("error"):
                continue
            rows = result.get("sites", [])
            if path.endswith(".py"):
                rows = resolved_rows(rows, layout.package_of(path))
            grouper.add_rows(path, language_of(path) or "", sorted(rows, key=_ROW_ORDER) if in_order else rows)
        return ProbeOutput(values={"call_sites": grouper.result(presorted=in_order)}, diagnostics=diagnostics)

    def _parse_problem(self, path: str, result: Mapping[str, Any]) -> Diagnostic:
        """A file that did not parse (skipped), or that tree-sitter parsed around a syntax error."""
        if result.get("error"):
            return self.diagnostic(f"{result['error']}; file skipped", path, result.get("error_line"))
        return self.diagnostic("syntax error; parsed around it, so call sites may be missing", path,
                               result["partial_line"])

    def run_incremental(self, ctx: ProbeContext, previous: Mapping[str, Any], changes: Mapping[str, tuple[Any, Any]],
                        previous_diagnostics: Sequence[Diagnostic] = (),
                        result_of: Callable[[str], Any] | None = None) -> ProbeOutput | None:
        """The full combine's output from the previous groups and the changed files (see PerFileProbe).

        Contract: call it only when this probe's `requires` fingerprint is unchanged (the `dependencies` value
        equals the previous one, which decides aliases and what is declared). None when the layout may have
        changed (an input file added or removed, a package.json or go.mod changed), when the index is not in
        path order, when `previous` does not hold a changed file's old sites where they belong, or when a
        group would change its first_party (a group shared by two languages lost its first file): the
        tests probe may then assume call_sites changed only in the sites of changed files.
        Groups that no changed file touches, or whose sites came out equal, are the very objects of
        `previous["call_sites"]`; the others are new dicts whose `sites` reuse the previous site objects.
        Diagnostics: `previous_diagnostics` of unchanged files, plus those of the changed files, in path order.
        """
        from repocontext.probes.call_sites_delta import patch_groups  # a first gather never updates

        groups = previous.get("call_sites")
        paths = ctx.sorted_paths()
        if not isinstance(groups, Mapping) or paths is None or not _layout_kept(changes):
            return None
        if any(d.file is None for d in previous_diagnostics):
            return None
        try:
            facts = PathFacts(paths, ctx.has, ctx.named)
            layout = manifest_layout(ctx, facts, lambda path: self.result_for(ctx, path, result_of))
            grouper = Grouper(layout, ctx.upstream.get("dependencies"))
            edits = {path: (_file_sites(grouper, layout, path, old), _file_sites(grouper, layout, path, new))
                     for path, (old, new) in changes.items()}
            patched = patch_groups(groups, edits, lambda key, site: _reclassify(grouper, key, site))
        except CannotIncrement:
            return None
        diagnostics = [d for d in previous_diagnostics if d.file not in changes]
        for path, (_, new) in changes.items():
            if isinstance(new, Mapping) and "sites" in new and (new.get("error") or new.get("partial_line")):
                diagnostics.append(self._parse_problem(path, new))
        diagnostics.sort(key=lambda d: d.file or "")
        return ProbeOutput(values={"call_sites": patched}, diagnostics=diagnostics)


def _layout_kept(changes: Mapping[str, tuple[Any, Any]]) -> bool:
    """Whether what decides first-party names cannot have changed: no file added or removed, no manifest."""
    return all(old is not ABSENT and new is not ABSENT and path.rpartition("/")[2] not in MANIFESTS
               for path, (old, new) in changes.items())


def _file_sites(grouper: Grouper, layout: Layout, path: str, result: Any) -> FileSites:
    """One file's sites by group, as combine adds them (skipped files: none), each with its classification."""
    from repocontext.probes.call_sites_delta import FileSites

    found = FileSites()
    if not isinstance(result, Mapping) or "sites" not in result or result.get("error"):
        return found
    language = language_of(path) or ""
    rows = result.get("sites", [])
    if path.endswith(".py"):
        rows = resolved_rows(rows, layout.package_of(path))
    for module, symbol, line, col, kind in sorted(rows, key=_ROW_ORDER):
        classified = grouper.classify(language, module, symbol)
        if classified is not None:
            key, first_party, aliases, via = classified
            site = {"file": path, "line": line, "col": col, "symbol": symbol, "kind": kind}
            found.by_group.setdefault(key, []).append((site, (first_party, tuple(aliases), via)))
    return found


def _reclassify(grouper: Grouper, key: str, site: Mapping[str, Any]) -> Classified:
    """A stored site's classification: Python, Rust, Ruby, PHP, Java/Kotlin and C# group by its symbol; JS and Go
    by the group key (a package name or module path classifies as itself). Raises CannotIncrement if that does
    not lead back to `key`."""
    language = language_of(site["file"]) or ""
    found = grouper.classify(language, "" if language == "python" else key, site["symbol"])
    if found is None or found[0] != key:
        raise CannotIncrement(f"site {site!r} does not classify into group {key!r}")
    return found[1], tuple(found[2]), found[3]
