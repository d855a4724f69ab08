"""Shared fixtures: real git repositories in temp dirs, an isolated PLANNER_HOME, TCCM files."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1",
}


# A Poetry project whose lockfile pins requests 2.30.0 (its fix needs the lockfile regenerated).
POETRY_REQUESTS = {
    "pyproject.toml": textwrap.dedent("""\
        [tool.poetry]
        name = "svc"
        version = "1.0.0"

        [tool.poetry.dependencies]
        python = "^3.11"
        requests = "^2.30.0"
    """),
    "poetry.lock": textwrap.dedent("""\
        [[package]]
        name = "requests"
        version = "2.30.0"
        description = "HTTP"
        optional = false
        python-versions = ">=3.7"
        files = [{file = "requests-2.30.0.tar.gz", hash = "sha256:abc"}]
    """),
}


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env=env).stdout


def write_files(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


def commit_all(repo: Path, message: str = "commit") -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


@pytest.fixture(scope="session", autouse=True)
def advisory_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One compiled advisory index folder for the session (tests of the index itself set their own), so no
    test writes one into the working directory, and the real snapshot is compiled once."""
    folder = tmp_path_factory.mktemp("advisory-index")
    os.environ["PLANNER_ADVISORY_INDEX"] = str(folder)
    return folder


@pytest.fixture(scope="session", autouse=True)
def daemon_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The suite's own place for planner daemons: a developer's running daemon never serves the tests'
    commands, and tests that start one (tests/test_daemon.py) stop it."""
    folder = tmp_path_factory.mktemp("daemon")
    os.environ["PLANNER_DAEMON_DIR"] = str(folder)
    return folder


@pytest.fixture
def make_repo(tmp_path: Path) -> Callable[..., Path]:
    """make_repo({"path": "content"}, name="repo", commit=True) → a real git work tree."""
    counter = iter(range(1000))

    def make(files: dict[str, str | bytes], name: str | None = None, commit: bool = True) -> Path:
        repo = tmp_path / (name or f"repo{next(counter)}")
        repo.mkdir()
        git(repo, "init", "-q", "-b", "main")
        write_files(repo, files)
        if commit:
            commit_all(repo, "initial")
        return repo

    return make


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An isolated PLANNER_HOME and task-class path for this test."""
    planner_home = tmp_path / "planner-home"
    monkeypatch.setenv("PLANNER_HOME", str(planner_home))
    monkeypatch.delenv("PLANNER_TASK_CLASS_PATH", raising=False)
    monkeypatch.delenv("PLANNER_ADVISORIES", raising=False)
    monkeypatch.delenv("PLANNER_REDIS_URL", raising=False)
    monkeypatch.delenv("PLANNER_MODEL", raising=False)
    return planner_home


@pytest.fixture
def tccm_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Path]:
    """tccm_dir({"name": yaml_text}) → a directory on PLANNER_TASK_CLASS_PATH holding those files."""
    directory = tmp_path / "task-classes"
    directory.mkdir(exist_ok=True)
    monkeypatch.setenv("PLANNER_TASK_CLASS_PATH", str(directory))

    def make(files: dict[str, str]) -> Path:
        for name, text in files.items():
            filename = name if name.endswith((".yaml", ".yml")) else f"{name}.yaml"
            (directory / filename).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
        return directory

    return make


def run_main(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, str, str]:
    """`planner ARGS` in this process (its stores and Redis clients are the test's): (exit code, stdout, stderr)."""
    from planner.cli import main

    monkeypatch.setattr(sys, "argv", ["planner", *args])
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def run_cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run the real `planner` entry point in a subprocess."""
    return subprocess.run([sys.executable, "-m", "planner", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, cwd=cwd, timeout=120)


# Test groups that need something from outside the checkout, by the words their skip reasons use. `python -m
# pytest` runs what it can and names the groups it skipped; PLANNER_TEST_REQUIRE (comma-separated group names,
# set by .ci/run) turns a skip of a required group into a failed session.
SKIP_GROUPS = {"sandbox": ("bubblewrap",), "redis": ("PLANNER_TEST_REDIS_URL",), "browser": ("Chromium",),
               "corpus": ("corpus", "AWESOME_COMPOSE"), "advisories": ("pypa advisory snapshot",),
               "wolfi": ("WOLFI_PACKAGES_TSV",), "llm": ("langchain-openai",),
               "tools": ("is not installed", "cannot be reached", "could not reach", "went away",
                         "needs a lockfile tool")}


def _skip_groups(terminalreporter: pytest.TerminalReporter) -> dict[str, int]:
    found: dict[str, int] = {}
    for report in terminalreporter.stats.get("skipped", []):
        reason = str(report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr)
        group = next((g for g, words in SKIP_GROUPS.items() if any(w in reason for w in words)), "other")
        found[group] = found.get(group, 0) + 1
    return found


def _required() -> set[str]:
    return {g.strip() for g in os.environ.get("PLANNER_TEST_REQUIRE", "").split(",") if g.strip()}


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, exitstatus: int) -> None:
    groups = _skip_groups(terminalreporter)
    if groups:
        shown = ", ".join(f"{g} ({n})" for g, n in sorted(groups.items()))
        terminalreporter.write_line(f"skipped groups: {shown} — see the SKIPPED lines for why (-rs)")
    missing = sorted(_required() & set(groups))
    if missing:
        terminalreporter.write_line(f"required groups skipped: {', '.join(missing)} (PLANNER_TEST_REQUIRE)", red=True)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None and _required() & set(_skip_groups(reporter)) and exitstatus == 0:
        session.exitstatus = 1


def free_port() -> int:
    """A loopback port no one listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def planner_server(args: list[str], port: int, env: dict[str, str],
                   cwd: Path | None = None) -> Iterator[subprocess.Popen[bytes]]:
    """`python -m planner ARGS` serving on `port`, yielded once it accepts connections (a state, polled with a
    deadline: a server that exits first fails the test with its stderr); terminated afterwards."""
    proc = subprocess.Popen([sys.executable, "-m", "planner", *args], env=env, cwd=cwd,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
                assert time.monotonic() < deadline, f"planner {args[0]} did not listen on {port} within 60 s"
                time.sleep(0.05)
        yield proc
    finally:
        proc.terminate()
        proc.wait(timeout=30)
