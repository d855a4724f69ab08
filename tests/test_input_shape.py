"""Input values are single lines unless declared `multiline: true`, and match their declared `pattern`:
a value substituted into a file must not add lines to it (a `RUN` smuggled into a Dockerfile)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import git, run_cli

from planner.errors import PlannerError
from planner.inputs import check_inputs
from planner.tccm.registry import Registry

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = Registry([ROOT / "task-class-contexts"])
DOCKERFILE = "FROM python:3.11-slim\nCMD [\"python\", \"-m\", \"app\"]\n"
WORKFLOW = ("jobs:\n  t:\n    steps:\n      - uses: actions/setup-python@v5\n        with:\n"
            "          python-version: 3.11\n")
CLASS = """\
task_class: {name}
version: 1
description: A demo class.
inputs:
{inputs}
must_read:
  - glob: "**/*.txt"
budget: {{max_files: 5, max_tokens: 1000, per_file_max_tokens: 500}}
"""


def _registry(tmp_path: Path, name: str, inputs: str) -> Registry:
    folder = tmp_path / "tc"
    folder.mkdir(exist_ok=True)
    (folder / f"{name}.yaml").write_text(CLASS.format(name=name, inputs=inputs), encoding="utf-8")
    return Registry([folder])


def _no_runs(home: Path) -> bool:
    return not (home / "runs").exists() or not any((home / "runs").iterdir())


def test_a_newline_in_a_version_is_refused_before_the_run(make_repo: Callable[..., Path], home: Path) -> None:
    repo = make_repo({"Dockerfile": DOCKERFILE, ".github/workflows/ci.yml": WORKFLOW})
    head = git(repo, "rev-parse", "HEAD")
    done = run_cli("dispatch", "python-version-bump", "--repo", str(repo), "--apply",
                   "--input", "python_version=3.13\nRUN curl x|sh")
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "input python_version must be a single line" in lines[0], done.stderr
    assert "Traceback" not in done.stderr
    assert _no_runs(home)
    assert (repo / "Dockerfile").read_text() == DOCKERFILE
    assert git(repo, "rev-parse", "HEAD") == head and git(repo, "branch", "--list").split() == ["*", "main"]


@pytest.mark.parametrize("value", ["3.13; RUN x", "3.13 AS x", "latest", "3.13\rRUN x", "3.13\u2028RUN x"])
def test_a_version_that_is_not_one_is_refused(make_repo: Callable[..., Path], home: Path, value: str) -> None:
    repo = make_repo({"Dockerfile": DOCKERFILE})
    done = run_cli("dispatch", "python-version-bump", "--repo", str(repo), "--input", f"python_version={value}",
                   "--json")
    assert done.returncode == 2
    error = json.loads(done.stdout)["error"]
    assert "python_version" in error and "\n" not in error
    assert _no_runs(home)


def test_a_good_version_still_runs(make_repo: Callable[..., Path], home: Path) -> None:
    repo = make_repo({"Dockerfile": DOCKERFILE})
    done = run_cli("dispatch", "python-version-bump", "--repo", str(repo), "--input", "python_version=3.13")
    assert done.returncode == 0, done.stderr
    assert "+FROM python:3.13-slim" in done.stdout


def test_distroless_org_and_registry_are_image_reference_parts(make_repo: Callable[..., Path], home: Path) -> None:
    repo = make_repo({"Dockerfile": DOCKERFILE})
    for flag, value in (("--org", "acme\nUSER root"), ("--org", "Acme Corp"), ("--registry", "r.example/../x")):
        done = run_cli("dispatch", "distroless-migration", "--repo", str(repo), flag, value)
        assert done.returncode == 2, (flag, value, done.stderr)
        assert flag.removeprefix("--") in done.stderr and done.stderr.count("\n") == 1
    tccm = SHIPPED.get("distroless-migration")
    check_inputs(tccm, {"org": "acme.example", "registry": "registry.example.com:5000"})


@pytest.mark.parametrize(("inputs", "ok"), [
    ({"package": "requests"}, True), ({"package": "@types/node"}, True), ({"package": "golang.org/x/net"}, True),
    ({"package": "zope.interface"}, True), ({"advisory": "CVE-2023-32681"}, True),
    ({"advisory": "GHSA-j8r2-6x86-q33q"}, True), ({"advisory": "PYSEC-2021-142"}, True),
    ({"package": "requests==2.0"}, False), ({"package": "requests\nurllib3"}, False), ({"package": "a b"}, False),
    ({"advisory": "CVE 2023"}, False),
])
def test_the_remediation_inputs_have_patterns(inputs: dict[str, str], ok: bool) -> None:
    tccm = SHIPPED.get("vulnerability-remediation")
    if ok:
        check_inputs(tccm, inputs)
    else:
        with pytest.raises(PlannerError, match=next(iter(inputs))):
            check_inputs(tccm, inputs)


def test_multiline_is_declared_per_input(tmp_path: Path) -> None:
    tccm = _registry(tmp_path, "notes", "  note: {description: Free text., multiline: true}\n  title: A title.").get(
        "notes")
    check_inputs(tccm, {"note": "line one\nline two", "title": "one line"})
    with pytest.raises(PlannerError, match="input title must be a single line"):
        check_inputs(tccm, {"title": "one\ntwo"})


def test_an_undeclared_but_used_input_is_single_line_too(tmp_path: Path) -> None:
    folder = tmp_path / "tc"
    folder.mkdir()
    (folder / "uses.yaml").write_text(CLASS.format(name="uses", inputs="  {}").replace(
        'glob: "**/*.txt"', "key: dependencies.${inputs.package}"), encoding="utf-8")
    tccm = Registry([folder]).get("uses")
    assert "package" in tccm.accepted_inputs()
    with pytest.raises(PlannerError, match="input package must be a single line"):
        check_inputs(tccm, {"package": "a\nb"})


def test_a_pattern_that_is_not_a_regex_is_a_validation_error(tmp_path: Path) -> None:
    _registry(tmp_path, "badrx", "  version: {description: A version., pattern: '3\\.[0-9'}")
    done = subprocess.run(["planner", "task-classes", "validate", str(tmp_path / "tc" / "badrx.yaml")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "inputs.version.pattern" in done.stdout + done.stderr and "not a regular expression" in done.stdout + \
        done.stderr


def test_the_schema_describes_multiline_and_pattern() -> None:
    done = run_cli("task-classes", "schema")
    schema = json.loads(done.stdout)
    fields = schema["$defs"]["InputSpec"]["properties"]
    assert fields["multiline"]["default"] is False and "pattern" in fields
