"""`planner portfolio dispatch | status | resume | report | list`: one task class across many repositories."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from planner.cli.output import console, emit_json, err_console, parse_inputs
from planner.config import Settings
from planner.portfolio import coordinator, report
from planner.portfolio.model import Spec
from planner.portfolio.outcomes import rank, to_csv
from planner.portfolio.store import PortfolioStore

app = typer.Typer(help="Run a task class across many repositories (a local pool, or Celery workers).",
                  no_args_is_help=True)
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]
IdArg = Annotated[str, typer.Argument(help="A portfolio id (or unique prefix) from `planner portfolio list`.")]
EngineOpt = Annotated[str | None, typer.Option(help="local (a process pool, the default) or celery "
                                                    "(or PLANNER_ENGINE).")]
BrokerOpt = Annotated[str | None, typer.Option(help="Celery broker URL, e.g. redis://host:6379/1 "
                                                    "(or PLANNER_BROKER_URL).")]
WorkersOpt = Annotated[int | None, typer.Option(help="Local pool size (default: CPU count).")]


def _store() -> tuple[Settings, PortfolioStore]:
    settings = Settings.from_env()
    return settings, PortfolioStore(settings.home)


def _progress(as_json: bool, total: list[int]) -> coordinator.Events:
    done = [0]

    def show(kind: str, data: dict[str, Any]) -> None:
        if as_json:
            return
        if kind == "start":
            total[0] = data["jobs"]
            again = f" ({data['reattached']} still queued or running from before, not sent again)" \
                if data.get("reattached") else ""
            err_console.print(f"{data['jobs']} repositories to run on the {data['engine']} engine{again}")
        elif kind == "result":
            done[0] += 1
            err_console.print(f"  [{done[0]}/{total[0]}] {escape(data['repo'])}: {data['status']}")
    return show


def _finish(settings: Settings, spec: Spec, runner: coordinator.Runner, as_json: bool) -> None:
    coordinator.run(settings, spec, runner, _progress(as_json, [0]))
    store = PortfolioStore(settings.home)
    try:
        summary = report.summary(store, spec.id, full=as_json)
    finally:
        store.close()
    _show_report(summary, as_json, settings)
    code = report.exit_code(summary)
    if code:
        raise typer.Exit(code)


@app.command("dispatch")
def dispatch_command(
    task_class: Annotated[str, typer.Argument(help="The task class (see `planner task-classes list`).")],
    repos: Annotated[Path, typer.Option(help="A file of repository paths (one per line) or a directory: "
                                             "every git repository under it.")],
    inputs: Annotated[list[str] | None, typer.Option("--input", "-i", help="Run input NAME=VALUE.")] = None,
    advisories: Annotated[list[Path] | None, typer.Option(help="OSV advisories: directory, zip or report.")] = None,
    apply: Annotated[bool, typer.Option(help="Commit each patch on branch planner/TASK_CLASS/PORTFOLIO_ID "
                                             "(clean work trees only; never twice).")] = False,
    workers: WorkersOpt = None,
    engine: EngineOpt = None,
    broker: BrokerOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Dispatch a task class to every repository; prints the portfolio id first."""
    settings = Settings.from_env()
    name = coordinator.engine_name(engine)
    size = workers or os.cpu_count() or 2
    runner = coordinator.make_runner(name, size, broker)
    sources = [str(p.resolve()) for p in advisories] if advisories else [str(p.resolve()) for p in settings.advisories]
    spec = coordinator.create(settings, task_class, repos, parse_inputs(inputs or []), sources, apply, name, size)
    if as_json:
        err_console.print(f"portfolio {spec.id}")
    else:
        sys.stdout.write(f"portfolio {spec.id}\n")
        sys.stdout.flush()
    _finish(settings, spec, runner, as_json)


@app.command("resume")
def resume_command(portfolio_id: IdArg, workers: WorkersOpt = None, engine: EngineOpt = None,
                   broker: BrokerOpt = None, as_json: JsonOpt = False) -> None:
    """Re-dispatch only the repositories without a recorded result (and make any --apply branch not made yet)."""
    settings, store = _store()
    try:
        spec = store.spec(store.resolve(portfolio_id))
    finally:
        store.close()
    name = coordinator.engine_name(engine or spec.engine)
    _finish(settings, spec, coordinator.make_runner(name, workers or spec.workers, broker), as_json)


def _bar(done: int, total: int, width: int = 30) -> str:
    filled = round(width * done / total) if total else width
    return f"[{'#' * filled}{'-' * (width - filled)}] {done}/{total}"


@app.command("status")
def status_command(portfolio_id: IdArg, as_json: JsonOpt = False) -> None:
    """Progress and each repository's status."""
    _settings, store = _store()
    try:
        summary = report.summary(store, store.resolve(portfolio_id))
    finally:
        store.close()
    if as_json:
        emit_json(summary)
        return
    console.print(f"portfolio {summary['id']}  {summary['task_class']}  {summary['status']}"
                  + (f" ({escape(summary['note'])})" if summary["note"] else ""))
    console.print(_bar(summary["done"], summary["repos"]))
    table = Table("repository", "status", "run", "attempts")
    for row in summary["repositories"]:
        table.add_row(escape(row["repo"]), row["status"], row.get("run_id") or "-", str(row["attempts"]))
    console.print(table)


def _show_report(summary: dict[str, Any], as_json: bool, settings: Settings) -> None:
    if as_json:
        emit_json(summary)
        return
    counts = ", ".join(f"{n} {s}" for s, n in sorted(summary["totals"]["by_status"].items(), key=lambda x: rank(x[0])))
    console.print(f"portfolio {summary['id']}  {summary['task_class']}  [bold]{summary['status']}[/bold]: "
                  f"{summary['done']}/{summary['repos']} done ({counts})")
    for source in summary.get("advisories") or ():
        console.print(f"advisories: {escape(source)}")
    for group in summary["groups"]:
        title = f"\n[bold]{group['status']}[/bold] ({len(group['repositories'])})"
        console.print(title + (f": {escape(group['reason'])}" if group["reason"] else ""))
        if group["fix"]:
            console.print(f"  to act: {escape(group['fix'])}")
        table = Table("repository", "run", "item", *summary["columns"], "where")
        for repo in group["repositories"]:
            table.add_row(escape(repo["repo"]), repo["run_id"] or "-", escape(str(repo["item"] or "-")),
                          *[escape(repo["columns"].get(t, "")) or "-" for t in summary["columns"]],
                          escape(repo["where"] or "-"))
        console.print(table)
    totals = summary["totals"]
    console.print(f"\n{totals['findings']} findings, {totals['patches']} patches, {totals['branches']} branches; "
                  f"patches under {settings.home / 'runs'}/RUN/patch.diff")


@app.command("report")
def report_command(portfolio_id: IdArg, as_json: JsonOpt = False, as_csv: Annotated[bool, typer.Option(
        "--csv", help="One CSV row per work item (repository, run, status, the class's columns, reason, fix).")]
        = False) -> None:
    """Repositories grouped by outcome and reason, worst first, each with its run and the class's columns."""
    settings, store = _store()
    try:
        summary = report.summary(store, store.resolve(portfolio_id), full=as_json)
    finally:
        store.close()
    if as_csv:
        sys.stdout.write(to_csv(summary["repositories"], summary["columns"]))
        return
    _show_report(summary, as_json, settings)


@app.command("list")
def list_command(as_json: JsonOpt = False) -> None:
    """Every portfolio, oldest first."""
    _settings, store = _store()
    try:
        rows = store.list()
    finally:
        store.close()
    if as_json:
        emit_json(rows)
        return
    if not rows:
        console.print("no portfolios yet (try `planner portfolio dispatch TASK_CLASS --repos DIR`)")
        return
    table = Table("id", "task class", "status", "done", "created")
    for row in rows:
        table.add_row(str(row["id"]), str(row["task_class"]), str(row["status"]), f"{row['done']}/{row['repos']}",
                      str(row["created_at"]))
    console.print(table)
