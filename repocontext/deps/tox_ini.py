"""tox.ini: the `deps` of every `[testenv]` / `[testenv:NAME]` section.

Each line is pip requirement syntax, possibly behind a factor condition
(`py38: Django>=2.2,<3`, `!lint: pytest`); `-r` / `-c` lines (with
`{toxinidir}/` or a path relative to tox.ini) are returned as includes.
Lines with other substitutions (`{[testenv]deps}`, `{env:X}`) are left out:
their values live elsewhere or only exist at run time. Test environments
install test tooling, so every record is dev.
"""

from __future__ import annotations

import re

from repocontext.deps.common import Issue, Parsed
from repocontext.deps.ini_lines import ini_values
from repocontext.deps.requirements import parse_line

_FACTORS = re.compile(r"^[\w{}.!,-]+:(?!//)\s*")  # `py38,py39: `, `!lint: `; not a `scheme://` URL
_TOXINIDIR = re.compile(r"\{toxinidir\}/")


def deps_content(text: str) -> str:
    """A `deps` line without its factor condition and with `{toxinidir}/` resolved to tox.ini's directory."""
    return _TOXINIDIR.sub("", _FACTORS.sub("", text, count=1))


def parse_tox_ini(path: str, text: str) -> Parsed:
    result = Parsed()
    for value in ini_values(text):
        if value.key != "deps" or not (value.section == "testenv" or value.section.startswith("testenv:")):
            continue
        section = f"{value.section}.deps"
        for line, raw in value.items:
            content = deps_content(raw)
            if "{" in content:
                result.issues.append(Issue(f"tox substitution not expanded: {raw}", path, line, "info"))
                continue
            result.add(parse_line(path, line, content, True, section))
    return result
