"""plan_upgrade on setup.cfg, setup.py, Pipfile (+ Pipfile.lock), tox.ini, conda files and requirement layouts.

As in test_remediation_edits: records come from the real probe over a git repo and edits are applied with
apply_edits, so only the version text may change; extras, markers, comments, quotes and CRLF stay.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from test_remediation_edits import plan_for

DJANGO = 'Django[argon2]==2.2.24 ; python_version >= "3.6"  # web\n'


def test_requirement_keeps_extras_markers_and_comment(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"requirements/base.txt": "six\n" + DJANGO, "requirements.txt": "-r requirements/base.txt\n"})
    plan, after = plan_for(repo, "PyPI", "django", "2.2.28")
    assert after == {"requirements/base.txt": "six\n" + DJANGO.replace("2.2.24", "2.2.28")}
    assert [(e.file, e.line, e.old, e.new) for e in plan.edits] == [
        ("requirements/base.txt", 2, "Django[argon2]==2.2.24", "Django[argon2]==2.2.28")]


def test_crlf_files_keep_their_line_endings(make_repo: Callable[..., Path]) -> None:
    files = {"base-requirements.txt": b"Pillow==8.3.1\r\nDjango==2.2.24\r\n",
             "setup.cfg": b"[options]\r\ninstall_requires =\r\n    Django>=2.2,<3\r\n"}
    repo = make_repo(files)
    _, after = plan_for(repo, "PyPI", "django", "2.2.28")
    assert after == {"base-requirements.txt": "Pillow==8.3.1\r\nDjango==2.2.28\r\n",
                     "setup.cfg": "[options]\r\ninstall_requires =\r\n    Django>=2.2.28,<3\r\n"}


SETUP_CFG = """\
[options]
install_requires =
    requests[socks]>=2.25 ; python_version >= "3.8"  # http
    Django==3.2.19
tests_require = requests-mock; requests==2.30.0

[options.extras_require]
s3 = boto3>=1.20
"""


def test_setup_cfg(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"setup.cfg": SETUP_CFG})
    plan, after = plan_for(repo, "PyPI", "requests", "2.31.0")
    assert after == {"setup.cfg": SETUP_CFG.replace("requests[socks]>=2.25", "requests[socks]>=2.31.0")
                     .replace("requests==2.30.0", "requests==2.31.0")}
    assert [(e.line, e.old) for e in plan.edits] == [(3, "requests[socks]>=2.25"), (5, "requests==2.30.0")]
    assert plan.regenerate == [] and plan.skipped == []


SETUP_PY = """\
from setuptools import setup

setup(
    name="svc",
    install_requires=["requests[socks]>=2.25; python_version>='3.8'", 'Django==3.2.19'],  # pinned
    extras_require={"test": ["pytest"]},
)
"""


def test_setup_py_string_literals(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"setup.py": SETUP_PY})
    _, after = plan_for(repo, "PyPI", "requests", "2.31.0")
    assert after == {"setup.py": SETUP_PY.replace(">=2.25;", ">=2.31.0;")}
    _, after = plan_for(repo, "PyPI", "django", "3.2.20")
    assert after == {"setup.py": SETUP_PY.replace("'Django==3.2.19'", "'Django==3.2.20'")}


PIPFILE = """\
[packages]
requests = "==2.30.0"  # http
Django = {version = ">=3.2", extras = ["argon2"]}
flask = "*"

[packages.jinja2]
version = "==2.11.3"
"""
PIPFILE_LOCK = """\
{
    "_meta": {"hash": {"sha256": "0000"}, "pipfile-spec": 6},
    "default": {
        "requests": {"hashes": ["sha256:aaaa"], "version": "==2.30.0"},
        "urllib3": {"hashes": ["sha256:bbbb"], "version": "==1.26.5"},
        "flask": {"hashes": ["sha256:cccc"], "version": "==2.3.3"}
    }
}
"""


def test_pipfile_forms_and_the_lock_is_regenerated(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"app/Pipfile": PIPFILE, "app/Pipfile.lock": PIPFILE_LOCK})
    for package, target, old, new in [("requests", "2.31.0", '"==2.30.0"', '"==2.31.0"'),
                                      ("django", "3.2.20", '">=3.2"', '">=3.2.20"'),
                                      ("jinja2", "3.1.3", '"==2.11.3"', '"==3.1.3"')]:
        plan, after = plan_for(repo, "PyPI", package, target)
        assert after == {"app/Pipfile": PIPFILE.replace(old, new)}
        assert [(a.file, a.cwd, a.command) for a in plan.regenerate] == [("app/Pipfile.lock", "app", "pipenv lock")]
    assert "Pipfile.lock" not in str(after)  # never edited


def test_pipfile_star_and_transitive_lock_entry(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"Pipfile": PIPFILE, "Pipfile.lock": PIPFILE_LOCK})
    plan, after = plan_for(repo, "PyPI", "flask", "2.3.3")
    assert after == {} and plan.regenerate == [] and plan.skipped == []
    assert plan.notes[0].startswith('Pipfile:4: `flask = "*"`: `*` sets no lower bound and already allows 2.3.3')
    plan, after = plan_for(repo, "PyPI", "urllib3", "1.26.18")
    assert after == {} and [a.command for a in plan.regenerate] == ["pipenv lock"]
    assert plan.skipped[0].startswith("Pipfile.lock:5: urllib3 1.26.5 is a transitive dependency only")
    assert "`pipenv lock` moves it to the newest version its dependents allow" in plan.skipped[0]


TOX = """\
[testenv]
deps =
    django32: Django>=3.2,<3.3  # LTS
    py38,py39: Django==4.2.0
commands = pytest
"""


def test_tox_factor_conditions_stay(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"tox.ini": TOX})
    plan, after = plan_for(repo, "PyPI", "django", "3.2.20")
    assert after == {"tox.ini": TOX.replace("Django>=3.2,<3.3", "Django>=3.2.20,<3.3")}
    assert "tox.ini:4: `Django==4.2.0`: `==4.2.0` already excludes every version below 3.2.20; no edit" in plan.notes


ENVIRONMENT = """\
name: web
dependencies:
  - python=3.11
  - pip:
    - "Django[argon2]==2.2.24 ; python_version >= '3.6'"  # web
    - 'requests>=2.25'
"""


def test_conda_pip_items_keep_quotes_extras_and_markers(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"environment.yml": ENVIRONMENT})
    _, after = plan_for(repo, "PyPI", "django", "2.2.28")
    assert after == {"environment.yml": ENVIRONMENT.replace("==2.2.24", "==2.2.28")}
    _, after = plan_for(repo, "PyPI", "requests", "2.31.0")
    assert after == {"environment.yml": ENVIRONMENT.replace("'requests>=2.25'", "'requests>=2.31.0'")}
