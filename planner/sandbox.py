"""The one sandbox every program started on a repository's behalf runs in: bubblewrap (`bwrap`).

A command recipe, a `--verify` test run, a `--regenerate` lock tool and a flow's side effect all run a
program the repository (or a task class) names, so each runs as an attacker's program would be contained:

- the system read-only (/usr, /etc without its private files, /opt) and the directories of `PATH` and of the
  running Python read-only; nothing else of the host: no $HOME, no PLANNER_HOME, no cache dir, no daemon or
  other socket, not the user's own checkout;
- the work copy is the only writable path (besides a private, empty /tmp);
- a new PID namespace: nothing outlives the step, and the whole tree is killed on timeout;
- a scrubbed environment: PATH, the locale, a HOME inside the private /tmp, and what the step declares;
- limits on memory, CPU time, open files and written file size (`prlimit`);
- a new network namespace (loopback only), always; a step that declares it needs a package registry reaches
  one through the planner's egress proxy only (planner/egress.py: registry hosts on 443/80, never a
  loopback, private or metadata address), and still no home, keys or sockets.

Where bubblewrap cannot run, a step is refused (SandboxUnavailable, naming why and `--no-sandbox`), never run
in the open. `--no-sandbox` (allow_unsandboxed) runs the same argv with the same scrubbed environment and
limits but no isolation; the run records it.

Work copies live under $TMPDIR/tccm-planner-UID/ (0700), named after the process that made them; each start
sweeps the copies of processes that are gone, so a `kill -9` mid-step leaves nothing behind for long.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import re
import secrets
import select
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from planner import egress
from repocontext.home import planner_home

NO_SANDBOX_HINT = "pass --no-sandbox to run it without isolation (recorded in the run)"
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt")
# Readable to a root operator through /etc: replaced by empty files or folders in the sandbox.
PRIVATE_ETC = ("/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-", "/etc/sudoers")
PRIVATE_ETC_DIRS = ("/etc/ssh", "/etc/sudoers.d", "/etc/ssl/private")
LOCALE = ("LANG", "LC_ALL", "LC_CTYPE", "LANGUAGE", "TZ")
# Reaching a registry through the operator's proxy and certificates; only for steps that declare network.
NETWORK_ENV = ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy", "SSL_CERT_FILE",
               "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "PIP_CERT", "NODE_EXTRA_CA_CERTS")
# A variable of this name never enters a sandbox, whatever a step or the operator declares.
SECRET_NAME = re.compile(r"TOKEN|SECRET|PASSW|AUTH|CREDENTIAL|API_?KEY|PRIVATE|SESSION|COOKIE", re.IGNORECASE)
SANDBOX_HOME = "/tmp/home"
EGRESS_DIR = "/run/tccm-egress"  # where a network step sees the egress proxy's socket folder
OUTPUT_TAIL = 64 * 1024


class SandboxUnavailable(RuntimeError):
    """bubblewrap cannot run here; the step is refused (the message names why and the opt-out)."""


@dataclass(frozen=True)
class Limits:
    memory_mb: int = 8192  # address space; Node and Go reserve far more than they use, so not lower
    open_files: int = 4096
    file_size_mb: int = 2048

    @classmethod
    def from_env(cls) -> Limits:
        def number(name: str, default: int) -> int:
            value = os.environ.get(name, "").strip()
            return int(value) if value.isdigit() and int(value) > 0 else default

        return cls(memory_mb=number("PLANNER_SANDBOX_MEMORY_MB", cls.memory_mb),
                   file_size_mb=number("PLANNER_SANDBOX_FILE_SIZE_MB", cls.file_size_mb))


@dataclass(frozen=True)
class Step:
    """One program to run: argv, run in `cwd` (inside `work`, the only writable path)."""

    argv: Sequence[str]
    work: Path
    cwd: Path | None = None
    timeout: float = 600
    network: bool = False  # a package registry: regeneration only
    env: Mapping[str, str] | None = None  # what the step itself sets (quiet flags, NO_COLOR, …)
    passthrough: Sequence[str] = ()  # host variables the step needs (a trailing * is a prefix)


@dataclass(frozen=True)
class Done:
    exit_code: int | None  # None: it did not finish (timed out)
    output: str  # the last OUTPUT_TAIL bytes of stdout and stderr together
    seconds: float
    timed_out: bool
    isolation: str  # "bwrap", or "none" under --no-sandbox
    refused: tuple[str, ...] = ()  # what the egress proxy refused a network step ("127.0.0.1:6379 (loopback)")


_unsandboxed = False


def allow_unsandboxed(allowed: bool) -> None:
    """--no-sandbox: this process runs steps without isolation (the caller records it in the run)."""
    global _unsandboxed
    _unsandboxed = bool(allowed)


def isolation() -> str:
    return "none" if _unsandboxed else "bwrap"


def _system_tool(name: str) -> str | None:
    """The system's own binary first (a PATH a test or a user narrowed must not hide it, nor shadow it)."""
    return shutil.which(name, path="/usr/bin:/bin:/usr/local/bin") or shutil.which(name)


def _bwrap() -> str | None:
    """PLANNER_SANDBOX_BWRAP (an operator's build elsewhere), else the system's bwrap."""
    named = os.environ.get("PLANNER_SANDBOX_BWRAP", "").strip()
    if named:
        return named if os.path.isfile(named) and os.access(named, os.X_OK) else None
    return _system_tool("bwrap")


@functools.cache
def _bwrap_problem() -> str | None:
    """Why bubblewrap cannot run here, or None. Asked once per process (~5 ms)."""
    binary = _bwrap()
    if binary is None:
        return "bubblewrap is not installed (Debian/Ubuntu: apt install bubblewrap; or PLANNER_SANDBOX_BWRAP)"
    argv = [binary, "--ro-bind", "/", "/", "--unshare-all", "--unshare-user", "--die-with-parent",
            _system_tool("true") or "/bin/true"]
    try:
        probe = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap does not start ({exc})"
    if probe.returncode != 0:
        cause = (probe.stderr.strip().splitlines() or ["no message"])[-1]
        return f"bubblewrap cannot create its namespaces here ({cause}; are user namespaces disabled?)"
    return None


def check_available() -> None:
    """Raise SandboxUnavailable unless a step could run now (sandboxed, or --no-sandbox given)."""
    if _unsandboxed:
        return
    problem = _bwrap_problem()
    if problem:
        raise SandboxUnavailable(f"cannot sandbox the step: {problem}; {NO_SANDBOX_HINT}")


# --- what the sandbox sees --------------------------------------------------------------------------------------------


def _protected() -> list[Path]:
    """Host paths a bind must neither be nor contain: the user's home and the planner's own state."""
    from planner.sealed import cache_dir  # standard library only

    found = [Path.home(), planner_home(), cache_dir(), _workspace_root()]
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        found.append(Path(runtime))
    return [Path(os.path.realpath(p)) for p in found]


def _bindable(path: Path, protected: list[Path]) -> bool:
    real = Path(os.path.realpath(path))
    if not path.is_absolute() or not real.is_dir() or real == Path("/"):
        return False
    for guarded in protected:
        if guarded == real or guarded.is_relative_to(real):  # would expose all of the guarded folder
            return False
        if real.is_relative_to(guarded) and guarded != Path(os.path.realpath(Path.home())):
            return False  # a folder inside the planner's state or cache (a PATH entry in $HOME is fine)
    return not any(real == Path(s) or real.is_relative_to(s) for s in SYSTEM)  # already there


def shim_roots(path_value: str) -> dict[str, str]:
    """`PYENV_ROOT`-style variables for the version managers whose shims are on PATH (pyenv, rbenv, nodenv…,
    and rustup's `RUSTUP_HOME`): a shim execs `ROOT/libexec/TOOL`, which finds its interpreters through `ROOT`
    (by default under a $HOME the sandbox does not have), so the root is bound read-only and named."""
    roots: dict[str, str] = {}
    for entry in (Path(p) for p in path_value.split(os.pathsep) if p):
        root = entry.parent
        if entry.name == "shims" and (root / "libexec").is_dir() and root.name.lstrip(".").isalnum():
            roots.setdefault(f"{root.name.lstrip('.').upper()}_ROOT", str(root))
        elif (entry / "rustup").is_file() and "RUSTUP_HOME" not in roots:
            # rustup's proxies (cargo, rustc → rustup) find their toolchains in RUSTUP_HOME, by default ~/.rustup
            toolchains = Path(os.environ.get("RUSTUP_HOME") or Path.home() / ".rustup")
            if (toolchains / "toolchains").is_dir():
                roots["RUSTUP_HOME"] = str(toolchains)
    return roots


def _tool_dirs(path_value: str) -> list[Path]:
    """Read-only extras: PATH's folders (and the version managers' roots of its shims), the running Python's
    prefixes, PLANNER_SANDBOX_RO."""
    wanted = [Path(p) for p in path_value.split(os.pathsep) if p]
    wanted += [Path(p) for p in shim_roots(path_value).values()]
    wanted += [Path(p) for p in {sys.prefix, sys.base_prefix, sys.exec_prefix}]
    wanted += [Path(p) for p in os.environ.get("PLANNER_SANDBOX_RO", "").split(os.pathsep) if p]
    protected = _protected()
    seen: dict[str, None] = {}
    for path in wanted:
        if _bindable(path, protected):
            seen.setdefault(os.path.realpath(path), None)
            if os.path.realpath(path) != str(path) and path.is_absolute():
                seen.setdefault(str(path), None)
    return [Path(p) for p in seen]


def _system_args() -> list[str]:
    args: list[str] = []
    for path in SYSTEM:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    args += [a for p in PRIVATE_ETC if os.path.exists(p) for a in ("--ro-bind", "/dev/null", p)]
    args += [a for p in PRIVATE_ETC_DIRS if os.path.isdir(p) for a in ("--tmpfs", p)]
    return args


def environment(step: Step) -> dict[str, str]:
    """The step's whole environment: an allowlist, never the operator's."""
    host = os.environ
    names = [*LOCALE, *(NETWORK_ENV if step.network else ())]
    declared = [*step.passthrough, *(n.strip() for n in host.get("PLANNER_SANDBOX_ENV", "").split(",") if n.strip())]
    for pattern in declared:
        names += [n for n in host if n.startswith(pattern[:-1])] if pattern.endswith("*") else [pattern]
    env = {n: host[n] for n in names if n in host and not SECRET_NAME.search(n)}
    env.update({"PATH": host.get("PATH") or "/usr/bin:/bin", "HOME": SANDBOX_HOME, "TMPDIR": "/tmp"})
    env.update(shim_roots(env["PATH"]))
    env.update({k: v for k, v in (step.env or {}).items() if not SECRET_NAME.search(k)})
    return env


def _bwrap_argv(step: Step, env: Mapping[str, str], egress_dir: Path | None = None) -> list[str]:
    work = str(step.work.resolve())
    args = [_bwrap() or "bwrap", "--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
            "--unshare-net", "--unshare-cgroup-try", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    if os.getuid() == 0:  # never root inside, even for a root operator
        args += ["--uid", "65534", "--gid", "65534"]
    args += _system_args()
    args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--dir", SANDBOX_HOME]
    for path in _tool_dirs(env["PATH"]):
        args += ["--ro-bind", str(path), str(path)]
    args += ["--bind", work, work, "--chdir", str((step.cwd or step.work).resolve()), "--clearenv"]
    for name, value in sorted(env.items()):
        args += ["--setenv", name, value]
    if egress_dir is None:
        return [*args, "--", *step.argv]
    # the registry through the egress proxy: the forwarder (the planner's Python, read-only above) runs the argv
    forwarder = [os.path.realpath(sys.executable), "-I", "-S", "-c", _forwarder_source(),
                 f"{EGRESS_DIR}/proxy.sock", "--"]
    return [*args, "--ro-bind", str(egress_dir), EGRESS_DIR, "--", *forwarder, *step.argv]


@functools.cache
def _forwarder_source() -> str:
    return Path(egress.__file__).with_name("egress_inside.py").read_text(encoding="utf-8")


def _limits_argv(limits: Limits, timeout: float) -> list[str]:
    prlimit = _system_tool("prlimit")
    if prlimit is None:
        return []
    # CPU seconds per process: what every core could spend before the wall-clock timeout kills the step anyway
    cpu = int(timeout * (os.cpu_count() or 1)) + 1
    return [prlimit, f"--as={limits.memory_mb * 1024 * 1024}", f"--cpu={cpu}", f"--nofile={limits.open_files}",
            f"--fsize={limits.file_size_mb * 1024 * 1024}", "--"]


def command_line(step: Step, egress_dir: Path | None = None) -> list[str]:
    """The whole argv that runs the step (sandboxed unless --no-sandbox), its egress proxy's socket in
    `egress_dir` for a network step; raises SandboxUnavailable."""
    check_available()
    env = environment(step)
    inner = list(step.argv) if _unsandboxed else _bwrap_argv(step, env, egress_dir)
    return [*_limits_argv(Limits.from_env(), step.timeout), *inner]


def run(step: Step) -> Done:
    """Run the step to its end or its timeout; on timeout every process it started is killed. A network
    step's egress proxy runs as long as the step, and the Done lists what it refused."""
    check_available()
    if not step.network or _unsandboxed:
        return _run(step, command_line(step))
    with workspace("egress") as folder, egress.serve(folder) as proxy:
        done = _run(step, command_line(step, folder))
    return dataclasses.replace(done, refused=tuple(proxy.refusals))


def _run(step: Step, argv: list[str]) -> Done:
    env = environment(step)
    started = time.monotonic()
    with tempfile.TemporaryFile() as sink:  # a file, not a pipe: a flood of output costs disk, bounded by fsize
        try:
            proc = subprocess.Popen(argv, cwd=step.cwd or step.work, env=env if _unsandboxed else {"PATH": "/usr/bin"},
                                    stdin=subprocess.DEVNULL, stdout=sink, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        except OSError as exc:
            return Done(127, f"cannot run {step.argv[0]!r}: {exc.strerror}", 0.0, False, isolation())
        timed_out = False
        try:
            _wait(proc, step.timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:  # a timeout, or Ctrl-C reaching the planner: nothing the step started goes on
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)  # bwrap, and with it its PID namespace
                proc.wait()
        output = _tail(sink)
    seconds = round(time.monotonic() - started, 3)
    return Done(None if timed_out else proc.returncode, output, seconds, timed_out, isolation())


def _wait(proc: subprocess.Popen[bytes], timeout: float) -> None:
    """proc.wait(timeout), woken the moment it ends (a pidfd) rather than by Popen's doubling sleeps, which
    would add up to half again a short step's time."""
    try:
        handle = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        proc.wait(timeout=timeout)
        return
    poller = select.poll()  # not select(): a pidfd may be above FD_SETSIZE in a long-lived process
    poller.register(handle, select.POLLIN)
    try:
        if not poller.poll(max(0, int(timeout * 1000))):
            raise subprocess.TimeoutExpired(proc.args, timeout)
    finally:
        os.close(handle)
    proc.wait()


def _tail(sink: IO[bytes]) -> str:
    size = sink.seek(0, os.SEEK_END)
    sink.seek(max(0, size - OUTPUT_TAIL))
    return sink.read().decode("utf-8", "replace")


# --- work copies --------------------------------------------------------------------------------------------------


def _workspace_root() -> Path:
    return Path(tempfile.gettempdir()) / f"tccm-planner-{os.getuid()}"


def _own_private_dir(path: Path) -> Path:
    path.mkdir(mode=0o700, exist_ok=True)
    info = path.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise SandboxUnavailable(f"{path} is not a private folder of this user; remove it and run again")
    return path


def pid_alive(pid: int) -> bool:
    """Whether a process of this pid exists (one of another user's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove(path: Path) -> None:
    """Remove a work copy, even one whose program made folders unreadable or unwritable."""
    def unlock(function: object, target: str, _exc: object) -> None:
        with contextlib.suppress(OSError):
            os.chmod(os.path.dirname(target), 0o700)
            os.chmod(target, 0o700)
            if os.path.isdir(target) and not os.path.islink(target):
                shutil.rmtree(target, ignore_errors=True)
            else:
                os.unlink(target)

    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=unlock)
    else:
        shutil.rmtree(path, onerror=unlock)


def sweep() -> list[Path]:
    """Remove the work copies of processes that are gone (killed mid-step); returns what was removed."""
    root = _workspace_root()
    removed = []
    with contextlib.suppress(FileNotFoundError):
        for entry in root.iterdir():
            pid = entry.name.rsplit("-", 2)[-2] if entry.name.count("-") >= 2 else ""
            if pid.isdigit() and not pid_alive(int(pid)):
                remove(entry)
                removed.append(entry)
    return removed


def copy_tree(repo: Path, dest: Path, ignore: Callable[[str, list[str]], Iterable[str]] | None = None) -> Path:
    """Copy `repo` for a step: a symlink is kept only when it is relative and stays inside the copy; any other
    (absolute, or climbing out) is left out, so no program, sandboxed or not, writes through it."""
    root = repo.resolve()

    def links_out(folder: str, names: list[str]) -> set[str]:
        skipped = set(ignore(folder, names)) if ignore else set()
        for name in names:
            path = os.path.join(folder, name)
            if os.path.islink(path):
                target = os.readlink(path)
                resolved = Path(os.path.normpath(os.path.join(folder, target)))
                if os.path.isabs(target) or not resolved.is_relative_to(root):
                    skipped.add(name)
        return skipped

    shutil.copytree(root, dest, symlinks=True, ignore=links_out)
    return dest


@contextlib.contextmanager
def workspace(kind: str) -> Iterator[Path]:
    """A fresh private folder for one step's copy, removed afterwards (and by the next sweep if killed)."""
    root = _own_private_dir(_workspace_root())
    sweep()
    folder = root / f"{kind}-{os.getpid()}-{secrets.token_hex(4)}"
    folder.mkdir(mode=0o700)
    try:
        yield folder
    finally:
        remove(folder)
