"""What the user types is never ignored: declared inputs, advisory sources that exist and count, key
fields that exist, globs with braces."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from planner.errors import PlannerError
from planner.inputs import check_inputs
from planner.tccm.registry import Registry
from repocontext import globs

ROOT = Path(__file__).resolve().parents[1]
ADVISORIES = ROOT / "examples" / "advisories"
FILES = {
    "requirements.txt": "requests==2.30.0\nPyYAML==5.3.1\n",
    "app/net.py": "import requests\n\n\ndef fetch(u):\n    return requests.get(u)\n",
}
BASE = """\
task_class: {name}
version: 1
description: A demo class.
{extra}must_read:
  - key: {key}
budget: {{max_files: 5, max_tokens: 1000, per_file_max_tokens: 500}}
"""


def _planner(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "planner", *args], capture_output=True, text=True,
                          env={**os.environ, "PLANNER_DAEMON": "off"}, timeout=300)


def _registry(tmp_path: Path, files: dict[str, str]) -> Registry:
    folder = tmp_path / "tc"
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / f"{name}.yaml").write_text(text, encoding="utf-8")
    return Registry([folder])


def test_an_unknown_input_is_refused_with_the_nearest_known_one(make_repo: Callable[..., Path], home: Path) -> None:
    repo = make_repo(FILES)
    done = _planner("dispatch", "vulnerability-remediation", "--repo", str(repo), "--advisories", str(ADVISORIES),
                    "--input", "pakage=requests")
    assert done.returncode == 2
    assert "does not accept input 'pakage' (did you mean 'package'?)" in done.stderr
    assert "it accepts: advisory, allow_major, package" in done.stderr
    assert not (home / "runs").exists() or not any((home / "runs").iterdir())  # refused before a run exists


def test_a_boolean_input_takes_only_booleans(tmp_path: Path) -> None:
    tccm = Registry([ROOT / "task-class-contexts"]).get("vulnerability-remediation")
    check_inputs(tccm, {"allow_major": "yes", "package": "requests"})
    with pytest.raises(PlannerError, match="allow_major='ture' is not one of true, false"):
        check_inputs(tccm, {"allow_major": "ture"})


def test_inputs_are_inherited_and_a_class_accepts_what_it_visibly_uses(tmp_path: Path) -> None:
    registry = _registry(tmp_path, {
        "parent": BASE.format(name="parent", key="dependencies.${inputs.package}",
                              extra="inputs:\n  flavour: {description: the flavour, values: [a, b]}\n"),
        "child": BASE.format(name="child", key="vulnerabilities[package=${inputs.pkg}]",
                             extra="extends: parent\ninputs:\n  target: {description: where, required: true}\n"),
    })
    child = registry.get("child")
    assert set(child.accepted_inputs()) == {"flavour", "target", "pkg", "package"}
    check_inputs(child, {"flavour": "a", "target": "x", "pkg": "p"})
    with pytest.raises(PlannerError, match="needs input target=VALUE"):
        check_inputs(child, {"flavour": "b"})
    with pytest.raises(PlannerError, match="'c' is not one of a, b"):
        check_inputs(child, {"flavour": "c", "target": "x"})


def test_a_misspelled_filter_field_is_a_validation_error_at_its_line(tmp_path: Path) -> None:
    registry = _registry(tmp_path, {"demo": BASE.format(name="demo", key="vulnerabilities[packge=${inputs.p}]",
                                                         extra="")})
    message = str(registry.validate()[0])
    assert "demo.yaml:5:" in message
    assert "unknown field 'packge' in filter [packge=${inputs.p}] of vulnerabilities" in message
    assert "package" in message  # the fields it could have meant
    typo = _registry(tmp_path / "b", {"demo": BASE.format(name="demo", key="tests.by_modul", extra="")})
    assert "unknown field 'by_modul' in tests.by_modul" in str(typo.validate()[0])
    fine = _registry(tmp_path / "c", {"demo": BASE.format(
        name="demo", key="containers.dockerfiles[path=${inputs.d}]", extra="")})
    assert fine.validate() == []


def test_globs_with_braces_match_each_alternative_or_are_refused() -> None:
    index = globs.PathIndex(["a.yml", "b/c.yaml", "c.json", "Dockerfile.dev", "x/Dockerfile.prod"])
    assert index.match("**/*.{yml,yaml}") == ["a.yml", "b/c.yaml"]
    assert index.match("**/Dockerfile.{dev,prod}") == ["Dockerfile.dev", "x/Dockerfile.prod"]
    for bad in ("src/{a/b,c}/x", "a{b", "a}b"):
        with pytest.raises(globs.GlobError):
            globs.check_glob(bad)


def test_a_missing_advisory_source_is_an_error_naming_it(make_repo: Callable[..., Path], home: Path) -> None:
    repo = make_repo(FILES)
    for command in (["dispatch", "vulnerability-remediation", "--repo", str(repo)], ["gather", str(repo)]):
        done = _planner(*command, "--advisories", str(repo / "advisries"))
        assert done.returncode == 2, done.stderr
        assert f"advisory source {repo / 'advisries'} does not exist" in done.stderr


def test_advisories_given_after_a_gather_are_evaluated(make_repo: Callable[..., Path], home: Path) -> None:
    repo = make_repo(FILES)
    assert _planner("gather", str(repo)).returncode == 0  # what a git hook does: no advisory source
    done = _planner("dispatch", "vulnerability-remediation", "--repo", str(repo), "--advisories", str(ADVISORIES),
                    "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "succeeded"
    assert sorted(item["id"] for item in result["items"]) == ["PyPI:pyyaml", "PyPI:requests"]
    # the same sources again: the snapshot is fresh for them, nothing is re-gathered
    again = _planner("dispatch", "vulnerability-remediation", "--repo", str(repo), "--advisories", str(ADVISORIES),
                     "--json")
    assert json.loads(again.stdout)["status"] == "succeeded"
