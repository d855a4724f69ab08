"""One list of manifest and lockfile names: the policy's file kinds agree with what the probes classify."""

from __future__ import annotations

import pytest

from planner.policy.kinds import kind_of
from repocontext.deps.files import KNOWN_FILES, classify


@pytest.mark.parametrize("path", ["requirements/prod/base.txt", "dev-constraints.txt", "constraints.in",
                                  "svc/requirements-dev.in", "environment.yml", "app/App.csproj", "tox.ini"])
def test_requirement_and_other_manifests_are_manifests_without_a_repocontext(path: str) -> None:
    assert kind_of(path) == "manifest"


@pytest.mark.parametrize("path", ["Cargo.lock", "web/yarn.lock", "gradle.lockfile", "pdm.lock", "conda-lock.yml"])
def test_lockfiles_are_lockfiles_without_a_repocontext(path: str) -> None:
    assert kind_of(path) == "lockfile"


def test_the_policy_and_the_probes_read_one_list() -> None:
    for name, (_, _, kind) in KNOWN_FILES.items():
        for path in (name, f"deep/er/{name}"):
            assert classify(path) == KNOWN_FILES[name]
            if kind is not None:
                assert kind_of(path) == kind, path


def test_other_files_keep_their_kinds() -> None:
    assert kind_of("src/app.py") == "source" and kind_of("Dockerfile") == "dockerfile"
    assert kind_of("notes.txt") != "manifest" and kind_of("MANIFEST.in") != "manifest"
