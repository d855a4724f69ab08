"""Same repo state + same TCCM + same inputs ⇒ byte-identical bundle and provenance."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from conftest import write_files

from planner import service
from planner.config import Settings

FILES = {
    "requirements.txt": "requests==2.30.0\nPyYAML==5.3.1\n",
    "app/main.py": "import requests\nrequests.get('https://example.com')\n",
    "app/util.py": "import yaml\n",
    "Dockerfile": "FROM python:3.11-slim\nCMD python -m app.main\n",
    "pyproject.toml": "[project]\nname = 'x'\nversion = '1'\n",
}


def test_two_builds_are_identical(home: Path, make_repo: Callable[..., Path]) -> None:
    repo = make_repo(FILES)
    settings = Settings.from_env()
    service.gather_repo(settings, repo)
    first, _, record_one = service.build_bundle(settings, "vulnerability-remediation", repo, {"package": "requests"})
    second, _, record_two = service.build_bundle(settings, "vulnerability-remediation", repo, {"package": "requests"})
    assert first.text == second.text and first.sha256 == second.sha256
    assert record_one.id != record_two.id
    assert record_one.stable_dict(hot_views=False) == record_two.stable_dict(hot_views=False)  # hits differ in source


def test_regather_of_same_state_gives_same_bundle(home: Path, make_repo: Callable[..., Path]) -> None:
    repo = make_repo(FILES)
    settings = Settings.from_env()
    service.gather_repo(settings, repo)
    first, _, _ = service.build_bundle(settings, "distroless-migration", repo, {})
    service.gather_repo(settings, repo)
    second, _, _ = service.build_bundle(settings, "distroless-migration", repo, {})
    assert first.text == second.text


def test_clone_at_same_commit_gives_same_bundle_text(home: Path, make_repo: Callable[..., Path],
                                                   tmp_path: Path) -> None:
    one = make_repo(FILES, name="one")
    two = make_repo(FILES, name="two")
    settings = Settings.from_env()
    for repo in (one, two):
        service.gather_repo(settings, repo)
    a, _, _ = service.build_bundle(settings, "vulnerability-remediation", one, {})
    b, _, _ = service.build_bundle(settings, "vulnerability-remediation", two, {})
    assert a.text == b.text


def test_changed_file_changes_the_bundle(home: Path, make_repo: Callable[..., Path]) -> None:
    repo = make_repo(FILES)
    settings = Settings.from_env()
    service.gather_repo(settings, repo)
    first, _, _ = service.build_bundle(settings, "vulnerability-remediation", repo, {})
    write_files(repo, {"requirements.txt": "requests==2.31.0\n"})
    second, _, _ = service.build_bundle(settings, "vulnerability-remediation", repo, {})
    assert first.sha256 != second.sha256 and "requests==2.31.0" in second.text
