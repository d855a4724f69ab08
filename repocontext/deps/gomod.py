"""go.mod `require` directives, with `replace` applied, checked against go.sum.

Since Go 1.17 go.mod lists every module the build needs, so go.mod alone
gives the records: `// indirect` ones are direct=False (Go keeps no graph
for a chain, so path stays empty). A matching `replace` sets version (and
source) to the replacement; constraint keeps the required version. An
`exclude` that hits a required version is reported. go.sum never adds
records (it also lists versions merely considered by MVS); it only sets
`checksummed`: True when it has an h1 line (zip or /go.mod) for the
module@version actually used.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from repocontext.deps.common import Issue, Parsed
from repocontext.model import Dependency

_BLOCK_START = re.compile(r"^(\w+)\s*\(\s*$")
_KNOWN = frozenset({"module", "go", "toolchain", "require", "replace", "exclude", "retract", "godebug", "tool",
                    "ignore"})


@dataclass
class _Directive:
    verb: str
    args: list[str]
    comment: str
    line: int


def _unquote(token: str) -> str:
    return token[1:-1] if len(token) >= 2 and token[0] == token[-1] and token[0] in "\"`" else token


def directives(text: str) -> list[_Directive]:
    """Every directive, block entries flattened to one directive each."""
    out: list[_Directive] = []
    block: str | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        code, _, comment = raw.partition("//")
        code = code.strip()
        if not code:
            continue
        if block is not None:
            if code == ")":
                block = None
            else:
                out.append(_Directive(block, [_unquote(t) for t in code.split()], comment.strip(), number))
            continue
        opening = _BLOCK_START.match(code)
        if opening:
            block = opening.group(1)
            continue
        verb, *args = code.split()
        out.append(_Directive(verb, [_unquote(t) for t in args], comment.strip(), number))
    return out


def gosum_versions(text: str, path: str) -> tuple[set[tuple[str, str]], list[Issue]]:
    """(module, version) pairs with an h1 line, zip or /go.mod alike."""
    seen: set[tuple[str, str]] = set()
    issues: list[Issue] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        parts = raw.split()
        if not parts:
            continue
        if len(parts) != 3 or not parts[2].startswith("h1:"):
            issues.append(Issue(f"malformed go.sum line: {raw.strip()[:80]}", path, number))
            continue
        seen.add((parts[0], parts[1].removesuffix("/go.mod")))
    return seen, issues


def _replacements(items: list[_Directive], path: str, issues: list[Issue]) -> dict[tuple[str, str | None], list[str]]:
    """(old module, old version or None) → [new module or path, new version?]."""
    found: dict[tuple[str, str | None], list[str]] = {}
    for d in items:
        if "=>" not in d.args:
            issues.append(Issue(f"malformed replace: {' '.join(d.args)}", path, d.line))
            continue
        arrow = d.args.index("=>")
        old, new = d.args[:arrow], d.args[arrow + 1:]
        if len(old) not in (1, 2) or len(new) not in (1, 2):
            issues.append(Issue(f"malformed replace: {' '.join(d.args)}", path, d.line))
            continue
        found[(old[0], old[1] if len(old) == 2 else None)] = new
    return found


def parse_gomod(path: str, text: str, gosum: set[tuple[str, str]] | None) -> Parsed:
    result = Parsed()
    items = directives(text)
    for d in items:
        if d.verb not in _KNOWN:
            result.issues.append(Issue(f"unknown go.mod directive {d.verb!r}", path, d.line, "info"))
    replace = _replacements([d for d in items if d.verb == "replace"], path, result.issues)
    excluded = {(d.args[0], d.args[1]) for d in items if d.verb == "exclude" and len(d.args) == 2}
    for d in (d for d in items if d.verb == "require"):
        if len(d.args) != 2:
            result.issues.append(Issue(f"malformed require: {' '.join(d.args)}", path, d.line))
            continue
        module, required = d.args
        if (module, required) in excluded:
            result.issues.append(Issue(f"required {module} {required} is excluded by an exclude directive",
                                       path, d.line, "info"))
        new = replace.get((module, required)) or replace.get((module, None))
        version: str | None = required
        source: str | None = None
        used: tuple[str, str] | None = (module, required)
        if new is not None:
            version = new[1] if len(new) == 2 else None  # a local directory has no version
            source = f"{new[0]}@{new[1]}" if len(new) == 2 else new[0]
            used = (new[0], new[1]) if len(new) == 2 else None
        result.deps.append(Dependency(
            ecosystem="Go", name=module, version=version, constraint=required,
            direct=not re.match(r"^indirect\b", d.comment), file=path, line=d.line, section="require",
            source=source, checksummed=None if gosum is None or used is None else used in gosum,
        ))
    return result
