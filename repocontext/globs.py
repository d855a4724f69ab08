"""Repo-relative glob patterns: validation and fast matching.

Patterns use POSIX separators. `*` and `?` never cross a `/`; `**` as a whole
segment matches zero or more directories; `[...]` is a character class.
A pattern without a `/` matches at any depth (like .gitignore), so
`Dockerfile` finds `svc/Dockerfile` too; a pattern that starts with `/` is
anchored at the repository root (as in .gitignore), so `/Dockerfile` finds
only the root one. Any other pattern with a `/` is relative to the root.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache


class GlobError(ValueError):
    """A glob that is malformed or could escape the repository."""


def check_glob(pattern: str) -> None:
    """Raise GlobError when `pattern` is empty, absolute or climbs out of the repo."""
    if not pattern or not pattern.strip():
        raise GlobError("glob is empty")
    if "\\" in pattern:
        raise GlobError(f"glob {pattern!r} uses a backslash; use '/' separators")
    if pattern.startswith("//") or re.match(r"^[A-Za-z]:", pattern) or pattern.startswith("~"):
        raise GlobError(f"glob {pattern!r} is absolute; globs are relative to the repository root "
                        "(a leading '/' anchors a pattern at the root: /README.md)")
    if pattern.strip().startswith("/") and not pattern.strip().strip("/."):
        raise GlobError(f"glob {pattern!r} names no file (a leading '/' anchors a pattern at the root: /README.md)")
    if any(part == ".." for part in pattern.split("/")):
        raise GlobError(f"glob {pattern!r} escapes the repository ('..')")
    if "\0" in pattern:
        raise GlobError("glob contains a NUL byte")
    _compile(pattern)


def check_globs(patterns: Iterable[str] | None) -> None:
    """check_glob for each pattern (a GlobError is a ValueError: model validators raise it as it is)."""
    for pattern in patterns or ():
        check_glob(pattern)


def _segment_regex(segment: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(segment):
        c = segment[i]
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "{":  # {a,b}: one of the alternatives (each may hold * ? [..]), as in shells and .gitignore tools
            end = segment.find("}", i)
            if end == -1 or "{" in segment[i + 1 : end]:
                raise GlobError(f"unclosed or nested '{{' in glob segment {segment!r} (braces cannot hold '/')")
            out.append("(?:" + "|".join(_segment_regex(alt) for alt in segment[i + 1 : end].split(",")) + ")")
            i = end
        elif c == "}":
            raise GlobError(f"'}}' without '{{' in glob segment {segment!r}")
        elif c == "[":
            regex, i = _class_regex(segment, i)
            out.append(regex)
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def _class_regex(segment: str, start: int) -> tuple[str, int]:
    """The regex for the `[...]` class opening at `segment[start]`, and the index of its `]`.

    `!` or `^` first negates; a `]` first (after any negation) is literal; `a-c` is a range. Every
    member is escaped (no regex syntax leaks in), and the class is guarded by `(?!/)`: a negated
    class or a range such as `[.-0]` would otherwise match `/`, and a policy's `config[!_]*.yaml`
    would then allow `config/secret.yaml`.
    """
    i = start + 1
    negate = segment[i : i + 1] in ("!", "^")
    i += negate
    members: list[str] = []
    first = True
    while i < len(segment) and (first or segment[i] != "]"):
        first = False
        low = segment[i]
        if segment[i + 1 : i + 2] == "-" and i + 2 < len(segment) and segment[i + 2] != "]":
            high = segment[i + 2]
            if high < low:
                raise GlobError(f"reversed range '{low}-{high}' in glob segment {segment!r}")
            members.append(_class_char(low) + "-" + _class_char(high))
            i += 3
        else:
            members.append(_class_char(low))
            i += 1
    if i >= len(segment):
        raise GlobError(f"unclosed '[' in glob segment {segment!r}")
    return "(?!/)[" + ("^" if negate else "") + "".join(members) + "]", i


def _class_char(char: str) -> str:
    return "\\" + char if char in "\\]^-[&~|" else char


@lru_cache(maxsize=1024)
def _compile(pattern: str) -> re.Pattern[str]:
    pattern = pattern.strip()
    anchored = pattern.startswith("/")  # `/README.md`: at the root only, as in .gitignore
    if pattern.startswith("./"):
        pattern = pattern[2:]
    parts = [p for p in pattern.split("/") if p not in ("", ".")]
    if len(parts) == 1 and parts[0] != "**" and not anchored:
        parts = ["**", parts[0]]  # bare name: any depth
    regex = ""
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part == "**":
            regex += ".*" if last else "(?:.*/)?"
        else:
            regex += _segment_regex(part) + ("" if last else "/")
    return re.compile(regex + r"\Z", re.DOTALL)


def matcher(pattern: str) -> re.Pattern[str]:
    """The compiled matcher for a checked pattern (cached)."""
    return _compile(pattern)


def match(pattern: str, path: str) -> bool:
    return _compile(pattern).match(path) is not None


_MAGIC = re.compile(r"[*?\[{]")
_SPECIAL = re.compile(r"[*?\[{}]|^\*\*$")  # what makes a name segment more than a literal ("}" alone is an error)
_NOT_STAR = re.compile(r"[?\[{}]")  # magic other than `*`


class PathIndex:
    """Sorted repo paths grouped by base name, so a glob such as `**/package.json`
    or `**/test_*.py` tests each distinct base name once instead of every path.
    Real repositories repeat base names a lot (`__init__.py`, `package.json`),
    which is what makes this fast; other globs fall back to a full scan.
    """

    def __init__(self, paths: Sequence[str]) -> None:
        self.paths = list(paths)
        self.by_name: dict[str, list[str]] = {}
        for path in self.paths:
            name = path.rpartition("/")[2]
            bucket = self.by_name.get(name)
            if bucket is None:
                self.by_name[name] = [path]
            else:
                bucket.append(path)

    def match(self, pattern: str) -> list[str]:
        # Each regex is compiled only when needed (compiling is most of a small gather's matching).
        anchored = pattern.strip().startswith("/")  # `/README.md`: the root's only
        parts = [p for p in pattern.strip().removeprefix("./").split("/") if p not in ("", ".")]
        last = parts[-1] if parts else "**"
        anywhere = all(p == "**" for p in parts[:-1]) and not (anchored and len(parts) == 1)
        if anywhere and not _SPECIAL.search(last):
            return list(self.by_name.get(last, ()))  # a plain name at any depth: no regex (half a gather's globs)
        if parts == ["**"]:
            return list(self.paths)
        if last == "**":
            compiled = _compile(pattern)
            return [p for p in self.paths if compiled.match(p)]  # any name: scan everything
        if not _MAGIC.search(last):
            if "}" in last:
                _compile(last)  # a "}" without "{": refused as _compile refuses it
            candidates = list(self.by_name.get(last, ()))
        elif not _NOT_STAR.search(last):  # `*.py`, `environment*.yml`: string tests, no regex to compile
            pieces = last.split("*")
            candidates = sorted(path for name, bucket in self.by_name.items() if _star_match(pieces, name)
                                for path in bucket)
        else:
            name_rx = _compile("**/" + last)  # not `last` alone: _compile would strip a name's leading blank
            candidates = sorted(path for name, bucket in self.by_name.items() if name_rx.match(name)
                                for path in bucket)
        if anywhere:
            return candidates
        directory = "/".join(parts[:-1])
        if not _SPECIAL.search(directory):  # `.github/workflows/*.yml`: the folder is a literal
            return sorted(p for p in candidates if p.rpartition("/")[0] == directory)
        compiled = _compile(pattern)  # directory parts with magic: checked on the few paths with that name
        return sorted(p for p in candidates if compiled.match(p))


def _star_match(pieces: list[str], name: str) -> bool:
    """Whether `name` matches the name pattern whose literal pieces between `*`s are `pieces`."""
    head, tail = pieces[0], pieces[-1]
    end = len(name) - len(tail)
    if end < len(head) or not name.startswith(head) or not name.endswith(tail):
        return False
    at = len(head)
    for piece in pieces[1:-1]:  # leftmost first: a `*` before each piece takes as little as it can
        found = name.find(piece, at, end)
        if found < 0:
            return False
        at = found + len(piece)
    return True
