"""Refuse browser requests sent from another site's page to the local MCP endpoint.

The Host check stops DNS rebinding; a page on another site can still send requests to 127.0.0.1 under
the right Host, and a browser names that page in `Origin`. A request with an Origin whose host this
server does not answer to (the same HostPolicy) is refused with 403; agents send no Origin at all.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from planner.hostcheck import ASGIApp, HostPolicy, Receive, Scope, Send, refuse


def origin_checked(app: ASGIApp, policy: HostPolicy) -> ASGIApp:
    async def check(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            origin = dict(scope.get("headers") or []).get(b"origin", b"").decode("latin-1")
            if origin and not policy.allows(urlsplit(origin).netloc or "-"):
                await refuse(send, 403, "cross-origin request refused: this server answers only its own origins\n")
                return
        await app(scope, receive, send)

    return check
