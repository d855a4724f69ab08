"""PLANNER_HOME is the user's alone (0700 folders, 0600 files); the user's repository keeps its own modes."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from tests.conftest import git

ROOT = Path(__file__).resolve().parents[1]
FILES = {
    "requirements.txt": "requests==2.30.0\n",
    "app/net.py": "import requests\n\n\ndef fetch(u):\n    return requests.get(u)\n",
}


def _loose(root: Path) -> list[str]:
    """Every path under `root` that a group or other user could read, write or enter."""
    found = []
    for path in [root, *root.rglob("*")]:
        mode = path.lstat().st_mode
        if not stat.S_ISLNK(mode) and mode & 0o077:
            found.append(f"{path.relative_to(root)} {oct(mode & 0o777)}")
    return found


def _planner(*args: str, umask: int = 0o022) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PLANNER_DAEMON": "off"}
    env.pop("PLANNER_USER_UMASK", None)
    return subprocess.run([sys.executable, "-m", "planner", *args], capture_output=True, text=True, env=env,
                          timeout=300, umask=umask)


def test_a_dispatch_leaves_nothing_readable_by_others_and_the_repository_as_git_makes_it(
        make_repo: Callable[..., Path], home: Path) -> None:
    repo = make_repo(FILES)
    done = _planner("dispatch", "vulnerability-remediation", "--repo", str(repo), "--advisories",
                    str(ROOT / "examples" / "advisories"), "--apply")
    assert done.returncode == 0, done.stderr
    assert home.is_dir()
    assert _loose(home) == []
    # the applied branch's objects were written with the user's umask (0o022): git's usual 0444
    branch = next(line.strip() for line in git(repo, "branch", "--list").splitlines() if "main" not in line)
    commit = git(repo, "rev-parse", branch).strip()
    loose = repo / ".git" / "objects" / commit[:2] / commit[2:]
    assert stat.S_IMODE(loose.stat().st_mode) == 0o444


def test_an_open_home_from_an_older_version_is_closed(make_repo: Callable[..., Path], home: Path) -> None:
    repo = make_repo(FILES)
    home.mkdir(mode=0o755)
    home.chmod(0o755)
    done = _planner("gather", str(repo))
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert _loose(home) == []


def test_hooks_installed_into_the_repository_use_the_users_umask(make_repo: Callable[..., Path],
                                                                    home: Path) -> None:
    repo = make_repo(FILES)
    done = _planner("hooks", "install", str(repo))
    assert done.returncode == 0, done.stderr
    hook = repo / ".git" / "hooks" / "post-commit"
    assert stat.S_IMODE(hook.stat().st_mode) == 0o755
