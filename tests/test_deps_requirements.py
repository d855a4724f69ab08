"""pip requirements / constraints files: lines, continuations, options, includes, roles, cycles."""

from __future__ import annotations

from pathlib import Path

import pytest

from repocontext.deps.common import Parsed
from repocontext.deps.requirements import include_closure, logical_lines, parse_file, parse_requirements


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def _reader(root: Path):
    def read(path: str) -> str | None:
        target = root / path
        return target.read_text() if target.is_file() else None
    return read


def _rows(parsed: Parsed) -> list[tuple]:
    return [(d.name, d.version, d.constraint, d.direct, d.path, d.dev, d.file, d.line) for d in parsed.deps]


MAIN = """\
# production requirements
-r requirements/base.txt
--constraint constraints.txt
Flask[dotenv, async] >=2.0,<3 ; python_version < "3.10"  # web framework
requests==2.31.0 \\
    --hash=sha256:aaaa \\
    --hash=sha256:bbbb
urllib3 \\
  >=1.26
-e git+https://github.com/org/lib.git@v1.0#egg=Our_Lib
-e .
./wheels/tool-1.2.0-py3-none-any.whl
pkg @ https://example.com/pkg.zip
not a valid ==== line
--index-url https://pypi.org/simple
-r missing.txt
-r https://example.com/remote.txt
"""


def test_requirement_lines_and_includes(tmp_path: Path) -> None:
    _write(tmp_path, {
        "requirements.txt": MAIN,
        "requirements/base.txt": "zope.interface===5.0\n-r ../requirements.txt\n",
        "constraints.txt": "urllib3<2\nWerkzeug==2.3.7\n",
    })
    parsed = parse_requirements(["requirements.txt"], _reader(tmp_path))
    assert _rows(parsed) == [
        ("urllib3", None, "<2", False, [], False, "constraints.txt", 1),
        ("werkzeug", "2.3.7", "==2.3.7", False, [], False, "constraints.txt", 2),
        ("flask", None, ">=2.0,<3", True, [], False, "requirements.txt", 4),
        ("requests", "2.31.0", "==2.31.0", True, [], False, "requirements.txt", 5),
        ("urllib3", None, ">=1.26", True, [], False, "requirements.txt", 8),
        ("our-lib", None, None, True, [], False, "requirements.txt", 10),
        ("tool", "1.2.0", None, True, [], False, "requirements.txt", 12),
        ("pkg", None, None, True, [], False, "requirements.txt", 13),
        ("zope-interface", "5.0", "===5.0", True, [], False, "requirements/base.txt", 1),
    ]
    flask = parsed.deps[2]
    assert (flask.extras, flask.markers, flask.kind) == (["async", "dotenv"], 'python_version < "3.10"', "manifest")
    assert [d.kind for d in parsed.deps[:2]] == ["constraint", "constraint"]
    assert parsed.deps[5].source == "git+https://github.com/org/lib.git@v1.0#egg=Our_Lib"
    assert parsed.deps[6].source == "./wheels/tool-1.2.0-py3-none-any.whl"
    assert parsed.deps[7].source == "https://example.com/pkg.zip"
    assert [(i.file, i.line, i.level, i.message.split(":")[0]) for i in parsed.issues] == [
        ("requirements.txt", 11, "info", "unnamed URL/path/editable requirement not recorded"),
        ("requirements.txt", 14, "warning", "unparsable requirement 'not a valid ==== line'"),
        ("requirements.txt", 17, "info", "remote include not followed"),
        ("requirements.txt", 16, "warning", "included file not found or unreadable"),
        ("requirements/base.txt", 2, "warning", "include cycle"),
    ]
    assert parsed.issues[-1].message == "include cycle: requirements.txt -> requirements/base.txt -> requirements.txt"


def test_dev_files_constraint_roots_and_manifest_precedence(tmp_path: Path) -> None:
    _write(tmp_path, {
        "requirements-dev.txt": "-r requirements.txt\n-c constraints.txt\npytest>=8\n",
        "requirements.txt": "attrs==23.1.0\n",
        "constraints.txt": "-r requirements.txt\nidna==3.4\n",  # -r from a constraints file: still constraints
        "upper-constraints.txt": "six==1.16.0\n",
    })
    parsed = parse_requirements(["requirements-dev.txt", "upper-constraints.txt"], _reader(tmp_path))
    # requirements.txt is reached through -r from a requirements file: manifest wins over constraint.
    assert [(d.name, d.kind, d.direct, d.dev, d.file) for d in parsed.deps] == [
        ("idna", "constraint", False, False, "constraints.txt"),
        ("pytest", "manifest", True, True, "requirements-dev.txt"),
        ("attrs", "manifest", True, False, "requirements.txt"),
        ("six", "constraint", False, False, "upper-constraints.txt"),
    ]
    assert parsed.issues == []


def test_self_include_and_escape(tmp_path: Path) -> None:
    _write(tmp_path, {"requirements.in": "-r requirements.in\n-r ../../etc/passwd\n--requirement=/abs.txt\nsix\n"})
    parsed = parse_requirements(["requirements.in"], _reader(tmp_path))
    assert _rows(parsed) == [("six", None, None, True, [], False, "requirements.in", 4)]
    assert [(i.line, i.message) for i in parsed.issues] == [
        (2, "include outside the repository: ../../etc/passwd"),
        (3, "include outside the repository: /abs.txt"),
        (1, "include cycle: requirements.in -> requirements.in"),
    ]


def test_logical_lines_join_continuations_and_drop_comments() -> None:
    text = "a \\\nb  # c\n# only a comment \\\nd\n\n  e==1 \\"
    assert logical_lines(text) == [(1, "a b"), (4, "d"), (6, "e==1")]


def test_include_closure_lists_only_files_outside_the_roots(tmp_path: Path) -> None:
    _write(tmp_path, {
        "requirements.txt": "-r deps/common.txt\n-c pins.txt\n",
        "deps/common.txt": "-r more.txt\nsix\n",
        "deps/more.txt": "idna\n",
        "pins.txt": "six==1\n",
    })
    assert include_closure(["requirements.txt"], _reader(tmp_path)) == ["deps/common.txt", "deps/more.txt", "pins.txt"]


# A hashed pip-compile output with a hand-added note that ends in a backslash (as found in the wild: a note
# pasted above a continued pin), and a comment line inside a continuation.
PIP_RULES = """\
#
# This file is autogenerated by pip-compile with Python 3.11
#
certifi==2023.7.22 \\
    --hash=sha256:539cc1d13202e33ca466e88b2807e29f4c13049d6d87031a3c110744495cb082
django==4.2.5  # pinned: see ticket 123 \\
    --hash=sha256:b6b2b5cae821077f137dc4dade696a1c2aa292f892eca28fa8d7bfdf2608ddd4
redis==4.5.3 \\
    # via -r requirements.in
six==1.16.0
requests==2.31.0 \\
"""


def test_continuations_and_comments_agree_with_pip() -> None:
    assert logical_lines(PIP_RULES) == [
        (4, "certifi==2023.7.22     --hash=sha256:539cc1d13202e33ca466e88b2807e29f4c13049d6d87031a3c110744495cb082"),
        (6, "django==4.2.5"),  # the hash line joined the comment: pip never sees it
        (8, "redis==4.5.3"), (10, "six==1.16.0"), (11, "requests==2.31.0")]
    req_file = pytest.importorskip("pip._internal.req.req_file", reason="pip's own parser is not importable")
    pip_lines = list(req_file.ignore_comments(req_file.join_lines(enumerate(PIP_RULES.splitlines(), start=1))))
    assert logical_lines(PIP_RULES) == pip_lines


def test_an_archive_requirement_is_named_by_its_file_name_or_reported() -> None:
    text = ("https://example.org/pkgs/Some_Pkg-2.0.tar.gz\n./wheels/tool-1.2.0-py3-none-any.whl\n"
            "./bad/not-a-wheel.whl\n")
    parsed = parse_file("requirements.txt", text)
    assert [(d.name, d.version, d.line) for d in parsed.deps] == [("some-pkg", "2.0", 1), ("tool", "1.2.0", 2)]
    assert [(i.line, i.message) for i in parsed.issues] == [
        (3, "unnamed URL/path/editable requirement not recorded: ./bad/not-a-wheel.whl")]
