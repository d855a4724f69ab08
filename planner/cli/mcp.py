"""`planner mcp`: serve the planner to agents over the Model Context Protocol (stdio, or HTTP with --http)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from planner.errors import PlannerError


def mcp_command(
    http: Annotated[bool, typer.Option("--http", help="Serve streamable HTTP at http://HOST:PORT/mcp, not stdio.")]
    = False,
    host: Annotated[str, typer.Option(help="--http: the address to bind (loopback by default).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="--http: the port.")] = 8766,
    allow_host: Annotated[list[str] | None, typer.Option(
        "--allow-host", help="--http: also answer requests for this host name (as `planner ui`).")] = None,
    root: Annotated[list[str] | None, typer.Option(
        "--root", help="A directory whose repositories callers may name (repeatable; else PLANNER_REPO_ROOTS, "
        "else the working directory). Any other `repo` is refused.")] = None,
) -> None:
    """An MCP server for agents (Claude Code, Cursor, Cline, VS Code): bundles, decision surface, runs.
    --http needs a token: every request sends `Authorization: Bearer TOKEN` (printed at start-up)."""
    from planner.roots import RepoRoots

    roots = RepoRoots.choose(root)  # a bad root is refused before the SDK loads
    if not http:
        if allow_host or host != "127.0.0.1" or port != 8766:
            raise PlannerError("--host, --port and --allow-host apply to --http only")
        from planner.mcpserver import server  # the SDK: only when the server starts, never for --help

        server.serve_stdio(roots)
        return
    if not 0 < port < 65536:
        raise PlannerError(f"--port {port} is not a TCP port")
    from planner.config import Settings
    from planner.hostcheck import is_loopback, server_token
    from planner.mcpserver import server

    settings = Settings.from_env()
    # Always a token, so a non-loopback bind needs no extra refusal; there is deliberately no way to turn it off.
    token = server_token(settings.home)
    if not is_loopback(host):
        sys.stderr.write(f"warning: binding {host}: whoever has the token and can reach it can run task classes "
                         "on the allowed roots, and plain HTTP carries the token in clear\n")
    shown = f"[{host}]" if ":" in host else host
    sys.stderr.write(f"planner mcp: http://{shown}:{port}/mcp  (send `Authorization: Bearer {token}`; "
                     f"repositories under {roots.shown()}; Ctrl-C stops)\n")
    server.serve_http(host, port, list(allow_host or []), roots, token)
