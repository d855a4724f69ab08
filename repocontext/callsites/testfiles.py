"""Which files are tests, under which framework, and which repository files they import.

Test files by name: pytest `test_*.py`, `*_test.py`, `conftest.py`;
jest/vitest `*.test.<ext>`, `*.spec.<ext>` and anything under `__tests__/`
(ext: js, mjs, cjs, jsx, ts, tsx); Go `*_test.go`. By content: a Python file
named `test*.py` (unittest's discovery pattern, e.g. Django's `tests.py`) or
under a `test`/`tests` directory that defines a class deriving from a
`*TestCase` is a unittest file. Rust, Ruby, PHP, Java/Kotlin and C# test
files: `testfiles_langs`.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from pathlib import PurePosixPath

from repocontext.callsites.testfiles_langs import kind_of_other_test
from repocontext.paths import is_plain, split_path, suffix

JS_SUFFIXES = (".js", ".mjs", ".cjs", ".jsx", ".ts", ".tsx")
_JS_TEST = re.compile(r".+\.(test|spec)\.(js|mjs|cjs|jsx|ts|tsx)")
_TEST_DIRS = frozenset({"test", "tests", "testing"})
_JS_TO_TS = {".js": (".ts", ".tsx"), ".mjs": (".mts",), ".cjs": (".cts",), ".jsx": (".tsx",)}


def kind_of_test(path: str) -> str | None:
    """"python", "js", "go", or one of `testfiles_langs.OTHER_KINDS`, when the path names a test file; None
    otherwise (content not considered)."""
    name = split_path(path)[1]
    if name.endswith(".py"):
        if name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py":
            return "python"
        return None
    if name.endswith("_test.go"):
        return "go"
    if name.endswith(JS_SUFFIXES) and (_JS_TEST.fullmatch(name) or "__tests__" in _dir_parts(path)):
        return "js"
    return kind_of_other_test(path)


def _dir_parts(path: str) -> list[str] | tuple[str, ...]:
    """The directory names above a file, as PurePosixPath(path).parts[:-1] gives them."""
    return path.split("/")[:-1] if is_plain(path) else PurePosixPath(path).parts[:-1]


def may_hold_unittest(path: str) -> bool:
    """A .py file worth opening to look for a TestCase subclass (named test*.py or under a tests dir)."""
    name = split_path(path)[1]
    if suffix(path) != ".py":
        return False
    return name.startswith("test") or not _TEST_DIRS.isdisjoint(_dir_parts(path))


def python_framework(imports: list[str], test_case: bool, path: str) -> str:
    if split_path(path)[1] == "conftest.py" or not test_case:
        return "pytest"
    uses_pytest = any(m == "pytest" or m.startswith(("pytest.", "_pytest")) for m in imports)
    return "pytest" if uses_pytest else "unittest"


def js_framework(imports: list[str], repo_default: str) -> str:
    if "vitest" in imports:
        return "vitest"
    if any(m in ("@jest/globals", "jest") for m in imports):
        return "jest"
    if "node:test" in imports:
        return "node:test"
    return repo_default


def resolve_js(importer: str, spec: str, exists: Callable[[str], bool]) -> str | None:
    """The repository file a relative specifier in `importer` names (Node / bundler resolution, simplified)."""
    if not spec.startswith("."):
        return None
    target = posixpath.normpath(posixpath.join(posixpath.dirname(importer), spec))
    if target.startswith("../") or target == "..":
        return None
    candidates = [target]
    stem, suffix = posixpath.splitext(target)
    candidates += [stem + alt for alt in _JS_TO_TS.get(suffix, ())]  # TS sources imported as .js
    candidates += [target + ext for ext in JS_SUFFIXES]
    candidates += [f"{target}/index{ext}" for ext in JS_SUFFIXES]
    return next((c for c in candidates if exists(c)), None)
