"""The `planner` command line (the typer app is `planner.cli.commands`; commands live one per module here).

Kept free of imports: every `planner.cli.X` import runs this file first, and `planner gather`'s fast path
(`planner.cli.gather.fast`) must not pay for typer.
"""

from __future__ import annotations

import importlib
from typing import Any


def main(prog_name: str | None = None) -> None:
    from planner.cli.commands import main as run

    run(prog_name)


def __getattr__(name: str) -> Any:  # `from planner.cli import app, COMMANDS` as before, loaded on use
    if name in ("app", "COMMANDS", "ExitCode"):
        return getattr(importlib.import_module("planner.cli.commands"), name)
    raise AttributeError(f"module 'planner.cli' has no attribute {name!r}")


__all__ = ["COMMANDS", "ExitCode", "app", "main"]
