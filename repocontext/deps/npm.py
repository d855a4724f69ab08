"""package.json: dependencies, devDependencies, optionalDependencies and peerDependencies.

The constraint is kept as written. version is set only for an exact pin
("1.2.3", "=1.2.3", "v1.2.3"); git, URL, file and GitHub-shorthand specs are
noted as the source. Only devDependencies are dev; peer and optional
dependencies are installed in production by npm ≥ 7.
"""

from __future__ import annotations

import json
import re
from typing import Any

from repocontext import bounded
from repocontext.deps.common import Issue, Parsed
from repocontext.deps.json_lines import key_lines
from repocontext.model import Dependency

SECTIONS = ("dependencies", "devDependencies", "optionalDependencies", "peerDependencies")
_EXACT = re.compile(r"^\s*=?\s*v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?)\s*$")
_SOURCE_PREFIXES = ("git+", "git:", "github:", "gitlab:", "bitbucket:", "gist:", "http://", "https://",
                    "file:", "link:", "workspace:", "portal:")
_GITHUB_SHORTHAND = re.compile(r"^[\w.-]+/[\w.-]+(?:#\S*)?$")


def npm_exact(spec: str) -> str | None:
    found = _EXACT.match(spec)
    return found.group(1) if found else None


def npm_source(spec: str) -> str | None:
    spec = spec.strip()
    return spec if spec.startswith(_SOURCE_PREFIXES) or _GITHUB_SHORTHAND.match(spec) else None


def load_json(path: str, text: str) -> tuple[dict[str, Any] | None, Issue | None]:
    """The top-level object, or an issue with the line of the syntax error."""
    try:
        data = bounded.json_loads(text)
    except bounded.LimitExceeded as exc:
        return None, Issue(bounded.describe(exc), path, exc.line, "error")
    except json.JSONDecodeError as exc:
        return None, Issue(f"invalid JSON: {exc.msg}", path, exc.lineno, "error")
    if not isinstance(data, dict):
        return None, Issue("top level is not a JSON object", path, 1, "error")
    return data, None


def parse_package_json(path: str, text: str) -> Parsed:
    data, issue = load_json(path, text)
    if data is None:
        return Parsed(issues=[issue] if issue else [])
    lines = key_lines(text, max_depth=2)
    result = Parsed()
    for section in SECTIONS:
        deps = data.get(section)
        if deps is None:
            continue
        if not isinstance(deps, dict):
            result.issues.append(Issue(f"{section} is not an object", path, lines.get((section,))))
            continue
        for name, spec in deps.items():
            line = lines.get((section, name))
            if not isinstance(spec, str):
                result.issues.append(Issue(f"{section}.{name}: version spec is not a string", path, line))
                continue
            result.deps.append(Dependency(
                ecosystem="npm", name=name, version=npm_exact(spec), constraint=spec,
                dev=section == "devDependencies", file=path, line=line, section=section, source=npm_source(spec),
            ))
    return result
