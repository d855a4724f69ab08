"""`planner runs list` and `planner provenance ID`."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from planner.cli.bundle import print_record
from planner.cli.output import console, emit_json
from planner.config import Settings
from planner.provenance import ProvenanceStore

app = typer.Typer(help="Recorded bundle builds and runs.", no_args_is_help=True)
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]


@app.command("list")
def list_command(as_json: JsonOpt = False) -> None:
    """Every recorded bundle build and run, oldest first."""
    rows = ProvenanceStore(Settings.from_env().home).list()
    if as_json:
        emit_json(rows)
        return
    if not rows:
        console.print("no runs recorded yet (try `planner bundle TASK_CLASS --repo PATH`)")
        return
    table = Table("id", "kind", "task class", "status", "mode", "tokens", "repo", "created")
    for row in rows:
        table.add_row(row["id"], row["kind"], row["task_class"], row["status"], row["mode"],
                      f"{row['tokens']}/{row['max_tokens']}", row["repo"], row["created_at"])
    console.print(table)


def provenance_command(
    record_id: Annotated[str, typer.Argument(help="A record id (or unique prefix) from `planner runs list`.")],
    as_json: JsonOpt = False,
) -> None:
    """Show the provenance record of one bundle build or run."""
    record = ProvenanceStore(Settings.from_env().home).get(record_id)
    if as_json:
        emit_json(record.model_dump(mode="json"))
    else:
        print_record(record)
