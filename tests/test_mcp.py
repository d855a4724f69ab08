"""`planner mcp` driven by the MCP SDK's own client: over stdio (every tool on a real git repository, the
results checked against the CLI and the provenance) and over streamable HTTP (a real server process, and
the Host, Origin and token checks)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from conftest import free_port, planner_server
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from pipcompile_tree import tree

from tests.conftest import commit_all, git, write_files

ROOT = Path(__file__).resolve().parents[1]
ADVISORIES = str(ROOT / "examples" / "advisories")
FILES = {
    "requirements.txt": "requests==2.30.0\n",
    "app/net.py": "import requests\n\n\ndef fetch(u):\n    return requests.get(u)\n",
}
TOOLS = {"list_task_classes", "get_agent_context", "request_may_read", "query_decision_surface",
         "search_prior_decisions", "dispatch", "get_workflow_context", "record_workflow_decision"}
VR = "vulnerability-remediation"


TOKEN = "test-token-for-planner-mcp-http"


def _env(home: Path, daemon: Path | None = None) -> dict[str, str]:
    """The server runs in the checkout; the repositories it may read are the test's tmp dir (make_repo's)."""
    where = {"PLANNER_DAEMON": "", "PLANNER_DAEMON_DIR": str(daemon)} if daemon else {"PLANNER_DAEMON": "off"}
    env = {**os.environ, "PLANNER_HOME": str(home), "PLANNER_ADVISORIES": ADVISORIES, "PYTHONPATH": str(ROOT),
           "PLANNER_REPO_ROOTS": str(home.parent), **where}
    env.pop("PLANNER_SERVER_TOKEN", None)
    return env


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "planner", *args], capture_output=True, text=True, env=_env(home),
                          timeout=300, cwd=ROOT)


@asynccontextmanager
async def _stdio(home: Path, daemon: Path | None = None) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "planner", "mcp"], env=_env(home, daemon),
                                   cwd=ROOT)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


async def _call(session: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, (tool, result.content)
    assert result.content and result.content[0].text  # the short text beside the structured content
    return result.structured_content or {}


async def _error(session: ClientSession, tool: str, **arguments: Any) -> str:
    result = await session.call_tool(tool, arguments)
    assert result.is_error, (tool, result.structured_content)
    text = result.content[0].text
    assert "\n" not in text and "Traceback" not in text
    return text


def test_every_tool_over_stdio(make_repo: Callable[..., Path], home: Path) -> None:
    repo = make_repo(FILES)
    assert _cli(home, "gather", str(repo)).returncode == 0
    anyio.run(_every_tool, repo, home)


async def _every_tool(repo: Path, home: Path) -> None:
    async with _stdio(home) as session:
        assert {t.name for t in (await session.list_tools()).tools} == TOOLS
        classes = {c["name"]: c for c in (await _call(session, "list_task_classes"))["task_classes"]}
        assert "package" in classes[VR]["inputs"] and classes[VR]["budget"]["max_tokens"] > 0
        assert classes[VR]["recipes"] and classes[VR]["has_recipes"] is True
        assert isinstance(classes[VR]["has_policy"], bool) and isinstance(classes[VR]["has_flow"], bool)

        context = await _call(session, "get_agent_context", task_class=VR, repo=str(repo))
        assert (context["gathered"], context["was"]) == (False, "fresh")  # gathered by the CLI with these advisories
        shown = json.loads(_cli(home, "bundle", VR, "--repo", str(repo), "--json").stdout)
        assert context["context_markdown"] == shown["text"]  # exactly what `planner bundle --text` renders
        assert context["tokens_estimated"] == shown["totals"]["tokens"]
        record = json.loads(_cli(home, "provenance", context["bundle_id"], "--json").stdout)
        assert record["kind"] == "bundle" and record["bundle_sha256"] == shown["bundle_sha256"]

        wide = await _call(session, "get_agent_context", task_class=VR, repo=str(repo), budget_tokens=10**6)
        assert wide["budget"]["max_tokens"] == shown["totals"]["max_tokens"]  # never widened
        small = shown["totals"]["tokens"] + 50
        narrow = await _call(session, "get_agent_context", task_class=VR, repo=str(repo), budget_tokens=small)
        assert narrow["budget"]["max_tokens"] == small and narrow["tokens_estimated"] <= small
        narrowed = json.loads(_cli(home, "provenance", narrow["bundle_id"], "--json").stdout)
        assert narrowed["tccm"]["sha256"] == record["tccm"]["sha256"]  # the file's hash; the cut is in totals
        assert narrowed["totals"]["max_tokens"] == small
        assert "budget" in await _error(session, "get_agent_context", task_class=VR, repo=str(repo), budget_tokens=5)

        listed = [e for e in context["entries"] if e["band"] == "may_read" and e["status"] in ("listed", "deferred")]
        assert listed, context["entries"]
        loaded = await _call(session, "request_may_read", bundle_id=context["bundle_id"], entry=listed[0]["id"])
        assert loaded["outcome"] == "loaded" and loaded["text"]
        after = json.loads(_cli(home, "provenance", context["bundle_id"], "--json").stdout)
        assert [(r["entry"], r["by"], r["outcome"]) for r in after["requests"]] == [(listed[0]["id"], "mcp", "loaded")]
        entry = next(e for e in after["entries"] if e["id"] == listed[0]["id"])
        assert entry["status"] == "requested" and entry["tokens"] == loaded["tokens"] > 0
        assert after["totals"]["tokens"] == shown["totals"]["tokens"] + loaded["tokens"]
        again = await _call(session, "request_may_read", bundle_id=context["bundle_id"], entry=listed[0]["id"])
        assert again["outcome"] == "not requestable (requested)"  # earlier requests count: loaded once
        unknown = await _call(session, "request_may_read", bundle_id=context["bundle_id"], entry="no/such/file")
        assert unknown["outcome"] == "unknown entry"

        surface = await _call(session, "query_decision_surface", task_class=VR)
        cli_surface = json.loads(_cli(home, "task-classes", "surface", VR, "--json").stdout)
        assert {k: surface[k] for k in cli_surface} == cli_surface

        await _dispatch_and_follow(session, repo, home)
        await _errors_as_the_cli_says(session, repo, home)


async def _dispatch_and_follow(session: ClientSession, repo: Path, home: Path) -> None:
    progress: list[str] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(message or "")

    result = await session.call_tool("dispatch", {"task_class": VR, "repo": str(repo)}, progress_callback=on_progress)
    assert not result.is_error, result.content
    run = result.structured_content or {}
    assert run["status"] == "succeeded" and "requests==2.31.0" in run["patch"]
    assert run["report_markdown"].startswith(f"# {VR}") and run["items"][0]["status"] == "succeeded"
    assert any(line.startswith("run ") for line in progress) and len(progress) > 3
    assert (repo / "requirements.txt").read_text() == FILES["requirements.txt"]  # no apply: the tree is untouched

    flow = await _call(session, "get_workflow_context", workflow_id=run["run_id"])
    assert flow["status"] == "succeeded" and flow["items"] and flow["chain"] and flow["report_markdown"]
    assert any("apply" in step for step in flow["next_steps"])

    noted = await _call(session, "record_workflow_decision", workflow_id=run["run_id"], decision_type="approval",
                        decision="ship the requests upgrade", rationale="fixes PYSEC-2023-74",
                        affected_nodes=["execute"])
    assert noted["run_id"] == run["run_id"]
    record = json.loads(_cli(home, "provenance", run["run_id"], "--json").stdout)
    assert record["decisions"][0]["decision"] == "ship the requests upgrade"
    assert "decision approval on execute: ship the requests upgrade" in _cli(home, "provenance", run["run_id"]).stdout
    assert "ship the requests upgrade" in _cli(home, "provenance", run["run_id"], "--html").stdout  # the run page

    found = (await _call(session, "search_prior_decisions", query="requests upgrade"))["results"]
    kinds = {(hit["kind"], hit["run_id"]) for hit in found}
    assert ("decision", run["run_id"]) in kinds and ("solved_example", run["run_id"]) in kinds
    assert (await _call(session, "search_prior_decisions", query="requests", task_class="base-image-bump")
            )["results"] == []

    uris = {str(r.uri) for r in (await session.list_resources()).resources}
    assert {f"tccm://{VR}", f"run://{run['run_id']}/report", f"run://{run['run_id']}/patch"} <= uris
    tccm = (await session.read_resource(f"tccm://{VR}")).contents[0]
    assert f"task_class: {VR}" in tccm.text
    patch = (await session.read_resource(f"run://{run['run_id']}/patch")).contents[0]
    assert patch.text.strip() == run["patch"].strip()

    applied = await _call(session, "dispatch", task_class=VR, repo=str(repo), apply=True)
    assert applied["status"] == "succeeded" and applied["branch"] == f"planner/{VR}/{applied['run_id']}"


async def _errors_as_the_cli_says(session: ClientSession, repo: Path, home: Path) -> None:
    cases = [
        (("get_agent_context", {"task_class": "no-such-class", "repo": str(repo)}),
         ("bundle", "no-such-class", "--repo", str(repo))),
        (("get_agent_context", {"task_class": VR, "repo": str(repo / "gone")}),
         ("bundle", VR, "--repo", str(repo / "gone"))),
        (("dispatch", {"task_class": VR, "repo": str(repo), "inputs": {"pakage": "x"}}),
         ("dispatch", VR, "--repo", str(repo), "--input", "pakage=x")),
        (("query_decision_surface", {"task_class": "nope"}), ("task-classes", "surface", "nope")),
    ]
    for (tool, arguments), argv in cases:
        said = await _error(session, tool, **arguments)
        assert f"error: {said}\n" in _cli(home, *argv).stderr, (tool, said)
    write_files(repo, {"app/net.py": FILES["app/net.py"] + "# work in progress\n"})
    assert "uncommitted changes" in await _error(session, "dispatch", task_class=VR, repo=str(repo), apply=True)
    assert "does not exist" in await _error(session, "get_workflow_context", workflow_id="nope")
    assert (await session.list_tools()).tools  # still serving


def test_bundle_builds_and_unknown_ids(make_repo: Callable[..., Path], home: Path) -> None:
    repo = make_repo(FILES)

    async def session() -> None:
        async with _stdio(home) as client:
            context = await _call(client, "get_agent_context", task_class=VR, repo=str(repo),
                                  inputs={"package": "requests"}, gather=False)
            other = await client.call_tool("get_agent_context", {"task_class": VR, "repo": str(repo), "gather": False})
            assert context["mode"] == "bootstrap" and "planner gather" in other.content[0].text
            assert context["gathered"] is False and context["repocontext"]["freshness"] == "none"
            build = await _call(client, "get_workflow_context", workflow_id=context["bundle_id"])
            assert build["kind"] == "bundle" and build["next_steps"][0].startswith("dispatch it")
            # the shortest prefix that names this bundle and not the other (both may be made in one second)
            mine, theirs = context["bundle_id"], (other.structured_content or {}).get("bundle_id") or ""
            unique = next(i for i in range(len(mine)) if i >= len(theirs) or mine[i] != theirs[i]) + 1
            noted = await _call(client, "record_workflow_decision", workflow_id=mine[:unique],
                                decision_type="scope", decision="only requests", rationale="the rest can wait")
            assert noted["run_id"] == context["bundle_id"]  # a unique prefix names it
            assert "does not exist" in await _error(client, "request_may_read", bundle_id="nope", entry="x")
            assert "does not exist" in await _error(client, "record_workflow_decision", workflow_id="nope",
                                                    decision_type="a", decision="b", rationale="c")
            assert "needs a decision_type" in await _error(client, "record_workflow_decision",
                                                           workflow_id=context["bundle_id"], decision_type=" ",
                                                           decision="b", rationale="c")
            assert "unknown task class" in await _error(client, "search_prior_decisions", query="x", task_class="nope")
            assert (await client.call_tool("search_prior_decisions", {"query": "x", "limit": 0})).is_error
            with pytest.raises(Exception, match="does not exist"):
                await client.read_resource("run://nope/report")
            with pytest.raises(Exception, match="unknown task class"):
                await client.read_resource("tccm://nope")

    anyio.run(session)


def test_served_by_a_running_daemon(make_repo: Callable[..., Path], home: Path, tmp_path: Path) -> None:
    """With `planner daemon` running, `planner mcp` is handed to it (the SDK already imported): same answers."""
    daemon, repo = tmp_path / "daemon", make_repo(FILES)
    started = subprocess.run([sys.executable, "-m", "planner", "daemon", "start", "--json"], capture_output=True,
                             text=True, env=_env(home, daemon), cwd=ROOT, timeout=120)
    assert started.returncode == 0, started.stderr

    async def session() -> None:
        async with _stdio(home, daemon) as client:
            assert {t.name for t in (await client.list_tools()).tools} == TOOLS
            context = await _call(client, "get_agent_context", task_class=VR, repo=str(repo), gather=False)
            assert context["mode"] == "bootstrap" and context["bundle_id"]
            assert "does not exist" in await _error(client, "get_workflow_context", workflow_id="nope")

    try:
        anyio.run(session)
        served = json.loads(subprocess.run([sys.executable, "-m", "planner", "daemon", "status", "--json"],
                                           capture_output=True, text=True, env=_env(home, daemon), cwd=ROOT,
                                           timeout=60).stdout)
        assert served["commands"] >= 1, served
    finally:
        subprocess.run([sys.executable, "-m", "planner", "daemon", "stop"], env=_env(home, daemon), cwd=ROOT,
                       capture_output=True, timeout=60)


HINTS = ("read_only_hint", "destructive_hint", "idempotent_hint", "open_world_hint")


def test_every_tool_declares_its_output_schema_and_hints(home: Path) -> None:
    async def session() -> None:
        async with _stdio(home) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == TOOLS
            for name, tool in tools.items():
                assert tool.annotations is not None, name
                assert all(isinstance(getattr(tool.annotations, h), bool) for h in HINTS), (name, tool.annotations)
                schema = tool.output_schema or {}
                assert schema.get("type") == "object" and schema.get("properties"), name
            hints = {n: tuple(getattr(t.annotations, h) for h in HINTS) for n, t in tools.items()}
            assert hints["list_task_classes"] == (True, False, True, False)
            assert hints["get_agent_context"] == (False, False, True, False)  # it gathers into PLANNER_HOME
            assert hints["dispatch"] == (False, True, False, True)  # apply commits; a model is a provider's API
            assert hints["record_workflow_decision"][0] is False and hints["get_workflow_context"][0] is True
            context = tools["get_agent_context"].output_schema or {}
            assert {"gathered", "was", "advisories", "overview", "context_markdown", "entries"} <= set(
                context["properties"])
            assert {"gathered", "was", "bundle_id"} <= set(context["required"])
            assert {"run_id", "status", "patch", "items"} <= set((tools["dispatch"].output_schema or {})["properties"])

    anyio.run(session)


def _env_without_advisories(home: Path) -> dict[str, str]:
    env = _env(home)
    env.pop("PLANNER_ADVISORIES")
    return env


def test_get_agent_context_gathers_with_the_servers_advisories(make_repo: Callable[..., Path], home: Path) -> None:
    repo, other = make_repo(FILES), make_repo(FILES)
    # `other` was gathered without any advisory source: "fresh", but its vulnerabilities are missing
    plain = subprocess.run([sys.executable, "-m", "planner", "gather", str(other)], capture_output=True, text=True,
                           env=_env_without_advisories(home), timeout=300, cwd=ROOT)
    assert plain.returncode == 0, plain.stderr

    async def session() -> str:
        async with _stdio(home) as client:
            result = await client.call_tool("get_agent_context", {"task_class": VR, "repo": str(repo)})
            assert not result.is_error, result.content
            context = result.structured_content or {}
            assert (context["gathered"], context["was"], context["mode"]) == (True, "none", "repocontext")
            assert "gathered now: it was none" in result.content[0].text
            assert context["advisories"]["kind"] == "paths" and context["advisories"]["records"] == {"PyPI": 2}
            assert "PYSEC-2023-74" in context["context_markdown"]  # requests 2.30.0's advisory, from the server's
            assert context["repocontext"]["freshness"] == "fresh"
            again = await _call(client, "get_agent_context", task_class=VR, repo=str(repo))
            assert (again["gathered"], again["was"]) == (False, "fresh")
            assert again["context_markdown"] == context["context_markdown"]

            refreshed = await _call(client, "get_agent_context", task_class=VR, repo=str(other))
            assert (refreshed["gathered"], refreshed["was"]) == (True, "other-advisories")
            assert "PYSEC-2023-74" in refreshed["context_markdown"]

            write_files(repo, {"app/more.py": "import requests\n"})
            commit_all(repo, "more")
            moved = await _call(client, "get_agent_context", task_class=VR, repo=str(repo))
            assert (moved["gathered"], moved["was"]) == (True, "stale")
            assert moved["repocontext"]["commit"] == git(repo, "rev-parse", "HEAD").strip()
            assert (repo / "requirements.txt").read_text() == FILES["requirements.txt"]  # nothing written there
            assert git(repo, "status", "--porcelain") == ""
            return str(moved["bundle_id"])

    bundle_id = anyio.run(session)
    record = json.loads(_cli(home, "provenance", bundle_id, "--json").stdout)  # recorded as any bundle
    assert record["kind"] == "bundle" and record["repocontext"]["freshness"] == "fresh"


def test_unscoped_remediation_on_a_gathered_repo_gives_the_overview(make_repo: Callable[..., Path],
                                                                   home: Path) -> None:
    """~800 packages' slices do not fit without `package`: the agent gets the per-package overview
    `planner bundle` prints, not a budget error."""
    repo = make_repo({**tree(), **FILES})
    assert _cli(home, "gather", str(repo)).returncode == 0

    async def session() -> dict[str, Any]:
        async with _stdio(home) as client:
            result = await client.call_tool("get_agent_context", {"task_class": VR, "repo": str(repo)})
            assert not result.is_error, result.content
            assert "one line per candidate item" in result.content[0].text
            return result.structured_content or {}

    context = anyio.run(session)
    shown = json.loads(_cli(home, "bundle", VR, "--repo", str(repo), "--json").stdout)
    assert shown["overview"] and context["overview"] == shown["overview"]
    assert context["overview_note"] == shown["overview_note"]
    [requests] = [line for line in context["overview"] if line.startswith("requests (PyPI)")]
    assert requests.endswith("vulnerable: PYSEC-2023-74"), requests
    assert any(e["status"] == "per_item" for e in context["entries"])
    assert context["tokens_estimated"] <= context["budget"]["max_tokens"]
    assert (context["gathered"], context["was"]) == (False, "fresh")


@pytest.fixture
def http_server(home: Path) -> Any:
    port = free_port()
    env = {**_env(home), "PLANNER_SERVER_TOKEN": TOKEN}  # an operator-chosen token (test_server_auth: the kept one)
    with planner_server(["mcp", "--http", "--port", str(port), "--allow-host", "planner.test"], port, env,
                        cwd=ROOT):
        yield port


def test_streamable_http_serves_the_tools_and_checks_host_and_origin(http_server: int) -> None:
    url = f"http://127.0.0.1:{http_server}/mcp"

    async def session() -> None:
        signed = httpx2.AsyncClient(headers={"authorization": f"Bearer {TOKEN}"},
                                    timeout=httpx2.Timeout(30, read=300))
        async with signed, streamable_http_client(url, http_client=signed) as streams, \
                ClientSession(streams[0], streams[1]) as client:
            await client.initialize()
            assert {t.name for t in (await client.list_tools()).tools} == TOOLS
            classes = (await client.call_tool("list_task_classes", {})).structured_content or {}
            assert VR in {c["name"] for c in classes["task_classes"]}

    anyio.run(session)
    hello = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    headers = {"accept": "application/json, text/event-stream", "authorization": f"Bearer {TOKEN}"}
    refused = httpx.post(url, json=hello, headers={**headers, "host": "evil.example"})
    assert refused.status_code == 400 and "invalid Host header" in refused.text
    cross = httpx.post(url, json=hello, headers={**headers, "origin": "http://evil.example"})
    assert cross.status_code == 403
    named = httpx.post(url, json=hello, headers={**headers, "host": f"planner.test:{http_server}"})
    # a name allowed with --allow-host, and the server's own origin, reach the MCP endpoint (which answers
    # a ping outside a session in its own way)
    assert named.status_code != 401 and "invalid Host header" not in named.text and "Missing session" in named.text
    same = httpx.post(url, json=hello, headers={**headers, "origin": f"http://localhost:{http_server}"})
    assert same.status_code not in (401, 403) and "Missing session" in same.text
    anonymous = httpx.post(url, json=hello, headers={"accept": headers["accept"]})
    assert anonymous.status_code == 401 and "Authorization: Bearer" in anonymous.text


def test_transport_options_need_http(home: Path) -> None:
    done = _cli(home, "mcp", "--port", "9999")
    assert done.returncode == 2 and "apply to --http only" in done.stderr
