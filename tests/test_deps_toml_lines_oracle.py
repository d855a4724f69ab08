"""TomlLines held to tomllib (issue 43): random small TOML documents (tables, array tables, dotted and quoted
keys, inline tables, arrays, strings with quotes and escapes, multi-line strings that look like TOML, comments);
every key and value the finder places is where tomllib says it is, and it places every one of them."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from repocontext.deps.toml_lines import TomlLines

NAMES = ("a", "b", "name", "dependencies", "x-y", "1", "sp ace", "dot.ted", 'q"t', "é")
TEXT = st.text(alphabet='ab =#[]{}"\'\\.,\t', max_size=8)
# lines that look like TOML but sit inside a multi-line string
EMBEDDED = ('name = "x"', "[tool.poetry]", "[[package]]", "dependencies = [", '"a",', "# c", "'a' = 1", "]", "")


def basic(text: str, escape_all: bool) -> str:
    out = []
    for char in text:
        if char in '"\\':
            out.append("\\" + char)
        elif char == "\t":
            out.append("\\t")
        elif escape_all and char.isalpha():
            out.append(f"\\u{ord(char):04X}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


@dataclass
class Doc:
    """The rendered lines and, from the generator, where each key and each string value is."""

    lines: list[str] = field(default_factory=list)
    keys: list[tuple[tuple[Any, ...], int, Any]] = field(default_factory=list)  # (path, 1-based line, value)
    values: dict[tuple[Any, ...], dict[str, set[int]]] = field(default_factory=dict)  # array path → string → lines
    headers: list[tuple[tuple[str, ...], bool, int]] = field(default_factory=list)  # (key, array, 1-based line)
    nodes: dict[tuple[Any, ...], tuple[str, int]] = field(default_factory=dict)  # path → (kind, section)

    @property
    def next_line(self) -> int:
        return len(self.lines) + 1

    def free_key(self, path: tuple[Any, ...], depth: int, section: int) -> bool:
        """Whether a key of `depth` parts may be set at `path` (TOML: no redefinition; dotted tables only
        extend within the section that made them)."""
        for cut in range(len(path) - depth + 1, len(path)):
            kind = self.nodes.get(path[:cut])
            if kind is not None and kind != ("dotted", section):
                return False
        return path not in self.nodes

    def set_key(self, path: tuple[Any, ...], depth: int, section: int) -> None:
        for cut in range(len(path) - depth + 1, len(path)):
            self.nodes[path[:cut]] = ("dotted", section)
        self.nodes[path] = ("leaf", section)

    def free_header(self, path: tuple[str, ...], array: bool) -> bool:
        if any(self.nodes.get(path[:cut], ("implicit", 0))[0] not in ("implicit", "header")
               for cut in range(1, len(path))):
            return False
        kind = self.nodes.get(path, ("missing", 0))[0]
        return kind in (("missing", "array") if array else ("missing", "implicit"))

    def set_header(self, path: tuple[str, ...], array: bool) -> None:
        for cut in range(1, len(path)):
            self.nodes.setdefault(path[:cut], ("implicit", 0))
        self.nodes[path] = ("array" if array else "header", 0)


@st.composite
def key_parts(draw: st.DrawFn, max_parts: int = 2) -> tuple[list[str], str]:
    """(parts, how they are written): bare, "basic" (escapes included) or 'literal', dotted with any spacing."""
    parts = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=max_parts))
    written = []
    for part in parts:
        style = draw(st.sampled_from(["bare", "basic", "literal"]))
        if style == "bare" and part.replace("-", "").replace("_", "").isascii() and part.replace("-", "").isalnum():
            written.append(part)
        elif style == "literal" and "'" not in part:
            written.append(f"'{part}'")
        else:
            written.append(basic(part, draw(st.booleans())))
    return parts, draw(st.sampled_from([".", " . ", ". "])).join(written)


@st.composite
def string_value(draw: st.DrawFn) -> tuple[str, str]:
    """(value, how it is written) for a one-line string."""
    text = draw(TEXT)
    if "'" not in text and draw(st.booleans()):
        return text, f"'{text}'"
    return text, basic(text, draw(st.booleans()))


def comment(draw: st.DrawFn) -> str:
    return draw(st.sampled_from(["", "", "  # " + draw(st.sampled_from(['x = "a"', '"a"', "'''", '"""', "[t]"]))]))


@st.composite
def scalar(draw: st.DrawFn) -> tuple[Any, str]:
    kind = draw(st.sampled_from(["int", "float", "bool", "string", "string"]))
    if kind == "string":
        return draw(string_value())
    return {"int": (7, "7"), "float": (1.5, "1.5"), "bool": (True, "true")}[kind]


def emit_keyval(draw: st.DrawFn, doc: Doc, table: tuple[Any, ...], section: int) -> None:
    parts, written = draw(key_parts())
    path = (*table, *parts)
    if not doc.free_key(path, len(parts), section):
        return
    doc.set_key(path, len(parts), section)
    line = doc.next_line
    indent = draw(st.sampled_from(["", "  "]))
    head = f"{indent}{written}{draw(st.sampled_from([' = ', '=', ' =  ']))}"
    kind = draw(st.sampled_from(["scalar", "scalar", "array", "multiline_array", "inline", "mlstring"]))
    if kind == "scalar":
        value, text = draw(scalar())
        doc.lines.append(head + text + comment(draw))
    elif kind == "array":
        items = draw(st.lists(string_value(), max_size=3))
        doc.lines.append(head + "[" + ", ".join(t for _, t in items) + "]" + comment(draw))
        value = [v for v, _ in items]
        for v, _ in items:
            doc.values.setdefault(path, {}).setdefault(v, set()).add(line)
    elif kind == "multiline_array":
        value = emit_multiline_array(draw, doc, path, head)
    elif kind == "inline":
        value = emit_inline(draw, doc, path, head, line)
    else:
        value = emit_mlstring(draw, doc, head)
    doc.keys.append((path, line, value))


def emit_multiline_array(draw: st.DrawFn, doc: Doc, path: tuple[Any, ...], head: str) -> list[Any]:
    doc.lines.append(head + "[" + comment(draw))
    items = draw(st.lists(st.one_of(string_value(), st.lists(string_value(), min_size=1, max_size=2)), max_size=4))
    value: list[Any] = []
    for index, item in enumerate(items):
        last = index == len(items) - 1
        separator = draw(st.sampled_from(["", ","])) if last else ","
        if draw(st.booleans()):
            doc.lines.append("  # " + draw(st.sampled_from(['"a"', "b = 1", "[t]"])))
        if isinstance(item, list):  # a nested array alone on its line looks like a table header
            doc.lines.append("  [" + ", ".join(t for _, t in item) + "]" + separator)
            value.append([v for v, _ in item])
            strings = [v for v, _ in item]
        else:
            doc.lines.append("  " + item[1] + separator + comment(draw))
            value.append(item[0])
            strings = [item[0]]
        for v in strings:
            doc.values.setdefault(path, {}).setdefault(v, set()).add(doc.next_line - 1)
    doc.lines.append("]")
    return value


def emit_inline(draw: st.DrawFn, doc: Doc, path: tuple[Any, ...], head: str, line: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    texts = []
    for parts, written in draw(st.lists(key_parts(1), max_size=3)):
        if parts[0] in value:
            continue
        inner, text = draw(st.one_of(scalar(), st.lists(string_value(), max_size=2).map(
            lambda xs: ([v for v, _ in xs], "[" + ", ".join(t for _, t in xs) + "]"))))
        value[parts[0]] = inner
        texts.append(f"{written} = {text}")
        doc.keys.append(((*path, parts[0]), line, inner))
    doc.lines.append(head + "{" + ", ".join(texts) + "}" + comment(draw))
    return value


def emit_mlstring(draw: st.DrawFn, doc: Doc, head: str) -> str:
    quote = draw(st.sampled_from(['"""', "'''"]))
    content = draw(st.lists(st.sampled_from(EMBEDDED), max_size=4))
    doc.lines.append(head + quote)
    doc.lines.extend(content)
    doc.lines.append(quote + comment(draw))
    return "".join(c + "\n" for c in content)


@st.composite
def documents(draw: st.DrawFn) -> Doc:
    doc = Doc()
    arrays: dict[tuple[str, ...], int] = {}
    for section in range(draw(st.integers(0, 4)) + 1):
        table: tuple[Any, ...] = ()
        if section:
            parts, written = draw(key_parts())
            array = draw(st.integers(0, 3)) == 0
            if not doc.free_header(tuple(parts), array):
                continue
            doc.set_header(tuple(parts), array)
            brackets = ("[[", "]]") if array else ("[", "]")
            spaced = draw(st.sampled_from(["", " "]))
            doc.headers.append((tuple(parts), array, doc.next_line))
            doc.lines.append(f"{brackets[0]}{spaced}{written}{spaced}{brackets[1]}" + comment(draw))
            table = tuple(parts)
            if array:
                arrays[table] = arrays.get(table, -1) + 1
                table = (*table, arrays[table])  # the entry's index, as tomllib's list has it
        for _ in range(draw(st.integers(0, 4))):
            if draw(st.integers(0, 4)) == 0:
                doc.lines.append(draw(st.sampled_from(["", "# name = 'x'", '  # [[package]]'])))
            else:
                emit_keyval(draw, doc, table, section)
    return doc


def lookup(data: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        data = data[part]
    return data


def section_of(doc: Doc, line: int) -> tuple[int, int]:
    """0-based (first, end) lines of the section holding 1-based `line`: its header to the next."""
    starts = [0] + [h[2] - 1 for h in doc.headers]
    first = max(s for s in starts if s <= line - 1)
    return first, min([s for s in starts if s > first] + [len(doc.lines)])


@settings(max_examples=400, deadline=None)
@given(doc=documents())
def test_every_key_and_value_is_where_tomllib_says(doc: Doc) -> None:
    text = "\n".join(doc.lines) + "\n"
    data = tomllib.loads(text)  # the generator writes valid TOML only
    lines = TomlLines(text)
    assert [(t.key, t.array, t.start + 1) for t in lines.tables[1:]] == doc.headers, text
    for key in {h[0] for h in doc.headers if h[1]}:
        assert lines.array_headers(key) == [h[2] for h in doc.headers if h[0] == key], text
    for path, line, value in doc.keys:
        assert lookup(data, path) == value, text  # the generator's bookkeeping, held to tomllib
        names = tuple(p for p in path if isinstance(p, str))
        within = section_of(doc, line) if len(names) < len(path) else None  # an [[array]] entry: its lines
        assert lines.find(names[:-1], names[-1:], within=within) == line, (text, path)
    for path, strings in doc.values.items():
        names = tuple(p for p in path if isinstance(p, str))
        within = section_of(doc, min(min(ls) for ls in strings.values())) if len(names) < len(path) else None
        for value, at in strings.items():
            assert lines.find(names[:-1], names[-1:], value, within=within) in at, (text, path, value)
