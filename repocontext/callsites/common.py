"""Shared shapes for the call-site scanners and the Python module naming rules.

Positions everywhere: `line` is 1-based, `col` is the 0-based UTF-8 byte
offset within the line (what both `ast` and tree-sitter report).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import PurePosixPath
from typing import Any

from repocontext.callsites.distributions import normalise
from repocontext.paths import is_plain, split_path

# Directories that hold importable code without being a package themselves.
SOURCE_ROOTS = ("src", "lib")


@dataclass(frozen=True, slots=True)
class RawSite:
    # what was imported: dotted Python module, JS specifier, Go import path; a Rust path's crate segment, Ruby
    # require path or first constant, PHP / Java / Kotlin / C# qualified name
    module: str
    symbol: str  # fully qualified name: "yaml.safe_load", "lodash.map", "gopkg.in/yaml.v3.Unmarshal"
    line: int
    col: int
    kind: str  # "import" | "use"


@dataclass
class FileScan:
    """What one file imports and uses; `error` set means the file could not be parsed."""

    sites: list[RawSite] = field(default_factory=list)
    imports: list[str] = field(default_factory=list)  # modules imported, in order of appearance
    error: str | None = None
    error_line: int | None = None
    test_case: bool = False  # Python: defines a class deriving from a *TestCase
    partial_line: int | None = None  # tree-sitter languages: parsed around a syntax error first met at this line

    def as_json(self) -> dict[str, Any]:
        """Plain JSON, for the per-file probe cache."""
        return {"sites": [[s.module, s.symbol, s.line, s.col, s.kind] for s in self.sites],
                "imports": list(self.imports), "error": self.error, "error_line": self.error_line,
                "test_case": self.test_case, "partial_line": self.partial_line}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FileScan:
        return cls(sites=[RawSite(*s) for s in data.get("sites", [])], imports=list(data.get("imports", [])),
                   error=data.get("error"), error_line=data.get("error_line"),
                   test_case=bool(data.get("test_case")), partial_line=data.get("partial_line"))


def package_dirs(paths: Iterable[str]) -> frozenset[str]:
    """Directories holding an `__init__.py` (regular Python packages)."""
    found = set()
    for path in paths:
        parent, name = split_path(path)
        if name == "__init__.py":
            found.add(parent)
    return frozenset(found)


def _stem(name: str) -> str:
    dot = name.rfind(".")
    return name[:dot] if 0 < dot < len(name) - 1 else name


def _parts(path: str) -> tuple[list[str], str]:
    if not is_plain(path):
        pure = PurePosixPath(path)
        return list(pure.parent.parts) if str(pure.parent) != "." else [], pure.stem
    parent, _, name = path.rpartition("/")
    return parent.split("/") if parent else [], _stem(name)


def python_module_name(path: str, packages: frozenset[str]) -> str | None:
    """The dotted module name of a .py file.

    Climb while the directory is a package (has `__init__.py`); the first
    directory that is not is the import root. A file outside any package is
    named by its whole path (PEP 420 namespace packages), less a leading
    `src/` or `lib/`.
    """
    if is_plain(path):  # the same for every file of a directory: worked out once per directory
        parent, _, name = path.rpartition("/")
        names = [*_import_dirs(parent, packages)]
        stem = _stem(name)
    else:
        dirs, stem = _parts(path)
        names = _climb(dirs, packages)
    if stem != "__init__":
        names.append(stem)
    return ".".join(names) or None


def _climb(dirs: list[str], packages: frozenset[str]) -> list[str]:
    """The directories that name a module in `dirs`: those from the import root down."""
    start = len(dirs)
    while start > 0 and "/".join(dirs[:start]) in packages:
        start -= 1
    if start == len(dirs):  # the file's own directory is not a package
        start = 1 if dirs and dirs[0] in SOURCE_ROOTS else 0
    return dirs[start:]


@lru_cache(maxsize=16384)
def _import_dirs(parent: str, packages: frozenset[str]) -> tuple[str, ...]:
    return tuple(_climb(parent.split("/") if parent else [], packages))


def python_import_names(path: str, packages: frozenset[str]) -> set[str]:
    """Every dotted name a file may be imported by: the package-derived one and the path-derived one."""
    names: set[str] = set()
    canonical = python_module_name(path, packages)
    if canonical:
        names.add(canonical)
    dirs, stem = _parts(path)
    if dirs and dirs[0] in SOURCE_ROOTS:
        dirs = dirs[1:]
    whole = ".".join(dirs + ([] if stem == "__init__" else [stem]))
    if whole:
        names.add(whole)
    return names


def python_package(path: str, module: str | None) -> str | None:
    """The package relative imports in `path` resolve against."""
    if module is None:
        return None
    if split_path(path)[1] == "__init__.py":
        return module
    return module.rpartition(".")[0]


def resolve_relative(package: str | None, level: int, module: str | None) -> str | None:
    """`from ..x import y` in `package` → the absolute base (`pkg.x`); None when it climbs out."""
    if package is None:
        return None
    parts = package.split(".") if package else []
    if level - 1 >= len(parts):  # beyond the top-level package
        return None
    base = parts[: len(parts) - (level - 1)]
    if module:
        base.append(module)
    return ".".join(base) or None


def resolve_dotted(name: str, package: str | None) -> str | None:
    """The absolute form of a possibly relative name (".x", "..up.x") in `package`; None when it climbs out."""
    if not name.startswith("."):
        return name
    rest = name.lstrip(".")
    base = resolve_relative(package, len(name) - len(rest), None)
    if base is None:
        return None
    return f"{base}.{rest}" if rest else base


def resolve_scan(scan: FileScan, package: str | None) -> FileScan:
    """`scan` with its relative Python names made absolute; unresolvable ones are dropped."""
    sites = []
    for site in scan.sites:
        if not site.symbol.startswith("."):
            sites.append(site)
            continue
        symbol, module = resolve_dotted(site.symbol, package), resolve_dotted(site.module, package)
        if symbol is not None and module is not None:
            sites.append(RawSite(module, symbol, site.line, site.col, site.kind))
    imports = [name for name in (resolve_dotted(m, package) for m in scan.imports) if name is not None]
    return FileScan(sites=sites, imports=imports, error=scan.error, error_line=scan.error_line,
                    test_case=scan.test_case)


def lookup(groups: Mapping[str, Any], key: str) -> list[str]:
    """Group keys of a `call_sites` section that `key` names: the module itself or a providing distribution.

    Matching is by exact key first, then by PEP 503-normalised name against
    keys and aliases, so `PyYAML`, `pyyaml` and `yaml` all find the `yaml` group.
    """
    if key in groups:
        return [key]
    wanted = normalise(key)
    found = []
    for name, group in groups.items():
        aliases = group.get("aliases", []) if isinstance(group, Mapping) else getattr(group, "aliases", [])
        if normalise(name) == wanted or any(normalise(a) == wanted for a in aliases):
            found.append(name)
    return sorted(found)
