"""Git hooks that keep a RepoContext fresh: re-gather after commit, merge and rewrite.

The hooks never block or fail the git command: the gather runs detached in the
background and logs to PLANNER_HOME/logs/hooks.log. A hook already in place is
kept and chained (moved aside to `<hook>.pre-tccm` and run first, with the
same arguments and standard input); uninstall puts it back.

The gather runs the installed `planner` script by its absolute path, from `/`,
with the repository as an argument: never `python -m planner` from inside the
repository, where a committed `planner/__main__.py` would be the code that runs
on the next `git pull`.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from repocontext.home import user_umask

HOOKS = ("post-commit", "post-merge", "post-rewrite")
MARKER = "# managed by tccm-planner"
CHAINED_SUFFIX = ".pre-tccm"


class HookError(RuntimeError):
    pass


def hooks_dir(repo: Path) -> Path:
    """Where git looks for hooks in this repo (honours core.hooksPath and worktrees)."""
    proc = subprocess.run(["git", "-C", str(repo), "rev-parse", "--git-path", "hooks"], capture_output=True,
                          text=True, check=False)
    if proc.returncode != 0:
        raise HookError(f"{repo} is not a git repository")
    path = Path(proc.stdout.strip())
    return path if path.is_absolute() else (repo / path).resolve()


def planner_command(python: str = sys.executable) -> list[str]:
    """How a hook starts the planner: the `planner` script installed beside the interpreter (its import path
    is the installation's, not the current folder's), else that interpreter isolated (`-I`: neither the
    current folder nor PYTHON* variables nor the user's site-packages are on its import path)."""
    interpreter = Path(python).absolute()  # not resolved: a virtualenv's python is a link out of it
    script = interpreter.parent / "planner"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [str(interpreter), "-I", "-m", "planner"]


def _script(hook: str, repo: Path, command: list[str], env: dict[str, str]) -> str:
    exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in sorted(env.items()))
    home = shlex.quote(env["PLANNER_HOME"])
    chained = f'"$(dirname "$0")/{hook}{CHAINED_SUFFIX}"'
    stdin_capture = 'input=$(cat)\n' if hook == "post-rewrite" else ""
    feed = 'printf "%s\\n" "$input" | ' if hook == "post-rewrite" else ""
    return f"""#!/bin/sh
{MARKER} ({hook}): re-gather the RepoContext in the background.
{stdin_capture}status=0
if [ -x {chained} ]; then
  {feed}{chained} "$@" || status=$?
fi
{exports}umask 077
mkdir -p {home}/logs 2>/dev/null
(
  cd / || exit 0
  echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) {hook}: gather start" >> {home}/logs/hooks.log
  nohup {shlex.join(command)} gather {shlex.quote(str(repo))} >> {home}/logs/hooks.log 2>&1 < /dev/null
  echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) {hook}: gather exit $?" >> {home}/logs/hooks.log
) > /dev/null 2>&1 < /dev/null &
exit $status
"""


@dataclass(frozen=True)
class HookChange:
    hook: str
    action: str  # "installed", "chained", "updated", "removed", "restored", "absent"


def install(repo: Path, home: Path, command: list[str], extra_env: dict[str, str] | None = None) -> list[HookChange]:
    """Install the hooks; `command` starts the planner (planner_command())."""
    directory = hooks_dir(repo)
    directory.mkdir(parents=True, exist_ok=True)
    env = {"PLANNER_HOME": str(home.resolve()), **(extra_env or {})}
    changes = []
    for hook in HOOKS:
        path = directory / hook
        action = "installed"
        if path.exists() and MARKER not in path.read_text(errors="replace"):
            chained = directory / f"{hook}{CHAINED_SUFFIX}"
            if chained.exists():
                raise HookError(f"{chained} already exists; move it away before installing")
            os.replace(path, chained)
            action = "chained"
        elif path.exists():
            action = "updated"
        path.write_text(_script(hook, repo.resolve(), command, env))
        path.chmod(0o777 & ~user_umask())  # an executable as the user's own umask makes it, not the planner's
        changes.append(HookChange(hook, action))
    return changes


def uninstall(repo: Path) -> list[HookChange]:
    directory = hooks_dir(repo)
    changes = []
    for hook in HOOKS:
        path, chained = directory / hook, directory / f"{hook}{CHAINED_SUFFIX}"
        if not path.exists() or MARKER not in path.read_text(errors="replace"):
            changes.append(HookChange(hook, "absent"))
            continue
        path.unlink()
        if chained.exists():
            os.replace(chained, path)
            changes.append(HookChange(hook, "restored"))
        else:
            changes.append(HookChange(hook, "removed"))
    return changes
