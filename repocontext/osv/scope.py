"""What part of a package an advisory is about, when its record says: packages and symbols.

Go records (golang/vulndb) name the affected packages of a module and their symbols in
`affected[].ecosystem_specific.imports` ([{"path": "golang.org/x/crypto/openpgp", "symbols":
["Encrypt", "Entity.Serialize"]}]); GitHub's records for PyPI and npm name functions in
`ecosystem_specific.affected_functions`; RustSec in `ecosystem_specific.affects.functions`. Any of
these, under `ecosystem_specific` or `database_specific`, is read. The result is a list of qualified
names: an import path alone ("golang.org/x/crypto/openpgp": the whole package) or path.Symbol, which is
how call sites record a package-qualified use — so a use can be matched against it as written.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from repocontext.osv.evaluate import entries_for
from repocontext.osv.schema import Advisory

_FUNCTION_KEYS = ("affected_functions", "symbols", "functions")


def vulnerable_symbols(advisory: Advisory, ecosystem: str, package: str) -> list[str]:
    """Qualified names the record scopes the package's entries to; empty when it names none (then the whole
    package is affected, as far as the record says)."""
    found: list[str] = []
    for affected in entries_for(advisory, ecosystem, package):
        for extra in (affected.ecosystem_specific, affected.database_specific):
            if isinstance(extra, Mapping):
                found += _from_imports(extra.get("imports")) + _from_functions(extra)
    return sorted(set(found))


def _from_imports(imports: Any) -> list[str]:
    names: list[str] = []
    for entry in imports if isinstance(imports, list) else []:
        path = entry.get("path") if isinstance(entry, Mapping) else None
        if not isinstance(path, str) or not path:
            continue
        symbols = [s for s in entry.get("symbols") or [] if isinstance(s, str) and s]
        names += [f"{path}.{s}" for s in symbols] if symbols else [path]
    return names


def _from_functions(extra: Mapping[str, Any]) -> list[str]:
    names: list[str] = []
    sources: list[Any] = [extra.get(k) for k in _FUNCTION_KEYS]
    affects = extra.get("affects")
    if isinstance(affects, Mapping):
        sources.append(affects.get("functions"))
    for value in sources:
        if isinstance(value, list):
            names += [v for v in value if isinstance(v, str) and v]
    return names


def packages_of(symbols: Iterable[str]) -> list[str]:
    """The import paths a scope names (Go: the part before the symbol; a bare path is itself)."""
    paths = set()
    for name in symbols:
        head, _, tail = name.rpartition("/")
        package = (head + "/" if head else "") + tail.split(".", 1)[0]
        paths.add(package)
    return sorted(paths)
