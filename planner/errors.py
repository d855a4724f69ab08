"""Errors users see, and the exit codes the CLI maps them to.

Every error a user can cause is a PlannerError carrying one line that names
the file, field or cause. The CLI prints that line, never a traceback.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    INVALID = 1  # validation found problems (e.g. `task-classes validate`)
    BAD_INPUT = 2  # unusable arguments, missing repo, unknown task class
    BUDGET = 3  # must_read does not fit the TCCM's budget
    NEEDS_LLM = 4  # the run stopped where only an LLM could go on
    FAILED = 5  # the run failed
    ENVIRONMENT = 6  # storage, Redis, git or another dependency is unusable
    NEEDS_REGENERATION = 7  # edits made, but a lockfile must be regenerated with its own tool (command named)
    BLOCKED = 8  # a work item could not be converted; each blocker is named at file:line
    INTERRUPTED = 130  # Ctrl-C (128 + SIGINT, as shells report it)


class PlannerError(Exception):
    exit_code: ExitCode = ExitCode.BAD_INPUT

    def __init__(self, message: str, exit_code: ExitCode | None = None, run_id: str | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code
        self.run_id = run_id  # the run it stopped, if one was recorded (--json prints it)

    @property
    def message(self) -> str:
        return str(self)


class TCCMError(PlannerError):
    """One problem in one TCCM file: `file:line: field: cause`."""

    exit_code = ExitCode.INVALID

    def __init__(self, file: str, line: int | None, field: str | None, cause: str) -> None:
        self.file, self.line, self.field, self.cause = file, line, field, cause
        where = f"{file}:{line}" if line else file
        super().__init__(f"{where}: {field}: {cause}" if field else f"{where}: {cause}")

    def as_dict(self) -> dict[str, object]:
        return {"file": self.file, "line": self.line, "field": self.field, "cause": self.cause, "message": str(self)}


class BudgetError(PlannerError):
    exit_code = ExitCode.BUDGET


class EnvironmentProblem(PlannerError):
    exit_code = ExitCode.ENVIRONMENT


class Interrupted(PlannerError):
    """Ctrl-C (or SIGTERM) during a run: the run is marked interrupted and can be resumed."""

    exit_code = ExitCode.INTERRUPTED
