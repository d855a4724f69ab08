"""planner.run.gates.check: the gate checks a patch against the bytes it was made from and against HEAD."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import GIT_ENV, git, write_files

from planner.chain.work import ItemResult, WorkItem
from planner.patch.plan import Edit, apply_edits, unified_diff
from planner.run.apply import apply_patch
from planner.run.gates.check import check_patch, gated_files
from planner.run.taskbase import reader

OLD_STYLE = "diff --git a/Dockerfile b/Dockerfile\n--- a/Dockerfile\n+++ b/Dockerfile\n@@ -1,2 +1,3 @@\n FROM a\n" \
            "-RUN b+RUN b\n+FROM c\n\\ No newline at end of file\n"  # what the old difflib wrapper wrote


@pytest.fixture(autouse=True)
def _no_user_git_config(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)


def _patch(repo: Path, *edits: Edit) -> str:
    return unified_diff(apply_edits(reader(str(repo)), list(edits)))


def _git_apply_check(repo: Path, patch: str, *args: str) -> int:
    return subprocess.run(["git", "-C", str(repo), "apply", "--check", *args], input=patch.encode(),
                          capture_output=True, check=False).returncode


def test_a_corrupt_patch_is_refused_with_gits_reason(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"Dockerfile": "FROM a\nRUN b"})
    assert check_patch(repo, OLD_STYLE) == "corrupt patch at line 9"
    patch = _patch(repo, Edit(file="Dockerfile", old="RUN b", new="RUN b\nFROM c"))
    assert check_patch(repo, patch) is None
    assert check_patch(repo, patch.replace(" FROM a", " FROM z")) == (
        "patch failed: Dockerfile:1; Dockerfile: patch does not apply")
    assert check_patch(repo, "not a patch\n") == "No valid patches in input (allow with \"--allow-empty\")"
    assert check_patch(repo, "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n") == "x: No such file or directory"


def test_the_gate_and_apply_agree_on_trailing_blanks(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"a.txt": "one\ntwo\n"})
    git(repo, "config", "apply.whitespace", "error")  # the user's policy, not a property of the patch
    patch = _patch(repo, Edit(file="a.txt", old="two", new="two \t"))
    assert check_patch(repo, patch) is None
    commit = apply_patch(repo, patch, "planner/test", "trailing blanks")
    assert git(repo, "show", f"{commit}:a.txt") == "one\ntwo \t\n"


def test_user_index_and_work_tree_are_untouched(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"a.txt": "one\n", "b.txt": "two\n"})
    write_files(repo, {"b.txt": "two, edited\n"})
    git(repo, "add", "b.txt")
    index = (repo / ".git/index").read_bytes()
    assert check_patch(repo, _patch(repo, Edit(file="a.txt", old="one", new="1"))) is None
    assert (repo / ".git/index").read_bytes() == index and (repo / "a.txt").read_text() == "one\n"
    assert git(repo, "status", "--porcelain") == "M  b.txt\n"


def test_uncommitted_changes_are_the_base_not_head(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"requirements.txt": "requests==2.19.0\n"})
    write_files(repo, {"requirements.txt": "requests==2.19.0\nflask==3.0.0\n"})  # the user's own edit
    patch = _patch(repo, Edit(file="requirements.txt", old="flask==3.0.0", new="flask==3.0.3"))
    assert check_patch(repo, patch) is None  # made from the work tree, for the work tree
    assert _git_apply_check(repo, patch) == 0


def test_a_file_git_stores_with_lf_but_checks_out_with_crlf_is_refused(
        make_repo: Callable[..., Path]) -> None:
    repo = make_repo({".gitattributes": "*.txt text eol=crlf\n", "req.txt": "a==1\nb==2\n"})
    (repo / "req.txt").unlink()
    git(repo, "checkout", "--", "req.txt")
    assert (repo / "req.txt").read_bytes() == b"a==1\r\nb==2\r\n"
    patch = _patch(repo, Edit(file="req.txt", old="b==2", new="b==3"))
    assert _git_apply_check(repo, patch) == 0  # a work-tree apply keeps the CRLF the patch has
    assert _git_apply_check(repo, patch, "--cached") != 0  # the commit holds LF: --apply could not commit it
    assert check_patch(repo, patch) == "HEAD stores the file otherwise than the work tree (eol or filter): " \
                                      "patch failed: req.txt:1; req.txt: patch does not apply"


def test_repo_in_a_subdirectory_of_the_work_tree(make_repo: Callable[..., Path]) -> None:
    top = make_repo({"svc/Dockerfile": "FROM a\nRUN b", "Dockerfile": "FROM a\nRUN b"})
    repo = top / "svc"
    patch = _patch(repo, Edit(file="Dockerfile", old="RUN b", new="RUN c"))
    assert check_patch(repo, patch) is None
    assert check_patch(repo, patch.replace("-RUN b", "-RUN x")) is not None


def test_converted_files_in_a_subdirectory_are_checked_on_head(make_repo: Callable[..., Path]) -> None:
    lines = "".join(f"line {i}\n" for i in range(10))
    top = make_repo({"svc/.gitattributes": "*.txt ident\n*.crlf text eol=crlf\n", "svc/id.txt": "$Id$\n" + lines,
                     "svc/req.crlf": "a==1\n"})
    repo = top / "svc"
    for rel in ("id.txt", "req.crlf"):  # checked out again, through the attributes
        (repo / rel).unlink()
        git(repo, "checkout", "--", rel)
    assert (repo / "id.txt").read_text().startswith("$Id: ")  # the work tree differs from the blob
    far = _patch(repo, Edit(file="id.txt", old="line 9", new="line nine"))
    assert check_patch(repo, far) is None  # checked on HEAD too: the hunk is far from the $Id$ line
    near = _patch(repo, Edit(file="id.txt", old="line 0", new="line zero"))
    assert check_patch(repo, near).startswith("HEAD stores the file otherwise than the work tree")
    crlf = _patch(repo, Edit(file="req.crlf", old="a==1", new="a==2"))
    assert "svc/req.crlf: patch does not apply" in check_patch(repo, crlf)


def test_a_directory_that_is_not_a_repository(tmp_path: Path) -> None:
    write_files(tmp_path, {"notes.txt": "x\r\ny"})
    patch = _patch(tmp_path, Edit(file="notes.txt", old="y", new="z\r\n"))
    assert check_patch(tmp_path, patch) is None
    assert check_patch(tmp_path, patch, {"notes.txt": b"x\ny"}) is not None  # other bytes than it was made from


def test_without_git_nothing_is_reported_as_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_files(tmp_path, {"a.txt": "a\n"})
    patch = _patch(tmp_path, Edit(file="a.txt", old="a", new="b"))
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    assert check_patch(tmp_path, patch) == "git is not installed, so the patch could not be checked"


def _result(ident: str, *edits: Edit) -> ItemResult:
    return ItemResult(item=WorkItem(id=ident, title=ident), status="succeeded", edits=[e.model_dump() for e in edits])


def test_items_whose_file_diff_is_refused_fail_and_drop_out(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({".gitattributes": "*.txt text eol=crlf\n", "req.txt": "a==1\n", "Dockerfile": "FROM a"})
    (repo / "req.txt").unlink()
    git(repo, "checkout", "--", "req.txt")
    results = [_result("pins", Edit(file="req.txt", old="a==1", new="a==2")),
               _result("image", Edit(file="Dockerfile", old="FROM a", new="FROM b"))]
    files = gated_files(str(repo), results, {"succeeded"})
    assert list(files) == ["Dockerfile"]
    assert [r.status for r in results] == ["failed", "succeeded"]
    assert results[0].error.startswith("the patch does not apply: HEAD stores the file otherwise")
    assert "**Not applied**" in results[0].report
    assert check_patch(repo, unified_diff(files)) is None
