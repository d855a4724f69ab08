"""The planner daemon: a forwarded command behaves as the same command run in-process (output, exit code,
files written, environment, working directory, terminal), a changed install is never served by old code,
and the daemon's lifecycle (start once, status, stop, idle exit, auto-start) holds. Real processes and a
real Unix socket throughout."""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import run_cli

from planner.cli.daemon import wait_for_exit

REPO = {"requirements.txt": "requests==2.30.0\n", "app.py": "import requests\nrequests.get('x')\n"}


def status(env: dict[str, str]) -> dict[str, object]:
    return json.loads(run_cli("daemon", "status", "--json", env=env).stdout)


@pytest.fixture
def daemon(tmp_path: Path, home: Path) -> Iterator[dict[str, str]]:
    """A daemon of its own (its own socket folder); the env that reaches it; stopped afterwards."""
    env = {"PLANNER_DAEMON_DIR": str(tmp_path / "daemon"), "PLANNER_DAEMON": ""}
    started = run_cli("daemon", "start", "--json", env=env)
    assert started.returncode == 0, started.stderr
    info = json.loads(started.stdout)
    assert info["running"] and info["commands"] == 0
    yield env
    run_cli("daemon", "stop", env=env)
    _gone(int(info["pid"]))


def _gone(pid: int, seconds: float = 10.0) -> None:
    if not wait_for_exit(pid, seconds):
        os.kill(pid, 9)
        pytest.fail(f"daemon {pid} did not exit")


def _same(a: subprocess.CompletedProcess[str], b: subprocess.CompletedProcess[str]) -> None:
    assert (a.returncode, a.stdout, a.stderr) == (b.returncode, b.stdout, b.stderr)


def test_a_forwarded_command_behaves_as_in_process(daemon: dict[str, str], home: Path,
                                                   make_repo: Callable[..., Path], tmp_path: Path) -> None:
    repo = make_repo(REPO)
    off = {**daemon, "PLANNER_DAEMON": "off", "PLANNER_HOME": str(tmp_path / "home-off")}
    on = {**daemon, "PLANNER_HOME": str(tmp_path / "home-on")}
    for args in (["gather", ".", "--json"], ["task-classes", "list"], ["--help"], ["gather", "/no/such/repo"],
                 ["gathr"], ["runs", "show", "nope"]):
        here, there = run_cli(*args, env=off, cwd=repo), run_cli(*args, env=on, cwd=repo)
        gathered = args[0] == "gather" and here.returncode == 0
        if gathered:  # the same snapshot, bar where it was stored and when
            for proc in (here, there):
                proc.stdout = proc.stdout.replace(str(tmp_path / "home-on"), "H").replace(
                    str(tmp_path / "home-off"), "H")
            assert json.loads(here.stdout)["meta"]["commit"] == json.loads(there.stdout)["meta"]["commit"]
            continue
        _same(here, there)
    assert status(daemon)["commands"] == 6  # every one went through the daemon
    # The client's environment decided where the state went, and the working directory what was gathered.
    assert (tmp_path / "home-on" / "repos").is_dir() and (tmp_path / "home-off" / "repos").is_dir()
    assert not (home / "repos").exists()


def test_exit_codes_and_error_lines_pass_through(daemon: dict[str, str], home: Path,
                                                 make_repo: Callable[..., Path]) -> None:
    missing = run_cli("dispatch", "no-such-class", "--repo", str(make_repo(REPO)), env=daemon)
    assert missing.returncode != 0 and missing.stderr.startswith("error: ") and "no-such-class" in missing.stderr
    assert "Traceback" not in missing.stderr
    assert status(daemon)["commands"] == 1


def test_a_dispatch_through_the_daemon_records_its_run(daemon: dict[str, str], home: Path,
                                                       make_repo: Callable[..., Path]) -> None:
    repo = make_repo(REPO)
    advisories = Path(__file__).resolve().parent.parent / "examples" / "advisories"
    proc = run_cli("dispatch", "vulnerability-remediation", "--repo", str(repo), "--advisories", str(advisories),
                   "--json", env=daemon)
    assert proc.returncode == 0, proc.stderr
    run = json.loads(proc.stdout)
    assert run["status"] == "succeeded" and "+requests==2.31.0" in run["patch"]
    listed = json.loads(run_cli("runs", "list", "--json", env={**daemon, "PLANNER_DAEMON": "off"}).stdout)
    assert [(r["id"], r["status"]) for r in listed] == [(run["run_id"], "succeeded")]


def test_the_terminal_is_the_clients(daemon: dict[str, str], home: Path) -> None:
    """On a terminal, rich colours and sizes output to it, whether the daemon or the process itself prints."""
    def on_a_tty(env: dict[str, str]) -> bytes:
        leader, follower = pty.openpty()
        proc = subprocess.Popen([sys.executable, "-m", "planner", "task-classes", "list"], stdin=follower,
                                stdout=follower, stderr=follower, env={**os.environ, **env, "TERM": "xterm-256color",
                                                                       "COLUMNS": "132"})
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert proc.wait(timeout=60) == 0
        os.close(leader)
        return b"".join(chunks)

    here, there = on_a_tty({**daemon, "PLANNER_DAEMON": "off"}), on_a_tty(daemon)
    assert b"\x1b[" in there and here == there
    assert status(daemon)["commands"] == 1


def test_a_changed_install_is_not_served_by_old_code(tmp_path: Path, home: Path,
                                                     make_repo: Callable[..., Path]) -> None:
    """Installing or upgrading a package changes a folder on the import path: the daemon answers `stale`,
    the command runs in-process (and succeeds), and the old daemon exits."""
    extra = tmp_path / "site"
    extra.mkdir()
    env = {"PLANNER_DAEMON_DIR": str(tmp_path / "daemon"), "PLANNER_DAEMON": "",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(extra), os.environ.get("PYTHONPATH", "")]))}
    info = json.loads(run_cli("daemon", "start", "--json", env=env).stdout)
    (extra / "newly_installed.py").write_text("x = 1\n")
    proc = run_cli("gather", str(make_repo(REPO)), env=env)
    assert proc.returncode == 0 and "gathered" in proc.stdout
    _gone(int(info["pid"]))
    assert status(env)["running"] is False


def test_one_daemon_however_many_start_and_it_leaves_when_idle(tmp_path: Path, home: Path) -> None:
    env = {"PLANNER_DAEMON_DIR": str(tmp_path / "daemon")}
    starts = [subprocess.Popen([sys.executable, "-m", "planner", "daemon", "start", "--json", "--idle", "3"],
                               env={**os.environ, **env}, stdout=subprocess.PIPE, text=True) for _ in range(3)]
    pids = {json.loads(p.communicate(timeout=120)[0])["pid"] for p in starts}
    assert len(pids) == 1
    _gone(int(pids.pop()), seconds=30)  # idle for 3 s: it exits, and removes its socket
    assert not list((tmp_path / "daemon").glob("*.sock"))
    assert run_cli("daemon", "stop", env=env).stdout.startswith("no planner daemon was running")


def test_auto_starts_one_for_the_next_command(tmp_path: Path, home: Path, make_repo: Callable[..., Path]) -> None:
    env = {"PLANNER_DAEMON_DIR": str(tmp_path / "daemon"), "PLANNER_DAEMON": "auto"}
    repo = make_repo(REPO)
    assert run_cli("gather", str(repo), env=env).returncode == 0  # in-process; starts one on the side
    deadline = time.monotonic() + 60
    while not status(env)["running"]:
        assert time.monotonic() < deadline, "no daemon started"
        time.sleep(0.1)
    try:
        assert run_cli("gather", str(repo), env=env).returncode == 0
        assert status(env)["commands"] == 1
    finally:
        pid = int(status(env)["pid"])
        run_cli("daemon", "stop", env=env)
        _gone(pid)


def test_ctrl_c_reaches_the_command(daemon: dict[str, str], home: Path, make_repo: Callable[..., Path]) -> None:
    """SIGINT to the client (a terminal's Ctrl-C) interrupts the forwarded command as it would a local one."""
    repo = make_repo({f"pkg{i // 100}/m{i}.py": f"import os\nos.path.join('{i}')\n" for i in range(6000)})
    proc = subprocess.Popen([sys.executable, "-m", "planner", "gather", str(repo)], env={**os.environ, **daemon},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while status(daemon)["commands"] == 0 and time.monotonic() < deadline:  # the daemon has taken it
        time.sleep(0.05)
    time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and "Traceback" not in err, (out, err)  # as in-process: 128 + SIGINT
    assert status(daemon)["running"]


def test_start_replaces_a_stale_daemon(tmp_path: Path, home: Path) -> None:
    extra = tmp_path / "site"
    extra.mkdir()
    env = {"PLANNER_DAEMON_DIR": str(tmp_path / "daemon"),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(extra), os.environ.get("PYTHONPATH", "")]))}
    old = json.loads(run_cli("daemon", "start", "--json", env=env).stdout)["pid"]
    (extra / "upgraded.py").write_text("x = 2\n")
    new = json.loads(run_cli("daemon", "start", "--json", env=env).stdout)
    try:
        assert new["running"] and new["pid"] != old
        _gone(int(old))
        assert run_cli("--help", env=env).returncode == 0 and status(env)["commands"] == 1
    finally:
        run_cli("daemon", "stop", env=env)
        _gone(int(new["pid"]))


def _children(pid: int) -> list[int]:
    """Live Python child processes of `pid` (the gather's pool workers; not the git it runs), from /proc."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            head, _, tail = stat.read_text().rpartition(")")
        except OSError:
            continue
        fields = tail.split()
        if int(fields[1]) == pid and fields[0] != "Z" and "python" in head.partition("(")[2]:
            found.append(int(stat.parent.name))
    return found


def test_after_a_stale_answer_the_command_here_still_obeys_signals(tmp_path: Path, home: Path,
                                                                   make_repo: Callable[..., Path]) -> None:
    """The client forwards signals only while a daemon's child runs the command: once the daemon has said
    `stale` and the command runs in the client's own process, SIGTERM ends it (and its worker processes)
    as it would any command, instead of being held for a child that never came."""
    extra = tmp_path / "site"
    extra.mkdir()
    env = {"PLANNER_DAEMON_DIR": str(tmp_path / "daemon"), "PLANNER_DAEMON": "", "PLANNER_GATHER_WORKERS": "2",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(extra), os.environ.get("PYTHONPATH", "")]))}
    old = json.loads(run_cli("daemon", "start", "--json", env=env).stdout)["pid"]
    (extra / "upgraded.py").write_text("x = 3\n")
    repo = make_repo({f"pkg{i // 100}/m{i}.py": f"import os\nos.path.join('{i}')\n" for i in range(6000)})
    proc = subprocess.Popen([sys.executable, "-m", "planner", "gather", str(repo)], env={**os.environ, **env},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # wait for a state, not a duration: the gather's worker processes exist once it runs here, mid-gather
    # (the first workers, the secret scan's, live ~0.1 s: signal at once, without asking again)
    deadline = time.monotonic() + 120
    seen: list[int] = []
    while not seen and proc.poll() is None and time.monotonic() < deadline:
        seen = _children(proc.pid)
        time.sleep(0.005)
    assert proc.poll() is None and seen, "the gather never started its workers here"
    proc.send_signal(signal.SIGTERM)
    try:
        proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("SIGTERM did not end a command run in-process after a stale daemon")
    assert proc.returncode == -signal.SIGTERM
    _gone(int(old))



def test_the_folder_a_daemon_is_started_from_cannot_shadow_its_modules(tmp_path: Path, home: Path) -> None:
    """`python -m` puts the start folder on the import path: a repository holding its own `rich.py` must not
    become the daemon's rich (the daemon starts from the checkout, wherever the user stands)."""
    script = Path(sys.executable).parent / "planner"  # the installed console script: no cwd on its path
    shadow = tmp_path / "repo-with-a-rich-module"
    shadow.mkdir()
    (shadow / "rich.py").write_text("raise RuntimeError('a repository module was imported by the daemon')\n")
    env = {**os.environ, "PLANNER_DAEMON_DIR": str(tmp_path / "daemon"), "PLANNER_DAEMON": ""}
    started = subprocess.run([str(script), "daemon", "start", "--json"], cwd=shadow, env=env, capture_output=True,
                             text=True, timeout=120)
    assert started.returncode == 0, started.stderr
    pid = int(json.loads(started.stdout)["pid"])
    try:
        listed = subprocess.run([str(script), "task-classes", "list"], cwd=shadow, env=env, capture_output=True,
                                text=True, timeout=120)
        assert listed.returncode == 0 and "vulnerability-remediation" in listed.stdout, listed.stderr
        assert status({"PLANNER_DAEMON_DIR": env["PLANNER_DAEMON_DIR"]})["commands"] == 1
    finally:
        subprocess.run([str(script), "daemon", "stop"], env=env, capture_output=True, timeout=60)
        _gone(pid)
