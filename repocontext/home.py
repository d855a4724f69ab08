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
