"""One forwarded command, in a child forked by the daemon: it becomes the client's process in all that
the command can see (streams, terminal, environment, working directory, argv), takes on the client's
rlimits where they are lower than its own, runs the CLI, and reports the exit status."""

from __future__ import annotations

import atexit
import contextlib
import os
import resource
import socket
import sys
import traceback
from typing import Any, NoReturn

from planner.cli.daemon_address import RLIMITS


def run_forwarded(conn: socket.socket, fds: list[int], header: dict[str, Any]) -> NoReturn:
    code = 70
    conn.settimeout(None)  # the command may take as long as it takes
    try:
        lower_limits(header["limits"])
    except (KeyError, TypeError, ValueError, OSError):  # never run it with more room than the client has
        with contextlib.suppress(OSError):
            conn.sendall(b"elsewhere\n")  # the client runs it itself
        os._exit(0)
    try:
        _become(fds, header)
        conn.sendall(f"pid {os.getpid()}\n".encode())
        code = _run(str(header.get("prog") or "planner"))
    except KeyboardInterrupt:  # Ctrl-C before the CLI took over its handling
        code = 130
    except BaseException as exc:  # noqa: BLE001 - whatever happens, the client gets a status
        if os.environ.get("PLANNER_DEBUG"):  # as in-process: the traceback the user asked for
            _write_err("".join(traceback.format_exception(exc)))
        else:
            _write_err(f"error: internal error: {exc.__class__.__name__}: {exc} (set PLANNER_DEBUG=1 for a "
                       "traceback)\n")
    finally:
        try:
            atexit._run_exitfuncs()  # what a normal interpreter exit would run
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:  # noqa: BLE001 - a closed pipe must not keep the status from the client
            pass
        try:
            conn.sendall(f"exit {code}\n".encode())
        finally:
            os._exit(0)


def lower_limits(wanted: dict[str, list[int]]) -> None:
    """Lower this process's soft and hard limits to the client's where those are lower (every one of
    RLIMITS must be given); ValueError or OSError where one cannot be set."""
    for name in RLIMITS:
        which = getattr(resource, name)
        soft, hard = (int(value) for value in wanted[name])
        own_soft, own_hard = resource.getrlimit(which)
        new_hard = _lower(own_hard, hard)
        new_soft = _lower(_lower(own_soft, soft), new_hard)
        if (new_soft, new_hard) != (own_soft, own_hard):
            resource.setrlimit(which, (new_soft, new_hard))


def _lower(a: int, b: int) -> int:
    """The lower of two limits, RLIM_INFINITY being the highest."""
    if a == resource.RLIM_INFINITY:
        return b
    if b == resource.RLIM_INFINITY:
        return a
    return min(a, b)


def _become(fds: list[int], header: dict[str, Any]) -> None:
    for target, fd in enumerate(fds[:3]):
        os.dup2(fd, target)
        os.close(fd)
    os.environ.clear()
    os.environ.update(header["env"])
    os.chdir(header["cwd"])
    tty = os.isatty(1)
    sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115 - the process's own streams
    sys.stdout = open(1, "w", encoding="utf-8", closefd=False, buffering=1 if tty else -1)  # noqa: SIM115
    sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False,  # noqa: SIM115
                      buffering=1)
    sys.argv = ["planner", *header["argv"]]
    from planner.cli.output import reset_consoles

    reset_consoles()  # they looked at the daemon's streams and terminal when imported


def _run(prog: str) -> int:
    from planner.cli import main

    try:
        main(prog)
    except SystemExit as exit_:
        return _code(exit_.code)
    return 0


def _code(value: object) -> int:
    if value is None:
        return 0
    if isinstance(value, int):
        return value
    _write_err(f"{value}\n")  # sys.exit("message") prints the message and exits 1
    return 1


def _write_err(text: str) -> None:
    with contextlib.suppress(OSError):
        os.write(2, text.encode("utf-8", "backslashreplace"))
