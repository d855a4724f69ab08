"""`planner advisories sync | show`: the OSV snapshot every command reads when no advisory source is given."""

from __future__ import annotations

import os
import sys
from typing import Annotated, Any

import typer

from planner.cli.output import console, emit_json, err_console
from planner.config import Settings

app = typer.Typer(help="The OSV advisory snapshot: sync it from osv.dev, show it.", no_args_is_help=True)
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]


class _Bar:
    """A rich progress bar per ecosystem on a terminal (bytes, then records once verified)."""

    def __init__(self) -> None:
        from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TransferSpeedColumn

        self.progress = Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
                                 TransferSpeedColumn(), console=err_console.real(), transient=False)
        self.tasks: dict[str, Any] = {}

    def start(self, ecosystem: str, total: int | None) -> None:
        self.tasks[ecosystem] = self.progress.add_task(ecosystem, total=total)

    def advance(self, ecosystem: str, size: int) -> None:
        self.progress.advance(self.tasks[ecosystem], size)

    def verified(self, ecosystem: str, records: int, note: str = "") -> None:
        self.progress.update(self.tasks[ecosystem], description=f"{ecosystem}: {records:,} records{note}")


class _Lines:
    """Off a terminal: one line per ecosystem once it is verified."""

    def start(self, ecosystem: str, total: int | None) -> None:
        return None

    def advance(self, ecosystem: str, size: int) -> None:
        return None

    def verified(self, ecosystem: str, records: int, note: str = "") -> None:
        sys.stderr.write(f"{ecosystem}: {records:,} records verified{note}\n")


@app.command("sync")
def sync_command(
    ecosystems: Annotated[list[str] | None, typer.Option(
        "--ecosystem", help="An OSV ecosystem (PyPI, npm, Go, crates.io…); repeatable. Default: every ecosystem "
                            "the planner reads, added to those synced before (a snapshot narrowed below PyPI, npm "
                            "and Go stays as it is).")] = None,
    source: Annotated[str | None, typer.Option(
        help="The bucket: SOURCE/ECOSYSTEM/all.zip (default: osv.dev's public bucket).")] = None,
    full: Annotated[bool, typer.Option(
        "--full", help="Download every ecosystem's all.zip, even where only a few records changed since the "
                       "last sync.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Download osv.dev's per-ecosystem exports, verify every record, and keep them under PLANNER_HOME as the
    advisory source of every command given none (replaced atomically: a failed sync changes nothing). An
    ecosystem synced before fetches only the records changed since, when they are few."""
    from planner.advisories import sync

    settings = Settings.from_env()
    shown: Any = _Bar() if sys.stderr.isatty() and not as_json else _Lines()
    try:
        if isinstance(shown, _Bar):
            with shown.progress:
                snapshot = sync.sync(settings.home, ecosystems or (), source or sync.DEFAULT_SOURCE, shown, full)
        else:
            snapshot = sync.sync(settings.home, ecosystems or (), source or sync.DEFAULT_SOURCE, shown, full)
    except KeyboardInterrupt:
        raise sync.interrupted() from None
    _index(snapshot.files())
    _show(snapshot, as_json)


def _index(files: Any) -> None:
    """Compile the new snapshot's index now, so the first run after a sync does not pay for it (a failure here
    only costs that run the time)."""
    from repocontext.osv.index import open_db

    try:
        open_db(os.pathsep.join(str(p) for p in files))
    except Exception:  # noqa: BLE001 - an index is a cache: the run builds it again
        return


@app.command("show")
def show_command(as_json: JsonOpt = False) -> None:
    """The synced snapshot: where it came from, when, records per ecosystem, and whether it is stale."""
    from repocontext import osvsnapshot

    snapshot = osvsnapshot.read(Settings.from_env().home)
    if snapshot is None:
        from planner.errors import PlannerError

        raise PlannerError("no advisory snapshot: run `planner advisories sync`")
    _show(snapshot, as_json)


def _show(snapshot: Any, as_json: bool) -> None:
    from repocontext import osvsnapshot

    warning = osvsnapshot.staleness(snapshot)
    if as_json:
        emit_json({"folder": str(snapshot.folder), "source": snapshot.source, "synced_at": snapshot.synced_at(),
                   "records": snapshot.records(), "files": [str(p) for p in snapshot.files()], "warning": warning})
        return
    counts = ", ".join(f"{name} {n:,}" for name, n in snapshot.records().items())
    console.print(f"advisory snapshot {snapshot.folder} from {snapshot.source}, synced {snapshot.synced_at()}: "
                  f"{counts}", markup=False, highlight=False)
    if warning:
        sys.stderr.write(f"warning: {warning}\n")
