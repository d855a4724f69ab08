"""Cargo.toml: the crates a package or workspace declares, with their version requirements as written.

Read: `[dependencies]`, `[dev-dependencies]`, `[build-dependencies]` (and their old `_` spellings), the same
under `[target.'cfg(..)']`, and `[workspace.dependencies]`. A record is named by the crate it pulls from the
registry (`foo = { package = "bar" }` is bar, as advisories name it). Only dev-dependencies are dev: build
scripts run on the building machine and their crates are compiled into the build.

`version` is set only for an exact requirement (`=1.2.3`). A git or path dependency notes that origin as
the source (and keeps a `version` written beside it). A `workspace = true` dependency has no requirement of
its own: it takes the workspace root's `[workspace.dependencies]` entry, which is recorded (and edited)
there. The line is the one that holds the requirement (`version = "…"` in a table), else the entry's key.
"""

from __future__ import annotations

import re
from typing import Any

from repocontext.deps.common import Issue, Parsed, read_toml
from repocontext.deps.toml_lines import TomlLines
from repocontext.model import Dependency

# dependency table key → dev (the section keeps the key as written)
KINDS: dict[str, bool] = {
    "dependencies": False, "dev-dependencies": True, "dev_dependencies": True,
    "build-dependencies": False, "build_dependencies": False,
}
_EXACT = re.compile(r"^\s*=\s*(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?)\s*$")
_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def cargo_exact(requirement: str) -> str | None:
    """The pinned version of an `=1.2.3` requirement; None for any range (Cargo reads `1.2.3` as `^1.2.3`)."""
    found = _EXACT.match(requirement)
    return found.group(1) if found else None


def table_name(keys: tuple[str, ...]) -> str:
    """A table path as TOML spells it (`target.'cfg(unix)'.dependencies`): `split_key` reads it back."""
    return ".".join(k if _BARE.match(k) else f"'{k}'" if "'" not in k else f'"{k}"' for k in keys)


def parse_cargo_toml(path: str, text: str) -> Parsed:
    data = read_toml(path, text)
    if isinstance(data, Parsed):
        return data
    lines = TomlLines(text)
    result = Parsed()
    for keys, body, dev in _tables(data):
        for key, spec in sorted(body.items()):
            result.add(_dependency(path, lines, keys, key, spec, dev))
    return result


def _tables(data: dict[str, Any]) -> list[tuple[tuple[str, ...], dict[str, Any], bool]]:
    """(table path, its entries, dev) of every dependency table, in a fixed order."""
    found: list[tuple[tuple[str, ...], dict[str, Any], bool]] = []

    def collect(prefix: tuple[str, ...], parent: dict[str, Any]) -> None:
        for key, dev in KINDS.items():
            if isinstance(parent.get(key), dict):
                found.append(((*prefix, key), parent[key], dev))

    collect((), data)
    target = data.get("target")
    for cfg, body in sorted(target.items() if isinstance(target, dict) else []):
        if isinstance(body, dict):
            collect(("target", cfg), body)
    workspace = data.get("workspace")
    if isinstance(workspace, dict) and isinstance(workspace.get("dependencies"), dict):
        found.append((("workspace", "dependencies"), workspace["dependencies"], False))
    return found


def _dependency(path: str, lines: TomlLines, table: tuple[str, ...], key: str, spec: Any,
                dev: bool) -> Dependency | Issue:
    section = table_name(table)
    if isinstance(spec, str):
        return Dependency(ecosystem="crates.io", name=key, version=cargo_exact(spec), constraint=spec, file=path,
                          line=_key_line(lines, table, key), dev=dev, section=section)
    if not isinstance(spec, dict):
        return Issue(f"{section}.{key}: not a version requirement or a table: {spec!r}", path,
                     _key_line(lines, table, key))
    package = spec.get("package")
    name = package if isinstance(package, str) else key
    version = spec.get("version") if isinstance(spec.get("version"), str) else None
    where = "version" if version is not None else "workspace" if spec.get("workspace") is True else None
    line = (lines.find((*table, key), (where,)) if where else None) or _key_line(lines, table, key)
    return Dependency(ecosystem="crates.io", name=name, version=cargo_exact(version) if version else None,
                      constraint=version, file=path, line=line, dev=dev, section=section, source=_source(spec))


def _key_line(lines: TomlLines, table: tuple[str, ...], key: str) -> int | None:
    """The entry's key line, or its own header's (`[dependencies.foo]`)."""
    found = lines.find(table, (key,))
    if found is not None:
        return found
    return next((t.start + 1 for t in lines.tables if t.key == (*table, key) and not t.array), None)


def _source(spec: dict[str, Any]) -> str | None:
    """A git or path origin, as Cargo builds it (a registry other than crates.io is named too)."""
    if isinstance(spec.get("git"), str):
        ref = next((f"#{spec[k]}" for k in ("rev", "tag", "branch") if isinstance(spec.get(k), str)), "")
        return f"git+{spec['git']}{ref}"
    if isinstance(spec.get("path"), str):
        return f"path:{spec['path']}"
    if isinstance(spec.get("registry"), str):
        return f"registry:{spec['registry']}"
    return None
