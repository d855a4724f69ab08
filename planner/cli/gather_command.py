"""The typer face of `planner gather` (its help and option parsing); the work is `planner.cli.gather`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from planner.cli.gather import run_gather


def gather_command(
    repo: Annotated[Path, typer.Argument(help="The repository to snapshot.")],
    advisories: Annotated[list[Path] | None, typer.Option(help="OSV advisories: directory, zip or report.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the RepoContext as JSON.")] = False,
) -> None:
    """Snapshot a repository into a RepoContext (stored under PLANNER_HOME)."""
    run_gather(repo, advisories, as_json)
