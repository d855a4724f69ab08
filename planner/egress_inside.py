"""The forwarder a network step runs first, inside its sandbox (standard library only, run as a `-c` script).

A network step has a network namespace of its own: loopback only, no route out. This forwarder listens on
127.0.0.1 (a free port) in that namespace and carries each connection to the planner's egress proxy through a
Unix socket bound into the sandbox (planner/egress.py decides what may pass). It starts the step's real
command as its child with HTTP_PROXY/HTTPS_PROXY (both cases) naming that port and NO_PROXY removed, ignores
SIGTERM/SIGINT/SIGHUP itself (a tool signalling its process group ends its own processes, not this one), and
exits with the child's status (128 + N when a signal N ended it). It lives in the step's PID namespace, so the
planner's kill on timeout ends it with everything else.

Usage: python -I -S -c "$(cat egress_inside.py)" SOCKET -- ARGV...
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # the C modules: `socket`, `signal`, `threading` and
import _socket  # `subprocess` (enum and friends) would double the forwarder's start (15 → 30 ms)
import _thread
import os
import sys

PROXY_NAMES = ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")
NO_PROXY_NAMES = ("NO_PROXY", "no_proxy")
LEFT_TO_CHILD = (_signal.SIGTERM, _signal.SIGINT, _signal.SIGHUP)  # ignored here, the default in the child


def pump(source: _socket.socket, target: _socket.socket) -> None:
    """Copy `source` to `target` until `source` ends, then end `target`'s writing side."""
    try:
        while data := source.recv(65536):
            target.sendall(data)
    except OSError:  # reset: the other side ends too
        _end(target)
        return
    _end(target)


def _end(sock: _socket.socket) -> None:
    try:
        sock.shutdown(_socket.SHUT_WR)
    except OSError:
        return


def bridge(one: _socket.socket, other: _socket.socket) -> None:
    """Carry bytes both ways until both sides have ended, then close both."""
    back = _thread.allocate_lock()
    back.acquire()

    def backwards() -> None:
        pump(other, one)
        back.release()

    _thread.start_new_thread(backwards, ())
    pump(one, other)
    back.acquire()
    one.close()
    other.close()


def _carry(conn: _socket.socket, path: str) -> None:
    upstream = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        upstream.connect(path)
    except OSError:
        upstream.close()
        conn.close()
        return
    bridge(conn, upstream)


def _accept(listener: _socket.socket, path: str) -> None:
    while True:
        try:
            fd, _ = listener._accept()  # type: ignore[attr-defined]  # the C socket's accept: a descriptor
        except OSError:
            return
        _thread.start_new_thread(_carry, (_socket.socket(fileno=fd), path))


def child_env(port: int, base: dict[str, str]) -> dict[str, str]:
    """The step's environment with every proxy variable naming the forwarder (JVMs read system properties)."""
    env = {k: v for k, v in base.items() if k not in NO_PROXY_NAMES}
    env.update(dict.fromkeys(PROXY_NAMES, f"http://127.0.0.1:{port}"))
    java = " ".join(f"-D{scheme}.proxyHost=127.0.0.1 -D{scheme}.proxyPort={port}" for scheme in ("http", "https"))
    env["JAVA_TOOL_OPTIONS"] = f"{base.get('JAVA_TOOL_OPTIONS', '')} {java}".strip()
    return env


def main(args: list[str]) -> int:
    if len(args) < 3 or args[1] != "--":
        print("usage: egress_inside SOCKET -- ARGV...", file=sys.stderr)
        return 2
    path, argv = args[0], args[2:]
    listener = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    _thread.start_new_thread(_accept, (listener, path))
    for number in LEFT_TO_CHILD:  # a tool signalling its process group reaches its own processes, not this one
        _signal.signal(number, _signal.SIG_IGN)
    try:  # the child gets the default dispositions back (Python ignores SIGPIPE and SIGXFSZ)
        child = os.posix_spawnp(argv[0], argv, child_env(listener.getsockname()[1], dict(os.environ)),
                                setsigdef=(*LEFT_TO_CHILD, _signal.SIGPIPE, _signal.SIGXFSZ))
    except OSError as exc:
        print(f"cannot run {argv[0]!r}: {exc.strerror}", file=sys.stderr)
        return 127
    return _status(child)


def _status(child: int) -> int:
    code = os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    status = main(sys.argv[1:])
    sys.stderr.flush()
    os._exit(status)  # not waiting for the connections' threads
