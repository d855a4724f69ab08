"""The registry: built-in TCCMs, PLANNER_TASK_CLASS_PATH, extends, duplicates, schema."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from planner.cli import main
from planner.config import BUILTIN_TASK_CLASS_DIR, Settings
from planner.errors import PlannerError, TCCMError
from planner.run.taskmodule import for_tccm
from planner.tccm.model import TCCMDocument
from planner.tccm.registry import Registry

BASE = """
task_class: base
version: 1
description: Base class.
must_read:
  - key: dependencies
    reason: parent reason
should_read:
  - glob: "**/*.py"
bootstrap_globs: ["**/requirements*.txt"]
budget: {max_files: 10, max_tokens: 1000, per_file_max_tokens: 500}
"""


def test_builtin_task_classes_are_valid() -> None:
    registry = Registry([BUILTIN_TASK_CLASS_DIR])
    assert registry.validate() == []
    assert {"vulnerability-remediation", "distroless-migration"} <= set(registry.names())
    for name in ("vulnerability-remediation", "distroless-migration"):
        tccm = registry.get(name)
        entries = [*tccm.must_read, *tccm.should_read, *tccm.may_read]
        assert all(e.reason for e in entries), f"{name}: every entry carries a reason"
        assert tccm.budget.per_file_max_tokens < tccm.budget.max_tokens


def test_remediation_and_distroless_shapes() -> None:
    registry = Registry([BUILTIN_TASK_CLASS_DIR])
    remediation = registry.get("vulnerability-remediation")
    must = [e.selector for e in remediation.must_read]
    assert any(s.startswith("key:vulnerabilities") for s in must)
    assert any(s.startswith("key:dependencies") for s in must)
    every = " ".join(e.selector for band in ("must_read", "should_read", "may_read") for e in remediation.band(band))
    assert "containers" not in every and "deployment" not in every  # not deployment manifests or container traces
    distroless = registry.get("distroless-migration")
    must = " ".join(e.selector for e in distroless.must_read)
    assert "containers.dockerfiles" in must and "shell_evidence" in must
    assert "lock" not in must and all(e.key != "manifests" for e in distroless.must_read)


def test_extends_merges_and_overrides(tccm_dir: Callable[..., Path]) -> None:
    tccm_dir({"base": BASE, "child": """
        task_class: child
        version: 2
        extends: base
        must_read:
          - key: dependencies
            reason: child reason
          - key: vulnerabilities
        bootstrap_globs: ["**/requirements*.txt", "**/go.mod"]
        budget: {max_tokens: 2000}
    """})
    registry = Registry(Settings.from_env().task_class_dirs)
    child = registry.get("child")
    assert [(e.selector, e.reason) for e in child.must_read] == [
        ("key:dependencies", "child reason"), ("key:vulnerabilities", None)]
    assert [e.selector for e in child.should_read] == ["glob:**/*.py"]
    assert child.bootstrap_globs == ("**/requirements*.txt", "**/go.mod")
    assert child.budget.model_dump() == {"max_files": 10, "max_tokens": 2000, "per_file_max_tokens": 500}
    assert child.description == "Base class." and child.version == "2"
    assert child.sha256 != registry.get("base").sha256


def test_extends_missing_class(tccm_dir: Callable[..., Path]) -> None:
    tccm_dir({"child": "task_class: child\nversion: 1\nextends: nowhere\n"})
    errors = Registry(Settings.from_env().task_class_dirs).validate(["child"])
    assert [str(e) for e in errors] == [f"{errors[0].file}:3: extends: unknown task class 'nowhere'"]


def test_extends_cycle(tccm_dir: Callable[..., Path]) -> None:
    tccm_dir({"a": "task_class: a\nversion: 1\nextends: b\n", "b": "task_class: b\nversion: 1\nextends: a\n"})
    registry = Registry(Settings.from_env().task_class_dirs)
    with pytest.raises(TCCMError, match=r"b\.yaml:3: extends: extends cycle: a → b → a"):
        registry.get("a")


def test_extends_invalid_parent_is_named(tccm_dir: Callable[..., Path]) -> None:
    tccm_dir({"base": BASE.replace("version: 1", "version: 1\ncolour: red"),
              "child": "task_class: child\nversion: 1\nextends: base\n"})
    with pytest.raises(TCCMError, match=r"child\.yaml:3: extends: 'base' is invalid: .*colour: unknown field"):
        Registry(Settings.from_env().task_class_dirs).get("child")


def test_same_task_class_twice_in_one_directory_names_both_files(tmp_path: Path) -> None:
    (tmp_path / "base.yaml").write_text(BASE)
    (tmp_path / "other.yaml").write_text(BASE)
    with pytest.raises(TCCMError) as caught:
        Registry([tmp_path]).get("base")
    message = str(caught.value)
    assert "defined twice in one directory" in message
    assert str(tmp_path / "base.yaml") in message and str(tmp_path / "other.yaml") in message


def test_the_first_directory_defining_a_class_wins(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    for directory, version in ((one, 7), (two, 1)):
        directory.mkdir()
        (directory / "base.yaml").write_text(BASE.replace("version: 1", f"version: {version}"))
    registry = Registry([one, two])
    assert registry.get("base").version == "7" and registry.get("base").path == str(one / "base.yaml")
    assert registry.shadowed("base") == [str(two / "base.yaml")]
    assert registry.validate() == []


def test_a_user_file_overrides_a_builtin_class(tccm_dir: Callable[..., Path], capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A file on PLANNER_TASK_CLASS_PATH with a built-in's task_class replaces it (no "defined twice"),
    keeps the built-in's subgraph and recipes, and `task-classes list` says what it overrides."""
    text = (BUILTIN_TASK_CLASS_DIR / "vulnerability-remediation.yaml").read_text()
    directory = tccm_dir({"vulnerability-remediation": text.replace("version: 2", "version: 9-local")})
    tccm = Registry(Settings.from_env().task_class_dirs).get("vulnerability-remediation")
    assert tccm.version == "9-local" and tccm.path == str(directory / "vulnerability-remediation.yaml")
    assert for_tccm(tccm.model_dump()).name == "subgraphs.vulnerability_remediation"
    monkeypatch.setattr("sys.argv", ["planner", "task-classes", "list", "--json"])
    with pytest.raises(SystemExit):
        main()
    rows = {r["task_class"]: r for r in json.loads(capsys.readouterr().out)}
    row = rows["vulnerability-remediation"]
    assert row["valid"] and row["version"] == "9-local"
    assert [Path(p).resolve() for p in row["overrides"]] == [BUILTIN_TASK_CLASS_DIR / "vulnerability-remediation.yaml"]


def test_an_override_may_extend_the_class_it_shadows(tccm_dir: Callable[..., Path]) -> None:
    tccm_dir({"vulnerability-remediation": "task_class: vulnerability-remediation\nversion: 3\n"
              "extends: vulnerability-remediation\nbudget: {max_tokens: 50000}\n"})
    tccm = Registry(Settings.from_env().task_class_dirs).get("vulnerability-remediation")
    assert tccm.budget.max_tokens == 50000 and tccm.budget.per_file_max_tokens == 16000  # inherited
    assert tccm.must_read[0].selector == "key:vulnerabilities[package=${inputs.package}]"
    assert len(tccm.chain) == 2


def test_a_class_extending_another_inherits_its_subgraph_and_recipes(tccm_dir: Callable[..., Path]) -> None:
    tccm_dir({"strict-remediation": "task_class: strict-remediation\nversion: 1\n"
              "extends: vulnerability-remediation\nbudget: {max_tokens: 20000}\n",
              "own-flow": "task_class: own-flow\nversion: 1\nextends: vulnerability-remediation\n"
                          "subgraph: generic\n"})
    registry = Registry(Settings.from_env().task_class_dirs)
    child = registry.get("strict-remediation")
    assert child.lineage == ("strict-remediation", "vulnerability-remediation")
    module = for_tccm(child.model_dump())
    assert module.name == "subgraphs.vulnerability_remediation" and module.recipes[0].ref == "manifest-upgrade@1"
    assert for_tccm(registry.get("own-flow").model_dump()).name == "subgraphs.generic"  # it names another


def test_task_class_path_adds_directories(tccm_dir: Callable[..., Path]) -> None:
    tccm_dir({"base": BASE})
    names = Registry(Settings.from_env().task_class_dirs).names()
    assert "base" in names and "vulnerability-remediation" in names


def test_broken_file_does_not_hide_good_ones(tccm_dir: Callable[..., Path]) -> None:
    tccm_dir({"base": BASE, "broken": "task_class: broken\nversion: [\n"})
    registry = Registry(Settings.from_env().task_class_dirs)
    assert registry.get("base").task_class == "base"
    assert registry.errors_for("broken")
    with pytest.raises(TCCMError):
        registry.get("broken")


def test_unknown_task_class(tmp_path: Path) -> None:
    with pytest.raises(PlannerError, match="unknown task class 'nope'"):
        Registry([tmp_path]).get("nope")


def test_json_schema_describes_fields() -> None:
    schema = TCCMDocument.model_json_schema()
    assert set(schema["required"]) == {"task_class", "version"}
    assert schema["additionalProperties"] is False
    assert {"must_read", "should_read", "may_read", "bootstrap_globs", "budget", "extends"} <= set(schema["properties"])
