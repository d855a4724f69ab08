"""What a `planner worker` agrees to run from its broker.

A message names a task class and a repository path, and anyone who can write to the broker can send one. So
a worker runs only the task classes on its allowlist (`--allow-class`, else PLANNER_WORKER_CLASSES, else the
classes on its own task-class path when it started) on repositories under its roots (planner.roots:
`--root`, else PLANNER_REPO_ROOTS, else its working directory). Anything else is answered as a failed row
with the reason, and nothing of it runs. The choice is made once, at start-up, and exported to the
environment, so the pool processes Celery starts apply the very same one.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from planner.config import Settings
from planner.errors import PlannerError
from planner.portfolio.model import Job
from planner.roots import RepoRoots

CLASSES_ENV = "PLANNER_WORKER_CLASSES"  # comma-separated task class names
EXPORTED_ENV = "PLANNER_WORKER_ADMISSION"  # set by `planner worker` for its pool processes: the choice as JSON
WHO = "this `planner worker`"


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


class Admission(BaseModel):
    model_config = ConfigDict(frozen=True)

    classes: frozenset[str]
    classes_source: str
    roots: RepoRoots

    @classmethod
    def choose(cls, settings: Settings, allow: Sequence[str] | None = None,
               roots: Sequence[str] | None = None) -> Admission:
        """The options given, else the environment, else the defaults; a class not on this worker's path is a
        mistake worth stopping for (a typo would otherwise refuse every job)."""
        from planner import service

        known = set(service.registry(settings).names())
        named = [n.strip() for n in allow or () if n.strip()] or _names(os.environ.get(CLASSES_ENV, ""))
        source = "--allow-class" if allow else CLASSES_ENV
        if not named:
            return cls(classes=frozenset(known), classes_source="the task-class path at start-up",
                       roots=RepoRoots.choose(roots))
        unknown = sorted(set(named) - known)
        if unknown:
            raise PlannerError(f"{source}: no task class {', '.join(unknown)} on this worker's task-class path "
                               "(`planner task-classes list` shows them)")
        return cls(classes=frozenset(named), classes_source=source, roots=RepoRoots.choose(roots))

    def export(self) -> None:
        """Into this process's environment, for the pool processes it starts (forked or spawned)."""
        os.environ[EXPORTED_ENV] = self.model_dump_json()

    def refusal(self, job: Job) -> str | None:
        """Why this worker will not run `job`, or None."""
        if job.task_class not in self.classes:
            return (f"refused by {WHO}: task class {job.task_class} is not on its allowlist "
                    f"({', '.join(sorted(self.classes)) or 'none'}; {self.classes_source}); start it with "
                    f"--allow-class {job.task_class} (or {CLASSES_ENV}) to allow it")
        try:
            self.roots.confine(job.repo, WHO)
        except PlannerError as exc:
            return f"refused: {exc.message}"
        return None

    def describe(self) -> str:
        return (f"task classes {', '.join(sorted(self.classes)) or 'none'} ({self.classes_source}); "
                f"repositories under {self.roots.shown()}")


_current: list[Admission] = []


def current() -> Admission:
    """This worker's choice: what `planner worker` exported at start-up (not checked against the path again: a
    class file removed since is refused by the run itself, as an unknown class), read once per process."""
    if not _current:
        exported = os.environ.get(EXPORTED_ENV)
        _current.append(Admission.model_validate_json(exported) if exported else Admission.choose(Settings.from_env()))
    return _current[0]
