"""Gem::Requirement: does a gem requirement (`~> 5.2.0`, `>= 1.0, < 2`, `!= 1.3.0`) admit a version?

RubyGems' rules, read from its documentation and held to `ruby` by tests/test_gem_requirements_oracle.py:
- a requirement is one or more clauses, all of which must hold; a clause is `OP VERSION` with OP one of
  `=`, `!=`, `>`, `<`, `>=`, `<=`, `~>`, and a bare version means `=`;
- versions compare as Gem::Version does (repocontext.osv.versions' "gem" scheme), so `1.0 == 1.0.0`;
- `~> V` admits versions `>= V` whose release (the version without its pre-release part) is below
  `bump(V)`: V's release segments, the last dropped (when there are two or more), the new last one
  incremented (`~> 5.2.0` → `< 5.3`, `~> 5.2` → `< 6`, `~> 5` → `< 6`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from repocontext.osv.versions import InvalidVersion, sort_key

OPERATORS = ("=", "!=", ">", "<", ">=", "<=", "~>")
VERSION = r"[0-9]+(?:\.[0-9a-zA-Z]+)*(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?"
_CLAUSE = re.compile(rf"\s*(=|!=|>=|<=|>|<|~>)?\s*({VERSION})\s*")
_SEGMENT = re.compile(r"[0-9]+|[a-zA-Z]+")


class RequirementError(ValueError):
    """Text that Gem::Requirement would reject ("Illformed requirement")."""


@dataclass(frozen=True)
class Clause:
    op: str  # one of OPERATORS; "=" for a bare version
    version: str
    written_op: bool  # the operator was written (a bare version was not)


def parse(requirements: list[str]) -> list[Clause]:
    """Each string is one clause (as Gem::Requirement.new takes them); raises RequirementError."""
    clauses = []
    for text in requirements:
        found = _CLAUSE.fullmatch(text)
        if found is None:
            raise RequirementError(f"illformed gem requirement {text!r}")
        clauses.append(Clause(found.group(1) or "=", found.group(2), found.group(1) is not None))
    return clauses


def split(constraint: str | None) -> list[str]:
    """A constraint as this project stores it (clauses joined by ", ", as Gemfile.lock writes them)."""
    return [part.strip() for part in (constraint or "").split(",") if part.strip()]


def segments(version: str) -> list[int | str]:
    """Gem::Version#segments: numbers and letter runs, `-` read as `.pre.`."""
    text = version.strip().replace("-", ".pre.")
    return [int(s) if s.isdigit() else s for s in _SEGMENT.findall(text)]


def release_segments(version: str) -> list[int]:
    """The segments before the first letter run (Gem::Version#release for a pre-release)."""
    found: list[int] = []
    for segment in segments(version):
        if isinstance(segment, str):
            break
        found.append(segment)
    return found


def bump(version: str) -> str:
    """Gem::Version#bump: the exclusive upper bound of `~> version`."""
    parts = release_segments(version)
    if len(parts) > 1:
        parts.pop()
    parts[-1] += 1
    return ".".join(str(p) for p in parts)


def release(version: str) -> str:
    """Gem::Version#release: the version without its pre-release part (itself when it has none)."""
    if not re.search(r"[a-zA-Z]", version):
        return version
    return ".".join(str(p) for p in release_segments(version)) or "0"


def _key(version: str) -> Any:
    return sort_key("gem", version)


def holds(clause: Clause, version: str) -> bool:
    """Whether one clause admits `version`; raises InvalidVersion for a version Gem::Version rejects."""
    have, bound = _key(version), _key(clause.version)
    if clause.op == "~>":
        return bool(have >= bound and _key(release(version)) < _key(bump(clause.version)))
    results = {"=": have == bound, "!=": have != bound, ">": have > bound, "<": have < bound,
               ">=": have >= bound, "<=": have <= bound}
    return bool(results[clause.op])


def satisfied_by(requirements: list[str], version: str) -> bool:
    """Gem::Requirement.new(*requirements).satisfied_by?(Gem::Version.new(version)); no clause admits all."""
    return all(holds(clause, version) for clause in parse(requirements))


def admits(requirements: list[str], version: str) -> bool | None:
    """satisfied_by, or None when the requirement or the version cannot be read."""
    try:
        return satisfied_by(requirements, version)
    except (RequirementError, InvalidVersion):
        return None
