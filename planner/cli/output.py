"""Shared CLI output: JSON for scripts, rich tables for people, one-line errors."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from rich.console import Console


class LazyConsole:
    """A rich Console made on first use: rich costs ~20 ms of imports, and a command that prints nothing
    through it (`--json`, an error, a gather piped to a file... until its summary) should not pay them first."""

    def __init__(self, stderr: bool = False) -> None:
        self._stderr = stderr
        self._real: Console | None = None

    def real(self) -> Console:
        if self._real is None:
            from rich.console import Console

            self._real = Console()
            self.reset()
        return self._real

    def reset(self) -> None:
        """Fit the console to this process's streams (pipes and CI logs get a wide fixed width, not rich's 80
        columns); a daemon's forked child re-fits it to the client's streams."""
        if self._real is None:
            return  # made later, it fits the streams of then
        if self._stderr:
            piped = not sys.stderr.isatty()  # a log line is never folded: a path split at column 80 is unusable
            self._real.__init__(stderr=True, highlight=False, soft_wrap=piped,  # type: ignore[misc]  # in place
                                width=160 if piped else None)
        else:
            self._real.__init__(highlight=False, soft_wrap=False,  # type: ignore[misc]  # in place: holders keep it
                                width=None if sys.stdout.isatty() else 160)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real(), name)


console = LazyConsole()
err_console = LazyConsole(stderr=True)


def reset_consoles() -> None:
    """Re-fit the consoles to this process's streams (a daemon's forked child: they are the client's)."""
    console.reset()
    err_console.reset()


class _Said:
    """What this command has said so far: whether it printed its JSON, and the last usage error."""

    json = False
    usage_error: str | None = None


said = _Said()


def emit_json(data: Any) -> None:
    said.json = True
    sys.stdout.write(json.dumps(data, indent=2, sort_keys=False, default=str) + "\n")


def fail_json(error: str, exit_code: int, run_id: str | None = None) -> None:
    """A failed `--json` command still prints one JSON object on stdout (unless it printed its own)."""
    if not said.json:
        emit_json({"run_id": run_id, "status": "interrupted" if exit_code == 130 else "error", "error": error,
                   "exit_code": exit_code})


def error_line(message: str) -> None:
    # Plain write: rich would wrap long lines and interpret [brackets] as markup.
    sys.stderr.write(f"error: {message}\n")


def parse_inputs(pairs: list[str]) -> dict[str, str]:
    from planner.errors import PlannerError
    from planner.inputs import parse_pairs

    try:
        return parse_pairs(pairs, "--input")
    except ValueError as exc:
        raise PlannerError(str(exc)) from None


def fail(message: str, code: int, wants_json: bool, run_id: str | None = None) -> NoReturn:
    """End the command: one line on stderr, the JSON failure object with --json, the exit code."""
    error_line(message)
    if wants_json:
        fail_json(message, code, run_id)
    sys.exit(code)


def guarded(run: Callable[[], None], wants_json: bool) -> None:
    """Run a command as every command runs: a PlannerError is its one line and exit code, Ctrl-C is 130,
    anything else an internal error (70) in one line (PLANNER_DEBUG=1: the traceback)."""
    from planner.errors import ExitCode, PlannerError

    try:
        run()
    except PlannerError as exc:
        fail(exc.message, int(exc.exit_code), wants_json, exc.run_id)
    except KeyboardInterrupt:
        fail("interrupted (no run was recorded: nothing to resume)", int(ExitCode.INTERRUPTED), wants_json)
    except Exception as exc:
        if os.environ.get("PLANNER_DEBUG"):
            raise
        fail(f"internal error: {exc.__class__.__name__}: {exc} (set PLANNER_DEBUG=1 for a traceback)", 70,
             wants_json)
