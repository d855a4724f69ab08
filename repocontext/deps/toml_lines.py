"""Line numbers for TOML content, which tomllib does not report.

Table headers (`[a.b]`, `[[a]]`) and their line ranges come from a quick scan:
strings of all four kinds and comments are blanked out (one regex pass), and a
line starting with `[` outside any array or inline table is a header (lockfiles
of several MB need only these). Keys and values come, on the first `find`, from
a TOML tokenizer that follows the document's structure the way tomllib reads
it: every key, with its path relative to its table (dotted keys and keys of
inline tables included, quoted keys unescaped) and the line it is on; every
string inside a key's value (arrays, nested arrays) with its line. So a line
inside a multi-line string, a comment or an array is never taken for a header,
a key or a value.

What is not placed: keys and strings inside an inline table that is itself
inside an array (tomllib gives them an index; `find` cannot name one), and
anything after a syntax error (the callers parse with tomllib first). A key or
value that cannot be placed gets no line rather than a wrong one.
`tests/test_deps_toml_lines_oracle.py` holds this to tomllib on random documents.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_KEY_PART = re.compile(r'"((?:[^"\\]|\\.)*)"|\'([^\']*)\'|([A-Za-z0-9_-]+)')
# strings of the four kinds and comments: what can hold brackets, quotes or `#` that are not TOML syntax
# (written "normal* (special normal*)*": several times faster on a lockfile's thousands of strings)
_NOISE_PARTS = (
    r'(?P<mlbasic>"""[^"\\]*(?:(?:\\[\s\S]|"(?!""))[^"\\]*)*"{3,5})',  # up to two quotes may end the content
    r"(?P<mlliteral>'''[\s\S]*?'{3,5})",
    r'(?P<basic>"[^"\\\n]*(?:\\.[^"\\\n]*)*")',
    r"(?P<literal>'[^'\n]*')",
    r"(?P<comment>\#[^\n]*)",
)
_NOISE = re.compile("|".join(_NOISE_PARTS))
_ONE_LINE_NOISE = re.compile("|".join(_NOISE_PARTS[2:]))  # for a text without triple quotes: ~3x faster
_TOKEN = re.compile("|".join((*_NOISE_PARTS, r"(?P<newline>\n)", r"(?P<blank>[ \t\r]+)", r"(?P<punct>[\[\]{}=,.])",
                              r"(?P<bare>[A-Za-z0-9_+:-]+)", r"(?P<other>.)")))
_BARE_HEADER = re.compile(r"[ \t]*(\[\[?)[ \t]*([A-Za-z0-9_-]+(?:[ \t]*\.[ \t]*[A-Za-z0-9_-]+)*)[ \t]*(\]\]?)"
                          r"[ \t]*(?:#.*)?")
# a `[` opening a line (a header, unless inside brackets); a one-line pair with no bracket inside (most inline
# tables and arrays: skipped whole); any other bracket
_BRACKET = re.compile(r"(?P<head>^[ \t]*\[)|(?P<flat>[{\[][^{}\[\]\n]*[}\]])|(?P<one>[\[\]{}])", re.MULTILINE)
_ESCAPE = re.compile(r'\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))', re.DOTALL)
_SIMPLE_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "\\": "\\"}
_LINE_ENDING_BACKSLASH = re.compile(r"\\[ \t]*\r?\n[ \t\r\n]*")
_STRINGS = frozenset({"basic", "literal", "mlbasic", "mlliteral"})


def split_key(dotted: str) -> tuple[str, ...]:
    """`tool.poetry.group."my group".dependencies` → ("tool", "poetry", "group", "my group", "dependencies")."""
    return tuple(next(g for g in m.groups() if g is not None) for m in _KEY_PART.finditer(dotted))


def _unescape(body: str) -> str:
    def one(found: re.Match[str]) -> str:
        code = found.group(1) or found.group(2)
        return chr(int(code, 16)) if code else _SIMPLE_ESCAPES.get(found.group(3), found.group(0))

    return _ESCAPE.sub(one, body)


def string_value(kind: str, text: str) -> str:
    """The value of a string token as tomllib reads it."""
    if kind == "literal":
        return text[1:-1]
    if kind == "basic":
        return _unescape(text[1:-1])
    body = text[3:-3].removeprefix("\r\n").removeprefix("\n")  # a newline right after the opening is trimmed
    if kind == "mlliteral":
        return body
    return _unescape(_LINE_ENDING_BACKSLASH.sub("", body))


@dataclass(frozen=True)
class Table:
    key: tuple[str, ...]
    array: bool
    start: int  # 0-based index of the header line (or 0 for the root table)
    end: int  # exclusive


class _Bad(Exception):
    """Not TOML the scan understands: the rest of the statement is skipped."""


class _Scan:
    """Tokens (blanks dropped) → headers, key lines and string lines, by recursive descent. Keys and strings
    are filed under their table's header line (-1: the root table) and their path inside it."""

    def __init__(self, text: str) -> None:
        self.tokens: list[tuple[str, str, int]] = []  # (kind, text, 0-based line)
        line = 0
        for found in _TOKEN.finditer(text):
            kind = found.lastgroup or "other"
            if kind != "blank":
                self.tokens.append((kind, found.group(), line))
            line += found.group().count("\n")
        self.at = 0
        self.heads: list[tuple[tuple[str, ...], bool, int]] = [((), False, 0)]
        self.keys: dict[tuple[int, tuple[str, ...]], int] = {}  # (header line, path in it) → 0-based line
        self.strings: dict[tuple[int, tuple[str, ...]], list[tuple[str, int]]] = {}

    @property
    def anchor(self) -> int:
        return self.heads[-1][2] if len(self.heads) > 1 else -1

    def peek(self) -> tuple[str, str, int]:
        return self.tokens[self.at] if self.at < len(self.tokens) else ("end", "", -1)

    def take(self, text: str | None = None) -> tuple[str, str, int]:
        token = self.peek()
        if token[0] == "end" or (text is not None and (token[0] != "punct" or token[1] != text)):
            raise _Bad
        self.at += 1
        return token

    def is_punct(self, text: str) -> bool:
        kind, found, _ = self.peek()
        return kind == "punct" and found == text

    def run(self) -> None:
        while self.at < len(self.tokens):
            if self.peek()[0] in ("newline", "comment"):
                self.at += 1
                continue
            try:
                self.statement()
            except (_Bad, RecursionError):
                while self.peek()[0] not in ("newline", "end"):
                    self.at += 1

    def statement(self) -> None:
        if self.is_punct("["):
            line = self.take("[")[2]
            array = self.is_punct("[")
            if array:
                self.take("[")
            key = self.key()
            self.take("]")
            if array:
                self.take("]")
            self.heads.append((key, array, line))
        else:
            line = self.peek()[2]
            key = self.key()
            self.take("=")
            self.note_key(key, line)
            self.value(key)
        if self.peek()[0] == "comment":
            self.at += 1
        if self.peek()[0] not in ("newline", "end"):
            raise _Bad

    def key(self) -> tuple[str, ...]:
        parts = [self.key_part()]
        while self.is_punct("."):
            self.take(".")
            parts.append(self.key_part())
        return tuple(parts)

    def key_part(self) -> str:
        kind, text, _ = self.take()
        if kind == "bare":
            return text
        if kind in ("basic", "literal"):
            return string_value(kind, text)
        raise _Bad

    def note_key(self, path: tuple[str, ...], line: int) -> None:
        """A key's line; a dotted key's tables are placed where they first appear."""
        table = self.anchor
        for cut in range(1, len(path) + 1):
            self.keys.setdefault((table, path[:cut]), line)

    def value(self, path: tuple[str, ...] | None) -> None:
        """One value; its strings (and inline tables' keys) are noted under `path` unless it is None."""
        kind, text, line = self.take()
        if kind in _STRINGS:
            if path is not None:
                self.strings.setdefault((self.anchor, path), []).append((string_value(kind, text), line))
        elif kind == "punct" and text == "[":
            self.array(path)
        elif kind == "punct" and text == "{":
            self.inline_table(path)
        elif kind in ("bare", "other"):
            while self.peek()[0] in ("bare", "other") or self.is_punct("."):  # 1.5, 1979-05-27 07:32:00
                self.at += 1
        else:
            raise _Bad

    def skip_trivia(self) -> None:
        while self.peek()[0] in ("newline", "comment"):
            self.at += 1

    def array(self, path: tuple[str, ...] | None) -> None:
        self.skip_trivia()
        while not self.is_punct("]"):
            self.value(path if not self.is_punct("{") else None)  # an inline table in an array has an index
            self.skip_trivia()
            if not self.is_punct("]"):
                self.take(",")
                self.skip_trivia()
        self.take("]")

    def inline_table(self, path: tuple[str, ...] | None) -> None:
        while not self.is_punct("}"):
            line = self.peek()[2]
            key = self.key()
            self.take("=")
            inner = None if path is None else (*path, *key)
            if inner is not None:
                self.note_key(inner, line)
            self.value(inner)
            if not self.is_punct("}"):
                self.take(",")
        self.take("}")


def _blank(found: re.Match[str]) -> str:
    """A string or comment blanked out, keeping its line breaks (a multi-line string's lines stay lines)."""
    return "\n" * found.group().count("\n") or '""'


def _blanked(text: str) -> str:
    """`text` with strings and comments blanked: offsets move ("x" becomes ""), line numbers do not."""
    if '"""' in text or "'''" in text:
        return _NOISE.sub(_blank, text)
    return _ONE_LINE_NOISE.sub('""', text)  # no match can hold a line break


def _headers(text: str) -> list[tuple[tuple[str, ...], bool, int]]:
    """(key, array, 0-based line) of every table header: a line starting with `[` outside brackets, once
    strings and comments are blanked; the key is read by the tokenizer from the header's own line."""
    blanked = _blanked(text)
    lines = text.split("\n")
    heads: list[tuple[tuple[str, ...], bool, int]] = []
    depth, skip, line, counted_to = 0, -1, 0, 0
    for found in _BRACKET.finditer(blanked):
        at = found.start()
        if at < skip:
            continue  # the rest of a header's line
        kind = found.lastgroup
        if kind == "flat":
            continue
        if kind == "one" and found.group() in "]}":
            depth = max(depth - 1, 0)
        elif kind == "one" or depth:
            depth += 1
        else:
            line += blanked.count("\n", counted_to, at)
            counted_to, skip = at, blanked.find("\n", at) % (len(blanked) + 1)
            heads.extend(_header(lines[line], line))
    return heads


def _header(text: str, line: int) -> list[tuple[tuple[str, ...], bool, int]]:
    """The header on one line: bare keys by a regex (most of them), others by the tokenizer."""
    bare = _BARE_HEADER.fullmatch(text.rstrip("\r"))
    if bare and len(bare.group(1)) == len(bare.group(3)):
        return [(tuple(p.strip() for p in bare.group(2).split(".")), bare.group(1) == "[[", line)]
    scan = _Scan(text)
    scan.run()
    return [(key, array, line) for key, array, _ in scan.heads[1:2]]


class TomlLines:
    def __init__(self, text: str) -> None:
        self.text = text
        count = text.count("\n") + (0 if not text or text.endswith("\n") else 1)
        heads = [((), False, 0), *_headers(text)]
        ends = [start for _, _, start in heads[1:]] + [count]
        self.tables = [Table(key, array, start, end) for (key, array, start), end in zip(heads, ends, strict=True)]
        self._scan: _Scan | None = None

    def _scanned(self) -> _Scan:
        """The full tokenizer's pass, on the first `find` (a lockfile's headers alone do not need it)."""
        if self._scan is None:
            self._scan = _Scan(self.text)
            self._scan.run()
        return self._scan

    def array_headers(self, key: tuple[str, ...]) -> list[int]:
        """1-based header lines of every `[[key]]` entry, in file order."""
        return [t.start + 1 for t in self.tables if t.array and t.key == key]

    def find(self, table: tuple[str, ...], keys: tuple[str, ...], value: str | None = None,
             within: tuple[int, int] | None = None) -> int | None:
        """1-based line of `keys` (or, given `value`, of that string inside the key's value) inside `table`.

        `table` may be spelled as a header or as dotted/inline keys in a parent
        table; each split is tried, longest header first. `within` limits the
        search to a line range (0-based, end exclusive), e.g. one `[[package]]`.
        """
        def inside(line: int) -> bool:
            return within is None or within[0] <= line < within[1]

        scan = self._scanned()
        for cut in range(len(table), -1, -1):
            head, rest = table[:cut], table[cut:] + keys
            for index, t in enumerate(self.tables):
                anchor = t.start if index else -1
                line = scan.keys.get((anchor, rest)) if t.key == head else None
                if line is None or not inside(line):
                    continue
                if value is None:
                    return line + 1
                strings = scan.strings.get((anchor, rest), ())
                found = next((at for text, at in strings if text == value and inside(at)), None)
                if found is not None:
                    return found + 1
        return None
