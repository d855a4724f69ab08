"""Line numbers for TOML content, which tomllib does not report.

A light scan of the text finds table headers (`[a.b]`, `[[a]]`) and their line
ranges; keys and string values are then located inside the right table. It
copes with quoted keys and both string quotes; a line inside a multi-line
string (triple double or single quotes) is never taken for a key or a value; a
value that cannot be placed gets no line rather than a wrong one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_HEADER = re.compile(r"^\s*(\[\[?)\s*(.+?)\s*(\]\]?)\s*(?:#.*)?$")
_KEY_USE = re.compile(r"""(?<![^\s{,.])(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|([A-Za-z0-9_-]+))(?=\s*(?:=(?!=)|\.))""")
_KEY_PART = re.compile(r'"((?:[^"\\]|\\.)*)"|\'([^\']*)\'|([A-Za-z0-9_-]+)')


def split_key(dotted: str) -> tuple[str, ...]:
    """`tool.poetry.group."my group".dependencies` → ("tool", "poetry", "group", "my group", "dependencies")."""
    return tuple(next(g for g in m.groups() if g is not None) for m in _KEY_PART.finditer(dotted))


@dataclass(frozen=True)
class Table:
    key: tuple[str, ...]
    array: bool
    start: int  # 0-based index of the header line (or 0 for the root table)
    end: int  # exclusive


class TomlLines:
    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()
        self.in_string: set[int] = set()  # lines that start inside a multi-line string: never a key or a value
        self.tables = self._scan()
        self._key_cache: dict[int, set[str]] = {}

    def _scan(self) -> list[Table]:
        heads: list[tuple[tuple[str, ...], bool, int]] = [((), False, 0)]
        in_string: str | None = None
        for index, line in enumerate(self.lines):
            if in_string is not None:
                self.in_string.add(index)
            if in_string is None:
                head = _HEADER.match(line)
                if head and len(head.group(1)) == len(head.group(3)):
                    heads.append((split_key(head.group(2)), head.group(1) == "[[", index))
                    continue
            for quote in ('"""', "'''"):
                if (in_string is None or in_string == quote) and line.count(quote) % 2 == 1:
                    in_string = quote if in_string is None else None
        ends = [start for _, _, start in heads[1:]] + [len(self.lines)]
        return [Table(key, array, start, end) for (key, array, start), end in zip(heads, ends, strict=True)]

    def array_headers(self, key: tuple[str, ...]) -> list[int]:
        """1-based header lines of every `[[key]]` entry, in file order."""
        return [t.start + 1 for t in self.tables if t.array and t.key == key]

    def find(self, table: tuple[str, ...], keys: tuple[str, ...], value: str | None = None,
             within: tuple[int, int] | None = None) -> int | None:
        """1-based line of `keys` (and then of the quoted `value` after it) inside `table`.

        `table` may be spelled as a header or as dotted/inline keys in a parent
        table; each split is tried, longest header first. `within` limits the
        search to a line range (0-based, end exclusive), e.g. one `[[package]]`.
        """
        for cut in range(len(table), -1, -1):
            head, rest = table[:cut], table[cut:] + keys
            for t in self.tables:
                if t.key != head:
                    continue
                lo, hi = (t.start, t.end) if within is None else (max(t.start, within[0]), min(t.end, within[1]))
                found = self._find_in(lo, hi, rest, value, skip_header=t.key != ())
                if found is not None:
                    return found
        return None

    def _keys(self, index: int) -> set[str]:
        """The keys assigned or dotted on a line (`a = `, `"b" = `, `a.b = `, `{ c = `), unquoted; cached."""
        found = self._key_cache.get(index)
        if found is None:
            found = {next(g for g in m.groups() if g is not None) for m in _KEY_USE.finditer(self.lines[index])}
            self._key_cache[index] = found
        return found

    def _find_in(self, lo: int, hi: int, keys: tuple[str, ...], value: str | None, skip_header: bool) -> int | None:
        pos = lo + 1 if skip_header else lo
        for key in keys:
            pos_found = next((i for i in range(pos, hi) if i not in self.in_string and key in self._keys(i)), None)
            if pos_found is None:
                return None
            pos = pos_found
        if value is None:
            return pos + 1
        quoted = (f'"{value}"', f"'{value}'")
        return next((i + 1 for i in range(pos, hi) if i not in self.in_string
                     and (quoted[0] in self.lines[i] or quoted[1] in self.lines[i])), None)
