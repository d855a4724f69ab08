"""The MCP server: the tools and resources on the SDK's MCPServer, over stdio or streamable HTTP.

Start-up imports the SDK and these small modules only; the planner's heavy parts (the graph, LangChain,
the probes) are imported by the tool that needs them, when it is called.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import Resource, Tool

from planner.mcpserver import resources, tools
from planner.roots import RepoRoots

INSTRUCTIONS = """\
The tccm-planner: budgeted, provenance-logged context for code-maintenance tasks.
Start with list_task_classes, then get_agent_context(task_class, repo) for the context of a task (it gathers
the repository first when its RepoContext is missing or stale); ask for a listed may_read entry with
request_may_read(bundle_id, entry). query_decision_surface says what a run may
do. dispatch runs a task class and returns a patch and report; get_workflow_context and
record_workflow_decision follow and annotate a run; search_prior_decisions finds earlier work."""


class PlannerMCP(MCPServer):
    warming: threading.Thread | None = None

    async def list_tools(self) -> list[Tool]:
        """The tools; the first listing also starts warming what the tools import (see warm)."""
        found = await super().list_tools()
        if self.warming is None:
            self.warming = threading.Thread(target=warm, name="planner-mcp-warm", daemon=True)
            self.warming.start()
        return found

    async def list_resources(self) -> list[Resource]:
        """The SDK lists fixed resources; ours change as task classes and runs come and go."""
        import anyio

        return [*await super().list_resources(), *await anyio.to_thread.run_sync(resources.listed)]


def warm(delay: float = 0.2) -> None:
    """Import, in the background, what the first tool calls would otherwise wait for (~1-2 s: each class's
    subgraph module for its recipes, the graph stack for dispatch), once the host has its tool list: start-up
    stays light, and an agent's first call does not pay it. A tool called meanwhile waits on the same
    imports, never sees half of one (Python's import locks)."""
    time.sleep(delay)  # let the list_tools answer go out first
    try:
        from planner import service
        from planner.config import Settings
        from planner.mcpserver.views import recipes

        registry = service.registry(Settings.from_env())
        for name in registry.names():
            if not registry.errors_for(name):
                recipes(registry.get(name))
        import planner.run.dispatch  # for dispatch and get_workflow_context
        import planner.run.graph  # noqa: F401 - the graph stack (dispatch imports it only for a run with work)
    except Exception:  # noqa: BLE001 - warming only: the tool that needs it reports the error itself
        return


def build() -> PlannerMCP:
    from importlib.metadata import PackageNotFoundError, version

    try:
        own = version("tccm-planner")
    except PackageNotFoundError:  # run from a checkout that was never installed
        own = "0+checkout"
    server = PlannerMCP("planner", version=own, instructions=INSTRUCTIONS, log_level="WARNING")
    for tool, hints in tools.TOOLS:
        server.add_tool(tool, annotations=hints)
    server.resource("tccm://{name}", name="task class", mime_type="application/yaml",
                    description="A task class's TCCM YAML")(resources.task_class_yaml)
    for what, (_, mime) in resources.RUN_FILES.items():
        server.resource(f"run://{{run_id}}/{what}", name=f"run {what}", mime_type=mime,
                        description=f"A run's {what}")(_run_reader(what))
    return server


def _run_reader(what: str) -> Callable[[str], str]:
    def read(run_id: str) -> str:
        return resources.run_file(run_id, what)

    read.__name__ = f"run_{what}"
    return read


def serve_stdio(roots: RepoRoots) -> None:
    tools.confine_to(roots)
    build().run("stdio")


TOKEN_HINT = ("missing or wrong token: send `Authorization: Bearer TOKEN` with the token `planner mcp --http` "
              "printed when it started (also in server-token in its PLANNER_HOME, or its PLANNER_SERVER_TOKEN)\n")


def http_app(host: str, allow_hosts: list[str], token: str) -> Any:
    """The streamable HTTP app at /mcp as served: the Host check (planner.hostcheck, as `planner ui`), then the
    Origin check (a web page cannot reach it through DNS rebinding or a cross-site request), then the
    token (another local user or process cannot either)."""
    from planner.hostcheck import HostPolicy, bearer_required, guarded
    from planner.mcpserver.origin import origin_checked

    policy = HostPolicy(host, allow_hosts)
    # The SDK's own Host check is off: ours is the one policy (shared with `planner ui`, --allow-host and
    # PLANNER_ALLOWED_HOSTS included), and a second list would refuse names the user allowed.
    app = build().streamable_http_app(host=host, transport_security=TransportSecuritySettings(
        enable_dns_rebinding_protection=False))
    return guarded(origin_checked(bearer_required(app, token, TOKEN_HINT), policy), policy)


def serve_http(host: str, port: int, allow_hosts: list[str], roots: RepoRoots, token: str) -> None:
    import uvicorn

    tools.confine_to(roots)
    config = uvicorn.Config(http_app(host, allow_hosts, token), host=host, port=port, log_level="warning")
    uvicorn.Server(config).run()
