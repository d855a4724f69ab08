"""`planner ui`: serve the read-only web UI over PLANNER_HOME. The web stack is imported only when the command
runs, so `planner --help` and every other command stay as fast as before."""

from __future__ import annotations

import ipaddress
import sys
from typing import Annotated

import typer

from planner.config import Settings


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def ui_command(
    host: Annotated[str, typer.Option(help="Address to bind; anything but loopback shares your runs.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8765,
) -> None:
    """Browse runs, provenance, task classes and learning in a browser (read-only)."""
    import uvicorn

    from planner.ui.app import create_app, warm

    settings = Settings.from_env()
    if not _loopback(host):
        sys.stderr.write(f"warning: binding {host}: anyone who can reach it can read these runs\n")
    # plain writes: a console would wrap the URL at 80 columns
    sys.stderr.write(f"planner ui: http://{host}:{port}/runs  (PLANNER_HOME {settings.home}; Ctrl-C stops)\n")
    app = create_app(settings)
    warm(app)  # templates compiled, the checkpoint reader imported, the runs list loaded: before the first request
    uvicorn.run(app, host=host, port=port, log_level="warning")
