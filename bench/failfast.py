"""Benchmark: how long refusals and failures take — the wall-clock figures tests used to assert.

Tests assert what happens (a bomb is refused with its line, a dead Redis costs the hot views only, the
commit hook backgrounds its gather); how long it takes is measured here, each row against the bound the
test once asserted, median of --rounds:
- alias bomb: `repocontext.bounded` compose / load / load_all / compose_all refuse a "billion laughs"
  (was < 1.0 s, tests/test_bounded.py);
- tccm alias bomb: a task-class file made of anchors and aliases is refused by validation (< 1.0 s,
  tests/test_tccm_validation.py);
- dead redis ping: a client of a port no one listens on raises (< 1.0 s, tests/test_hotviews_backend.py);
- hot views, no server / server gone / server hung: a bundle built while Redis is absent, killed, or
  stopped mid-connection (< 1.0 s, < 2.0 s, < READ_TIMEOUT_S + 1 s, tests/test_hotviews_bundles.py; the
  hung row needs `redis-server`);
- hostile gather: `planner gather` of tests/test_bounded_gather.py's hostile files (< 30 s);
- hooked commit: `git commit` with the planner's post-commit hook installed (< 5 s, tests/test_hooks.py).
Run: python bench/failfast.py [--rounds N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import redis  # noqa: E402
from hotviews_support import start_redis  # noqa: E402
from test_bounded import alias_bomb  # noqa: E402
from test_bounded_gather import HOSTILE  # noqa: E402

from planner import service  # noqa: E402
from planner.config import Settings  # noqa: E402
from planner.hotviews import backend  # noqa: E402
from planner.hotviews import bundles as hot  # noqa: E402
from planner.tccm.registry import Registry  # noqa: E402
from repocontext import bounded  # noqa: E402

GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@example.com", "GIT_COMMITTER_NAME": "bench",
           "GIT_COMMITTER_EMAIL": "b@example.com"}
FILES = {"requirements.txt": "requests==2.30.0\nPyYAML==5.3.1\n",
         "app/main.py": "import requests\nrequests.get('https://example.com')\n"}


def timed(action: Callable[[], object], rounds: int, refusal: type[BaseException] | None = None) -> float:
    """Median wall seconds of `action`; with `refusal`, the action must raise it (the refusal is what is timed)."""
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        if refusal is None:
            action()
        else:
            try:
                action()
            except refusal:
                pass
            else:
                raise SystemExit(f"error: {action} was not refused")
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def row(name: str, seconds: float | None, bound: float) -> None:
    shown = "skipped" if seconds is None else f"{seconds * 1000:9.1f} ms"
    verdict = "" if seconds is None else ("within" if seconds < bound else "OVER")
    print(f"{name:<34} {shown:>12}   (test bound {bound:.2f} s) {verdict}")


def repo_with(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True)
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True, env=env)
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True, env=env)
    subprocess.run(["git", "-C", str(root), "commit", "-qm", "initial"], check=True, env=env)
    return root


def parsers(rounds: int, tmp: Path) -> None:
    text = "services:\n  web:\n    image: nginx\n" + alias_bomb() + "services2: *a9\n"
    for name, parse in (("compose", bounded.compose), ("load", bounded.load),
                        ("load_all", lambda t: list(bounded.load_all(t))),
                        ("compose_all", lambda t: list(bounded.compose_all(t)))):
        row(f"alias bomb, bounded.{name}", timed(lambda p=parse: p(text), rounds, bounded.LimitExceeded), 1.0)
    folder = tmp / "tc"
    folder.mkdir()
    bomb = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 12):
        prev, cur = chr(ord("a") + i - 1), chr(ord("a") + i)
        bomb.append(f"{cur}: &{cur} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]")
    (folder / "demo.yaml").write_text("\n".join(bomb) + "\n")
    row("tccm alias bomb, validation", timed(lambda: Registry([folder]).validate(), rounds), 1.0)


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def hot_views(rounds: int, tmp: Path) -> None:
    dead = backend.connect(f"redis://127.0.0.1:{free_port()}/0").client
    assert dead is not None
    row("dead redis ping", timed(dead.ping, rounds, redis.ConnectionError), 1.0)
    os.environ["PLANNER_HOME"] = str(tmp / "home")
    repo = repo_with(tmp / "repo", FILES)
    service.gather_repo(Settings.from_env(), repo)

    def build() -> None:
        settings = Settings.from_env()
        hot.build_bundle(settings, service.task_class(settings, "distroless-migration"), repo.resolve(), {})

    os.environ["PLANNER_REDIS_URL"] = f"redis://127.0.0.1:{free_port()}/0"
    row("hot views, no server", timed(build, rounds), 1.0)
    os.environ.pop("PLANNER_REDIS_URL")
    build()  # the embedded store, warm

    def gone() -> None:
        backend.embedded_server().connected = False
        build()

    row("hot views, server gone", timed(gone, rounds), 2.0)
    backend.embedded_server().connected = True
    if shutil.which("redis-server") is None:
        row("hot views, server hung", None, backend.READ_TIMEOUT_S + 1.0)
        return
    (tmp / "redis").mkdir()
    server = start_redis(tmp / "redis")
    try:
        os.environ["PLANNER_REDIS_URL"] = server.url
        build()
        server.process.send_signal(signal.SIGSTOP)
        row("hot views, server hung", timed(build, rounds), backend.READ_TIMEOUT_S + 1.0)
    finally:
        server.process.send_signal(signal.SIGCONT)
        server.kill()
        os.environ.pop("PLANNER_REDIS_URL", None)


def processes(rounds: int, tmp: Path) -> None:
    env = {**os.environ, "PLANNER_HOME": str(tmp / "home-gather"), "PLANNER_DAEMON": "off"}
    hostile = repo_with(tmp / "hostile", HOSTILE)
    row("hostile gather (process)", timed(lambda: subprocess.run(
        [sys.executable, "-m", "planner", "gather", str(hostile), "--json"], env=env, capture_output=True,
        timeout=60, check=True), max(1, rounds // 3)), 30.0)
    hooked = repo_with(tmp / "hooked", {"app.py": "print(1)\n"})
    subprocess.run([sys.executable, "-m", "planner", "hooks", "install", str(hooked)], env=env, check=True,
                   capture_output=True)
    counter = iter(range(1_000_000))

    def commit() -> None:
        (hooked / "app.py").write_text(f"print({next(counter)})\n")
        subprocess.run(["git", "-C", str(hooked), "commit", "-qam", "change"], env={**env, **GIT_ENV}, check=True)

    row("hooked commit", timed(commit, rounds), 5.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        parsers(args.rounds, Path(tmp))
        hot_views(args.rounds, Path(tmp))
        processes(args.rounds, Path(tmp))


if __name__ == "__main__":
    main()
