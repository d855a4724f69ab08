"""Line numbers of object keys in JSON text, which the json module does not report.

One regex pass over the tokens keeps a stack of the keys leading to the
current position, so `("packages", "node_modules/a")` maps to the line where
that key is written inside the `packages` object, not to any other
`"node_modules/a"` in the file. Array elements are not told apart (all are
addressed as ELEMENT): no caller needs them, and skipping commas halves the work.

A caller that has already parsed the text can pass the result to
`parsed_key_lines`: when the text is laid out the way `JSON.stringify(data,
null, 2)` writes it (every npm lockfile), each key's line follows from the
structure alone, and walking the parsed values is several times faster than
tokenizing the text.
"""

from __future__ import annotations

import bisect
import json
import re
from typing import Any

import orjson

# A string (a key when a colon follows) or a bracket; numbers, literals and commas are skipped. The string body
# is written unrolled (runs of plain characters between escapes): the same tokens as `(?:[^"\\]|\\.)*`, and a
# third faster on lockfiles, whose integrity hashes and URLs are long strings.
_TOKEN = re.compile(r'"([^"\\]*(?:\\.[^"\\]*)*)"(\s*:)?|[{}\[\]]')

ELEMENT = -1  # the path element standing for any array element
MAX_DEPTH = 64  # key_lines' default: the longest key path recorded

KeyPath = tuple[str | int, ...]


def _decode(raw: str) -> str:
    if "\\" not in raw:
        return raw
    try:
        return str(json.loads(f'"{raw}"'))
    except ValueError:
        return raw


def key_lines(text: str, max_depth: int = MAX_DEPTH) -> dict[KeyPath, int]:
    """Every object key path (up to `max_depth` keys long) → the 1-based line of its first occurrence."""
    newlines = [m.start() for m in re.finditer("\n", text)]
    lines: dict[KeyPath, int] = {}
    stack: list[tuple[KeyPath, bool]] = []  # (path, is array) of each open container
    pending: str = ""  # the last key seen in the innermost object
    for match in _TOKEN.finditer(text):
        if match.group(2) is not None:  # "key":
            if stack and len(stack[-1][0]) < max_depth:
                pending = _decode(match.group(1))
                lines.setdefault((*stack[-1][0], pending), bisect.bisect_right(newlines, match.start()) + 1)
        elif match.group(1) is not None:
            continue  # a string value
        elif match.group() in "{[":
            if stack:
                parent, in_array = stack[-1]
                stack.append(((*parent, ELEMENT if in_array else pending), match.group() == "["))
            else:
                stack.append(((), match.group() == "["))
        elif stack:
            stack.pop()
    return lines


def parsed_key_lines(text: str, data: Any, max_depth: int = MAX_DEPTH) -> dict[KeyPath, int]:
    """`key_lines(text, max_depth)` for text that parses to `data`, computed from `data` when the text is
    its two-space pretty print. Equality with that print proves the layout the walk assumes: one line per
    key or array element, `{}` and `[]` on one line, a closing bracket on a line of its own, no duplicate
    keys (they would be missing from the print). Any other text is tokenized."""
    if not _is_print_of(text, data):
        return key_lines(text, max_depth)
    lines: dict[KeyPath, int] = {}
    if data and isinstance(data, (dict, list)):
        _walk(data, (), 1, max_depth, lines)
    return lines


def nested_key_lines(text: str, data: Any, member: str) -> dict[KeyPath, int]:
    """The lines `key_lines(text)` gives for the paths (member, k1, member, k2, …): the keys of the top-level
    object's `member` object and, recursively, of the `member` object inside each of their values (an npm
    v1 lockfile's `dependencies` tree). Computed from `data` as parsed_key_lines does, recording only those
    paths: a v1 lockfile's other keys (versions, hashes, `requires`) are four in five of its keys. Any other
    layout is tokenized, and then every key path is in the result."""
    if not _is_print_of(text, data):
        return key_lines(text)
    lines: dict[KeyPath, int] = {}
    if data and isinstance(data, dict):
        _entry(data, (), 1, member, lines)
    return lines


def _is_print_of(text: str, data: Any) -> bool:
    try:
        printed = orjson.dumps(data, option=orjson.OPT_INDENT_2).decode()
    except orjson.JSONEncodeError:  # integers beyond 64 bits, lone surrogates, very deep nesting
        return False
    return text == printed or text == printed + "\n"


def _entry(value: dict[str, Any], path: KeyPath, line: int, member: str, lines: dict[KeyPath, int]) -> int:
    """Walk a non-empty object printed from `line` (an entry, or the top level): only its `member` object is
    descended into; return its closing line."""
    for key, inner in value.items():
        line += 1
        if inner and isinstance(inner, (dict, list)):
            if key == member and isinstance(inner, dict):
                line = _members(inner, (*path, key), line, member, lines)
            else:
                line += _span(inner)
    return line + 1


def _members(value: dict[str, Any], path: KeyPath, line: int, member: str, lines: dict[KeyPath, int]) -> int:
    """Record the line of each key of a non-empty `member` object printed from `line`; return its closing
    line."""
    for key, entry in value.items():
        line += 1
        entry_path = (*path, key)
        if len(entry_path) <= MAX_DEPTH:
            lines.setdefault(entry_path, line)
        if entry and isinstance(entry, dict):
            line = _entry(entry, entry_path, line, member, lines)
        elif entry and isinstance(entry, list):
            line += _span(entry)
    return line + 1


def _walk(value: Any, path: KeyPath, line: int, max_depth: int, lines: dict[KeyPath, int]) -> int:
    """Record the keys inside `value`, a non-empty container printed from `line` on; return its last line."""
    if len(path) >= max_depth:  # key_lines records no key below this depth: only the lines count
        return line + _span(value)
    if isinstance(value, dict):
        for key, child in value.items():
            line += 1
            child_path = (*path, key)
            lines.setdefault(child_path, line)
            if child and isinstance(child, (dict, list)):
                line = _walk(child, child_path, line, max_depth, lines)
    else:
        child_path = (*path, ELEMENT)
        for child in value:
            line += 1
            if child and isinstance(child, (dict, list)):
                line = _walk(child, child_path, line, max_depth, lines)
    return line + 1  # the closing bracket


def _span(value: Any) -> int:
    """How many lines a container's print takes after its first. Iterative: `_walk` recurses at most
    `max_depth` levels and hands anything deeper to this."""
    extra = 0
    stack = [value]
    while stack:
        container = stack.pop()
        extra += len(container) + 1  # one line per member starts, and one closes
        members = container.values() if isinstance(container, dict) else container
        stack.extend(m for m in members if m and isinstance(m, (dict, list)))
    return extra
