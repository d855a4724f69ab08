"""Which repositories a server or worker may read, when someone else names the path: a `planner mcp` caller
(the `repo` of get_agent_context or dispatch) or a message on a `planner worker`'s broker.

Without a limit such a caller could name any directory the process can read (`/etc`, `$HOME`) and have it
gathered into a bundle that it then reads. The operator chooses the roots: `--root DIR` (repeatable), else
PLANNER_REPO_ROOTS (os.pathsep-separated), else the working directory's tree. A path is checked after its
symlinks are resolved, and the resolved path is what the caller's work then uses.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from planner.errors import PlannerError

ROOTS_ENV = "PLANNER_REPO_ROOTS"


class RepoRoots(BaseModel):
    model_config = ConfigDict(frozen=True)

    paths: tuple[Path, ...]
    source: str  # how they were chosen, for messages: `--root`, PLANNER_REPO_ROOTS, the working directory

    @classmethod
    def choose(cls, given: Sequence[str | Path] | None = None, option: str = "--root") -> RepoRoots:
        """`given` (the command's --root values) if any, else PLANNER_REPO_ROOTS, else the working directory."""
        env = [p for p in os.environ.get(ROOTS_ENV, "").split(os.pathsep) if p.strip()]
        if given:
            raw, source = [str(p) for p in given], option
        elif env:
            raw, source = env, ROOTS_ENV
        else:
            raw, source = [os.getcwd()], "the working directory"
        paths = []
        for text in raw:
            path = Path(text.strip()).expanduser().resolve()
            if not path.is_dir():
                raise PlannerError(f"{source}: {text.strip()} is not a directory")
            paths.append(path)
        return cls(paths=tuple(dict.fromkeys(paths)), source=source)

    def shown(self) -> str:
        return f"{', '.join(str(p) for p in self.paths)} ({self.source})"

    def admits(self, path: Path) -> bool:
        return any(path == root or root in path.parents for root in self.paths)

    def confine(self, repo: str | Path, who: str) -> Path:
        """`repo` resolved (symlinks followed; a relative one against the working directory), or a PlannerError
        naming the roots `who` (e.g. "`planner mcp`") may read and how to allow another."""
        resolved = Path(repo).expanduser().resolve()
        if not self.admits(resolved):
            named = str(repo) if Path(str(repo)) == resolved else f"{repo} (resolved: {resolved})"
            raise PlannerError(f"repository {named} is outside the roots {who} may read: {self.shown()}; start "
                               f"it with --root DIR (or {ROOTS_ENV}) to allow another")
        return resolved

    def as_env(self) -> str:
        return os.pathsep.join(str(p) for p in self.paths)
