"""The little of Ruby's syntax that Gemfiles and gemspecs use to declare gems, read as text (never run).

A declaration is a method call whose arguments are string literals (`"x"`, `'x'`, `%q<x>`, `%q{x}`,
optionally `.freeze`), arrays of them, symbols and `key: value` / `:key => value` options. These helpers
strip comments, join a call continued over several lines, split its arguments at top-level commas and
read each argument; anything else (a variable, `ENV[...]`, a method call) is reported as not a literal.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

_STRING = re.compile(r"""\s*(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|%[qQ]?([<{(\[])([^>})\]]*)[>})\]])"""
                     r"""(?:\.freeze)?\s*""")
_SYMBOL = re.compile(r"""\s*:(\w+[?!]?)\s*""")
_OPTION = re.compile(r"""\s*(?::(\w+)\s*=>|(\w+):(?!:)|["'](\w+)["']\s*=>)\s*(.*)""", re.DOTALL)
_OPEN = "([{"
_CLOSE = ")]}"


def _code(text: str) -> Iterator[tuple[int, str, int]]:
    """(index, character, bracket depth after it) of each character outside string literals: the one scan the
    helpers below share."""
    depth, quote, escaped = 0, None, False
    for at, char in enumerate(text):
        if escaped:
            escaped = False
        elif char == "\\" and quote:
            escaped = True
        elif quote:
            quote = None if char == quote else quote
        elif char in "\"'":
            quote = char
        else:
            depth += (char in _OPEN) - (char in _CLOSE)
            yield at, char, depth


def strip_comment(line: str) -> str:
    """`line` without a trailing `# comment` (a `#` inside a string literal or `#{}` is kept)."""
    return next((line[:at] for at, char, _ in _code(line) if char == "#"), line)


def open_depth(text: str) -> int:
    """Brackets opened and not closed outside string literals: a call continues while this is positive."""
    return sum((char in _OPEN) - (char in _CLOSE) for _, char, _ in _code(text))


def continues(text: str) -> bool:
    """A call goes on to the next line: a trailing comma or backslash, or an open bracket."""
    body = text.rstrip()
    return body.endswith((",", "\\")) or open_depth(body) > 0


def without_modifier(text: str) -> str:
    """`text` without a trailing `if …` / `unless …` modifier outside string literals and brackets."""
    return next((text[:at] for at, char, depth in _code(text)
                 if depth == 0 and char == " " and re.match(r" +(?:if|unless)\b", text[at:])), text)


def split_args(text: str) -> list[str]:
    """Top-level comma-separated arguments (commas inside strings and brackets do not split)."""
    cuts = [at for at, char, depth in _code(text) if char == "," and depth == 0]
    args = [text[start + 1:end] for start, end in zip([-1, *cuts], [*cuts, len(text)], strict=True)]
    return [a.strip() for a in args if a.strip()]


def string_value(arg: str) -> str | None:
    """The value of an argument that is one string literal, else None."""
    found = _STRING.fullmatch(arg)
    if found is None:
        return None
    double, single, _, percent = found.groups()
    if double is not None and "#{" in double:
        return None  # interpolated: its value is not known without running Ruby
    return next(v for v in (double, single, percent) if v is not None)


def strings_of(arg: str) -> list[str] | None:
    """A string literal's value, or every value of an array of string literals (`[">= 1", "< 2"]`,
    `%w[>=1 <2]` is not used for requirements); None when the argument is anything else."""
    single = string_value(arg)
    if single is not None:
        return [single]
    body = arg.strip()
    if body.startswith("[") and body.endswith("]"):
        values = [string_value(a) for a in split_args(body[1:-1])]
        return None if any(v is None for v in values) else [v for v in values if v is not None]
    return None


@dataclass(frozen=True)
class Option:
    key: str
    value: str  # the value's text as written


def option(arg: str) -> Option | None:
    """`key: value`, `:key => value` or `"key" => value`, else None."""
    found = _OPTION.fullmatch(arg)
    if found is None:
        return None
    key = found.group(1) or found.group(2) or found.group(3)
    return Option(key, found.group(4).strip())


def symbols(text: str) -> list[str]:
    """The group names in `:a, :b`, `[:a, :b]`, `%i[a b]` or `"a"` (keys of trailing options left out)."""
    body = text.strip()
    words = re.match(r"%[iIwW][\[({<]([^\])}>]*)[\])}>]", body)
    if words:
        return words.group(1).split()
    names: list[str] = []
    for arg in split_args(body.strip("[]")):
        if option(arg) is not None:
            continue
        value = string_value(arg)
        symbol = _SYMBOL.fullmatch(arg)
        if value is not None:
            names.append(value)
        elif symbol is not None:
            names.append(symbol.group(1))
    return names


def literal_spans(line: str) -> list[tuple[int, int, str]]:
    """(start, end, value) of each string literal's contents on `line`, in order: an edit replaces one
    literal's contents and leaves the quotes and everything else as written."""
    spans: list[tuple[int, int, str]] = []
    for found in re.finditer(r""""((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|%[qQ]?([<{(\[])([^>})\]]*)[>})\]]""",
                             line):
        group = next(g for g in (1, 2, 4) if found.group(g) is not None)
        spans.append((found.start(group), found.end(group), found.group(group)))
    return spans
