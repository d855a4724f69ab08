"""pyproject.toml: PEP 621, PEP 735, Poetry tables and constraint syntax, uv dev-dependencies."""

from __future__ import annotations

from pathlib import Path

from repocontext.deps.common import Parsed
from repocontext.deps.pyproject import parse_pyproject, poetry_exact

PYPROJECT = """\
[project]
name = "demo"
dependencies = [
    "Flask>=2.0",
    'PyYAML==6.0.1',
    "pytest-cov ; extra == 'never'",
]

[project.optional-dependencies]
s3 = ["boto3>=1.28"]
test = ["pytest>=8", "coverage[toml]"]
cli = [
  "typer",
]

[dependency-groups]
lint = ["ruff==0.6.0", {include-group = "typing"}]
typing = ["mypy"]

[tool.uv]
dev-dependencies = ["pre-commit>=3"]

[tool.poetry.dependencies]
python = "^3.11"
"requests" = "^2.31"
Django = { version = "4.2.1", extras = ["bcrypt"], optional = true, markers = "sys_platform != 'win32'" }
mylib = { git = "https://github.com/org/mylib.git", tag = "v1" }
numpy = [
    { version = "<1.25", python = "<3.9" },
    { version = "==1.26.4", python = ">=3.9" },
]

[tool.poetry.group.dev.dependencies]
black = "*"

[tool.poetry.group."web-main".dependencies]
gunicorn = "21.2.0"

[tool.poetry.dev-dependencies]
mypy = "~1.5"
"""


def _rows(parsed: Parsed) -> list[tuple]:
    return [(d.name, d.version, d.constraint, d.direct, d.path, d.dev, d.file, d.line, d.section)
            for d in parsed.deps]


def test_all_tables(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    parsed = parse_pyproject("svc/pyproject.toml", (tmp_path / "pyproject.toml").read_text())
    f = "svc/pyproject.toml"
    assert _rows(parsed) == [
        ("flask", None, ">=2.0", True, [], False, f, 4, "project.dependencies"),
        ("pyyaml", "6.0.1", "==6.0.1", True, [], False, f, 5, "project.dependencies"),
        ("pytest-cov", None, None, True, [], False, f, 6, "project.dependencies"),
        ("typer", None, None, True, [], False, f, 13, "project.optional-dependencies.cli"),
        ("boto3", None, ">=1.28", True, [], False, f, 10, "project.optional-dependencies.s3"),
        ("pytest", None, ">=8", True, [], True, f, 11, "project.optional-dependencies.test"),
        ("coverage", None, None, True, [], True, f, 11, "project.optional-dependencies.test"),
        ("ruff", "0.6.0", "==0.6.0", True, [], True, f, 17, "dependency-groups.lint"),
        ("mypy", None, None, True, [], True, f, 18, "dependency-groups.typing"),
        ("pre-commit", None, ">=3", True, [], True, f, 21, "tool.uv.dev-dependencies"),
        ("django", "4.2.1", "4.2.1", True, [], False, f, 26, "tool.poetry.dependencies"),
        ("mylib", None, None, True, [], False, f, 27, "tool.poetry.dependencies"),
        ("numpy", None, "<1.25", True, [], False, f, 28, "tool.poetry.dependencies"),
        ("numpy", "1.26.4", "==1.26.4", True, [], False, f, 28, "tool.poetry.dependencies"),
        ("requests", None, "^2.31", True, [], False, f, 25, "tool.poetry.dependencies"),
        ("mypy", None, "~1.5", True, [], True, f, 40, "tool.poetry.dev-dependencies"),
        ("black", None, "*", True, [], True, f, 34, "tool.poetry.group.dev.dependencies"),
        ("gunicorn", "21.2.0", "21.2.0", True, [], True, f, 37, "tool.poetry.group.web-main.dependencies"),
    ]
    django = parsed.deps[10]
    assert (django.extras, django.markers) == (["bcrypt"], "sys_platform != 'win32'")
    assert parsed.deps[11].source == "https://github.com/org/mylib.git"
    assert parsed.deps[2].markers == 'extra == "never"'
    assert parsed.deps[6].extras == ["toml"]
    assert parsed.issues == []


def test_inline_and_dotted_tables_are_located() -> None:
    text = ('[project]\nname = "x"\noptional-dependencies.s3 = ["boto3"]\n'
            'optional-dependencies.test = [\n  "boto3",\n]\n\n'
            '[tool]\npoetry = { dependencies = { "attrs" = "1.0" } }\n')
    assert _rows(parse_pyproject("pyproject.toml", text)) == [
        ("boto3", None, None, True, [], False, "pyproject.toml", 3, "project.optional-dependencies.s3"),
        ("boto3", None, None, True, [], True, "pyproject.toml", 5, "project.optional-dependencies.test"),
        ("attrs", "1.0", "1.0", True, [], False, "pyproject.toml", 9, "tool.poetry.dependencies"),
    ]


def test_poetry_main_group_is_not_dev_and_python_is_skipped(tmp_path: Path) -> None:
    text = '[tool.poetry.group.main.dependencies]\npython = ">=3.9"\nattrs = ">=23"\n'
    parsed = parse_pyproject("pyproject.toml", text)
    assert _rows(parsed) == [("attrs", None, ">=23", True, [], False, "pyproject.toml", 3,
                              "tool.poetry.group.main.dependencies")]


def test_malformed_toml_reports_line_and_bad_entries_are_skipped() -> None:
    bad = parse_pyproject("pyproject.toml", '[project]\nname = "x"\ndependencies = ["a",\n[oops\n')
    assert [(i.file, i.line, i.level) for i in bad.issues] == [("pyproject.toml", 4, "error")]
    assert bad.deps == []
    mixed = parse_pyproject("pyproject.toml", '[project]\ndependencies = ["ok>=1", "bad >>= 1", 3]\n')
    assert _rows(mixed) == [("ok", None, ">=1", True, [], False, "pyproject.toml", 2, "project.dependencies")]
    assert [(i.line, i.message.split(":")[0]) for i in mixed.issues] == [
        (2, "unparsable requirement 'bad >>= 1'"), (2, "project.dependencies")]
    not_array = parse_pyproject("pyproject.toml", '[project]\ndependencies = "flask"\n')
    assert [(i.line, i.message) for i in not_array.issues] == [(2, "project.dependencies is not an array")]


def test_poetry_exact() -> None:
    specs = ("1.2.3", "==1.2.3", "=2.0", "^1.2", "~1.2", "*", ">=1,<2", "1.*", "1.2.3 || 1.3")
    assert [poetry_exact(c) for c in specs] == ["1.2.3", "1.2.3", "2.0", None, None, None, None, None, None]
