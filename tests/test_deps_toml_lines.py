"""Locating TOML keys and values by line."""

from __future__ import annotations

from repocontext.deps.toml_lines import TomlLines, split_key

TEXT = '''\
title = "x"
[tool.poetry.group."my.group".dependencies]
'requests' = "^2"
pytest-cov = "*"
description = """
[not.a.table]
"""
[[package]]
name = "a"
[package.dependencies]
b = "*"
[[package]]
name = "b"
'''


def test_split_key() -> None:
    assert split_key('tool.poetry.group."my.group".dependencies') == (
        "tool", "poetry", "group", "my.group", "dependencies")
    assert split_key("a . 'b c' . d") == ("a", "b c", "d")


def test_tables_keys_values() -> None:
    lines = TomlLines(TEXT)
    assert lines.array_headers(("package",)) == [8, 12]
    group = ("tool", "poetry", "group", "my.group", "dependencies")
    assert lines.find(group, ("requests",)) == 3
    assert lines.find(group, ("pytest-cov",)) == 4
    assert lines.find(group, ("cov",)) is None
    assert lines.find(("not", "a", "table"), ("x",)) is None  # inside a multi-line string
    assert lines.find(("package", "dependencies"), ("b",), within=(7, 11)) == 11
    assert lines.find(("package", "dependencies"), ("b",), within=(11, 13)) is None
    assert lines.find((), ("title",), "x") == 1


# A pyproject.toml shaped like real ones that embed another file's text in a multi-line string (tox's
# `legacy_tox_ini`, a long `description`): the embedded lines look like keys and requirement strings.
EMBEDDED = '''\
[project]
name = "svc"
description = """
A service. Pin it the way we do:
dependencies = ["requests==2.25.0"]
"""
dependencies = ["requests==2.25.0"]

[tool.tox]
legacy_tox_ini = \'\'\'
[tox]
envlist = py311
[testenv]
deps = requests==2.25.0
\'\'\'
'''


def test_lines_inside_multiline_strings_are_never_found() -> None:
    lines = TomlLines(EMBEDDED)
    assert lines.find(("project",), ("dependencies",)) == 7
    assert lines.find(("project",), ("dependencies",), "requests==2.25.0") == 7
    assert lines.find(("tool", "tox"), ("legacy_tox_ini",)) == 10
    assert [t.key for t in lines.tables] == [(), ("project",), ("tool", "tox")]
