"""Shared CLI output: JSON for scripts, rich tables for people, one-line errors."""

from __future__ import annotations

import json
import sys
from typing import Any

from rich.console import Console

# Pipes and CI logs get a wide fixed width instead of rich's 80-column default.
console = Console(highlight=False, soft_wrap=False, width=None if sys.stdout.isatty() else 160)
err_console = Console(stderr=True, highlight=False)


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, sort_keys=False, default=str) + "\n")


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
