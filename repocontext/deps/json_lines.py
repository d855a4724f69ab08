"""Line numbers of object keys in JSON text, which the json module does not report.

One regex pass over the tokens keeps a stack of the keys leading to the
current position, so `("packages", "node_modules/a")` maps to the line where
that key is written inside the `packages` object, not to any other
`"node_modules/a"` in the file. Array elements are not told apart (all are
addressed as ELEMENT): no caller needs them, and skipping commas halves the work.
"""

from __future__ import annotations

import bisect
import json
import re

# A string (a key when a colon follows) or a bracket; numbers, literals and commas are skipped. The string body
# is written unrolled (runs of plain characters between escapes): the same tokens as `(?:[^"\\]|\\.)*`, and a
# third faster on lockfiles, whose integrity hashes and URLs are long strings.
_TOKEN = re.compile(r'"([^"\\]*(?:\\.[^"\\]*)*)"(\s*:)?|[{}\[\]]')

ELEMENT = -1  # the path element standing for any array element

KeyPath = tuple[str | int, ...]


def _decode(raw: str) -> str:
    if "\\" not in raw:
        return raw
    try:
        return str(json.loads(f'"{raw}"'))
    except ValueError:
        return raw


def key_lines(text: str, max_depth: int = 64) -> dict[KeyPath, int]:
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
