"""Where tccm-planner keeps its state (RepoContexts, runs, the advisory index) when PLANNER_HOME is unset.

A per-user state folder, never the current directory: run from a repository's root, a `./.planner` default
put untracked files into the very repository the tool promises not to touch unasked.
"""

from __future__ import annotations

import os
from pathlib import Path


def planner_home() -> Path:
    """PLANNER_HOME, else $XDG_STATE_HOME/tccm-planner, else ~/.local/state/tccm-planner."""
    explicit = os.environ.get("PLANNER_HOME", "").strip()
    if explicit:
        return Path(explicit).expanduser()
    state = os.environ.get("XDG_STATE_HOME", "").strip()
    return (Path(state).expanduser() if state else Path.home() / ".local" / "state") / "tccm-planner"


USER_UMASK_ENV = "PLANNER_USER_UMASK"  # the user's own umask, for what is written into their repository
PRIVATE_UMASK = 0o077


def make_private() -> None:
    """From here on, everything this process creates is the user's alone (folders 0700, files 0600): the
    state under PLANNER_HOME holds patches, prompts and reports of private code. A home made group- or
    world-readable by an older version is closed too. What goes into the user's repository (an applied
    branch, git hooks) is written with their own umask instead: see user_umask()."""
    previous = os.umask(PRIVATE_UMASK)
    os.environ.setdefault(USER_UMASK_ENV, oct(previous))
    home = planner_home()
    try:
        info = home.stat()
        if info.st_uid == os.getuid() and info.st_mode & 0o077:
            home.chmod(0o700)
    except OSError:
        pass  # not there yet: it will be made 0700


def user_umask() -> int:
    """The umask the user started the planner with (0o022 when unknown)."""
    try:
        return int(os.environ.get(USER_UMASK_ENV, ""), 8) & 0o777
    except ValueError:
        return 0o022
