"""pyproject.toml: PEP 621 dependencies and extras, PEP 735 dependency groups, Poetry and uv tables.

dev is True for: PEP 735 groups, Poetry groups other than "main", Poetry
dev-dependencies and uv dev-dependencies (none of them ship with the package);
and for PEP 621 extras only when named like dev tooling ("dev", "test",
"lint", "docs", …): other extras are real runtime features of the package.
"""

from __future__ import annotations

import re
from typing import Any

from packaging.version import InvalidVersion, Version

from repocontext.deps.common import Issue, Parsed, is_dev_name, pep508, pypi_name, read_toml
from repocontext.deps.toml_lines import TomlLines
from repocontext.model import Dependency

_POETRY_SOURCES = ("git", "path", "url", "file")


def parse_pyproject(path: str, text: str) -> Parsed:
    data = read_toml(path, text)
    if isinstance(data, Parsed):
        return data
    lines = TomlLines(text)
    result = Parsed()
    project = _table(data.get("project"))
    _pep508_list(result, lines, path, ("project",), "dependencies", project.get("dependencies"), False)
    for extra, items in sorted(_table(project.get("optional-dependencies")).items()):
        _pep508_list(result, lines, path, ("project", "optional-dependencies"), extra, items, is_dev_name(extra))
    for group, items in sorted(_table(data.get("dependency-groups")).items()):
        _pep508_list(result, lines, path, ("dependency-groups",), group, items, True)
    tool = _table(data.get("tool"))
    uv = _table(tool.get("uv"))
    _pep508_list(result, lines, path, ("tool", "uv"), "dev-dependencies", uv.get("dev-dependencies"), True)
    poetry = _table(tool.get("poetry"))
    _poetry_table(result, lines, path, ("tool", "poetry", "dependencies"), poetry.get("dependencies"), False)
    _poetry_table(result, lines, path, ("tool", "poetry", "dev-dependencies"), poetry.get("dev-dependencies"), True)
    for group, body in sorted(_table(poetry.get("group")).items()):
        table = ("tool", "poetry", "group", group, "dependencies")
        _poetry_table(result, lines, path, table, _table(body).get("dependencies"), group != "main")
    return result


def _table(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _pep508_list(result: Parsed, lines: TomlLines, path: str, table: tuple[str, ...], key: str,
                 items: Any, dev: bool) -> None:
    if items is None:
        return
    section = ".".join((*table, key))
    if not isinstance(items, list):
        result.issues.append(Issue(f"{section} is not an array", path, lines.find(table, (key,))))
        return
    for item in items:
        if isinstance(item, dict) and "include-group" in item:
            continue  # PEP 735 group include: its members are recorded under their own group
        if not isinstance(item, str):
            result.issues.append(Issue(f"{section}: not a requirement string: {item!r}", path,
                                       lines.find(table, (key,))))
            continue
        found = pep508(path, lines.find(table, (key,), item), item, dev, section)
        if isinstance(found, Dependency):
            result.deps.append(found)
        else:
            result.issues.append(found)


def poetry_exact(constraint: str) -> str | None:
    """The pinned version of a Poetry constraint: a bare version ("1.2.3") or "==1.2.3"."""
    bare = re.sub(r"^==?\s*", "", constraint.strip())
    if not bare or re.search(r"[\s,<>!~^*|]", bare):
        return None
    try:
        return str(Version(bare))
    except InvalidVersion:
        return None


def _poetry_table(result: Parsed, lines: TomlLines, path: str, table: tuple[str, ...], deps: Any, dev: bool) -> None:
    section = ".".join(table)
    for name, spec in sorted(_table(deps).items()):
        if name.lower() == "python":
            continue  # the interpreter constraint, not a package
        line = lines.find(table, (name,))
        for item in spec if isinstance(spec, list) else [spec]:
            dep = _poetry_dep(path, line, name, item, dev, section)
            if isinstance(dep, Dependency):
                result.deps.append(dep)
            else:
                result.issues.append(dep)


def _poetry_dep(path: str, line: int | None, name: str, spec: Any, dev: bool, section: str) -> Dependency | Issue:
    if isinstance(spec, str):
        return Dependency(ecosystem="PyPI", name=pypi_name(name), version=poetry_exact(spec), constraint=spec,
                          file=path, line=line, dev=dev, section=section)
    if not isinstance(spec, dict):
        return Issue(f"{section}.{name}: unsupported Poetry dependency value {spec!r}", path, line)
    version = spec.get("version")
    constraint = version if isinstance(version, str) else None
    source = next((str(spec[k]) for k in _POETRY_SOURCES if k in spec), None)
    markers = spec.get("markers")
    extras = spec.get("extras")
    return Dependency(
        ecosystem="PyPI", name=pypi_name(name), version=poetry_exact(constraint) if constraint else None,
        constraint=constraint, file=path, line=line, dev=dev, section=section, source=source,
        markers=markers if isinstance(markers, str) else None,
        extras=sorted(str(e) for e in extras) if isinstance(extras, list) else [],
    )
