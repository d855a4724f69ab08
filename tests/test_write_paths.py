"""Writes stay inside the repository: no edit, patch or `--apply` commit goes through a symbolic link the
repository holds (to a file or a folder, pointing anywhere) or out of the repository."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import commit_all, git, run_cli

from planner.errors import PlannerError
from planner.patch.diff import unified_diff
from planner.run.apply import apply_patch, check_paths
from planner.run.gates.paths import committed_links, refusal

OLD = "from typing import List\n\n\ndef f(x: List[int]) -> List[int]:\n    return x\n"
PYPROJECT = '[project]\nname = "demo"\nversion = "0"\nrequires-python = ">=3.10"\n'
TCCM = """
task_class: touch-lib
version: 1
description: Modernise lib/ok.py.
must_read:
  - glob: lib/ok.py
    reason: the file to change
budget: {max_files: 5, max_tokens: 4000, per_file_max_tokens: 2000}
"""


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A file outside every repository of the test, which a link in the repository points to."""
    path = tmp_path / "somewhere" / "outside.py"
    path.parent.mkdir()
    path.write_text(OLD, encoding="utf-8")
    return path


@pytest.fixture
def linked_repo(make_repo: Callable[..., Path], outside: Path) -> Path:
    """lib/ok.py (a regular file), lib/evil.py -> outside.py and vend -> outside's folder, all committed."""
    repo = make_repo({"pyproject.toml": PYPROJECT, "lib/ok.py": OLD}, commit=False)
    (repo / "lib" / "evil.py").symlink_to(outside)
    (repo / "vend").symlink_to(outside.parent, target_is_directory=True)
    commit_all(repo, "with links")
    return repo


def _branches(repo: Path) -> list[str]:
    return git(repo, "branch", "--format=%(refname:short)").split()


def test_refusal_names_links_folders_and_escapes(linked_repo: Path) -> None:
    assert refusal(linked_repo, "lib/ok.py") is None
    assert refusal(linked_repo, "lib/new.py") is None  # nothing there to follow
    assert "lib/evil.py is a symbolic link (to " in (refusal(linked_repo, "lib/evil.py") or "")
    assert "vend/outside.py lies under the symbolic link vend" in (refusal(linked_repo, "vend/outside.py") or "")
    for escape in ("../somewhere/outside.py", "/etc/passwd", "lib/../../x"):
        assert "leaves the repository" in (refusal(linked_repo, escape) or ""), escape


def test_pyupgrade_never_writes_through_a_committed_link(linked_repo: Path, outside: Path, home: Path) -> None:
    if shutil.which("ruff") is None:
        pytest.skip("ruff is not installed")
    from planner import sandbox

    try:
        sandbox.check_available()
    except sandbox.SandboxUnavailable as exc:
        pytest.skip(str(exc))
    before = outside.read_bytes()
    done = run_cli("dispatch", "pyupgrade", "--repo", str(linked_repo), "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert "lib/ok.py" in result["patch"] and "evil.py" not in result["patch"] and "vend/" not in result["patch"]
    assert outside.read_bytes() == before
    done = run_cli("dispatch", "pyupgrade", "--repo", str(linked_repo), "--apply", "--json")
    assert done.returncode == 0, done.stderr
    branch = json.loads(done.stdout)["branch"]
    assert outside.read_bytes() == before
    assert git(linked_repo, "diff", "--name-only", "main", branch).split() == ["lib/ok.py"]
    assert git(linked_repo, "ls-tree", branch, "lib/evil.py", "vend").split()[::4] == ["120000", "120000"]


def _recorded_llm_run(repo: Path, edit_file: str, *extra: str) -> subprocess.CompletedProcess[str]:
    from openai_server import plan_answer, recorded_openai

    answer = plan_answer(summary="modernise", used_entries=["must_read:0:lib/ok.py"],
                         edits=[{"file": edit_file, "old": "List[int]) -> List[int]",
                                 "new": "list[int]) -> list[int]"}])
    with recorded_openai([answer]) as (base, _):
        return subprocess.run(
            [sys.executable, "-m", "planner", "dispatch", "touch-lib", "--repo", str(repo), "--model",
             "openai:gpt-4o-mini", "--json", *extra], capture_output=True, text=True, timeout=300,
            env={**os.environ, "PLANNER_DAEMON": "off", "OPENAI_BASE_URL": base, "OPENAI_API_KEY": "sk-test-local"})


@pytest.mark.parametrize(("edit_file", "says"), [
    ("lib/evil.py", "lib/evil.py is a symbolic link"),
    ("vend/outside.py", "vend/outside.py lies under the symbolic link vend"),
    ("../somewhere/outside.py", "leaves the repository"),
])
def test_an_edit_through_a_link_is_blocked_naming_the_file(
        linked_repo: Path, outside: Path, home: Path, tccm_dir: Callable[..., Path], edit_file: str,
        says: str) -> None:
    pytest.importorskip("langchain_openai", reason="langchain-openai is not installed (pip install -e '.[llm]')")
    tccm_dir({"touch-lib": TCCM})
    before = outside.read_bytes()
    done = _recorded_llm_run(linked_repo, edit_file, "--apply")
    assert done.returncode == 8, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "blocked" and result["patch"] == ""
    blockers = [b for item in result["items"] for b in item["blockers"]]
    assert [(b["kind"], b["file"]) for b in blockers] == [("path", edit_file)]
    assert says in blockers[0]["message"]
    assert outside.read_bytes() == before
    assert _branches(linked_repo) == ["main"]  # nothing was committed


def _patch_for(path: str) -> str:
    return unified_diff({path: (OLD, OLD.replace("List[int]", "list[int]"))})


@pytest.mark.parametrize("path", ["lib/evil.py", "vend/outside.py"])
def test_apply_refuses_a_patch_through_a_link(linked_repo: Path, outside: Path, path: str) -> None:
    before = outside.read_bytes()
    with pytest.raises(PlannerError, match=f"{path} (is a symbolic link|lies under the symbolic link)"):
        apply_patch(linked_repo, _patch_for("lib/ok.py") + _patch_for(path), "planner/x", "message")
    assert outside.read_bytes() == before
    assert _branches(linked_repo) == ["main"]
    apply_patch(linked_repo, _patch_for("lib/ok.py"), "planner/ok", "message")  # a regular file still applies
    assert _branches(linked_repo) == ["main", "planner/ok"]


def test_apply_checks_what_head_holds_not_only_the_work_tree(linked_repo: Path) -> None:
    # The work tree shows a regular file where HEAD has the link (skip-worktree keeps `git status` clean):
    # --apply commits onto HEAD, so the link in HEAD is what counts.
    git(linked_repo, "update-index", "--skip-worktree", "lib/evil.py")
    (linked_repo / "lib" / "evil.py").unlink()
    (linked_repo / "lib" / "evil.py").write_text(OLD, encoding="utf-8")
    assert refusal(linked_repo, "lib/evil.py") is None
    assert "lib/evil.py is a symbolic link" in committed_links(linked_repo, ["lib/evil.py"])["lib/evil.py"]
    with pytest.raises(PlannerError, match=r"lib/evil\.py is a symbolic link"):
        check_paths(linked_repo, _patch_for("lib/evil.py"))


def test_apply_in_a_subfolder_of_the_repository_checks_its_paths(make_repo: Callable[..., Path],
                                                                 outside: Path) -> None:
    top = make_repo({"svc/lib/ok.py": OLD}, commit=False)
    (top / "svc" / "lib" / "evil.py").symlink_to(outside)
    commit_all(top, "links")
    with pytest.raises(PlannerError, match=r"lib/evil\.py is a symbolic link"):
        apply_patch(top / "svc", _patch_for("lib/evil.py"), "planner/x", "message")
    assert committed_links(top / "svc", ["lib/ok.py"]) == {}


def test_pyupgrade_without_the_sandbox_never_writes_through_a_committed_link(linked_repo: Path, outside: Path,
                                                                             home: Path) -> None:
    if shutil.which("ruff") is None:
        pytest.skip("ruff is not installed")
    before = outside.read_bytes()
    done = run_cli("dispatch", "pyupgrade", "--repo", str(linked_repo), "--no-sandbox", "--json")
    assert done.returncode == 0, done.stderr
    assert outside.read_bytes() == before
