"""Configuration from the environment. One place, so the README's table stays true.

PLANNER_HOME             where RepoContexts, runs and provenance live (default ./.planner)
PLANNER_TASK_CLASS_PATH  extra directories of TCCM YAML files (os.pathsep-separated)
PLANNER_ADVISORIES       OSV advisory sources (directory, zip or scanner report; os.pathsep-separated); default:
                         the snapshot `planner advisories sync` keeps under PLANNER_HOME/advisories, if any
PLANNER_REDIS_URL        a Redis server for hot views (default: embedded)
PLANNER_MODEL            a LangChain chat model, "provider:name" (default: none)
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

from repocontext import osvsnapshot
from repocontext.home import planner_home

BUILTIN_TASK_CLASS_DIR = Path(__file__).resolve().parent.parent / "task-class-contexts"


def _paths(value: str | None) -> list[Path]:
    return [Path(p).expanduser() for p in (value or "").split(os.pathsep) if p.strip()]


@dataclass(frozen=True, slots=True)
class Settings:
    home: Path
    task_class_dirs: tuple[Path, ...] = ()
    advisories: tuple[Path, ...] = ()
    redis_url: str | None = None
    model: str | None = None

    @classmethod
    def from_env(cls) -> Settings:
        env = os.environ
        home = planner_home()
        given = tuple(_paths(env.get("PLANNER_ADVISORIES")))
        return cls(
            home=home,
            # precedence: the first directory defining a task class wins, so PLANNER_TASK_CLASS_PATH overrides
            # the built-in classes (and its earlier entries its later ones, as with $PATH)
            task_class_dirs=(*_paths(env.get("PLANNER_TASK_CLASS_PATH")), BUILTIN_TASK_CLASS_DIR),
            # none given: the synced snapshot, so every command (CLI, MCP, UI, portfolio workers) reads the same
            advisories=given or osvsnapshot.sources(home),
            redis_url=env.get("PLANNER_REDIS_URL") or None,
            model=env.get("PLANNER_MODEL") or None,
        )

    def for_one_run(self) -> Settings:
        """The settings of a process that makes one run and exits (`planner dispatch`, `runs resume`): without a
        Redis server, no hot views at all. An embedded store would start empty and die with the process, so
        every lookup would miss, and loading it cost a quarter of a second."""
        return self if self.redis_url else replace(self, redis_url="off")

