"""Unified diffs that `git apply` takes as they are, for any text a repo file can hold.

File text comes from `read_repo_file(..., exact=True)`: UTF-8 decoded with
surrogateescape, so `text.encode("utf-8", "surrogateescape")` gives back the
file's bytes. The diff keeps every byte of a line (CR, BOM, tabs, trailing
blanks), follows git's conventions (`\\ No newline at end of file` right after
the line that lacks it, on each side of a hunk) and splits lines on LF only,
as git does. A file whose hunks would carry bytes that are not UTF-8 (a
Latin-1 comment next to the change) gets a git binary patch instead: a patch
is a `str` that is stored, printed and sent as JSON, and only valid Unicode
survives that.
"""

from __future__ import annotations

import base64
import difflib
import hashlib
import zlib
from collections.abc import Mapping

from repocontext.lines import split_lines

CONTEXT = 3
NO_NEWLINE = "\\ No newline at end of file\n"
_BINARY_LINE = 52  # bytes per base85 line, as git writes them


def to_bytes(text: str) -> bytes:
    """The file bytes an exact read decoded into `text`."""
    return text.encode("utf-8", "surrogateescape")


def _quoted(name: str) -> str:
    """A path as git writes it in a header: C-quoted when it holds a quote, backslash or control character."""
    if not any(c in '"\\' or ord(c) < 0x20 or ord(c) == 0x7F for c in name):
        return name
    escapes = {'"': '\\"', "\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}
    body = "".join(escapes.get(c, f"\\{ord(c):03o}" if ord(c) < 0x20 or ord(c) == 0x7F else c) for c in name)
    return f'"{body}"'


def _header(path: str) -> list[str]:
    old, new = _quoted(f"a/{path}"), _quoted(f"b/{path}")
    tab = "\t" if " " in path and not old.startswith('"') else ""  # git ends a name holding a space with a tab
    return [f"diff --git {old} {new}\n", f"--- {old}{tab}\n", f"+++ {new}{tab}\n"]


def _span(start: int, length: int) -> str:
    """A hunk range: 1-based start; an empty range names the line before it (0 at the top of the file)."""
    if length == 1:
        return str(start + 1)
    return f"{start if length == 0 else start + 1},{length}"


def _line(sign: str, line: str) -> str:
    return sign + line if line.endswith("\n") else f"{sign}{line}\n{NO_NEWLINE}"


def _hunks(before: list[str], after: list[str]) -> list[str]:
    out: list[str] = []
    matcher = difflib.SequenceMatcher(None, before, after)
    for group in matcher.get_grouped_opcodes(CONTEXT):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        out.append(f"@@ -{_span(i1, i2 - i1)} +{_span(j1, j2 - j1)} @@\n")
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                out += [_line(" ", line) for line in before[a1:a2]]
                continue
            out += [_line("-", line) for line in before[a1:a2]]
            out += [_line("+", line) for line in after[b1:b2]]
    return out


def blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()  # git's object id (SHA-1 repos)


def _literal(data: bytes) -> list[str]:
    """One `literal` hunk: the zlib-deflated bytes in base85 lines, each led by its byte count (A-Z, a-z)."""
    packed = zlib.compress(data)
    out = [f"literal {len(data)}\n"]
    for at in range(0, len(packed), _BINARY_LINE):
        chunk = packed[at:at + _BINARY_LINE]
        size = chr(ord("A") + len(chunk) - 1) if len(chunk) <= 26 else chr(ord("a") + len(chunk) - 27)
        out.append(size + base64.b85encode(chunk, pad=True).decode("ascii") + "\n")
    return [*out, "\n"]


def _binary(path: str, before: bytes, after: bytes) -> list[str]:
    """git's binary patch (full index line, forward and reverse literal): it names no line, so any bytes fit."""
    old, new = _quoted(f"a/{path}"), _quoted(f"b/{path}")
    return [f"diff --git {old} {new}\n", f"index {blob_id(before)}..{blob_id(after)}\n",
            "GIT binary patch\n", *_literal(after), *_literal(before)]


def _is_unicode(lines: list[str]) -> bool:
    try:
        "".join(lines).encode("utf-8")
    except UnicodeEncodeError:  # a surrogate: a byte the file holds is not UTF-8
        return False
    return True


def file_diff(path: str, before: str, after: str) -> str:
    """The diff of one file, empty when nothing changed."""
    if before == after:
        return ""
    section = _header(path) + _hunks(split_lines(before), split_lines(after))
    if not _is_unicode(section):
        section = _binary(path, to_bytes(before), to_bytes(after))
    return "".join(section)


def unified_diff(files: Mapping[str, tuple[str, str]]) -> str:
    """A git-style diff over the changed files (path → (old text, new text)), sorted by path."""
    return "".join(file_diff(path, *files[path]) for path in sorted(files))
