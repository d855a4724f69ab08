"""Which repositories a portfolio covers, and the commit each is at."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from planner.errors import PlannerError

SKIP_DIRS = {"node_modules", ".venv", "venv", "__pycache__", ".tox", ".planner"}


def from_file(path: Path) -> list[Path]:
    """One path per line; blank lines and # comments skipped; relative paths are relative to the file."""
    repos = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        repo = Path(text).expanduser()
        repo = repo if repo.is_absolute() else path.parent / repo
        if not repo.is_dir():
            raise PlannerError(f"{path}:{number}: repository {text} is not a directory")
        repos.append(repo.resolve())
    return repos


def under(directory: Path) -> list[Path]:
    """Every git repository under `directory` (not descending into one once found), sorted."""
    found = []
    for root, dirs, _files in os.walk(directory):
        if (Path(root) / ".git").exists():
            found.append(Path(root).resolve())
            dirs.clear()
            continue
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
    return sorted(found)


def discover(source: Path) -> list[Path]:
    if source.is_file():
        repos = from_file(source)
    elif source.is_dir():
        repos = under(source)
    else:
        raise PlannerError(f"--repos {source}: no such file or directory")
    unique = list(dict.fromkeys(repos))
    if not unique:
        raise PlannerError(f"--repos {source}: no repositories found (a file of paths, or a directory of git repos)")
    return unique


def head(repo: Path) -> str | None:
    proc = subprocess.run(["git", "-C", str(repo), "rev-parse", "--verify", "--quiet", "HEAD"],
                          capture_output=True, text=True, check=False)
    return proc.stdout.strip() or None if proc.returncode == 0 else None
