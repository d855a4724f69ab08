"""ini_values held to configparser (issue 43): for random small INI files (sections, `=` and `:`, indented
continuations, blank and comment lines inside values, indented keys and headers, text after a header's `]`,
CRLF), every value it reports is configparser's, and each line it names is the line where configparser
takes in that key or that part of the value (checked by parsing the file up to that line)."""

from __future__ import annotations

import configparser
import re

from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from repocontext.deps.ini_lines import ini_values

SECTIONS = ("testenv", "testenv:py311", "options", "options.extras_require", "a b", " pad ", "x]y")
KEYS = ("deps", "install_requires", "Key", "my key", "a.b", "x-y", "tests_require")
TEXT = st.text(alphabet="ab =:#;[]\t.-", max_size=10)
INDENTS = ("", "", "", " ", "  ", "\t", "    ")


def header(draw: st.DrawFn, name: str) -> str:
    tail = draw(st.sampled_from(["", "", " # c", " ; c", "  junk", "]"]))
    return draw(st.sampled_from(INDENTS[:4])) + f"[{name}]{tail}"


def value_line(draw: st.DrawFn) -> str:
    return draw(TEXT).strip(" \t")


@st.composite
def ini_files(draw: st.DrawFn) -> str:
    lines: list[str] = []
    for name in draw(st.lists(st.sampled_from(SECTIONS), min_size=1, max_size=3, unique=True)):
        lines.append(header(draw, name))
        for key in draw(st.lists(st.sampled_from(KEYS), max_size=3, unique_by=str.lower)):
            delimiter = draw(st.sampled_from(["=", " = ", ":", " : ", "= "]))
            indent = draw(st.sampled_from(INDENTS))  # an indented key continues the value above, if there is one
            lines.append(indent + key + delimiter + value_line(draw))
            for _ in range(draw(st.integers(0, 3))):
                kind = draw(st.sampled_from(["more", "more", "blank", "comment"]))
                if kind == "more":  # deeper than the key, or configparser refuses the file
                    lines.append(indent + draw(st.sampled_from(INDENTS[3:])) + (value_line(draw) or "x"))
                elif kind == "blank":
                    lines.append(draw(st.sampled_from(["", "  "])))
                else:
                    lines.append(draw(st.sampled_from(INDENTS)) + draw(st.sampled_from(["# x = y", "; [s]", "#"])))
    return draw(st.sampled_from(["\n", "\r\n"])).join(lines) + "\n"


def parse(text: str) -> configparser.RawConfigParser | None:
    parser = configparser.RawConfigParser()
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    return parser


def value_lines(value: str) -> list[str]:
    """configparser's value as the module reports it: non-empty lines, inline ` #` comments dropped (the
    module's documented addition: tox drops them; a requirement never holds one)."""
    lines = (re.sub(r"(?:^|\s+)#.*$", "", line).strip() for line in value.split("\n"))
    return [line for line in lines if line]


def through(text: str, line: int) -> configparser.RawConfigParser:
    """The file parsed up to and including 1-based `line`: each line means what it means there."""
    parser = parse("\n".join(text.split("\n")[:line]) + "\n")
    assert parser is not None  # a line's reading depends on the lines before it only
    return parser


@settings(max_examples=600, deadline=None)
@given(text=ini_files())
@example(text="[a]\n  [b]\nk = v\n")  # an indented header right after a header is a header
@example(text="[a] = x\nk = v\n")  # configparser reads `[a]` and ignores what follows the `]`
@example(text="[a]\n  k = v\n    more\n")  # an indented key that continues nothing is a key
@example(text="[ pad ]\nk = v\n")  # a section's name keeps its blanks
def test_every_value_and_line_is_configparsers(text: str) -> None:
    parser = parse(text)
    assume(parser is not None)  # the generator may write a duplicate key configparser refuses
    assert parser is not None
    found = ini_values(text)
    expected = [(section, key) for section in parser.sections() for key in parser[section]]
    assert [(v.section, v.key) for v in found] == expected, text
    for value in found:
        assert [t for _, t in value.items] == value_lines(parser[value.section][value.key]), text
        assert not parser_has(through(text, value.line - 1), value.section, value.key), (text, value)
        assert parser_has(through(text, value.line), value.section, value.key), (text, value)
        for index, (line, _) in enumerate(value.items):  # the value read up to that line ends with that item
            sofar = through(text, line)[value.section][value.key]
            assert value_lines(sofar) == [t for _, t in value.items[: index + 1]], (text, value)


def parser_has(parser: configparser.RawConfigParser, section: str, key: str) -> bool:
    return parser.has_section(section) and parser.has_option(section, key)
