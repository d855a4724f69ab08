"""End to end: what `planner dispatch` reports applies with `git apply --check`, whatever the files' line ends."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import GIT_ENV

from planner.config import Settings
from planner.run.dispatch import dispatch

# No final newline, and the last line (the CMD) is in the changed final stage.
DOCKERFILE = "FROM python:3.11-slim-bookworm\nWORKDIR /app\nCOPY . .\n" \
             "RUN pip install --no-cache-dir -r requirements.txt\nCMD python -m api"
REQUIREMENTS = "flask==3.0.0\r\nrequests==2.30.0\r\nurllib3==2.2.2\r\n"


@pytest.fixture
def advisories(tmp_path: Path) -> Path:
    root = tmp_path / "advisories"
    root.mkdir()
    events = [{"introduced": "2.3.0"}, {"fixed": "2.31.0"}]
    record = {"id": "PYSEC-2023-74", "modified": "2024-01-01T00:00:00Z", "aliases": ["CVE-2023-32681"],
              "summary": "requests bug", "affected": [{"package": {"ecosystem": "PyPI", "name": "requests"},
                                                       "ranges": [{"type": "ECOSYSTEM", "events": events}]}]}
    (root / "PYSEC-2023-74.json").write_text(json.dumps(record))
    return root


def _applies(repo: Path, patch: str) -> None:
    for mode in ((), ("--cached",)):  # the work tree, and the commit itself
        proc = subprocess.run(["git", "-C", str(repo), "apply", "--check", *mode], input=patch.encode("utf-8"),
                              capture_output=True, env=os.environ | GIT_ENV, check=False)
        assert proc.returncode == 0, (proc.stderr, patch)


def test_dockerfile_without_final_newline_and_crlf_requirements(
        home: Path, make_repo: Callable[..., Path], advisories: Path) -> None:
    repo = make_repo({"Dockerfile": DOCKERFILE, "requirements.txt": REQUIREMENTS, "api/__init__.py": ""})
    pinned = dispatch(Settings.from_env(), "vulnerability-remediation", repo, {"package": "requests"},
                      {"advisories": str(advisories)})  # first: it gathers the snapshot with the advisories
    assert pinned["status"] == "succeeded", pinned.get("outcomes")
    assert "-requests==2.30.0\r\n+requests==2.31.0\r\n" in pinned["patch"]
    _applies(repo, pinned["patch"])
    migrated = dispatch(Settings.from_env(), "distroless-migration", repo, {"org": "acme"}, {})
    assert migrated["status"] in ("succeeded", "blocked"), migrated.get("outcomes")
    assert "\\ No newline at end of file" in migrated["patch"]
    _applies(repo, migrated["patch"])
    subprocess.run(["git", "-C", str(repo), "apply"], input=(migrated["patch"] + pinned["patch"]).encode(),
                   check=True, env=os.environ | GIT_ENV)
    assert (repo / "requirements.txt").read_bytes() == REQUIREMENTS.replace("2.30.0", "2.31.0").encode()
