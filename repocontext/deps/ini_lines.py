"""INI files (setup.cfg, tox.ini) read the way configparser reads them, with the line of every value line.

configparser reports no line numbers, so this scan follows its rules for the
parts these files use: `[section]` headers, `key = value` or `key: value`
(keys lower-cased), values continued on indented lines, whole-line `#` / `;`
comments skipped even inside a value. Inline `#` comments are dropped from
value lines too (tox does; a requirement never contains ` #`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_SECTION = re.compile(r"^\[([^\]]+)\]\s*(?:[#;].*)?$")
_KEY = re.compile(r"^([^\s=:][^=:]*?)\s*[=:]\s*(.*)$")
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
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not stripped or stripped.startswith(("#", ";")):
            continue  # blank lines and comments do not end a value (configparser's empty_lines_in_values)
        if raw[0].isspace():
            if current is not None:
                _add(current, number, stripped)
            continue
        header = _SECTION.match(stripped)
        if header:
            section, current = header.group(1).strip(), None
            continue
        key = _KEY.match(stripped)
        if key is None or section is None:
            current = None  # not INI syntax configparser accepts: skip the line and whatever is indented under it
            continue
        current = IniValue(section, key.group(1).strip().lower(), number)
        values.append(current)
        _add(current, number, key.group(2))
    return values


def _add(value: IniValue, number: int, text: str) -> None:
    text = _INLINE_COMMENT.sub("", text).strip()
    if text:
        value.items.append((number, text))
