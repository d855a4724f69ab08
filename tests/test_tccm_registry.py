"""The registry: built-in TCCMs, PLANNER_TASK_CLASS_PATH, extends, duplicates, schema."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from planner.config import BUILTIN_TASK_CLASS_DIR, Settings
from planner.errors import PlannerError, TCCMError
from planner.tccm import Registry, TCCMDocument

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


def test_same_task_class_twice_names_both_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    for directory in (one, two):
        directory.mkdir()
        (directory / "base.yaml").write_text(BASE)
    registry = Registry([one, two])
    with pytest.raises(TCCMError) as caught:
        registry.get("base")
    assert str(one / "base.yaml") in str(caught.value) and str(two / "base.yaml") in str(caught.value)


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
