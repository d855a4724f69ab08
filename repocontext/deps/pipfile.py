"""Pipenv: Pipfile (TOML, declared ranges) and Pipfile.lock (JSON, exact versions with hashes).

Pipfile sections: [packages] ships, [dev-packages] is dev, any other package
category (Pipenv ≥ 2022.10) is dev when named like dev tooling. A value is a
spec string ("*", "==2.31.0", ">=2.25") or a table with `version`, `extras`,
`markers` (or PEP 508 marker keys such as `sys_platform = "== 'win32'"`) and
non-registry sources (`git`, `path`, `file`).

Pipfile.lock records no dependency graph, so its direct set is the names the
Pipfile beside it declares and transitive chains are unknown (path stays empty).
"""

from __future__ import annotations

from typing import Any

from repocontext.deps.common import Issue, Parsed, exact_pep440, is_dev_name, pypi_name, read_toml
from repocontext.deps.json_lines import key_lines
from repocontext.deps.npm import load_json
from repocontext.deps.toml_lines import TomlLines
from repocontext.model import Dependency

_NOT_PACKAGES = frozenset({"source", "requires", "pipenv", "scripts"})
_SOURCES = ("git", "path", "file")
_MARKER_KEYS = ("os_name", "sys_platform", "platform_machine", "platform_python_implementation",
                "platform_release", "platform_system", "platform_version", "python_version", "python_full_version",
                "implementation_name", "implementation_version")


def _is_dev(category: str) -> bool:
    """[dev-packages] / "develop" and categories named like dev tooling; never [packages] / "default"."""
    return category not in ("packages", "default") and is_dev_name(category)


def parse_pipfile(path: str, text: str) -> Parsed:
    data = read_toml(path, text)
    if isinstance(data, Parsed):
        return data
    lines = TomlLines(text)
    result = Parsed()
    for category, packages in sorted(data.items()):
        if category in _NOT_PACKAGES or not isinstance(packages, dict):
            continue
        for name, spec in sorted(packages.items()):
            line = lines.find((category,), (name,)) or _table_line(lines, (category, name))
            result.add(_pipfile_dep(path, line, category, name, spec))
    return result


def _table_line(lines: TomlLines, key: tuple[str, ...]) -> int | None:
    """The header line of a `[packages.requests]` table."""
    return next((t.start + 1 for t in lines.tables if t.key == key and not t.array), None)


def _pipfile_dep(path: str, line: int | None, category: str, name: str, spec: Any) -> Dependency | Issue:
    if isinstance(spec, str):
        spec = {"version": spec}
    if not isinstance(spec, dict):
        return Issue(f"{category}.{name}: unsupported Pipfile value {spec!r}", path, line)
    version = spec.get("version")
    constraint = version.strip() if isinstance(version, str) else None
    extras = spec.get("extras")
    source = next((str(spec[k]) for k in _SOURCES if k in spec), None)
    if source is not None and "git" in spec:
        source = f"git+{source}" if not source.startswith("git+") else source
    return Dependency(
        ecosystem="PyPI", name=pypi_name(name), version=exact_pep440(constraint) if constraint else None,
        constraint=constraint, dev=_is_dev(category), file=path, line=line, section=category,
        extras=sorted(str(e) for e in extras) if isinstance(extras, list) else [], markers=_markers(spec),
        source=source,
    )


def _markers(spec: dict[str, Any]) -> str | None:
    """`markers` and the PEP 508 marker keys Pipenv also accepts, joined as Pipenv joins them."""
    parts = [str(spec["markers"])] if isinstance(spec.get("markers"), str) else []
    parts += [f"{key} {spec[key]}" for key in _MARKER_KEYS if isinstance(spec.get(key), str)]
    return " and ".join(parts) or None


def parse_pipfile_lock(path: str, text: str, declared: dict[str, bool] | None) -> Parsed:
    data, issue = load_json(path, text)
    if data is None:
        return Parsed(issues=[issue] if issue else [])
    result = Parsed()
    if declared is None:
        result.issues.append(Issue("no Pipfile beside this Pipfile.lock; every locked package is taken as direct",
                                   path, None, "info"))
    lines = key_lines(text, max_depth=2)
    for category, packages in sorted(data.items()):
        if category.startswith("_") or not isinstance(packages, dict):
            continue
        for name, entry in sorted(packages.items()):
            line = lines.get((category, name))
            if not isinstance(entry, dict):
                result.issues.append(Issue(f"{category}.{name}: not a locked package entry", path, line))
                continue
            result.deps.append(_locked(path, line, category, name, entry, declared))
    return result


def _locked(path: str, line: int | None, category: str, name: str, entry: dict[str, Any],
            declared: dict[str, bool] | None) -> Dependency:
    normalised = pypi_name(name)
    version = entry.get("version")
    source = next((str(entry[k]) for k in _SOURCES if k in entry), None)
    markers = entry.get("markers")
    return Dependency(
        ecosystem="PyPI", name=normalised,
        version=version.strip().removeprefix("==") if isinstance(version, str) else None,
        direct=declared is None or normalised in declared, dev=_is_dev(category), file=path, line=line,
        kind="lockfile", section=category, markers=markers if isinstance(markers, str) else None,
        source=f"git+{source}" if source and "git" in entry and not source.startswith("git+") else source,
    )
