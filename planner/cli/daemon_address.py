"""Where a daemon listens, and what it was started from (standard library only: the client imports it)."""

from __future__ import annotations

import hashlib
import os
import sys

MODE_ENV = "PLANNER_DAEMON"  # "off": never use one; "auto": start one when none answers; else use one if up
DIR_ENV = "PLANNER_DAEMON_DIR"
IN_PROCESS = frozenset({"daemon", "worker", "ui"})  # servers and the daemon's own commands stay in-process
PACKAGES = ("planner", "repocontext", "subgraphs")
# The limits a forwarded command runs under: the client's, where they are lower than the daemon's.
RLIMITS = ("RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_NOFILE", "RLIMIT_NPROC", "RLIMIT_FSIZE", "RLIMIT_DATA")
NAMESPACES = ("net", "user", "mnt", "pid", "ipc", "uts", "cgroup")
# From /proc/self/status: the rest of what bounds a process's rights (credentials, capabilities, seccomp).
STATUS_FIELDS = frozenset({"Uid", "Gid", "Groups", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs",
                           "Seccomp", "Seccomp_filters"})


def project_root() -> str:
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def socket_dir() -> str:
    """PLANNER_DAEMON_DIR, else $XDG_RUNTIME_DIR/tccm-planner, else ~/.cache/tccm-planner/daemon."""
    explicit = os.environ.get(DIR_ENV, "").strip()
    if explicit:
        return os.path.expanduser(explicit)
    runtime = os.environ.get("XDG_RUNTIME_DIR", "").strip()
    if runtime:
        return os.path.join(runtime, "tccm-planner")
    return os.path.join(os.path.expanduser("~"), ".cache", "tccm-planner", "daemon")


def socket_path() -> str:
    """One daemon per interpreter and checkout: another venv or another clone never talks to this one."""
    key = f"{os.path.realpath(sys.executable)}\0{project_root()}".encode()
    return os.path.join(socket_dir(), f"{hashlib.sha256(key).hexdigest()[:16]}.sock")


def code_stamp() -> str:
    """What the running code was made of: every source file's size and mtime, and the import path's
    folders (installing or upgrading a package changes its site-packages folder). A daemon whose stamp
    no longer matches is stale: it would run yesterday's code."""
    digest = hashlib.sha256()
    root = project_root()
    for package in PACKAGES:
        for folder, dirs, files in os.walk(os.path.join(root, package)):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                if name.endswith(".py"):
                    info = os.stat(os.path.join(folder, name))
                    digest.update(f"{folder}/{name}\0{info.st_size}\0{info.st_mtime_ns}\n".encode())
    for entry in sys.path:
        try:
            digest.update(f"{entry}\0{os.stat(entry or '.').st_mtime_ns}\n".encode())
        except OSError:
            digest.update(f"{entry}\0-\n".encode())
    return digest.hexdigest()


def rlimits() -> dict[str, list[int]]:
    """This process's soft and hard limits (RLIMITS), as the daemon's child lowers its own to them."""
    import resource  # here: only a forwarded command needs it

    return {name: list(resource.getrlimit(getattr(resource, name))) for name in RLIMITS}


def confinement() -> dict[str, str]:
    """What confines this process besides its rlimits: its namespaces, credentials, capabilities, seccomp mode
    and security label. A command is run by the daemon only where all of these are the daemon's own: a
    client in a sandbox (`unshare -rn`, a container, dropped capabilities) must not escape it through a
    daemon started outside."""
    found: dict[str, str] = {}
    for name in NAMESPACES:
        try:
            found[f"ns:{name}"] = os.readlink(f"/proc/self/ns/{name}")
        except OSError:
            found[f"ns:{name}"] = "-"
    found.update(_proc_fields("/proc/self/status"))
    try:
        with open("/proc/self/attr/current", "rb") as label:  # AppArmor's or SELinux's, where there is one
            found["lsm"] = label.read().decode(errors="replace").strip("\0\n ")
    except OSError:
        found["lsm"] = "-"
    return found


def _proc_fields(path: str) -> dict[str, str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as status:
            lines = status.read().splitlines()
    except OSError:
        return {"status": "-"}
    pairs = (line.partition(":") for line in lines)
    return {key: " ".join(value.split()) for key, _, value in pairs if key in STATUS_FIELDS}
