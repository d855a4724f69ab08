"""setup.cfg, setup.py, Pipfile, Pipfile.lock, tox.ini and conda environment files: records with line numbers."""

from __future__ import annotations

import json
import textwrap

from repocontext.deps.common import Include, Parsed
from repocontext.deps.conda_env import parse_conda_env
from repocontext.deps.ini_lines import ini_values
from repocontext.deps.pipfile import parse_pipfile, parse_pipfile_lock
from repocontext.deps.setup_cfg import parse_setup_cfg
from repocontext.deps.setup_py import parse_setup_py
from repocontext.deps.tox_ini import parse_tox_ini


def _rows(parsed: Parsed) -> list[tuple]:
    return [(d.name, d.line, d.version, d.constraint, d.dev, d.section, d.extras, d.markers) for d in parsed.deps]


def _issues(parsed: Parsed) -> list[tuple]:
    return [(i.line, i.level, i.message) for i in parsed.issues]


SETUP_CFG = """\
[metadata]
name = svc
install_requires = not-here==1.0

[options]
install_requires =
    requests[socks]>=2.25 ; python_version >= "3.8"  # http
    # a comment inside the value
    Django==3.2.19

tests_require = pytest>=7; coverage
packages = find:

[options.extras_require]
Docs =
    sphinx==7.0
s3 = file: requirements/s3.txt, ../../outside.txt
"""


def test_setup_cfg() -> None:
    parsed = parse_setup_cfg("pkg/setup.cfg", SETUP_CFG)
    assert _rows(parsed) == [
        ("requests", 7, None, ">=2.25", False, "options.install_requires", ["socks"], 'python_version >= "3.8"'),
        ("django", 9, "3.2.19", "==3.2.19", False, "options.install_requires", [], None),
        ("pytest", 11, None, ">=7", True, "options.tests_require", [], None),  # one line: `;`-separated
        ("coverage", 11, None, None, True, "options.tests_require", [], None),
        ("sphinx", 16, "7.0", "==7.0", True, "options.extras_require.docs", [], None),  # keys are lower-cased
    ]
    assert parsed.includes == [Include("pkg/setup.cfg", 17, "r", "pkg/requirements/s3.txt")]
    assert _issues(parsed) == [(17, "warning", "`file:` target outside the repository: ../../outside.txt")]


def test_ini_values_follow_configparser() -> None:
    text = "[a]\nk = 1\n  2\n\n  3\n; note\n#x = y\nK2: v\n[b]\n  orphan\nbad line\n  under-bad\n"
    assert [(v.section, v.key, v.line, v.items) for v in ini_values(text)] == [
        ("a", "k", 2, [(2, "1"), (3, "2"), (5, "3")]), ("a", "k2", 8, [(8, "v")])]


SETUP_PY = '''\
from setuptools import setup

BASE = [
    "requests[socks]>=2.25 ; python_version >= '3.8'",
    'Django==3.2.19',
]
TESTS = ["pytest"]
TESTS.append("coverage")
EXTRA = """
    boto3>=1.20
    # not this one
"""

setup(
    name="svc",
    install_requires=BASE + ["six"],
    tests_require=TESTS,
    extras_require={
        "docs": ["sphinx==7.0"],
        "s3": EXTRA,
        "test:python_version<'3.9'": ("mock",),
        dynamic(): [],
    },
    **more,
)
'''


def test_setup_py_literals_only() -> None:
    parsed = parse_setup_py("setup.py", SETUP_PY)
    assert _rows(parsed) == [
        ("requests", 4, None, ">=2.25", False, "install_requires", ["socks"], 'python_version >= "3.8"'),
        ("django", 5, "3.2.19", "==3.2.19", False, "install_requires", [], None),
        ("six", 16, None, None, False, "install_requires", [], None),
        ("sphinx", 19, "7.0", "==7.0", True, "extras_require.docs", [], None),
        ("boto3", 10, None, ">=1.20", False, "extras_require.s3", [], None),
        ("mock", 21, None, None, True, "extras_require.test", [], None),
    ]
    assert _issues(parsed) == [
        (17, "warning", "tests_require is not a literal (setup.py is never run, so its requirements are unknown): "
                        "TESTS"),  # TESTS is mutated
        (22, "warning", "extras_require is not a literal (setup.py is never run, so its requirements are unknown): "
                        "dynamic()"),
        (24, "info", "setup(**…): requirements passed through ** are not read (setup.py is never run)"),
    ]


def test_setup_py_that_does_not_parse() -> None:
    warned = parse_setup_py("setup.py", 'PATTERN = "\\d+"\nsetup(install_requires=["six"])\n')
    assert [d.name for d in warned.deps] == ["six"] and warned.issues == []  # a warning is not a syntax error
    parsed = parse_setup_py("setup.py", "print 'python 2'\n")
    assert parsed.deps == [] and [(i.line, i.level) for i in parsed.issues] == [(1, "warning")]
    assert parsed.issues[0].message.startswith("setup.py is not valid Python 3")


PIPFILE = """\
[[source]]
url = "https://pypi.org/simple"
name = "pypi"

[packages]
requests = "==2.30.0"
Django = {version = ">=3.2", extras = ["argon2"], markers = "python_version >= '3.8'"}
flask = "*"
pywin32 = {version = "*", sys_platform = "== 'win32'"}
ourlib = {git = "https://github.com/org/ourlib.git", ref = "v1"}

[dev-packages]
pytest = ">=7"

[docs]
sphinx = "==7.0"

[packages.jinja2]
version = "==2.11.3"

[requires]
python_version = "3.11"
"""


def test_pipfile() -> None:
    parsed = parse_pipfile("Pipfile", PIPFILE)
    assert _rows(parsed) == [
        ("pytest", 13, None, ">=7", True, "dev-packages", [], None),
        ("sphinx", 16, "7.0", "==7.0", True, "docs", [], None),
        ("django", 7, None, ">=3.2", False, "packages", ["argon2"], "python_version >= '3.8'"),
        ("flask", 8, None, "*", False, "packages", [], None),
        ("jinja2", 18, "2.11.3", "==2.11.3", False, "packages", [], None),  # the [packages.jinja2] header
        ("ourlib", 10, None, None, False, "packages", [], None),
        ("pywin32", 9, None, "*", False, "packages", [], "sys_platform == 'win32'"),
        ("requests", 6, "2.30.0", "==2.30.0", False, "packages", [], None),
    ]
    assert parsed.deps[5].source == "git+https://github.com/org/ourlib.git" and parsed.issues == []
    assert [(i.line, i.level) for i in parse_pipfile("Pipfile", "[packages\n").issues] == [(1, "error")]


PIPFILE_LOCK = json.dumps({
    "_meta": {"hash": {"sha256": "0" * 64}, "pipfile-spec": 6, "requires": {"python_version": "3.11"}},
    "default": {
        "requests": {"hashes": ["sha256:" + "a" * 64], "index": "pypi", "version": "==2.30.0"},
        "urllib3": {"hashes": ["sha256:" + "b" * 64], "markers": "python_version >= '3.7'", "version": "==1.26.5"},
        "ourlib": {"git": "https://github.com/org/ourlib.git", "ref": "abc123"},
    },
    "develop": {"pytest": {"hashes": [], "version": "==7.4.0"}},
}, indent=4) + "\n"


def test_pipfile_lock_direct_set_from_the_pipfile() -> None:
    parsed = parse_pipfile_lock("Pipfile.lock", PIPFILE_LOCK, {"requests": False, "pytest": True, "ourlib": False})
    assert [(d.name, d.line, d.version, d.direct, d.dev, d.kind, d.section, d.markers) for d in parsed.deps] == [
        ("ourlib", 26, None, True, False, "lockfile", "default", None),
        ("requests", 12, "2.30.0", True, False, "lockfile", "default", None),
        ("urllib3", 19, "1.26.5", False, False, "lockfile", "default", "python_version >= '3.7'"),
        ("pytest", 32, "7.4.0", True, True, "lockfile", "develop", None),
    ]
    assert parsed.deps[0].source == "git+https://github.com/org/ourlib.git" and parsed.issues == []
    alone = parse_pipfile_lock("Pipfile.lock", PIPFILE_LOCK, None)
    assert all(d.direct for d in alone.deps) and [i.level for i in alone.issues] == ["info"]


TOX = """\
[tox]
envlist = py{38,39}-django{32,42}
requires = tox-gh>=1.0

[testenv]
deps =
    -r{toxinidir}/requirements/test.txt
    -c constraints/tox.txt
    django32: Django>=3.2,<3.3
    py38,py39: mock==4.0.3  # old pythons
    !lint: pytest-cov
    {[base]deps}
    .[test]
commands = pytest {posargs}

[testenv:lint]
deps = flake8==6.0.0
"""


def test_tox_ini() -> None:
    parsed = parse_tox_ini("ci/tox.ini", TOX)
    assert _rows(parsed) == [
        ("django", 9, None, ">=3.2,<3.3", True, "testenv.deps", [], None),
        ("mock", 10, "4.0.3", "==4.0.3", True, "testenv.deps", [], None),
        ("pytest-cov", 11, None, None, True, "testenv.deps", [], None),
        ("flake8", 17, "6.0.0", "==6.0.0", True, "testenv:lint.deps", [], None),
    ]
    assert parsed.includes == [Include("ci/tox.ini", 7, "r", "ci/requirements/test.txt"),
                                Include("ci/tox.ini", 8, "c", "ci/constraints/tox.txt")]
    assert _issues(parsed) == [(12, "info", "tox substitution not expanded: {[base]deps}"),
                               (13, "info", "unnamed URL/path/editable requirement not recorded: .[test]")]


ENVIRONMENT = textwrap.dedent("""\
    name: app
    channels: [conda-forge]
    dependencies:
      - python=3.11
      - numpy=1.24
      - pip
      - pip:
        - "Django[argon2]==3.2.19 ; python_version >= '3.6'"  # web
        - requests>=2.25
        - -r ../requirements/base.txt
        - --index-url https://pypi.org/simple
        - {not: a string}
""")


def test_conda_environment_pip_section() -> None:
    parsed = parse_conda_env("env/environment-dev.yml", ENVIRONMENT)
    assert _rows(parsed) == [
        ("django", 8, "3.2.19", "==3.2.19", True, "dependencies.pip", ["argon2"], 'python_version >= "3.6"'),
        ("requests", 9, None, ">=2.25", True, "dependencies.pip", [], None),
    ]
    assert parsed.includes == [Include("env/environment-dev.yml", 10, "r", "requirements/base.txt")]
    assert _issues(parsed) == [(12, "warning", "pip: item is not a requirement string")]
    assert _issues(parse_conda_env("environment.yml", "dependencies: [\n")) == [
        (2, "error", "invalid YAML: while parsing a flow node")]
    assert parse_conda_env("environment.yml", "") == Parsed()
