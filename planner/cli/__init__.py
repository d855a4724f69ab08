"""The `planner` command line. Errors are one line on stderr with a meaningful exit code."""

from __future__ import annotations

import os
import sys

import typer

from planner.cli import bundle, dispatch, gather, hooks, hotviews, learn, runs, task_classes
from planner.cli.output import error_line
from planner.errors import ExitCode, PlannerError

app = typer.Typer(
    name="planner",
    help="Task-class context manifests, provenance-logged context bundles and the maintenance planner.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.add_typer(task_classes.app, name="task-classes")
app.add_typer(runs.app, name="runs")
app.add_typer(hooks.app, name="hooks")
app.add_typer(learn.app, name="learn")
app.add_typer(hotviews.app, name="hotviews")
app.command("gather")(gather.gather_command)
app.command("bundle")(bundle.bundle_command)
app.command("dispatch")(dispatch.dispatch_command)
app.command("provenance")(runs.provenance_command)
app.command("ui")(__import__("planner.cli.ui", fromlist=["ui_command"]).ui_command)  # imports no web code


def main() -> None:
    try:
        app()
    except PlannerError as exc:
        error_line(exc.message)
        sys.exit(int(exc.exit_code))
    except KeyboardInterrupt:
        error_line("interrupted")
        sys.exit(130)
    except Exception as exc:
        if os.environ.get("PLANNER_DEBUG"):
            raise
        error_line(f"internal error: {exc.__class__.__name__}: {exc} (set PLANNER_DEBUG=1 for a traceback)")
        sys.exit(70)


__all__ = ["ExitCode", "app", "main"]
