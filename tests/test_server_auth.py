"""The servers ask who is calling: `planner ui` and `planner mcp --http` answer only a caller holding the
token (kept 0600 in the 0700 PLANNER_HOME, printed at start-up); `planner mcp` reads only repositories under
the roots its operator allowed; a `planner worker` runs only the task classes and repositories it allows.
Real server and worker processes, real HTTP, the MCP SDK's own client, a real redis-server for the worker
(PLANNER_TEST_REDIS_URL)."""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from celery_helpers import REDIS, VISIBILITY_S, Worker, broker_url, flush
from conftest import commit_all, free_port, git, write_files
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from portfolio_helpers import make_fleet

from repocontext.store import RepoContextStore

ROOT = Path(__file__).resolve().parents[1]
VR = "vulnerability-remediation"
FILES = {"requirements.txt": "requests==2.30.0\n", "app.py": "import requests\n"}
ADVISORIES = str(ROOT / "examples" / "advisories")
EMPTY_RUNS = "Dispatch a run with"  # the runs page of an empty home


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {**os.environ, "PLANNER_HOME": str(home), "PLANNER_DAEMON": "off", "PYTHONPATH": str(ROOT),
           "PLANNER_ADVISORIES": ADVISORIES, **extra}
    for name in ("PLANNER_SERVER_TOKEN", "PLANNER_REPO_ROOTS", "PLANNER_ALLOWED_HOSTS"):
        if name not in extra:
            env.pop(name, None)
    return env


@contextmanager
def serving(args: list[str], port: int, env: dict[str, str], log: Path, cwd: Path = ROOT) -> Iterator[str]:
    """`python -m planner ARGS` listening on `port`; yields what it printed on stderr by then."""
    with log.open("w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "planner", *args], env=env, cwd=cwd,
                                stdout=subprocess.DEVNULL, stderr=err)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None, log.read_text()
                assert time.monotonic() < deadline, f"planner {args[0]} did not listen on {port} within 60 s"
                time.sleep(0.05)
        yield log.read_text()
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _body(port: int, path: str, headers: dict[str, str] | None = None) -> tuple[int, str, http.client.HTTPMessage]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", path, headers=headers or {})
    answer = conn.getresponse()
    return answer.status, answer.read().decode(), answer.headers


def _stored(home: Path) -> str:
    return (home / "server-token").read_text().strip()


def test_the_ui_asks_for_its_token_and_a_signed_in_browser_gets_a_cookie(home: Path, tmp_path: Path) -> None:
    port = free_port()
    with serving(["ui", "--port", str(port)], port, _env(home), tmp_path / "ui.log") as printed:
        token = _stored(home)
        assert f"planner ui: http://127.0.0.1:{port}/?token={token}" in printed
        # the token file: the user's alone, in a home that is the user's alone
        assert (home / "server-token").stat().st_mode & 0o777 == 0o600
        assert home.stat().st_mode & 0o777 == 0o700

        status, page, headers = _body(port, "/runs")
        assert status == 401 and "text/html" in headers["content-type"]
        assert "needs its token" in page and "?token=" in page and EMPTY_RUNS not in page
        status, api, _ = _body(port, "/api/runs")
        assert status == 401 and "needs its token" in json.loads(api)["error"]
        status, page, headers = _body(port, "/runs?token=not-the-token-at-all")
        assert status == 403 and "token is not this server" in page and "set-cookie" not in headers

        signed = _body(port, f"/runs?status=succeeded&token={token}")
        assert signed[0] == 303
        assert signed[2]["location"] == "/runs?status=succeeded"  # the token leaves the address bar
        cookie = signed[2]["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and token not in cookie
        name_value = cookie.split(";")[0]
        status, page, _ = _body(port, "/runs", {"cookie": name_value})
        assert status == 200 and EMPTY_RUNS in page
        assert _body(port, "/api/runs", {"authorization": f"Bearer {token}"})[0] == 200  # a script
        assert _body(port, "/api/runs", {"cookie": name_value.split("=")[0] + "=forged"})[0] == 401
        # a sign-in link cannot send the browser to another site
        away = _body(port, f"//evil.example/x?token={token}")
        assert away[0] == 303 and away[2]["location"].startswith("/evil.example")
        assert _body(port, "/runs", {"host": "evil.example", "cookie": name_value})[0] == 400  # Host check first

    again = free_port()
    with serving(["ui", "--port", str(again)], again, _env(home), tmp_path / "again.log") as printed:
        assert f"?token={token}" in printed  # kept across starts: a bookmarked sign-in still works


def test_a_token_file_others_could_read_is_replaced_and_a_weak_token_refused(home: Path, tmp_path: Path) -> None:
    home.mkdir(mode=0o700)
    exposed = home / "server-token"
    exposed.write_text("x" * 40 + "\n")
    exposed.chmod(0o644)
    port = free_port()
    with serving(["ui", "--port", str(port)], port, _env(home), tmp_path / "ui.log") as printed:
        token = _stored(home)
        assert token != "x" * 40 and f"?token={token}" in printed
        assert exposed.stat().st_mode & 0o777 == 0o600
    weak = subprocess.run([sys.executable, "-m", "planner", "ui", "--port", str(free_port())], capture_output=True,
                          text=True, env=_env(home, PLANNER_SERVER_TOKEN="short"), timeout=120)
    assert weak.returncode == 2 and "PLANNER_SERVER_TOKEN must be at least 16" in weak.stderr
    assert "Traceback" not in weak.stderr


def _repo(path: Path) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    write_files(path, FILES)
    commit_all(path, "initial")
    return path


def _signed_client(token: str) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(headers={"authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(30, read=300))


async def _error(session: ClientSession, tool: str, **arguments: Any) -> str:
    result = await session.call_tool(tool, arguments)
    assert result.is_error, (tool, result.structured_content)
    text = result.content[0].text
    assert "\n" not in text and "Traceback" not in text
    return text


def _nothing_read(home: Path, repo: Path) -> None:
    """No snapshot of `repo` stored, and no run or bundle recorded for it."""
    assert RepoContextStore(home).latest_path(repo.resolve()) is None
    index = home / "runs" / "index.jsonl"
    lines = index.read_text().splitlines() if index.exists() else []
    assert not [line for line in lines if str(repo.resolve()) in line]


def test_mcp_over_http_needs_the_token_and_reads_only_under_its_roots(home: Path, tmp_path: Path) -> None:
    allowed, outside = tmp_path / "work", tmp_path / "elsewhere"
    inside = _repo(allowed / "shop")
    foreign = _repo(outside / "secret-shop")
    (allowed / "link").symlink_to(foreign)  # under the root by name, outside once resolved
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    # the default roots: the working directory the server was started in
    with serving(["mcp", "--http", "--port", str(port)], port, _env(home), tmp_path / "mcp.log",
                 cwd=allowed) as printed:
        token = _stored(home)
        assert f"http://127.0.0.1:{port}/mcp" in printed and f"Bearer {token}" in printed
        assert f"repositories under {allowed.resolve()} (the working directory)" in printed
        hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                            "clientInfo": {"name": "t", "version": "1"}}}
        accept = {"accept": "application/json, text/event-stream"}
        with httpx2.Client(timeout=30) as raw:
            anonymous = raw.post(url, json=hello, headers=accept)
            assert anonymous.status_code == 401 and "Authorization: Bearer" in anonymous.text
            assert anonymous.headers["www-authenticate"].startswith("Bearer")
            wrong = raw.post(url, json=hello, headers={**accept, "authorization": "Bearer " + "x" * 43})
            assert wrong.status_code == 401
            as_cookie = raw.post(url, json=hello, headers={**accept, "cookie": f"planner-ui-{port}={token}"})
            assert as_cookie.status_code == 401  # only the header opens it

        async def session() -> None:
            signed = _signed_client(token)
            async with signed, streamable_http_client(url, http_client=signed) as streams, \
                    ClientSession(streams[0], streams[1]) as client:
                await client.initialize()
                assert "get_agent_context" in {t.name for t in (await client.list_tools()).tools}
                for repo in (str(foreign), str(allowed / "link"), "/etc", str(allowed / ".." / "elsewhere")):
                    said = await _error(client, "get_agent_context", task_class=VR, repo=repo)
                    assert said.startswith(f"repository {repo}") and "is outside the roots" in said, said
                    assert f"{allowed.resolve()} (the working directory)" in said and "--root DIR" in said
                said = await _error(client, "dispatch", task_class=VR, repo=str(foreign))
                assert "is outside the roots" in said
                assert "resolved: " + str(foreign.resolve()) in await _error(
                    client, "dispatch", task_class=VR, repo=str(allowed / "link"), apply=True)
                context = await client.call_tool("get_agent_context", {"task_class": VR, "repo": "shop"})
                assert not context.is_error, context.content  # relative: against the working directory
                assert (context.structured_content or {})["bundle_id"]

        anyio.run(session)
    _nothing_read(home, foreign)
    assert (foreign / "requirements.txt").read_text() == FILES["requirements.txt"]
    assert git(foreign, "branch", "--list").split() == ["*", "main"]  # the refused apply made no branch
    recorded = [json.loads(line)["repo"] for line in (home / "runs" / "index.jsonl").read_text().splitlines()]
    assert recorded == [str(inside.resolve())]  # the one bundle it built: the allowed repository's


def test_mcp_over_stdio_takes_its_roots_from_the_option_before_the_env(home: Path, tmp_path: Path) -> None:
    chosen, other = tmp_path / "chosen", tmp_path / "other"
    inside, elsewhere = _repo(chosen / "shop"), _repo(other / "shop")
    gathered = subprocess.run([sys.executable, "-m", "planner", "gather", str(elsewhere)], capture_output=True,
                              text=True, env=_env(home), timeout=300)
    assert gathered.returncode == 0, gathered.stderr
    bundle = subprocess.run([sys.executable, "-m", "planner", "bundle", VR, "--repo", str(elsewhere), "--json"],
                            capture_output=True, text=True, env=_env(home), timeout=300)
    assert bundle.returncode == 0, bundle.stderr
    made_by_the_cli = json.loads(bundle.stdout)["id"]
    params = StdioServerParameters(command=sys.executable, args=["-m", "planner", "mcp", "--root", str(chosen)],
                                   env=_env(home, PLANNER_REPO_ROOTS=str(other)), cwd=str(ROOT))

    async def session() -> None:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            said = await _error(client, "get_agent_context", task_class=VR, repo=str(elsewhere))
            assert f"outside the roots this `planner mcp` server may read: {chosen.resolve()} (--root)" in said
            # a bundle the CLI recorded for a repository outside the roots: its files stay out of reach too
            said = await _error(client, "request_may_read", bundle_id=made_by_the_cli, entry="app.py")
            assert f"of repository {elsewhere.resolve()}, outside the roots" in said
            ok = await client.call_tool("get_agent_context", {"task_class": VR, "repo": str(inside)})
            assert not ok.is_error, ok.content

    anyio.run(session)
    notes = home / "runs" / f"{made_by_the_cli}.notes.jsonl"
    assert not notes.exists()  # the refused request was not served, nor noted


def test_a_root_that_is_not_a_directory_is_one_line(home: Path, tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "planner", "mcp", "--root", str(tmp_path / "nope")],
                          capture_output=True, text=True, env=_env(home), timeout=120)
    assert done.returncode == 2 and f"--root: {tmp_path / 'nope'} is not a directory" in done.stderr
    assert "Traceback" not in done.stderr


needs_redis = pytest.mark.skipif(not REDIS, reason="PLANNER_TEST_REDIS_URL not set (.ci/run starts a redis-server)")


def _portfolio(task_class: str, fleet: Path) -> dict[str, Any]:
    env = {**os.environ, "PLANNER_BROKER_URL": broker_url(), "PLANNER_CELERY_VISIBILITY_TIMEOUT": VISIBILITY_S}
    done = subprocess.run([sys.executable, "-m", "planner", "portfolio", "dispatch", task_class, "--repos", str(fleet),
                           "--advisories", ADVISORIES, "--engine", "celery", "--json"], capture_output=True,
                          text=True, env=env, timeout=240)
    assert done.stdout.strip(), done.stderr
    return json.loads(done.stdout)


@needs_redis
def test_a_worker_runs_only_the_classes_and_repositories_it_allows(home: Path, tmp_path: Path) -> None:
    for base in ("mine", "theirs"):
        (tmp_path / base).mkdir()
    mine, theirs = make_fleet(tmp_path / "mine", vulnerable=1), make_fleet(tmp_path / "theirs", vulnerable=1)
    flush()
    # the options win over PLANNER_REPO_ROOTS (the helper sets it to the whole tmp dir)
    worker = Worker(tmp_path / "worker-home", tmp_path / "worker.log", options=["--allow-class", VR, "--root",
                                                                               str(mine)])
    try:
        worker.wait_ready()
        assert f"runs task classes {VR} (--allow-class); repositories under {mine.resolve()} (--root)" in worker.text()
        other_class = _portfolio("yaml-safe-load", mine)
        (row,) = other_class["repositories"]
        assert row["status"] == "failed"
        assert row["error"].startswith(f"refused by this `planner worker`: task class yaml-safe-load is not on its "
                                       f"allowlist ({VR}; --allow-class)")
        other_repo = _portfolio(VR, theirs)
        (row,) = other_repo["repositories"]
        repo = next(theirs.iterdir()).resolve()
        assert row["status"] == "failed" and not row.get("run_id")
        assert f"repository {repo} is outside the roots this `planner worker` may read" in row["error"]
        allowed = _portfolio(VR, mine)  # the same worker runs what it allows
        assert [r["status"] for r in allowed["repositories"]] == ["succeeded"]
    finally:
        worker.stop()
        flush()
    index = worker.home / "runs" / "index.jsonl"
    ran = [json.loads(line)["repo"] for line in index.read_text().splitlines()]
    assert ran == [str(next(mine.iterdir()).resolve())]  # the refused jobs never ran: one run, the allowed one
    assert RepoContextStore(worker.home).latest_path(next(theirs.iterdir()).resolve()) is None
    assert "is outside the roots" in worker.text()  # the operator sees the refusal in the worker's log too


def test_a_worker_refuses_to_start_allowing_a_class_it_does_not_have(home: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "planner", "worker", "--allow-class", "no-such-class"],
                          capture_output=True, text=True, timeout=120,
                          env=_env(home, PLANNER_BROKER_URL="redis://127.0.0.1:9/0"))  # never reached
    assert done.returncode == 2, done.stderr
    assert "--allow-class: no task class no-such-class on this worker's task-class path" in done.stderr
    assert "Traceback" not in done.stderr
