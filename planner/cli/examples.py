"""`planner examples add | list`: the solved examples the RAG stage serves."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from planner.cli.output import console, emit_json
from planner.config import Settings
from planner.errors import PlannerError

app = typer.Typer(help="Solved examples the RAG stage serves.", no_args_is_help=True)
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]


@app.command("add")
def add_command(
    task_class: Annotated[str, typer.Argument(help="The task class the example solves.")],
    repo: Annotated[Path, typer.Option(help="The repository the patch was made for.")],
    patch: Annotated[Path, typer.Option(help="A unified diff (git diff) that solves the task there.")],
    inputs: Annotated[list[str] | None, typer.Option("--input", "-i", help="Run input NAME=VALUE.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Seed a solved example from a hand-made patch (checked to apply), so the next similar repository is
    served by the RAG stage instead of needing an LLM."""
    from planner.run.answer import add_example

    pairs = [i.partition("=") for i in inputs or []]
    bad = [name for name, eq, _ in pairs if not eq]
    if bad:
        raise PlannerError(f"--input {bad[0]!r}: expected NAME=VALUE")
    found = add_example(Settings.from_env(), task_class, repo, patch, {k: v for k, _, v in pairs})
    if as_json:
        emit_json(found)
        return
    console.print(f"solved example {found['id']} for {task_class}: {found['edits']} edit(s) in "
                  f"{', '.join(found['files'])} (items {', '.join(found['items'])})")
