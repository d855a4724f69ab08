"""A click group whose subcommands are imported only when they run.

Listing them (`--help`) uses the one-line help in the table, so help never imports a command module.
"""

from __future__ import annotations

import importlib
from difflib import get_close_matches
from typing import Any, ClassVar

import typer
from typer.core import TyperCommand, TyperGroup

# typer ≥ 0.25 vendors click as typer._click; older typer uses click itself. Use whichever it is built on.
click: Any = importlib.import_module(TyperGroup.__mro__[1].__module__.rpartition(".")[0])


def load_command(name: str, target: str) -> Any:
    """Import `module:attribute` (a typer.Typer or a command function) as the click command `name`."""
    module_name, _, attribute = target.partition(":")
    obj: Any = getattr(importlib.import_module(module_name), attribute)
    # Mounted on a throwaway parent exactly as add_typer/command would have, so options and help match.
    holder = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
    holder.callback()(lambda: None)
    if isinstance(obj, typer.Typer):
        holder.add_typer(obj, name=name)
    else:
        holder.command(name)(obj)
    group = typer.main.get_command(holder)
    assert isinstance(group, TyperGroup)  # a Typer with a callback is a group
    return group.commands[name]


class LazyGroup(TyperGroup):
    table: ClassVar[dict[str, tuple[str, str]]] = {}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._listing = False
        self._loaded: dict[str, Any] = {}

    def list_commands(self, ctx: Any) -> list[str]:
        return [*super().list_commands(ctx), *(n for n in self.table if n not in self.commands)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name in self.commands or cmd_name not in self.table:
            return super().get_command(ctx, cmd_name)
        target, summary = self.table[cmd_name]
        if self._listing:  # help only needs the name and summary: no import
            return TyperCommand(cmd_name, help=summary, short_help=summary)
        if cmd_name not in self._loaded:
            self._loaded[cmd_name] = load_command(cmd_name, target)
        return self._loaded[cmd_name]

    def resolve_command(self, ctx: Any, args: list[str]) -> tuple[str | None, Any, list[str]]:
        try:
            return super().resolve_command(ctx, args)
        except click.exceptions.UsageError as exc:  # typer suggests from self.commands only: offer the lazy names too
            matches = get_close_matches(args[0], self.list_commands(ctx)) if args else []
            if matches and "Did you mean" not in exc.message:
                exc.message = f"{exc.message.rstrip('.')}. Did you mean {', '.join(map(repr, matches))}?"
            raise

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False
