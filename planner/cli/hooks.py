"""`planner hooks install | uninstall REPO`: keep a repo's RepoContext fresh from git hooks."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from planner import service
from planner.cli.output import console
from planner.config import Settings
from planner.errors import PlannerError
from repocontext import hooks

app = typer.Typer(help="Git hooks that re-gather after commit, merge and rewrite.", no_args_is_help=True)
RepoArg = Annotated[Path, typer.Argument(help="The git repository.")]
PASSED_ENV = ("PLANNER_ADVISORIES", "PLANNER_TASK_CLASS_PATH", "PLANNER_REDIS_URL", "PLANNER_DAEMON",
              "PLANNER_DAEMON_DIR")  # PLANNER_DAEMON=auto: the hooks' gathers start and use a warm daemon


@app.command("install")
def install_command(repo: RepoArg) -> None:
    """Install post-commit, post-merge and post-rewrite hooks (existing hooks are chained, not replaced)."""
    root = service.repo_root(repo)
    env = {k: os.environ[k] for k in PASSED_ENV if os.environ.get(k)}
    try:
        changes = hooks.install(root, Settings.from_env().home, hooks.planner_command(sys.executable), env)
    except (hooks.HookError, OSError) as exc:
        raise PlannerError(f"cannot install hooks in {root}: {exc}") from None
    for change in changes:
        console.print(f"{change.hook}: {change.action}")


@app.command("uninstall")
def uninstall_command(repo: RepoArg) -> None:
    """Remove the hooks and restore any hook that was chained."""
    root = service.repo_root(repo)
    try:
        changes = hooks.uninstall(root)
    except (hooks.HookError, OSError) as exc:
        raise PlannerError(f"cannot uninstall hooks in {root}: {exc}") from None
    for change in changes:
        console.print(f"{change.hook}: {change.action}")
