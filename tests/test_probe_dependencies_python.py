"""The dependencies probe on Python layouts: requirement files under any name, files other manifests point at."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from conftest import write_files

from repocontext.gather import gather
from repocontext.model import RepoContext
from repocontext.probes.dependencies import DependenciesProbe

LAYOUT = {
    # pythondotorg's layout: requirements.txt only includes the others
    "base-requirements.txt": "Django==2.2.24\nPillow==8.3.1  # images\n",
    "prod-requirements.txt": "gunicorn==20.1.0\n",
    "dev-requirements.txt": "-r base-requirements.txt\n--requirement=reqs/testing.txt\nfactory-boy==3.2.1\n",
    "requirements.txt": "-r base-requirements.txt\n-r prod-requirements.txt\n",
    "reqs/testing.txt": "pytest==7.4.0\n--constraint ../pins.txt\n",  # found only through an include
    "pins.txt": "idna<3.7\n-c pins.txt\n",  # a constraints file including itself
    "requirements/envs/ci.in": "-r ../../base-requirements.txt\n-r missing.txt\ncoverage\n",
    "tox.ini": "[testenv]\ndeps =\n    -r tests/requirements.pip\n    -c tests/upper.txt\n    -r gone.txt\n",
    "tests/requirements.pip": "mock==5.0.0\n",  # no requirement-file name: read because tox.ini points at it
    "tests/upper.txt": "urllib3<2\n",
    "Pipfile": '[packages]\nrequests = "*"\n',
    "Pipfile.lock": '{"default": {\n"requests": {"version": "==2.30.0"},\n"idna": {"version": "==3.4"}\n}}\n',
}


def _gather(repo: Path, previous: RepoContext | None = None) -> RepoContext:
    return gather(repo, previous=previous.model_dump(mode="json") if previous else None,
                  probes=[DependenciesProbe()])


def test_requirement_files_under_any_name_and_their_includes(make_repo: Callable[..., Path]) -> None:
    context = _gather(make_repo(LAYOUT))
    rows = {(d.name, d.file, d.line, d.kind, d.direct, d.dev) for deps in context.dependencies.values() for d in deps}
    assert rows == {
        ("django", "base-requirements.txt", 1, "manifest", True, False),
        ("pillow", "base-requirements.txt", 2, "manifest", True, False),
        ("gunicorn", "prod-requirements.txt", 1, "manifest", True, False),
        ("factory-boy", "dev-requirements.txt", 3, "manifest", True, True),
        ("pytest", "reqs/testing.txt", 1, "manifest", True, True),  # "testing" is a dev word
        ("idna", "pins.txt", 1, "constraint", False, False),
        ("coverage", "requirements/envs/ci.in", 3, "manifest", True, True),  # "ci" too
        ("mock", "tests/requirements.pip", 1, "manifest", True, False),
        ("urllib3", "tests/upper.txt", 1, "constraint", False, False),  # tox.ini names it with -c
        ("requests", "Pipfile", 2, "manifest", True, False),
        ("requests", "Pipfile.lock", 2, "lockfile", True, False),
        ("idna", "Pipfile.lock", 3, "lockfile", False, False),  # not in the Pipfile
    }
    problems = [(d.file, d.line, d.message) for d in context.diagnostics if d.probe == "dependencies"]
    assert problems == [
        ("pins.txt", 2, "include cycle: pins.txt -> pins.txt"),
        ("requirements/envs/ci.in", 2, "included file not found or unreadable: requirements/envs/missing.txt"),
        ("tox.ini", 5, "included file not found: gone.txt"),
    ]


def test_output_is_sorted_and_stable(make_repo: Callable[..., Path]) -> None:
    repo = make_repo(LAYOUT)
    first, second = _gather(repo), _gather(repo)
    assert first.model_dump()["dependencies"] == second.model_dump()["dependencies"]
    assert list(first.dependencies) == sorted(first.dependencies)
    for deps in first.dependencies.values():
        assert [(d.file, d.line) for d in deps] == sorted((d.file, d.line) for d in deps)


def test_files_only_pointed_at_count_in_the_fingerprint(make_repo: Callable[..., Path]) -> None:
    repo = make_repo(LAYOUT)
    first = _gather(repo)
    assert _gather(repo, first).meta.probes["dependencies"].reused
    write_files(repo, {"tests/requirements.pip": "mock==5.1.0\n"})  # named by tox.ini only
    again = _gather(repo, first)
    assert not again.meta.probes["dependencies"].reused and again.dependencies["mock"][0].version == "5.1.0"
    write_files(repo, {"gone.txt": "six\n"})  # a missing include appears
    third = _gather(repo, again)
    assert not third.meta.probes["dependencies"].reused and "six" in third.dependencies
