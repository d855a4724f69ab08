"""Git hooks: background re-gather after a commit, chaining existing hooks, uninstall; the repository's own
code never runs with the operator's rights."""

from __future__ import annotations

import os
import shlex
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from conftest import GIT_ENV, commit_all, git, run_cli, write_files

from repocontext.hooks import hooks_dir, install, planner_command
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
    # the commit is not held up by the gather: the hook detaches it (how long a commit takes: bench/failfast.py)
    assert ") > /dev/null 2>&1 < /dev/null &\nexit $status\n" in (directory / "post-commit").read_text()
    commit = commit_all(repo, "add Dockerfile")
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


def _hostile_repo(make_repo: Callable[..., Path], marker: Path) -> Path:
    """A repository that ships its own `planner` package, whose __main__ leaves `marker` when it runs."""
    main = f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n"
    return make_repo({"app.py": "print(1)\n", "planner/__init__.py": "", "planner/__main__.py": main})


def _commit_under_umask_022(repo: Path, message: str) -> str:
    write_files(repo, {"more.txt": f"{message}\n"})
    git(repo, "add", "-A")
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "-m", message], check=True, env=env,
                   preexec_fn=lambda: os.umask(0o022))  # a shell's usual umask: the home must still be 0700
    return git(repo, "rev-parse", "HEAD").strip()


def _gather_exit(home: Path, seconds: float = 60) -> str:
    """The hooks log once the background gather has ended."""
    log = home / "logs" / "hooks.log"
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        text = log.read_text() if log.exists() else ""
        if "gather exit" in text:
            return text
        time.sleep(0.1)
    raise AssertionError(f"the hook's gather did not end: {log.read_text() if log.exists() else 'no log'}")


def test_a_planner_module_in_the_repository_never_runs(home: Path, make_repo: Callable[..., Path],
                                                        tmp_path: Path) -> None:
    """The hook runs the installed `planner` from `/`: a `planner/__main__.py` committed in the repository (and
    pulled by the user) is not what `python -m planner` would find first."""
    marker = tmp_path / "repository-code-ran"
    repo = _hostile_repo(make_repo, marker)
    installed = run_cli("hooks", "install", str(repo))
    assert installed.returncode == 0, installed.stderr
    script = (hooks_dir(repo) / "post-commit").read_text()
    assert f"{Path(sys.executable).parent / 'planner'} gather" in script and "-m planner" not in script
    commit = _commit_under_umask_022(repo, "second")
    log = _gather_exit(home)
    assert "gather exit 0" in log, log
    assert not marker.exists(), "the repository's planner/__main__.py ran"
    assert _wait_for_commit(home, repo, commit)
    for private in (home, home / "logs"):
        assert stat.S_IMODE(private.stat().st_mode) == 0o700, private
    assert stat.S_IMODE((home / "logs" / "hooks.log").stat().st_mode) == 0o600


def test_without_an_installed_script_the_hook_runs_python_isolated(home: Path, make_repo: Callable[..., Path],
                                                                    tmp_path: Path) -> None:
    """An interpreter with no `planner` script beside it: the hook runs `python -I -m planner` from `/`, which
    puts neither the repository nor the current folder on the import path."""
    marker = tmp_path / "repository-code-ran"
    repo = _hostile_repo(make_repo, marker)
    python = tmp_path / "bin" / "python"
    python.parent.mkdir()
    python.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} \"$@\"\n")
    python.chmod(0o755)
    command = planner_command(str(python))
    assert command == [str(python), "-I", "-m", "planner"]
    install(repo, home, command)
    commit = _commit_under_umask_022(repo, "second")
    log = _gather_exit(home)
    assert "gather exit 0" in log and not marker.exists(), log
    assert _wait_for_commit(home, repo, commit)
