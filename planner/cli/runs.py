"""`planner runs list | show | resume | answer` and `planner provenance ID`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from planner.cli.bundle import print_record
from planner.cli.output import console, emit_json
from planner.config import Settings
from planner.errors import PlannerError
from planner.queries import run_rows
from planner.store.provenance import ProvenanceStore
from planner.store.runs import RunStore, show_payload

app = typer.Typer(help="Dispatched runs and recorded bundle builds.", no_args_is_help=True)
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]
RunArg = Annotated[str, typer.Argument(help="A run id (or unique prefix) from `planner runs list`.")]


def _rows(settings: Settings) -> list[dict[str, Any]]:
    return run_rows(RunStore(settings.home).summaries(), ProvenanceStore(settings.home).list())


@app.command("list")
def list_command(as_json: JsonOpt = False) -> None:
    """Every dispatched run and recorded bundle build, oldest first."""
    rows = _rows(Settings.from_env())
    if as_json:
        emit_json(rows)
        return
    if not rows:
        console.print("nothing recorded yet (try `planner dispatch TASK_CLASS --repo PATH`)")
        return
    table = Table("id", "kind", "task class", "status", "repo", "created")
    for row in rows:
        table.add_row(row["id"], row["kind"], row["task_class"], row["status"], row["repo"], row["created_at"])
    console.print(table)


@app.command("show")
def show_command(run_id: RunArg, as_json: JsonOpt = False) -> None:
    """A run's status, report and patch (or a bundle build's provenance)."""
    from planner.run.dispatch import final_state  # the graph stack: only for a run's state

    settings = Settings.from_env()
    try:
        state = final_state(settings, run_id)
    except PlannerError:  # not a dispatched run: maybe a bundle build
        provenance_command(run_id, as_json)
        return
    if as_json:
        emit_json(show_payload(state))
        return
    run = state["run"]
    console.print(f"run {run['id']}  {run['task_class']}  {run['status']}  repo {run['repo']}")
    sys.stdout.write((state.get("report") or "(no report yet: the run has not finished)") + "\n")


@app.command("resume")
def resume_command(
    run_id: RunArg,
    model: Annotated[str | None, typer.Option(help="LangChain chat model provider:name for the LLM stage.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Continue an interrupted or failed run from its last checkpoint."""
    from planner.chain.llm import init_model
    from planner.cli.dispatch import exit_for, live, report
    from planner.run.dispatch import resume

    settings = Settings.from_env().for_one_run()
    spec = model or settings.model
    state = resume(settings, run_id, init_model(spec) if spec else None, spec, live(as_json))
    report(state, as_json)
    exit_for(state)


@app.command("answer")
def answer_command(
    run_id: RunArg,
    plan: Annotated[Path, typer.Option("--plan", help="The plan, JSON or YAML, in the schema the LLM answers in "
                                                      "(summary, steps, edits, used_entries, notes); or "
                                                      "items: {ITEM_ID: plan}.")],
    as_json: JsonOpt = False,
) -> None:
    """Answer a needs_llm run with a plan written by hand: a new run of the same task class, repository and
    inputs, where the plan goes through every check the model's would (edits apply, policy, git apply)."""
    from planner.cli.dispatch import exit_for, live, report
    from planner.run.answer import answer

    settings = Settings.from_env().for_one_run()
    state = answer(settings, run_id, plan, live(as_json))
    report(state, as_json)
    exit_for(state)


def provenance_command(
    record_id: Annotated[str, typer.Argument(help="A run or bundle-build id (or unique prefix).")],
    as_json: JsonOpt = False,
    as_html: Annotated[bool, typer.Option("--html", help="The run page as one self-contained HTML file.")] = False,
) -> None:
    """Show the provenance record of one bundle build or finished run."""
    if as_html:
        from planner.extras import require

        require("ui", "an HTML export")
        from planner.ui.app import export_html  # the web stack only when asked for

        sys.stdout.write(export_html(Settings.from_env(), record_id))
        return
    record = ProvenanceStore(Settings.from_env().home).get(record_id)
    if as_json:
        emit_json(record.model_dump(mode="json"))
    else:
        print_record(record)
