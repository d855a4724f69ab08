"""INI files (setup.cfg, tox.ini) read the way configparser reads them, with the line of every value line.

configparser reports no line numbers, so this scan follows its `_read` line by
line (RawConfigParser's defaults): whole-line `#` / `;` comments and blank
lines are skipped and do not end a value; a line indented deeper than the line
that opened the current key continues its value; any other line is a
`[section]` header when it starts with `[` and has a `]` further on (the name
is what lies between the first `[` and the last `]`, blanks kept, whatever
follows ignored), else `key = value` or `key: value` split at the first `=` or
`:` (keys lower-cased). One addition: inline `#` comments (after a blank) are
dropped from value lines (tox does; a requirement never contains ` #`).
Lines are LF-separated (a CR before it is a blank). A file configparser
refuses (a line that is none of these, a duplicate) is still read: such a line
is skipped with whatever is indented under it.
`tests/test_deps_ini_lines_oracle.py` holds this to configparser on random files.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_SECTION = re.compile(r"\[(?P<header>.+)\]")  # configparser's SECTCRE, matched at the start only
_OPTION = re.compile(r"(?P<option>.*?)\s*[=:]\s*(?P<value>.*)$")  # its OPTCRE with the default delimiters
_INLINE_COMMENT = re.compile(r"(?:^|\s+)#.*$")


@dataclass
class IniValue:
    section: str
    key: str  # lower-cased, as configparser's optionxform makes it
    line: int  # 1-based line of the key
    items: list[tuple[int, str]] = field(default_factory=list)  # (line, text) of each non-empty value line


def ini_values(text: str) -> list[IniValue]:
    """Every `key = value` of every section, in file order."""
    values: list[IniValue] = []
    section: str | None = None
    current: IniValue | None = None
    indent_level = 0  # of the line that opened the current key (or header): deeper lines continue the value
    for number, raw in enumerate(text.split("\n"), start=1):
        stripped = raw.strip()
        if not stripped or stripped.startswith(("#", ";")):
            continue  # blank lines and comments do not end a value (configparser's empty_lines_in_values)
        indent = len(raw) - len(raw.lstrip())
        if current is not None and indent > indent_level:
            _add(current, number, stripped)
            continue
        indent_level = indent
        header = _SECTION.match(stripped)
        if header:
            section, current = header.group("header"), None
            continue
        option = _OPTION.match(stripped) if section is not None else None
        if section is None or option is None or not option.group("option"):
            current = None  # not INI syntax configparser accepts: skip the line and whatever is indented under it
            continue
        current = IniValue(section, option.group("option").rstrip().lower(), number)
        values.append(current)
        _add(current, number, option.group("value"))
    return values


def _add(value: IniValue, number: int, text: str) -> None:
    text = _INLINE_COMMENT.sub("", text).strip()
    if text:
        value.items.append((number, text))
