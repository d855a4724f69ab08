"""Benchmark: `planner mcp` as an agent sees it (not a timed test).

1. Start-up: spawn `python -m planner mcp` with the SDK's stdio client, time spawn → first `list_tools`
   answer (initialize included), median over rounds; CPU = the server process's user+sys up to that answer
   (from /proc; with a daemon, the thin client's: the daemon's forked child is not ours to see).
2. get_agent_context on python/pythondotorg (~1,000 files; /work/shared/corpus/pythondotorg.bundle, cloned
   to a temporary folder and gathered first, untimed) with a warm store: one server session, one untimed
   call, then each call timed round trip over stdio (client side); and the tool body in this process,
   wall and CPU (time.process_time), as the server runs it.
Run: python bench/mcpserver.py [--rounds N] [--bundle PATH] [--task-class NAME]
(not bench/mcp.py: a script named mcp would shadow the SDK.)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

HERE = Path(__file__).resolve().parent.parent
CORPUS = Path("/work/shared/corpus/pythondotorg.bundle")


def env(home: Path, daemon: Path | None = None) -> dict[str, str]:
    """Without a daemon, or handed to `planner daemon` listening in `daemon` (the client process is timed). The
    server runs in the checkout; the repository is beside `home`, so that folder is its root (PLANNER_REPO_ROOTS)."""
    where = {"PLANNER_DAEMON": "on", "PLANNER_DAEMON_DIR": str(daemon)} if daemon else {"PLANNER_DAEMON": "off"}
    return {**os.environ, "PLANNER_HOME": str(home), "PYTHONPATH": str(HERE), "PLANNER_REPO_ROOTS": str(home.parent),
            **where}


def server_cpu() -> float:
    """User+sys CPU so far of this process's children (the server; with a daemon, the thin client), read
    from /proc while they run: the CPU spent up to the answer, not over the whole life."""
    tick, total = os.sysconf("SC_CLK_TCK"), 0.0
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        for child in (task / "children").read_text().split():
            fields = Path(f"/proc/{child}/stat").read_text().rpartition(")")[2].split()
            total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime
    return total


async def startup_once(home: Path, daemon: Path | None = None) -> tuple[float, float]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "planner", "mcp"], env=env(home, daemon),
                                   cwd=HERE)
    started = time.perf_counter()
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.list_tools()
        answered = time.perf_counter() - started
        cpu = server_cpu()
    return answered, cpu


async def context_calls(home: Path, repo: Path, task_class: str, rounds: int) -> list[float]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "planner", "mcp"], env=env(home), cwd=HERE)
    arguments = {"task_class": task_class, "repo": str(repo)}
    times = []
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        first = await session.call_tool("get_agent_context", arguments)  # warms the server's own caches
        assert not first.is_error, first.content
        for _ in range(rounds):
            started = time.perf_counter()
            result = await session.call_tool("get_agent_context", arguments)
            times.append(time.perf_counter() - started)
            assert not result.is_error, result.content
    return times


def in_process(home: Path, repo: Path, task_class: str, rounds: int) -> tuple[list[float], list[float]]:
    os.environ["PLANNER_HOME"] = str(home)
    os.environ["PLANNER_REPO_ROOTS"] = str(home.parent)  # as the server's: the repository lies beside the home
    from planner.mcpserver.tools import get_agent_context

    get_agent_context(task_class, str(repo))
    walls, cpus = [], []
    for _ in range(rounds):
        wall, cpu = time.perf_counter(), time.process_time()
        result = get_agent_context(task_class, str(repo))
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
        assert not result.is_error, result.content
    return walls, cpus


def report(what: str, starts: list[tuple[float, float]], cpu: str) -> None:
    print(f"{what}: median {statistics.median(s for s, _ in starts) * 1000:.0f} ms wall "
          f"(min {min(s for s, _ in starts) * 1000:.0f}); {cpu} median "
          f"{statistics.median(c for _, c in starts) * 1000:.0f} ms; load {os.getloadavg()[0]:.1f}")


def ms(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return f"p50 {statistics.median(values) * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--bundle", type=Path, default=CORPUS)
    parser.add_argument("--task-class", default="vulnerability-remediation")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home, repo = Path(tmp) / "home", Path(tmp) / "repo"
        subprocess.run([sys.executable, "-c", "import planner.mcpserver.server"], env=env(home), check=True)  # pyc
        starts = [anyio.run(startup_once, home) for _ in range(args.rounds)]
        report("start → first list_tools, no daemon", starts, "server CPU to the answer")
        daemon = Path(tmp) / "daemon"
        subprocess.run([sys.executable, "-m", "planner", "daemon", "start"], env=env(home, daemon), check=True,
                       cwd=HERE, capture_output=True)
        try:
            starts = [anyio.run(startup_once, home, daemon) for _ in range(args.rounds)]
        finally:
            subprocess.run([sys.executable, "-m", "planner", "daemon", "stop"], env=env(home, daemon), cwd=HERE,
                           capture_output=True)
        report("start → first list_tools, with `planner daemon`", starts, "client process CPU")
        subprocess.run(["git", "clone", "-q", str(args.bundle), str(repo)], check=True)
        files = len(subprocess.run(["git", "-C", str(repo), "ls-files"], capture_output=True, text=True,
                                   check=True).stdout.splitlines())
        subprocess.run([sys.executable, "-m", "planner", "gather", str(repo)], env=env(home), check=True,
                       capture_output=True, cwd=HERE)
        trips = anyio.run(context_calls, home, repo, args.task_class, args.rounds * 3)
        walls, cpus = in_process(home, repo, args.task_class, args.rounds * 3)
        print(f"get_agent_context {args.task_class}, {files} files, warm store: round trip over stdio {ms(trips)}; "
              f"tool body in-process {ms(walls)} wall, {ms(cpus)} CPU; load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
