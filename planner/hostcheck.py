"""Which `Host` headers a local HTTP server (the UI, the MCP endpoint) answers.

A page on any web site can make the browser send requests to 127.0.0.1 under its own domain name (DNS
rebinding) and read the answers as same-origin; checking `Host` defeats it, because the attacker's domain
is never a name this server was started under. Allowed: an IP literal that is the bound address (any IP
literal when bound to every interface: a rebinding page cannot make the browser send one), `localhost`
when bound to loopback, and the names the user allows (`--allow-host`, PLANNER_ALLOWED_HOSTS).
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any

ALLOWED_ENV = "PLANNER_ALLOWED_HOSTS"  # comma-separated host names a server also answers

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text.strip("[]"))
    except ValueError:
        return None


def is_loopback(host: str) -> bool:
    address = _ip(host)
    return address.is_loopback if address is not None else host == "localhost"


def host_name(header: str) -> str:
    """`Host` without its port, lower-cased: `[::1]:8765` → `::1`, `Example.COM:80` → `example.com`."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:].partition("]")[0]
    return header.rpartition(":")[0] if header.count(":") == 1 else header


class HostPolicy:
    def __init__(self, bound: str, extra: Iterable[str] = ()) -> None:
        self.bound = bound
        self.names = {name.strip().lower() for name in extra if name.strip()}
        self.names |= {n.strip().lower() for n in os.environ.get(ALLOWED_ENV, "").split(",") if n.strip()}
        if is_loopback(bound):
            self.names.add("localhost")
        address = _ip(bound)
        self.any_ip = address is not None and address.is_unspecified
        self.address = address

    def allows(self, header: str | None) -> bool:
        if not header:
            return False
        name = host_name(header)
        if name in self.names:
            return True
        address = _ip(name)
        if address is None:
            return False
        if self.any_ip or address == self.address:
            return True
        return address.is_loopback and self.address is not None and self.address.is_loopback


async def refuse(send: Send, status: int, message: str) -> None:
    """Answer a plain-text error without reaching the app (the Host check here, the Origin check of MCP)."""
    body = message.encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def guarded(app: ASGIApp, policy: HostPolicy) -> ASGIApp:
    """`app` behind the Host check: a request under another name gets 400 and never reaches it."""

    async def guard(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            host = dict(scope.get("headers") or []).get(b"host", b"").decode("latin-1")
            if not policy.allows(host):
                if scope["type"] == "websocket":
                    await send({"type": "websocket.close", "code": 1008})
                else:
                    await refuse(send, 400, "invalid Host header: this server answers only the names it was "
                                            "started under\n")
                return
        await app(scope, receive, send)

    return guard
