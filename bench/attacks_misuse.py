"""More of issue 23's attacks, registered into bench/attacks.py's table: many processes on one home, a
world-readable home, a DNS-rebinding Host header, and inputs that used to be ignored."""

from __future__ import annotations

import http.client
import os
import resource
import socket
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from attacks import PLAIN, ROOT, Row, Runner, repository

ADVISORIES = str(ROOT / "examples" / "advisories")


def _cpu_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def attack_concurrent_dispatches(work: Path, run: Runner, count: int = 20) -> Row:
    """`count` dispatches at once on one fresh PLANNER_HOME, no daemon: how many succeed."""
    repo = repository(work, "repo", PLAIN)
    home = Path(tempfile.mkdtemp(prefix="home-", dir=work))
    env = {**os.environ, "PLANNER_HOME": str(home), "PYTHONPATH": str(run.source), "PLANNER_DAEMON": "off"}
    argv = [sys.executable, "-m", "planner", "dispatch", "vulnerability-remediation", "--repo", str(repo),
            "--advisories", ADVISORIES, "--json"]
    cpu, started = _cpu_children(), time.monotonic()
    procs = [subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
             for _ in range(count)]
    codes = [proc.wait(timeout=run.timeout) for proc in procs]
    ok = sum(code == 0 for code in codes)
    return Row(f"{count} dispatches at once, one home", time.monotonic() - started, _cpu_children() - cpu, 0.0,
               0 if ok == count else 5, f"{ok}/{count} succeeded")


def attack_readable_home(work: Path, run: Runner) -> Row:
    """After a dispatch, any path under PLANNER_HOME a group or other user could read?"""
    repo = repository(work, "repo", PLAIN)
    row = run("modes of PLANNER_HOME after a dispatch", work, "dispatch", "vulnerability-remediation", "--repo",
              str(repo), "--advisories", ADVISORIES, env={"PLANNER_DAEMON": "off"})
    home = next(work.glob("home-*"))
    loose = [p for p in [home, *home.rglob("*")] if not p.is_symlink() and p.lstat().st_mode & 0o077]
    row.outcome = f"{len(loose)} paths readable by others; home {oct(stat.S_IMODE(home.stat().st_mode))}"
    return row


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _get(port: int, host: str) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.putrequest("GET", "/api/runs", skip_host=True)
    conn.putheader("Host", host)
    conn.endheaders()
    return conn.getresponse().status


def attack_dns_rebinding(work: Path, run: Runner) -> Row:
    """`planner ui` asked for /api/runs under an attacker's host name, then under its own."""
    port = _free_port()
    env = {**os.environ, "PLANNER_HOME": str(work / "home"), "PYTHONPATH": str(run.source), "PLANNER_DAEMON": "off"}
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "planner", "ui", "--port", str(port)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(600):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        evil, own = _get(port, f"attacker.example:{port}"), _get(port, f"127.0.0.1:{port}")
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    return Row("UI under a rebinding host name", time.monotonic() - started, 0.0, 0.0, 0 if evil == 400 else 1,
               f"attacker.example → {evil}, 127.0.0.1 → {own}")


def attack_ignored_inputs(work: Path, run: Runner) -> Row:
    """A misspelled input and a missing advisory source: errors, or silently ignored?"""
    repo = repository(work, "repo", PLAIN)
    typo = run("a misspelled --input", work, "dispatch", "vulnerability-remediation", "--repo", str(repo),
               "--advisories", ADVISORIES, "--input", "pakage=requests", env={"PLANNER_DAEMON": "off"})
    gone = run("a missing --advisories path", work, "dispatch", "vulnerability-remediation", "--repo", str(repo),
               "--advisories", str(work / "advisries"), env={"PLANNER_DAEMON": "off"})
    return Row("ignored inputs (typo, missing source)", typo.wall_s + gone.wall_s, typo.cpu_s + gone.cpu_s,
               max(typo.peak_mb, gone.peak_mb), max(typo.exit_code or 0, gone.exit_code or 0),
               f"typo → exit {typo.exit_code}; missing → exit {gone.exit_code}")


MORE = {"concurrent-dispatches": attack_concurrent_dispatches, "readable-home": attack_readable_home,
        "dns-rebinding": attack_dns_rebinding, "ignored-inputs": attack_ignored_inputs}
