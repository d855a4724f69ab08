"""The `planner` entry point: hand the command to a running daemon, else run it in-process.

Standard library only, so a forwarded command costs Python's start-up and little more. The wire protocol
(one connection per command): the client sends an 8-byte length with its stdin/stdout/stderr descriptors
attached, then that many bytes of JSON (argv, env, cwd, rlimits, confinement); the server answers lines:
`stale` (its code changed: run it yourself), `elsewhere` (this client is confined otherwise than the daemon,
or its limits could not be applied: run it yourself), or `pid N` and, when the command is done, `exit CODE`.
Nothing is sent to a socket that is not surely the user's own daemon (see `untrusted`).
"""

from __future__ import annotations

import atexit
import gc
import os
import signal
import struct
import sys
from types import ModuleType
from typing import TYPE_CHECKING, Any, NoReturn

from planner.cli.daemon_address import IN_PROCESS, MODE_ENV, confinement, rlimits, socket_path
from planner.cli.daemon_link import connect, lines, send, start_in_background
from repocontext.home import make_private

if TYPE_CHECKING:
    import socket

FORWARDED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)


def forward(argv: list[str]) -> int | None:
    """Run `planner ARGV` in the daemon; its exit code, or None when it must run in-process."""
    mode = os.environ.get(MODE_ENV, "").strip().lower()
    if mode == "off" or (argv and argv[0] in IN_PROCESS):
        return None
    if plugins_wanted():
        return None  # the daemon has pydantic's plugins stood in for: the user's own load only here
    sock = connect()
    if sock is None:
        if mode == "auto":
            start_in_background()
        return None
    with sock:
        why = untrusted(sock, socket_path())
        if why:
            sys.stderr.write(f"warning: not using the planner daemon: {why}; nothing was sent to it, the command "
                             "runs here\n")
            return None
        header: dict[str, Any] = {"argv": argv, "prog": _prog_name(), "env": dict(os.environ), "cwd": os.getcwd(),
                  "limits": rlimits(), "confinement": confinement()}
        try:
            send(sock, header, [0, 1, 2])
        except OSError:  # e.g. a closed stdin: nothing to pass, so run here
            return None
        return _follow(sock)


def untrusted(sock: socket.socket, path: str) -> str | None:
    """Why the listener on `path` may not be this user's own daemon (None: it is). The command's environment
    (tokens, keys) goes to it, so its folder and socket file must be the user's and writable by no one else
    (no one could have put another socket there), and the process listening must run as the user."""
    import socket

    uid = os.getuid()
    for what, target in (("folder", os.path.dirname(path)), ("socket", path)):
        try:
            info = os.stat(target)
        except OSError as exc:
            return f"cannot check its {what} {target} ({exc.strerror})"
        if info.st_uid != uid:
            return f"its {what} {target} belongs to uid {info.st_uid}, not {uid}"
        if info.st_mode & 0o022:
            return f"its {what} {target} is writable by others (mode {info.st_mode & 0o777:o})"
    size = struct.calcsize("3i")
    _pid, peer, _gid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, size))
    if peer != uid:
        return f"the process listening on {path} runs as uid {peer}, not {uid}"
    return None


def _prog_name() -> str:
    """How this process was called, as usage lines name it (the child's own __main__ is the daemon's)."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    if spec is not None and spec.name:
        return f"python -m {spec.name.removesuffix('.__main__')}"
    return os.path.basename(sys.argv[0]) or "planner"


def _follow(sock: socket.socket) -> int | None:
    child: list[int] = []
    pending: list[int] = []  # a signal that came before the child's pid: delivered as soon as it is known

    def relay(signum: int, _frame: Any) -> None:
        if child:
            os.kill(child[0], signum)
        else:
            pending.append(signum)

    saved = {signum: signal.signal(signum, relay) for signum in FORWARDED_SIGNALS}
    try:
        code = _await(sock, child, pending)
    finally:  # running the command here after all (stale daemon), it must get the default behaviour back
        for signum, handler in saved.items():
            signal.signal(signum, handler)
    if code is None:
        for received in pending:  # what the user sent while we asked: now it is this process's to act on
            signal.raise_signal(received)
    return code


def _await(sock: socket.socket, child: list[int], pending: list[int]) -> int | None:
    for line in lines(sock):
        kind, _, value = line.partition(" ")
        if kind in ("stale", "elsewhere") and not child:
            return None
        if kind == "pid":
            child.append(int(value))
            for signum in pending:
                os.kill(child[0], signum)
            pending.clear()
        elif kind == "exit":
            return int(value)
    if not child:
        return None  # the daemon went away before taking the command: it has not run
    sys.stderr.write("error: the planner daemon's process for this command ended without an exit status\n")
    return 70


PLUGIN_LOADER = "pydantic.plugin._loader"
PLUGINS_ENV = "PYDANTIC_DISABLE_PLUGINS"


def plugins_wanted() -> bool:
    """Whether the user set PYDANTIC_DISABLE_PLUGINS to a value that leaves some plugin enabled (even empty)."""
    value = os.environ.get(PLUGINS_ENV)
    return value is not None and value not in ("__all__", "1", "true")


def without_pydantic_plugins(always: bool = False) -> None:
    """pydantic looks for plugins in every installed distribution's entry points, and its loader imports
    importlib.metadata even when they are disabled (~15 ms, and the scan 10-30 ms more, of a bare command).
    No plugin observes the planner's models: unless the user asked for plugins (plugins_wanted), a stand-in
    loader answers what pydantic's does when they are all disabled: none. Only this process is affected:
    nothing is put in the environment, which every program the planner starts (a user's own test command,
    git) would inherit. `always`: the daemon's, whose children serve only clients that want none."""
    if (always or not plugins_wanted()) and PLUGIN_LOADER not in sys.modules:
        stand_in = ModuleType(PLUGIN_LOADER)
        stand_in.get_plugins = tuple  # type: ignore[attr-defined]  # () : pydantic's answer when disabled
        sys.modules[PLUGIN_LOADER] = stand_in


def run_here() -> int:
    """The command in this process; its exit status."""
    without_pydantic_plugins()
    if sys.argv[1:2] == ["gather"]:
        # No cyclic GC in this short-lived process: collections would walk the heap the imports build again
        # and again (~10-15 ms), and the gather itself pauses the collector anyway (parallel.gc_paused).
        gc.disable()
        from planner.cli.gather import fast

        code = fast(sys.argv[2:])
        if code is not None:
            return code
        gc.enable()  # typer runs it after all
    from planner.cli import main as run_cli

    try:
        run_cli()
    except SystemExit as exit_:
        if exit_.code is None or isinstance(exit_.code, int):
            return exit_.code or 0
        raise  # sys.exit("message"): Python prints it and exits 1
    return 0


def exit_now(code: int) -> NoReturn:
    """End a one-shot process as the daemon's command processes end (planner/daemon/child.py): the exit
    handlers run and the streams are flushed, then the process exits without tearing down every module and
    object one by one (for a dispatch, its imported stack and the tokenizer's tables: ~0.1 s). A process with
    a thread still working, or whose streams do not flush (a closed pipe), exits the ordinary way."""
    threading = sys.modules.get("threading")
    working = threading is not None and any(
        t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread())
    if not working:
        atexit._run_exitfuncs()  # what a normal interpreter exit would run (they run once: the list is cleared)
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):
            sys.exit(code)
        os._exit(code)
    sys.exit(code)


def main() -> None:
    make_private()  # before anything is created, here or in the daemon this starts
    code = forward(sys.argv[1:])
    if code is not None:
        sys.exit(code)
    exit_now(run_here())
