"""The in-process TCCM memo: re-parsed when any TCCM file changes, never trusted while a file is brand new."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from planner.config import Settings
from planner.errors import PlannerError
from planner.hotviews import tccms
from planner.tccm.registry import Registry

BODY = """task_class: {name}
version: {version}
description: d
must_read: [{{key: manifests}}]
budget: {{max_files: 1, max_tokens: 99, per_file_max_tokens: 9}}
"""


def _write(directory: Path, name: str, version: int, age_s: float = 10.0) -> Path:
    path = directory / f"{name}.yaml"
    path.write_text(BODY.format(name=name, version=version))
    past = time.time() - age_s
    os.utime(path, (past, past))
    return path


@pytest.fixture
def settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    tccms.clear()
    monkeypatch.setattr(tccms, "RACY_S", 0.0)  # ctime cannot be set back; trust stats at once here
    directory = tmp_path / "classes"
    directory.mkdir()
    _write(directory, "alpha", 1)
    return Settings(home=tmp_path / "home", task_class_dirs=(directory,))


def test_memo_returns_what_the_registry_returns(settings: Settings) -> None:
    first = tccms.resolve(settings, "alpha")
    assert first == Registry(settings.task_class_dirs).get("alpha")
    assert tccms.resolve(settings, "alpha") is first  # parsed once


def test_an_edit_a_new_file_and_a_removal_are_seen(settings: Settings) -> None:
    directory = settings.task_class_dirs[0]
    assert tccms.resolve(settings, "alpha").version == "1"
    _write(directory, "alpha", 22)  # a different size and mtime
    assert tccms.resolve(settings, "alpha").version == "22"
    assert [t.task_class for t in tccms.in_service(settings)] == ["alpha"]
    _write(directory, "beta", 1)
    assert [t.task_class for t in tccms.in_service(settings)] == ["alpha", "beta"]
    (directory / "beta.yaml").unlink()
    assert [t.task_class for t in tccms.in_service(settings)] == ["alpha"]
    with pytest.raises(PlannerError):
        tccms.resolve(settings, "beta")


def test_invalid_classes_are_not_in_service(settings: Settings) -> None:
    (settings.task_class_dirs[0] / "broken.yaml").write_text("task_class: broken\nversion: [\n")
    assert [t.task_class for t in tccms.in_service(settings)] == ["alpha"]


def test_brand_new_files_are_not_memoised(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tccms, "RACY_S", 3600.0)  # every file counts as just written
    first = tccms.resolve(settings, "alpha")
    assert tccms.resolve(settings, "alpha") is not first and tccms.resolve(settings, "alpha") == first
