"""Real runs for the web UI's tests: dispatched on real git repos in temp dirs; only the LLM is faked.

Repo-derived strings (file names, README text, advisory summaries, the LLM's plan) carry HTML, so every
page can be checked for escaping. One home per test module: dispatching is the slow part.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import commit_all, free_port, git, write_files
from fake_llm import fake_planner

from planner.config import Settings
from planner.portfolio import coordinator
from planner.portfolio.execute import execute
from planner.portfolio.model import Job, Result
from planner.portfolio.store import PortfolioStore
from planner.run.dispatch import dispatch

SCRIPT = "<script>alert('pwned')</script>"
IMG = '"><img src=x onerror=alert(1)>'
SECRET = "API_TOKEN=do-not-leak-7f3a"
HOSTILE_FILE = f"docs/{IMG}.md"

README_TITLE = """
task_class: readme-title
version: 1
description: Give the README a title that names the project.
worker: Replace the first heading of README.md with "# <project name>".
must_read:
  - glob: README.md
    reason: the file to change
  - glob: pyproject.toml
  - glob: .env
    reason: denied, always
may_read:
  - glob: "docs/**"
budget: {max_files: 10, max_tokens: 4000, per_file_max_tokens: 1000}
"""
BROKEN = "task_class: broken\nversion: 1\ndescription: x\nmust_read: [{glob: '../outside'}]\nbudget: {}\n"

PLAN = {"summary": f"Title the README {SCRIPT}", "steps": ["rename the heading"],
        "edits": [{"file": "README.md", "old": "# old title", "new": "# widget"}],
        "used_entries": ["must_read:0:README.md", "must_read:1:pyproject.toml"], "notes": [IMG]}


@dataclass
class UIHome:
    settings: Settings
    env: dict[str, str]
    llm: str  # readme-title through the (fake) LLM: succeeded, with a priced ledger entry
    second: str  # the same task class after a new docs file, without a model (solved example or needs_llm)
    remediation: str  # vulnerability-remediation whose advisory summary holds HTML

    @property
    def home(self) -> Path:
        return self.settings.home


def _advisories(root: Path) -> Path:
    record = {"id": "PYSEC-2023-74", "modified": "2024-01-01T00:00:00Z", "aliases": ["CVE-2023-32681"],
              "summary": f"requests leaks {SCRIPT} {IMG}", "details": f"Details {SCRIPT}",
              "affected": [{"package": {"ecosystem": "PyPI", "name": "requests"},
                            "ranges": [{"type": "ECOSYSTEM", "events": [{"introduced": "2.3.0"},
                                                                        {"fixed": "2.31.0"}]}]}]}
    root.mkdir(parents=True)
    (root / "PYSEC-2023-74.json").write_text(json.dumps(record))
    return root


def _repo(path: Path, files: dict[str, str]) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    write_files(path, files)
    commit_all(path, "initial")
    return path


def populate(root: Path, monkeypatch: pytest.MonkeyPatch) -> UIHome:
    """Three real runs (and a broken TCCM beside the good one) under root/planner-home."""
    tccms = root / "task-classes"
    tccms.mkdir()
    (tccms / "readme-title.yaml").write_text(textwrap.dedent(README_TITLE).lstrip())
    (tccms / "broken.yaml").write_text(BROKEN)
    env = {"PLANNER_HOME": str(root / "planner-home"), "PLANNER_TASK_CLASS_PATH": str(tccms)}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    for name in ("PLANNER_ADVISORIES", "PLANNER_REDIS_URL", "PLANNER_MODEL"):
        monkeypatch.delenv(name, raising=False)
    settings = Settings.from_env()
    repo = _repo(root / "widget", {"README.md": f"# old title\n\n{SCRIPT}\n", ".env": SECRET + "\n",
                                   "pyproject.toml": "[project]\nname = 'widget'\n", HOSTILE_FILE: "# guide\n"})
    llm = dispatch(settings, "readme-title", repo, {}, {}, fake_planner(PLAN), "openai:gpt-4o-mini")
    assert llm["status"] == "succeeded", llm.get("error")
    write_files(repo, {"docs/extra.md": "# more\n"})
    commit_all(repo, "more docs")
    second = dispatch(settings, "readme-title", repo, {}, {}, None, None)
    shop = _repo(root / "shop", {"requirements.txt": "requests==2.30.0\n",
                                 "app.py": "import requests\n\nrequests.get('https://example.com')\n"})
    remediation = dispatch(settings, "vulnerability-remediation", shop, {},
                           {"advisories": str(_advisories(root / "advisories"))})
    assert remediation["status"] == "succeeded", remediation.get("error")
    return UIHome(settings, env, llm["run_id"], second["run_id"], remediation["run_id"])


def snapshot(home: Path) -> dict[str, str]:
    """Every file under PLANNER_HOME with its sha256. SQLite's -shm is its readers' lock index, not data, and
    a read-only reader of a WAL database whose writer has closed may leave an empty -wal (no data either)."""
    return {str(p.relative_to(home)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(home.rglob("*")) if p.is_file() and not p.name.endswith("-shm")
            and not (p.name.endswith("-wal") and p.stat().st_size == 0)}


@dataclass
class PortfolioHome:
    settings: Settings
    env: dict[str, str]
    portfolio: str
    members: list[str]  # the portfolio's runs
    alone: str  # a run outside any portfolio

    @property
    def home(self) -> Path:
        return self.settings.home


class InProcess:
    """A portfolio engine that runs each job in this process. Coordinator, store, dispatch and runs are the real
    ones; only the process pool is left out (the tests stay quick on two cores)."""

    name = "in-process"

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def live(self, known: dict[str, str]) -> dict[str, str]:
        return {}  # jobs run inside this call: none outlives it

    def run(self, jobs: list[Job], on_start: Callable[[Job, str | None], None],
            on_result: Callable[[Result], None], reattach: dict[str, str] | None = None) -> None:
        for job in jobs:
            on_start(job, None)
            on_result(execute(job, self.settings, shipping=False))


def populate_portfolio(root: Path, monkeypatch: pytest.MonkeyPatch) -> PortfolioHome:
    """A real portfolio of two vulnerable repositories (one named with HTML) and one run outside it."""
    env = {"PLANNER_HOME": str(root / "planner-home")}
    monkeypatch.setenv("PLANNER_HOME", env["PLANNER_HOME"])
    for name in ("PLANNER_TASK_CLASS_PATH", "PLANNER_ADVISORIES", "PLANNER_REDIS_URL", "PLANNER_MODEL"):
        monkeypatch.delenv(name, raising=False)
    settings = Settings.from_env()
    shop = {"requirements.txt": "requests==2.30.0\n", "app.py": "import requests\n\nrequests.get('https://x.org')\n"}
    for name in ("shop-a", f"shop-{IMG}"):  # a repository path is repo-derived text too
        _repo(root / "fleet" / name, shop)
    advisories = str(_advisories(root / "advisories"))
    spec = coordinator.create(settings, "vulnerability-remediation", root / "fleet", {}, [advisories], False,
                              "local", 1)
    coordinator.run(settings, spec, InProcess(settings), lambda kind, data: None)
    store = PortfolioStore(settings.home)
    try:
        members = [e.result.run_id for e in store.entries(spec.id) if e.result and e.result.run_id]
    finally:
        store.close()
    assert len(members) == 2, members
    alone = dispatch(settings, "vulnerability-remediation", _repo(root / "alone", shop), {},
                     {"advisories": advisories})
    return PortfolioHome(settings, env, spec.id, members, alone["run_id"])


CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
needs_chromium = pytest.mark.skipif(not CHROMIUM.exists(), reason="no Chromium at /usr/bin/chromium "
                                    "(apt-get install chromium; .ci/run installs it)")


TOKEN = secrets.token_urlsafe(32)  # the served UI's token: a browser signs in with sign_in()


def sign_in(page: Any, url: str) -> None:
    """What a person does first: open the URL `planner ui` printed (the token sets a cookie, then is dropped)."""
    page.goto(f"{url}/?token={TOKEN}")
    assert "token=" not in page.url, page.url


@contextmanager
def served(settings: Settings) -> Iterator[str]:
    """`planner ui` over `settings` on a free loopback port, as the command serves it (Host check and token
    included: open sign_in() first)."""
    import uvicorn

    from planner.ui.app import create_app
    from planner.ui.auth import protect

    port = free_port()
    app = protect(create_app(settings), "127.0.0.1", port, (), TOKEN)
    running = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=running.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not running.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert running.started, "the UI server did not start"
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        running.should_exit = True
        thread.join(timeout=10)
