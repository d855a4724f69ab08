"""Gemfile (and gems.rb) and *.gemspec: the gems a Ruby project declares, read as text, never evaluated.

Gemfile: `gem "name", "req", ..., key: value` calls; requirements are the string arguments (an array of them
too) and the constraint keeps them as written, joined by ", " (how Gemfile.lock writes them). A gem is dev
when every group it is in (`group :development, :test do` blocks, nested ones adding up, and `group:` /
`groups:` options) is named like dev tooling; the default group ships. `git:`, `github:`, `path:`,
`source:` options and `git "…" do` / `path "…" do` blocks are the source. `version` is set for an exact
requirement (`"1.2.3"`, `"= 1.2.3"`).

*.gemspec: `add_dependency` / `add_runtime_dependency` (ship) and `add_development_dependency` (dev) calls
of any receiver (`spec.`, `s.`), with `%q<…>` literals and `.freeze` as generated gemspecs write them.

A call whose name or requirement is not a literal (a variable, `ENV[...]`) gives an issue, not a record.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from repocontext.deps.common import Issue, Parsed, is_dev_name
from repocontext.deps.ruby_literals import (
    continues,
    option,
    split_args,
    string_value,
    strings_of,
    strip_comment,
    symbols,
    without_modifier,
)
from repocontext.model import Dependency

ECOSYSTEM = "RubyGems"
_GEM = re.compile(r"gem\b\s*(.*)", re.DOTALL)
_GROUP = re.compile(r"group\b\s*\(?(.*?)\)?\s*do\s*(?:\|[^|]*\|)?", re.DOTALL)
_SOURCE_BLOCK = re.compile(r"(git|github|gitlab|bitbucket|path|source)\b\s*\(?(.*?)\)?\s*do\s*(?:\|[^|]*\|)?",
                           re.DOTALL)
_OTHER_BLOCK = re.compile(r".*\bdo\s*(?:\|[^|]*\|)?")
_OPENER = re.compile(r"(?:if|unless|case|begin|while|until|def|class|module)\b")
_END = re.compile(r"end\b")
_SOURCE_KEYS = ("git", "github", "gitlab", "bitbucket", "path", "source")
_EXACT = re.compile(r"^\s*=?\s*(\d[0-9A-Za-z.]*(?:-[0-9A-Za-z.-]+)?)\s*$")
_DEPENDENCY_CALL = re.compile(r"(?:\b\w+\.)?(add_(?:runtime_|development_)?dependency)\b\s*(.*)", re.DOTALL)


def statements(text: str) -> Iterator[tuple[int, str]]:
    """(first line, statement) for each logical line: comments stripped, continued calls joined."""
    lines = text.splitlines()
    at = 0
    while at < len(lines):
        start = at
        body = strip_comment(lines[at]).strip()
        while continues(body) and at + 1 < len(lines):
            at += 1
            body = body.rstrip("\\").rstrip() + " " + strip_comment(lines[at]).strip()
        at += 1
        if body:
            yield start + 1, body


def call_args(rest: str) -> list[str]:
    """The arguments of a call written `name(args)` or `name args` (a trailing `if`/`unless` left out)."""
    body = without_modifier(rest.strip())
    if body.startswith("("):
        depth = 0
        for at, char in enumerate(body):
            depth += char == "("
            depth -= char == ")"
            if depth == 0:
                body = body[1:at]
                break
    return split_args(body)


def exact(requirements: list[str]) -> str | None:
    found = _EXACT.match(requirements[0]) if len(requirements) == 1 else None
    return found.group(1) if found else None


@dataclass
class _Frame:
    groups: list[str] = field(default_factory=list)
    source: str | None = None


@dataclass
class _Call:
    """A `gem` / `add_dependency` call's literal arguments."""

    name: str
    requirements: list[str]
    options: dict[str, str]


def _read_call(args: list[str], path: str, line: int, result: Parsed) -> _Call | None:
    name = string_value(args[0]) if args else None
    if name is None:
        result.issues.append(Issue(f"gem name is not a string literal: {(args or [''])[0][:80]}", path, line, "info"))
        return None
    requirements: list[str] = []
    options: dict[str, str] = {}
    for arg in args[1:]:
        found = option(arg)
        values = strings_of(arg) if found is None else None
        if found is not None:
            options[found.key] = found.value
        elif values is not None:
            requirements.extend(values)
        else:  # kept as written: an editor reads it as a requirement it cannot rewrite, and says so
            requirements.append(arg)
            result.issues.append(Issue(f"{name}: requirement is not a string literal ({arg[:80]}); its version "
                                       "cannot be read", path, line, "info"))
    return _Call(name, requirements, options)


def _source(options: dict[str, str]) -> str | None:
    for key in _SOURCE_KEYS:
        if key in options:
            value = string_value(options[key])
            return f"{key}: {value if value is not None else options[key]}"
    return None


def _gem(path: str, line: int, rest: str, frames: list[_Frame], result: Parsed) -> None:
    call = _read_call(call_args(rest), path, line, result)
    if call is None:
        return
    groups = [g for f in frames for g in f.groups]
    for key in ("group", "groups"):
        if key in call.options:
            groups.extend(symbols(call.options[key]))
    source = _source(call.options) or next((f.source for f in reversed(frames) if f.source), None)
    result.deps.append(Dependency(
        ecosystem=ECOSYSTEM, name=call.name, version=exact(call.requirements),
        constraint=", ".join(call.requirements) or None, dev=bool(groups) and all(is_dev_name(g) for g in groups),
        file=path, line=line, section=f"group {', '.join(groups)}" if groups else None, source=source,
    ))


def _block(body: str) -> _Frame | None:
    """The frame a statement opens (a group, a source block, any other `do` or `if`…), else None."""
    group = _GROUP.fullmatch(body)
    if group:
        return _Frame(groups=symbols(group.group(1)))
    source = _SOURCE_BLOCK.fullmatch(body)
    if source:
        args = split_args(source.group(2))
        value = string_value(args[0]) if args else None
        public = source.group(1) == "source" and value is not None and "rubygems.org" in value
        return _Frame(source=None if value is None or public else f"{source.group(1)}: {value}")
    if _OTHER_BLOCK.fullmatch(body) or _OPENER.match(body):
        return _Frame()
    return None


def parse_gemfile(path: str, text: str) -> Parsed:
    result = Parsed()
    frames: list[_Frame] = []
    for line, body in statements(text):
        gem = _GEM.fullmatch(body)
        if gem:
            _gem(path, line, gem.group(1), frames, result)
            continue
        if _END.match(body):
            if frames:
                frames.pop()
            continue
        frame = _block(body)
        if frame is not None:
            frames.append(frame)
    return result


def parse_gemspec(path: str, text: str) -> Parsed:
    result = Parsed()
    for line, body in statements(text):
        found = _DEPENDENCY_CALL.search(body)
        if found is None:
            continue
        call = _read_call(call_args(found.group(2)), path, line, result)
        if call is None:
            continue
        dev = found.group(1) == "add_development_dependency"
        result.deps.append(Dependency(
            ecosystem=ECOSYSTEM, name=call.name, version=exact(call.requirements),
            constraint=", ".join(call.requirements) or None, dev=dev, file=path, line=line, section=found.group(1),
        ))
    return result
