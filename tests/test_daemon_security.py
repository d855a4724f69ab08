"""The planner daemon never gives a command more than the client has: it stands down when a file it read while
importing changes (the secret rules included), it runs no command for a client in other namespaces, a
forwarded command gets the client's lower rlimits, the client sends nothing to a socket that is not surely its
user's own daemon, and the homes it creates are 0700 whatever the umask. Real daemons, real sockets, real
`planner` processes; a `git` on PATH that reports what the command's own programs see."""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import run_cli

from planner.cli.daemon import wait_for_exit
from planner.cli.daemon_address import socket_path

ROOT = Path(__file__).resolve().parent.parent
REPO = {"requirements.txt": "requests==2.31.0\n", "app.py": "import requests\n", "canary.txt": "hello\n",
        ".env": "A=1\n"}


def status(env: dict[str, str]) -> dict[str, object]:
    return json.loads(run_cli("daemon", "status", "--json", env=env).stdout)


def _gone(pid: int, seconds: float = 15.0) -> None:
    if not wait_for_exit(pid, seconds):
        os.kill(pid, 9)
        pytest.fail(f"daemon {pid} did not exit")


@pytest.fixture
def daemon(tmp_path: Path, home: Path) -> Iterator[dict[str, str]]:
    """A daemon of its own (its own socket folder); the env that reaches it; stopped afterwards."""
    env = {"PLANNER_DAEMON_DIR": str(tmp_path / "daemon"), "PLANNER_DAEMON": ""}
    started = run_cli("daemon", "start", "--json", env=env)
    assert started.returncode == 0, started.stderr
    pid = int(json.loads(started.stdout)["pid"])
    yield {**env, "DAEMON_PID": str(pid)}
    run_cli("daemon", "stop", env=env)
    _gone(pid)


@pytest.fixture
def spy(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """A `git` first on PATH that records, for each run, what a program the command starts is given (its
    limits, network namespace, PYDANTIC_DISABLE_PLUGINS), then runs the real git. (env, report file)."""
    real = shutil.which("git")
    assert real
    folder = tmp_path / "spy-bin"
    folder.mkdir()
    report = tmp_path / "spy-report"
    (folder / "git").write_text(
        "#!/bin/sh\n"
        f"echo \"nofile=$(ulimit -S -n)/$(ulimit -H -n) fsize=$(ulimit -f) net=$(readlink /proc/self/ns/net) "
        f"pydantic=${{PYDANTIC_DISABLE_PLUGINS-unset}}\" >> {report}\n"
        f"exec {real} \"$@\"\n")
    (folder / "git").chmod(0o755)
    return {"PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}, report


def _seen(report: Path) -> dict[str, str]:
    """What the spy saw (every run saw the same: one line's fields)."""
    lines = set(report.read_text().splitlines())
    assert len(lines) == 1, lines
    return dict(field.split("=", 1) for field in lines.pop().split())


def _shell(script: str, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """`sh -c SCRIPT` with ARGS as $1..., the test's environment plus `env`."""
    return subprocess.run(["sh", "-c", script, "sh", *args], capture_output=True, text=True, timeout=180,
                          env={**os.environ, **env})


PLANNER = f"exec {sys.executable} -m planner"


def test_a_forwarded_command_runs_under_the_clients_lower_rlimits(daemon: dict[str, str],
                                                                  spy: tuple[dict[str, str], Path],
                                                                  make_repo: Callable[..., Path]) -> None:
    spy_env, report = spy
    repo = make_repo(REPO)
    done = _shell(f"ulimit -S -n 256 && ulimit -H -n 512 && ulimit -f 200000 && {PLANNER} gather \"$1\"",
                  {**daemon, **spy_env}, str(repo))
    assert done.returncode == 0, done.stderr
    assert status(daemon)["commands"] == 1  # the daemon ran it, and the git it started had the client's limits
    seen = _seen(report)
    assert (seen["nofile"], seen["fsize"]) == ("256/512", "200000")
    assert seen["pydantic"] == "unset"


def test_no_pydantic_setting_leaks_into_the_programs_a_command_runs(home: Path, spy: tuple[dict[str, str], Path],
                                                                    make_repo: Callable[..., Path]) -> None:
    """In-process too: the planner skips pydantic's plugin scan without putting PYDANTIC_DISABLE_PLUGINS into
    the environment that git, a test command or a recipe's program inherits."""
    spy_env, report = spy
    done = run_cli("gather", str(make_repo(REPO)), env={**spy_env, "PLANNER_DAEMON": "off"})
    assert done.returncode == 0, done.stderr
    assert _seen(report)["pydantic"] == "unset"


def test_a_client_in_other_namespaces_runs_the_command_itself(daemon: dict[str, str],
                                                              spy: tuple[dict[str, str], Path],
                                                              make_repo: Callable[..., Path]) -> None:
    unshare = shutil.which("unshare")
    if unshare is None or subprocess.run([unshare, "-rn", "true"], capture_output=True).returncode != 0:
        pytest.skip("unshare -rn is not available here")
    spy_env, report = spy
    repo = make_repo(REPO)
    done = _shell(f"exec {unshare} -rn {sys.executable} -m planner gather \"$1\"", {**daemon, **spy_env}, str(repo))
    assert done.returncode == 0 and "gathered" in done.stdout, done.stderr
    found = status(daemon)
    assert found["running"] and found["commands"] == 0  # the daemon was asked and declined; it stays up
    daemon_net = os.readlink(f"/proc/{daemon['DAEMON_PID']}/ns/net")
    assert _seen(report)["net"] != daemon_net  # git ran in the client's own network namespace


def test_changed_secret_rules_make_the_daemon_stand_down(tmp_path: Path, home: Path,
                                                         make_repo: Callable[..., Path]) -> None:
    """The daemon read the secret rules when it imported; edited, the next command is not served with the old
    ones. A copy of the checkout, so that its rules (there is no user-level rules file) can be edited."""
    copy = tmp_path / "checkout"
    for package in ("planner", "repocontext", "subgraphs"):
        shutil.copytree(ROOT / package, copy / package)  # .pyc kept (mtimes too): its daemon starts fast
    env = {"PLANNER_DAEMON_DIR": str(tmp_path / "daemon"), "PLANNER_DAEMON": "",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(copy), os.environ.get("PYTHONPATH", "")]))}
    repo = make_repo(REPO)

    def denied(home: str) -> list[str]:
        # a home of its own each time: this is about the daemon, not about what a re-gather in one home reuses
        done = subprocess.run([sys.executable, "-m", "planner", "gather", str(repo), "--json"], cwd=copy,
                              capture_output=True, text=True, timeout=120,
                              env={**os.environ, **env, "PLANNER_HOME": str(tmp_path / home)})
        assert done.returncode == 0, done.stderr
        return sorted(entry["path"] for entry in json.loads(done.stdout)["denied"])

    started = subprocess.run([sys.executable, "-m", "planner", "daemon", "start", "--json"], cwd=copy, text=True,
                             capture_output=True, timeout=120, env={**os.environ, **env})
    assert started.returncode == 0, started.stderr
    pid = int(json.loads(started.stdout)["pid"])
    try:
        assert denied("before") == [".env"]
        assert json.loads(run_cli("daemon", "status", "--json", env=env, cwd=copy).stdout)["commands"] == 1
        rules = copy / "repocontext" / "secret_rules.yaml"
        text = rules.read_text()
        rules.write_text(text.replace("files:\n", "files:\n  canary: 'canary\\.txt'\n", 1))
        assert denied("after") == [".env", "canary.txt"]
        _gone(pid)  # it stood down rather than serve the old rules
    finally:
        subprocess.run([sys.executable, "-m", "planner", "daemon", "stop"], cwd=copy, capture_output=True,
                       timeout=60, env={**os.environ, **env})
        if not wait_for_exit(pid, 15):
            os.kill(pid, 9)


def test_a_home_is_made_0700_by_a_daemon_started_with_umask_022(tmp_path: Path, home: Path,
                                                                make_repo: Callable[..., Path]) -> None:
    env = {"PLANNER_DAEMON_DIR": str(tmp_path / "daemon"), "PLANNER_DAEMON": "",
           "PLANNER_HOME": str(tmp_path / "fresh-home")}
    server = subprocess.Popen(["sh", "-c", f"umask 022 && exec {sys.executable} -m planner.daemon.server --idle 60"],
                              cwd=ROOT, env={**os.environ, **env}, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not status(env)["running"]:
            assert server.poll() is None and time.monotonic() < deadline, "the daemon did not start"
            time.sleep(0.1)
        done = _shell(f"umask 022 && {PLANNER} gather \"$1\"", env, str(make_repo(REPO)))
        assert done.returncode == 0, done.stderr
        assert status(env)["commands"] == 1
        made = Path(env["PLANNER_HOME"])
        assert stat.S_IMODE(made.stat().st_mode) == 0o700
        assert all(stat.S_IMODE(p.stat().st_mode) & 0o077 == 0 for p in made.rglob("*"))
    finally:
        run_cli("daemon", "stop", env=env)
        server.wait(timeout=30)


class Listener:
    """A stand-in daemon: accepts connections and keeps what each sent (a real daemon would get the env)."""

    def __init__(self, path: str) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        self.sock.listen(4)
        self.received: list[bytes] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        conn, _ = self.sock.accept()
        with conn:
            conn.settimeout(30)
            chunks = []
            while chunk := conn.recv(65536):
                chunks.append(chunk)
            self.received.append(b"".join(chunks))


def test_nothing_is_sent_to_a_socket_in_a_folder_others_can_write(tmp_path: Path, home: Path,
                                                                 monkeypatch: pytest.MonkeyPatch,
                                                                 make_repo: Callable[..., Path]) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o775)  # a group member could have put this socket here
    monkeypatch.setenv("PLANNER_DAEMON_DIR", str(folder))
    listener = Listener(socket_path())
    done = run_cli("gather", str(make_repo(REPO)), env={"PLANNER_DAEMON": "", "SOME_TOKEN": "s3cret"})
    assert done.returncode == 0 and "gathered" in done.stdout, done.stderr  # it ran here
    assert "warning: not using the planner daemon" in done.stderr and "writable by others" in done.stderr
    assert "nothing was sent" in done.stderr and "Traceback" not in done.stderr
    listener.thread.join(30)
    assert listener.received == [b""]  # connected, then told nothing


def test_nothing_is_sent_to_a_socket_owned_by_another_user(daemon: dict[str, str], home: Path,
                                                           make_repo: Callable[..., Path]) -> None:
    if os.getuid() != 0:
        pytest.skip("needs root to give the socket file to another user")
    path = status(daemon)["socket"]
    assert isinstance(path, str)
    os.chown(path, 65534, 65534)
    try:
        done = run_cli("gather", str(make_repo(REPO)), env=daemon)
    finally:
        os.chown(path, 0, 0)
    assert done.returncode == 0 and "belongs to uid 65534" in done.stderr, done.stderr
    assert status(daemon)["commands"] == 0


LISTEN_AS_OTHER = """
import socket, sys
sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
sock.bind(sys.argv[1])
sock.listen(1)
print("ready", flush=True)
conn, _ = sock.accept()
data = b""
while chunk := conn.recv(65536):
    data += chunk
print(len(data), flush=True)
"""


def test_nothing_is_sent_to_a_listener_running_as_another_user(home: Path, monkeypatch: pytest.MonkeyPatch,
                                                              make_repo: Callable[..., Path]) -> None:
    """Socket file and folder look right (the user's, 0600 and 0700), but the process listening is another
    user's: SO_PEERCRED tells, and the client sends nothing."""
    python = shutil.which("python3", path="/usr/bin:/bin")
    if os.getuid() != 0 or python is None or subprocess.run([python, "-c", ""], user=65534).returncode != 0:
        pytest.skip("needs root and a system python3 another user can run")
    base = Path(tempfile.mkdtemp())  # not under pytest's 0700 folders: the other user must reach it
    try:
        base.chmod(0o755)
        folder = base / "daemon"
        folder.mkdir()
        folder.chmod(0o777)
        monkeypatch.setenv("PLANNER_DAEMON_DIR", str(folder))
        path = socket_path()
        other = subprocess.Popen([python, "-c", LISTEN_AS_OTHER, path], user=65534, group=65534,
                                 stdout=subprocess.PIPE, text=True)
        assert other.stdout is not None and other.stdout.readline().strip() == "ready"
        folder.chmod(0o700)
        os.chown(path, 0, 0)
        os.chmod(path, 0o600)
        done = run_cli("gather", str(make_repo(REPO)), env={"PLANNER_DAEMON": ""})
        assert done.returncode == 0 and "gathered" in done.stdout, done.stderr
        assert "runs as uid 65534" in done.stderr and "nothing was sent" in done.stderr
        out, _ = other.communicate(timeout=30)
        assert out.strip() == "0"
    finally:
        shutil.rmtree(base, ignore_errors=True)


LOWER = """
import json, resource, sys
from planner.daemon.child import lower_limits
wanted = json.loads(sys.argv[1])
try:
    lower_limits(wanted)
except (KeyError, ValueError, OSError) as exc:
    print(json.dumps({"error": exc.__class__.__name__}))
else:
    print(json.dumps({name: resource.getrlimit(getattr(resource, name)) for name in wanted}))
"""


def test_lower_limits_only_ever_lowers() -> None:
    """Each of the six limits: lowered to the client's where it is lower, kept where the client's is higher
    (infinite included); a request that misses one is refused."""
    import resource

    def lowered(wanted: dict[str, list[int]]) -> dict[str, list[int]]:
        done = subprocess.run([sys.executable, "-c", LOWER, json.dumps(wanted)], capture_output=True, text=True,
                              timeout=60, cwd=ROOT)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    inf = resource.RLIM_INFINITY
    own = {name: list(resource.getrlimit(getattr(resource, name))) for name in
           ("RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_NOFILE", "RLIMIT_NPROC", "RLIMIT_FSIZE", "RLIMIT_DATA")}
    wanted = {name: [inf, inf] for name in own}
    wanted.update(RLIMIT_AS=[1 << 34, 1 << 35], RLIMIT_CPU=[600, inf], RLIMIT_NOFILE=[100, 200],
                  RLIMIT_FSIZE=[1 << 30, 1 << 31])
    got = lowered(wanted)
    assert got["RLIMIT_NOFILE"] == [100, 200] and got["RLIMIT_CPU"] == [600, own["RLIMIT_CPU"][1]]
    assert got["RLIMIT_AS"] == [1 << 34, 1 << 35] and got["RLIMIT_FSIZE"] == [1 << 30, 1 << 31]
    assert got["RLIMIT_NPROC"] == own["RLIMIT_NPROC"] and got["RLIMIT_DATA"] == own["RLIMIT_DATA"]
    higher = {name: [inf, inf] for name in own}
    assert lowered(higher) == own
    del higher["RLIMIT_DATA"]
    assert lowered(higher) == {"error": "KeyError"}
