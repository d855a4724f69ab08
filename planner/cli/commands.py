"""The `planner` typer app. Errors are one line on stderr with a meaningful exit code.

Commands are loaded on demand from COMMANDS (planner/cli/table.py: name → "module:attribute", one-line
help), so `planner --help` or `planner gather` never imports the graph stack (langgraph, langchain) they do
not use. To add a command, add one row there; the module is imported only when it runs.
"""

from __future__ import annotations

import sys
from typing import Any

import typer

from planner.cli.lazy import LazyGroup, click
from planner.cli.output import fail, fail_json, guarded, said
from planner.cli.table import COMMANDS
from planner.errors import ExitCode


class PlannerGroup(LazyGroup):
    table = COMMANDS

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except click.exceptions.ClickException as exc:  # kept for --json, which must answer in JSON too
            said.usage_error = exc.format_message()
            raise

    def make_context(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().make_context(*args, **kwargs)
        except click.exceptions.ClickException as exc:
            said.usage_error = exc.format_message()
            raise


app = typer.Typer(
    name="planner",
    cls=PlannerGroup,
    help="Task-class context manifests, provenance-logged context bundles and the maintenance planner.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            print(f"planner (tccm-planner) {version('tccm-planner')}")
        except PackageNotFoundError:  # run from a checkout that was never installed
            print("planner (tccm-planner) unknown version: not installed (pip install -e .)")
        raise typer.Exit()


@app.callback()
def _root(show_version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                            help="Print the installed version and exit.")) -> None:
    """Task-class context manifests, provenance-logged context bundles and the maintenance planner."""


def main(prog_name: str | None = None) -> None:
    wants_json = "--json" in sys.argv[1:]
    guarded(lambda: _run(prog_name, wants_json), wants_json)


def _run(prog_name: str | None, wants_json: bool) -> None:
    try:
        app(prog_name=prog_name)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if code == int(ExitCode.INTERRUPTED) and not said.json:  # typer turns Ctrl-C into exit 130, silently
            fail("interrupted (no run was recorded: nothing to resume)", code, wants_json)
        if code and wants_json:
            fail_json(said.usage_error or f"exited with code {code}", code)
        raise


__all__ = ["COMMANDS", "ExitCode", "app", "main"]
