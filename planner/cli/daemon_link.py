"""Reaching this checkout's daemon as a client: connect, send a header with file descriptors, read the answer's
lines, ask one control question, start one. Standard library only (the console script's entry point imports
it before anything else); in the CLI's package because `planner daemon` (planner/cli/daemon.py) uses it, and
the daemon, which runs the CLI's commands, sits above the CLI (planner/daemon/)."""

from __future__ import annotations

import json
import struct
import sys
from typing import TYPE_CHECKING, Any

from planner.cli.daemon_address import project_root, socket_path

if TYPE_CHECKING:
    import socket


def connect(timeout: float | None = None) -> socket.socket | None:
    """A connection to this checkout's daemon, or None when none is listening."""
    import socket  # here: PLANNER_DAEMON=off never connects

    path = socket_path()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(path)
    except OSError:  # no socket file, a refused (dead) one, a path too long: no daemon
        sock.close()
        return None
    return sock


def send(sock: socket.socket, header: dict[str, Any], fds: list[int]) -> None:
    import socket

    payload = json.dumps(header).encode()
    socket.send_fds(sock, [struct.pack("!Q", len(payload))], fds)
    sock.sendall(payload)


def lines(sock: socket.socket) -> Any:
    """The server's answer, line by line, until it closes the connection."""
    buffer = b""
    while True:
        chunk = sock.recv(4096)
        if not chunk:
            return
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            yield line.decode()


def ask(header: dict[str, Any], timeout: float = 5.0) -> str | None:
    """One control request (ping, stop) and its one-line answer; None when no daemon answers."""
    sock = connect(timeout)
    if sock is None:
        return None
    with sock:
        try:
            send(sock, header, [])
            return next(iter(lines(sock)), None)
        except OSError:
            return None


def start_in_background(idle: float | None = None) -> None:
    """Start this checkout's daemon without waiting for it (PLANNER_DAEMON=auto, and `planner daemon start`,
    which then waits for it to answer)."""
    import subprocess  # only here: most commands never start one

    # Started from the checkout, not from wherever the user stands: `python -m` puts its folder on the
    # daemon's import path, and a repository's own modules must never shadow the planner's.
    idle_args = [] if idle is None else ["--idle", str(idle)]
    subprocess.Popen([sys.executable, "-m", "planner.daemon.server", *idle_args], stdin=subprocess.DEVNULL,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                     cwd=project_root())
