"""Shared CLI output: JSON for scripts, rich tables for people, one-line errors."""

from __future__ import annotations

import json
import sys
from typing import Any

from rich.console import Console

console = Console()
err_console = Console(stderr=True)


def reset_consoles() -> None:
    """(Re)configure the consoles for this process's streams: at import, and in a daemon's forked child,
    whose streams and terminal are the client's (modules hold these very objects, so they are re-made in
    place). Pipes and CI logs get a wide fixed width instead of rich's 80-column default."""
    console.__init__(highlight=False, soft_wrap=False, width=None if sys.stdout.isatty() else 160)  # type: ignore[misc]
    err_console.__init__(stderr=True, highlight=False)  # type: ignore[misc]


reset_consoles()


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
