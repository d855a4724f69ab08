"""What the corpus dispatch tests share: a corpus tarball as a committed git tree, a `dispatch --json` through
the real CLI, and `git apply --check` of the patch it printed."""

from __future__ import annotations

import json
import subprocess
import tarfile
from pathlib import Path

import pytest
from conftest import run_cli

from tests.datapaths import CORPUS

GIT = ["git", "-c", "user.email=t@t", "-c", "user.name=t", "-c", "core.autocrlf=false"]


def corpus_tree(tmp_path: Path, tarball: str) -> Path:
    """The tarball's tree under tmp_path, committed on main (skipped, naming it, when the corpus lacks it)."""
    if not (CORPUS / tarball).is_file():
        pytest.skip(f"the {tarball} corpus tarball is absent")
    folder = tmp_path / "corpus"
    with tarfile.open(CORPUS / tarball) as tar:
        tar.extractall(folder, filter="data")
    tops = list(folder.iterdir())
    repo = tops[0] if len(tops) == 1 and tops[0].is_dir() else folder  # the tree's own top folder, if it has one
    for step in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "c"]):
        subprocess.run([*GIT, *step], cwd=repo, check=True, capture_output=True)
    return repo


def dispatch_json(repo: Path, advisories: Path, *args: str) -> tuple[int, dict, str]:
    """(exit code, the --json result, stderr) of a vulnerability-remediation run; never a traceback."""
    done = run_cli("dispatch", "vulnerability-remediation", "--repo", str(repo), "--advisories", str(advisories),
                   "--json", *args, env={"PLANNER_DAEMON": "off"})
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout), done.stderr


def assert_applies(repo: Path, patch: str) -> None:
    check = subprocess.run(["git", "apply", "--check", "-"], cwd=repo, input=patch, text=True, capture_output=True)
    assert check.returncode == 0, check.stderr
