"""`planner ui`: serve the read-only web UI over PLANNER_HOME. The web stack is imported only when the command
runs, so `planner --help` and every other command stay as fast as before."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from planner.config import Settings
from planner.hostcheck import is_loopback, server_token


def ui_command(
    host: Annotated[str, typer.Option(help="Address to bind; anything but loopback shares your runs.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8765,
    allow_host: Annotated[list[str] | None, typer.Option(
        "--allow-host", help="Another host name to answer (repeatable; also PLANNER_ALLOWED_HOSTS). Requests "
        "under any other name get 400, which stops DNS-rebinding pages from reading your runs.")] = None,
) -> None:
    """Browse runs, provenance, task classes and learning in a browser (read-only). Open the URL it prints:
    the token in it signs the browser in (PLANNER_HOME/server-token, or PLANNER_SERVER_TOKEN)."""
    from planner.extras import require

    require("ui", "planner ui")
    import uvicorn

    from planner.ui.app import create_app, warm
    from planner.ui.auth import protect, sign_in_url

    settings = Settings.from_env()
    # Always a token, so a non-loopback bind needs no extra refusal; there is deliberately no way to turn it off.
    token = server_token(settings.home)
    if not is_loopback(host):
        sys.stderr.write(f"warning: binding {host}: whoever has the token and can reach it can read these runs, "
                         "and plain HTTP carries the token in clear\n")
    # plain writes: a console would wrap the URL at 80 columns
    sys.stderr.write(f"planner ui: {sign_in_url(host, port, token)}  (PLANNER_HOME {settings.home}; "
                     "Ctrl-C stops)\n")
    app = create_app(settings)
    warm(app)  # templates compiled, the checkpoint reader imported, the runs list loaded: before the first request
    uvicorn.run(protect(app, host, port, allow_host or (), token), host=host, port=port, log_level="warning")
