"""setup.cfg: `[options] install_requires` / `tests_require` and `[options.extras_require]`.

Values follow setuptools' list rules: one requirement per line, or on a single
line separated by `;` (which is why setuptools warns about markers written on
one line). `file: a.txt, b.txt` points at requirement files: they are returned
as includes and read as requirement files. tests_require and extras named like
dev tooling ("test", "docs", …) are dev.
"""

from __future__ import annotations

from repocontext.deps.common import Include, Issue, Parsed, is_dev_name, pep508
from repocontext.deps.ini_lines import IniValue, ini_values
from repocontext.deps.requirements import resolve_include

_OPTIONS = {"install_requires": False, "tests_require": True}


def parse_setup_cfg(path: str, text: str) -> Parsed:
    result = Parsed()
    for value in ini_values(text):
        if value.section == "options" and value.key in _OPTIONS:
            _requirements(result, path, value, f"options.{value.key}", _OPTIONS[value.key])
        elif value.section == "options.extras_require":
            _requirements(result, path, value, f"options.extras_require.{value.key}", is_dev_name(value.key))
    return result


def _requirements(result: Parsed, path: str, value: IniValue, section: str, dev: bool) -> None:
    items = value.items
    if len(items) == 1 and items[0][1].startswith("file:"):
        _files(result, path, items[0][0], items[0][1].removeprefix("file:"))
        return
    if len(items) == 1 and ";" in items[0][1]:  # a one-line list is `;`-separated (setuptools' list-semi)
        items = [(items[0][0], part.strip()) for part in items[0][1].split(";") if part.strip()]
    for line, requirement in items:
        result.add(pep508(path, line, requirement, dev, section))


def _files(result: Parsed, path: str, line: int, targets: str) -> None:
    for target in (t.strip() for t in targets.split(",")):
        resolved = resolve_include(path, target) if target else None
        if resolved is None:
            result.issues.append(Issue(f"`file:` target outside the repository: {target}", path, line))
        else:
            result.includes.append(Include(path, line, "r", resolved))
