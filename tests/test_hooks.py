"""Git hooks: background re-gather after a commit, chaining existing hooks, uninstall."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from conftest import commit_all, git, run_cli, write_files

from repocontext.hooks import hooks_dir
from repocontext.store import RepoContextStore


def _wait_for_commit(home: Path, repo: Path, commit: str, seconds: float = 30) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        context = RepoContextStore(home).load_raw(repo) if RepoContextStore(home).latest_path(repo) else None
        if context and context["meta"]["commit"] == commit:
            return True
        time.sleep(0.2)
    return False


def test_hooks_regather_after_commit_and_chain(home: Path, make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"app.py": "print(1)\n"})
    directory = hooks_dir(repo)
    marker = repo.parent / "old-hook-ran"
    original = f"#!/bin/sh\necho \"$@\" > {marker}\n"
    (directory / "post-commit").write_text(original)
    (directory / "post-commit").chmod(0o755)
    installed = run_cli("hooks", "install", str(repo))
    assert installed.returncode == 0, installed.stderr
    assert "post-commit: chained" in installed.stdout and "post-merge: installed" in installed.stdout
    write_files(repo, {"Dockerfile": "FROM python:3.12\n"})
    started = time.monotonic()
    commit = commit_all(repo, "add Dockerfile")
    assert time.monotonic() - started < 5  # the commit is not held up by the gather
    assert marker.exists(), "the existing hook still runs"
    assert _wait_for_commit(home, repo, commit), (home / "logs" / "hooks.log").read_text()
    context = RepoContextStore(home).load(repo)
    assert context is not None and "Dockerfile" in [f.path for f in context.files]
    log = home / "logs" / "hooks.log"
    deadline = time.monotonic() + 30
    while "gather exit" not in log.read_text() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert "gather exit 0" in log.read_text()
    again = run_cli("hooks", "install", str(repo))
    assert "post-commit: updated" in again.stdout
    removed = run_cli("hooks", "uninstall", str(repo))
    assert "post-commit: restored" in removed.stdout and "post-merge: removed" in removed.stdout
    assert (directory / "post-commit").read_text() == original
    assert not (directory / "post-merge").exists()


def test_post_rewrite_keeps_stdin_for_chained_hook(home: Path, make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"a.txt": "a\n"})
    directory = hooks_dir(repo)
    seen = repo.parent / "rewrite-stdin"
    (directory / "post-rewrite").write_text(f"#!/bin/sh\ncat > {seen}\n")
    (directory / "post-rewrite").chmod(0o755)
    assert run_cli("hooks", "install", str(repo)).returncode == 0
    git(repo, "commit", "-q", "--amend", "-m", "amended")
    assert seen.exists() and len(seen.read_text().split()) >= 2  # "<old-sha> <new-sha>"
    commit = git(repo, "rev-parse", "HEAD").strip()
    assert _wait_for_commit(home, repo, commit)


def test_hooks_on_a_non_repo_is_a_clear_error(home: Path, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    result = run_cli("hooks", "install", str(plain))
    assert result.returncode == 2 and "not a git repository" in result.stderr
