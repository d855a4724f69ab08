"""`planner daemon start | stop | status`: a warm process that runs commands without Python's imports."""

from __future__ import annotations

import os
import time
from typing import Annotated

import typer

from planner.cli.daemon_address import socket_path
from planner.cli.daemon_link import ask, start_in_background
from planner.cli.output import console, emit_json
from planner.errors import EnvironmentProblem

app = typer.Typer(help="A warm planner process that commands are handed to (skips start-up imports).",
                  no_args_is_help=True)
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]
STARTUP_SECONDS = 30.0


def _status() -> dict[str, object]:
    answer = ask({"ping": True})
    found: dict[str, object] = {"running": False, "socket": socket_path()}
    if answer and answer.startswith("stale "):  # it runs older code, and is exiting now
        wait_for_exit(int(answer.split()[1]), STARTUP_SECONDS)
    if answer and answer.startswith("pong "):
        pid, started, served, idle = answer.split()[1:5]
        found.update(running=True, pid=int(pid), uptime_s=round(time.time() - float(started)),
                     commands=int(served), idle_exit_s=float(idle))
    return found


def wait_for_exit(pid: int, seconds: float) -> bool:
    """Whether process `pid` is gone within `seconds` (polled; it need not be our child)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.02)
    return False


@app.command("start")
def start_command(idle: Annotated[float, typer.Option(help="Exit after this many seconds without a command.")]
                  = 1800.0, as_json: JsonOpt = False) -> None:
    """Start this checkout's daemon (a no-op when it is already running); later commands use it."""
    if not _status()["running"]:
        start_in_background(idle)
        deadline = time.monotonic() + STARTUP_SECONDS
        while not _status()["running"]:
            if time.monotonic() > deadline:
                raise EnvironmentProblem(f"the planner daemon did not start listening on {socket_path()} "
                                         f"within {STARTUP_SECONDS:.0f} s")
            time.sleep(0.05)
    _show(_status(), as_json)


@app.command("stop")
def stop_command(as_json: JsonOpt = False) -> None:
    """Stop this checkout's daemon (running commands finish); commands then run in-process."""
    answer = ask({"stop": True})
    if as_json:
        emit_json({"stopped": answer == "bye", "socket": socket_path()})
    else:
        console.print("stopped the planner daemon" if answer == "bye" else "no planner daemon was running")


@app.command("status")
def status_command(as_json: JsonOpt = False) -> None:
    """Whether this checkout's daemon runs, since when, and how many commands it has run."""
    _show(_status(), as_json)


def _show(found: dict[str, object], as_json: bool) -> None:
    if as_json:
        emit_json(found)
    elif found["running"]:
        console.print(f"planner daemon running: pid {found['pid']}, up {found['uptime_s']} s, "
                      f"{found['commands']} command(s) run, exits after {found['idle_exit_s']:.0f} s idle; "
                      f"socket {found['socket']}")
    else:
        console.print(f"no planner daemon running (socket {found['socket']})")
