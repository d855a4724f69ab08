"""`planner mcp`: serve the planner to agents over the Model Context Protocol (stdio, or HTTP with --http)."""

from __future__ import annotations

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
) -> None:
    """An MCP server for agents (Claude Code, Cursor, Cline, VS Code): bundles, decision surface, runs."""
    from planner.mcpserver import server  # the SDK: only when the server starts, never for --help

    if not http:
        if allow_host or host != "127.0.0.1" or port != 8766:
            raise PlannerError("--host, --port and --allow-host apply to --http only")
        server.serve_stdio()
        return
    if not 0 < port < 65536:
        raise PlannerError(f"--port {port} is not a TCP port")
    server.serve_http(host, port, list(allow_host or []))
