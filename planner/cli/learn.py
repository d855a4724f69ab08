"""`planner learn report [TASK_CLASS]`: per-entry usefulness over runs, with suggested band moves."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from planner.cli.output import console, emit_json
from planner.config import Settings
from planner.store.telemetry import MIN_RUNS, Telemetry

app = typer.Typer(help="Usefulness telemetry (Stage 7): which TCCM entries helped.", no_args_is_help=True)


@app.command("report")
def report_command(
    task_class: Annotated[str | None, typer.Argument(help="Only this task class.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Per entry: runs, how often loaded / used / requested / deferred-then-needed, and a suggestion.
    Suggestions are advice: no TCCM is ever edited."""
    telemetry = Telemetry(Settings.from_env().home)
    try:
        stats = telemetry.report(task_class)
    finally:
        telemetry.close()
    if as_json:
        emit_json([s.as_dict() for s in stats])
        return
    if not stats:
        console.print("no finished runs recorded yet (dispatch a few runs first)")
        return
    table = Table("task class", "band", "selector", "runs", "loaded", "used", "requested", "deferred→needed",
                  "suggestion")
    for s in stats:
        table.add_row(s.task_class, s.band, s.selector, str(s.runs), str(s.loaded), str(s.used), str(s.requested),
                      str(s.deferred_needed), s.suggestion or "")
    console.print(table)
    console.print(f"(suggestions need at least {MIN_RUNS} runs of an entry)")
