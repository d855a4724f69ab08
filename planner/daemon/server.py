"""The daemon: imports what the commands use once, then forks a child per forwarded command.

The server never runs a command itself, so every child starts from the same freshly imported state a new
process would have (no caches warmed by an earlier command, no open files, one thread). It holds a lock
for its lifetime (one daemon per socket, even when several start at once), answers `ping` and `stop`,
refuses commands once the code it imported has changed on disk, or any file it read while importing (the
secret rules, any data a module loads when imported): `stale`, the client runs them itself, and the server
exits. A client confined otherwise than the daemon (other namespaces, credentials, capabilities or seccomp)
is answered `elsewhere` and runs its command itself; a child runs a command under the client's rlimits
where they are lower. It exits after `--idle` seconds without a command.

Run: python -m planner.daemon.server [--idle SECONDS]   (what `planner daemon start` does)
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import importlib
import json
import os
import socket
import stat
import struct
import sys
import time
from collections.abc import Iterable
from typing import Any

from planner.cli.daemon_address import code_stamp, confinement, socket_path
from planner.daemon.client import without_pydantic_plugins
from repocontext.home import make_private

IDLE_SECONDS = 1800.0
REQUEST_SECONDS = 10.0
# What the commands import, loaded before the first fork. planner.cli.output's consoles are re-made in
# each child (planner.daemon.child), as they read the terminal when created.
PRELOAD = ("planner.cli.commands", "planner.cli.gather", "planner.cli.gather_command", "planner.cli.bundle",
           "planner.cli.dispatch", "planner.cli.runs", "planner.cli.task_classes", "planner.cli.portfolio",
           "planner.cli.hotviews",
           "planner.cli.learn", "planner.cli.hooks", "planner.service", "planner.run.dispatch",
           "planner.run.graph",  # LangGraph (~1 s): planner.run.dispatch imports it only for a run with work
           "planner.chain.llm", "planner.run.apply", "planner.hotviews.bundles", "repocontext.gather",
           "repocontext.regather", "repocontext.probes",
           # `planner mcp` (stdio, from an agent's host): the MCP SDK is most of its start-up (~0.8 s)
           "planner.cli.mcp", "planner.mcpserver.server")


Stat = tuple[int, int, int, int] | None
UNWATCHED = ("/proc/", "/sys/", "/dev/")  # read at import, but not files whose change means new code or data
WRITES = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


def _key(info: os.stat_result) -> Stat:
    return info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns


def _stat(path: str) -> Stat:
    try:
        return _key(os.stat(path))
    except OSError:
        return None


class ReadAtImport:
    """Every file the daemon read while it imported (module sources, and data such as the secret rules,
    whichever module reads it), as it was then. Recorded from the interpreter's `open` audit events; the
    hook cannot be removed, so afterwards (and in every child) it returns at once (~1 µs an event)."""

    def __init__(self) -> None:
        self.recording = True
        self.seen: dict[str, Stat] = {}
        sys.addaudithook(self._event)

    def _event(self, event: str, args: tuple[Any, ...]) -> None:
        if self.recording and event == "open":
            self._opened(*args)

    def _opened(self, path: Any, mode: str | None, flags: int | None) -> None:
        if isinstance(path, int) or (flags or 0) & WRITES or any(c in (mode or "r") for c in "wax+"):
            return  # a descriptor, or a file opened to write (the lock, a log): not something read
        full = os.path.abspath(os.fsdecode(path))
        if full in self.seen or full.endswith(".pyc") or full.startswith(UNWATCHED):
            return  # a cached .pyc stands for its source, which is watched as the module's file
        try:
            info = os.stat(full)  # before it is read: a change while the daemon imports is caught too
        except OSError:
            self.seen[full] = None  # not there (the open fails): its appearing is a change as well
            return
        if stat.S_ISREG(info.st_mode):
            self.seen[full] = _key(info)

    def stop(self, modules: Iterable[str]) -> list[tuple[str, Stat]]:
        """The files to watch: those opened, and every module's file (those imported before this began, and
        those loaded from a cached .pyc)."""
        self.recording = False
        for path in modules:
            self.seen.setdefault(path, _stat(path))
        return sorted(self.seen.items())


def changed(watched: list[tuple[str, Stat]]) -> str | None:
    """The first watched file that is not as it was (its inode, size, mtime or ctime), else None."""
    for path, before in watched:
        if _stat(path) != before:
            return path
    return None


def module_files() -> list[str]:
    found = (getattr(module, "__file__", None) for module in list(sys.modules.values()))
    return [os.path.abspath(path) for path in found if isinstance(path, str) and not path.startswith("<")]


class Server:
    def __init__(self, path: str, idle: float, stamp: str, watched: list[tuple[str, Stat]] | None = None) -> None:
        self.path, self.idle, self.stamp = path, idle, stamp
        self.watched = watched or []
        self.confinement = confinement()
        self.started = time.time()
        self.last = time.monotonic()
        self.served = 0
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)

    def listen(self) -> None:
        if os.path.exists(self.path):
            os.unlink(self.path)  # ours to replace: the lock says no live daemon holds it
        old = os.umask(0o177)  # the socket is the user's alone (and its folder is 0700)
        try:
            self.listener.bind(self.path)
        finally:
            os.umask(old)
        self.listener.listen(64)
        self.listener.settimeout(1.0)

    def loop(self) -> None:
        while time.monotonic() - self.last < self.idle:
            _reap()
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(REQUEST_SECONDS)  # a client that connects and says nothing holds no one up
                if _same_user(conn) and self.handle(conn) == "exit":
                    return

    def handle(self, conn: socket.socket) -> str:
        try:
            header, fds = _receive(conn)
        except (OSError, ValueError):
            return "next"  # a client that went away or spoke nonsense
        try:
            if header.get("stop"):
                conn.sendall(b"bye\n")
                return "exit"
            if code_stamp() != self.stamp or changed(self.watched):
                conn.sendall(f"stale {os.getpid()}\n".encode())  # a ping too: `daemon start` waits, starts anew
                return "exit"
            if header.get("ping"):
                conn.sendall(f"pong {os.getpid()} {self.started:.0f} {self.served} {self.idle:.0f}\n".encode())
                return "next"
            if header.get("confinement") != self.confinement:
                conn.sendall(b"elsewhere\n")  # run here, it would escape the client's sandbox
                return "next"
            self.last = time.monotonic()
            self.served += 1
            if os.fork() == 0:
                from planner.daemon.child import run_forwarded

                self.listener.close()
                run_forwarded(conn, fds, header)  # never returns
            return "next"
        finally:
            for fd in fds:
                os.close(fd)

    def close(self) -> None:
        self.listener.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)


def _receive(conn: socket.socket) -> tuple[dict[str, Any], list[int]]:
    data, fds, _, _ = socket.recv_fds(conn, 8, 3)
    if len(data) != 8:
        raise ValueError("short header")
    size = struct.unpack("!Q", data)[0]
    payload = b""
    while len(payload) < size:
        chunk = conn.recv(min(size - len(payload), 1 << 20))
        if not chunk:
            raise ValueError("truncated request")
        payload += chunk
    return json.loads(payload), list(fds)


def _same_user(conn: socket.socket) -> bool:
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[1] == os.getuid()


def _reap() -> None:
    """Collect finished children (each reports its own exit status to its client)."""
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass


def serve(idle: float = IDLE_SECONDS) -> int:
    make_private()  # umask 077 whatever the shell that started it: the homes its children create are 0700
    path = socket_path()
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    lock = open(f"{path}.lock", "a")  # noqa: SIM115 - held for the daemon's lifetime
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return 0  # another daemon for this checkout is running or starting
    stamp = code_stamp()  # before importing: a file changed meanwhile makes this daemon stale, not wrong
    reads = ReadAtImport()
    without_pydantic_plugins(always=True)  # a client whose user wants pydantic's plugins runs in-process
    for name in PRELOAD:
        importlib.import_module(name)
    from repocontext.osv.schema import build_models
    from repocontext.sections import build_all

    build_all()  # the RepoContext models build their schemas on first use: here, once, not in every child
    build_models()  # and so do the advisory models
    watched = reads.stop(module_files())
    os.chdir("/")  # hold no folder of the user's busy
    server = Server(path, idle, stamp, watched)
    server.listen()
    try:
        server.loop()
    finally:
        server.close()
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description="The planner daemon (see `planner daemon --help`).")
    parser.add_argument("--idle", type=float, default=IDLE_SECONDS, help="exit after this many idle seconds")
    sys.exit(serve(parser.parse_args().idle))


if __name__ == "__main__":
    main()
