"""`planner ui`: serve the read-only web UI over PLANNER_HOME. The web stack is imported only when the command
runs, so `planner --help` and every other command stay as fast as before."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from planner.config import Settings
from planner.hostcheck import HostPolicy, guarded, is_loopback


def ui_command(
    host: Annotated[str, typer.Option(help="Address to bind; anything but loopback shares your runs.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8765,
    allow_host: Annotated[list[str] | None, typer.Option(
        "--allow-host", help="Another host name to answer (repeatable; also PLANNER_ALLOWED_HOSTS). Requests "
        "under any other name get 400, which stops DNS-rebinding pages from reading your runs.")] = None,
) -> None:
    """Browse runs, provenance, task classes and learning in a browser (read-only)."""
    from planner.extras import require

    require("ui", "planner ui")
    import uvicorn

    from planner.ui.app import create_app, warm

    settings = Settings.from_env()
    if not is_loopback(host):
        sys.stderr.write(f"warning: binding {host}: anyone who can reach it can read these runs\n")
    # plain writes: a console would wrap the URL at 80 columns
    sys.stderr.write(f"planner ui: http://{host}:{port}/runs  (PLANNER_HOME {settings.home}; Ctrl-C stops)\n")
    app = create_app(settings)
    warm(app)  # templates compiled, the checkpoint reader imported, the runs list loaded: before the first request
    uvicorn.run(guarded(app, HostPolicy(host, allow_host or ())), host=host, port=port, log_level="warning")
