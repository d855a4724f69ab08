"""Who a local HTTP server (the UI, the MCP endpoint) answers: the `Host` it was started under, and a caller
that holds its token.

A page on any web site can make the browser send requests to 127.0.0.1 under its own domain name (DNS
rebinding) and read the answers as same-origin; checking `Host` defeats it, because the attacker's domain
is never a name this server was started under. Allowed: an IP literal that is the bound address (any IP
literal when bound to every interface: a rebinding page cannot make the browser send one), `localhost`
when bound to loopback, and the names the user allows (`--allow-host`, PLANNER_ALLOWED_HOSTS).

The Host check stops a web page; it does not stop another local user or process, which can connect to
127.0.0.1 under the right name. So every request also needs the server's token, as Jupyter's does: a random
one kept in PLANNER_HOME (0700) as `server-token` (0600), made on the first start and reused (or
PLANNER_SERVER_TOKEN), printed with the URL when the server starts.
"""

from __future__ import annotations

import ipaddress
import os
import string
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from pathlib import Path
from typing import Any

from planner.errors import PlannerError

ALLOWED_ENV = "PLANNER_ALLOWED_HOSTS"  # comma-separated host names a server also answers
TOKEN_ENV = "PLANNER_SERVER_TOKEN"  # a token the operator chooses (an env var, not an option: argv shows in `ps`)
TOKEN_FILE = "server-token"  # under PLANNER_HOME
MIN_TOKEN = 16
# URL-unreserved characters only: the token travels in a query string and a header unescaped
TOKEN_CHARS = frozenset(string.ascii_letters + string.digits + "-._~")

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


async def refuse(send: Send, status: int, message: str, headers: Iterable[tuple[bytes, bytes]] = (),
                 content_type: bytes = b"text/plain; charset=utf-8") -> None:
    """Answer an error without reaching the app (the Host check here, the Origin and token checks)."""
    body = message.encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", content_type), (b"content-length", str(len(body)).encode()),
                            (b"cache-control", b"no-store"), *headers]})
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


def valid_token(token: str) -> bool:
    return len(token) >= MIN_TOKEN and set(token) <= TOKEN_CHARS


def server_token(home: Path) -> str:
    """PLANNER_SERVER_TOKEN when set (checked), else the one in PLANNER_HOME/server-token, made on first use."""
    given = os.environ.get(TOKEN_ENV, "").strip()
    if given:
        if not valid_token(given):
            raise PlannerError(f"{TOKEN_ENV} must be at least {MIN_TOKEN} characters of letters, digits, "
                               "'-', '_', '.' or '~' (it goes into a URL and a header as it is)")
        return given
    return _stored_token(home)


def _read_token(path: Path) -> str | None:
    """The stored token; None when missing, damaged, or readable by anyone but this user (then it may have
    leaked, and a new one replaces it)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if info.st_uid != os.getuid() or info.st_mode & 0o077:
            return None
        text = handle.read(4096).decode("ascii", "replace").strip()
    return text if valid_token(text) else None


def _stored_token(home: Path) -> str:
    import secrets

    path = home / TOKEN_FILE
    found = _read_token(path)
    if found:
        return found
    try:
        home.mkdir(mode=0o700, parents=True, exist_ok=True)
        fresh = home / f".{TOKEN_FILE}.{os.getpid()}.{secrets.token_hex(4)}"
        fd = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(secrets.token_urlsafe(32) + "\n")
        try:
            os.link(fresh, path)  # whole or not at all
        except FileExistsError:
            if _read_token(path) is None:  # damaged or exposed: replaced (one a server beside us just made stays)
                os.replace(fresh, path)
        finally:
            fresh.unlink(missing_ok=True)
    except OSError as exc:
        raise PlannerError(f"cannot keep the server token in {path}: {exc.strerror}") from None
    found = _read_token(path)
    if found is None:
        raise PlannerError(f"cannot read the server token back from {path}")
    return found


def header(scope: Scope, name: bytes) -> str:
    """One request header (the last, if sent twice), or ''."""
    found = [value for key, value in scope.get("headers") or [] if key.lower() == name]
    return found[-1].decode("latin-1") if found else ""


def same_secret(given: str, expected: str) -> bool:
    import hmac

    return hmac.compare_digest(given.encode("utf-8", "replace"), expected.encode("utf-8", "replace"))


def bearer_ok(scope: Scope, token: str) -> bool:
    scheme, _, given = header(scope, b"authorization").strip().partition(" ")
    return scheme.lower() == "bearer" and bool(given.strip()) and same_secret(given.strip(), token)


def bearer_required(app: ASGIApp, token: str, hint: str) -> ASGIApp:
    """`app` for callers that send `Authorization: Bearer TOKEN`; any other request gets 401 and `hint`."""

    async def check(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket" and not bearer_ok(scope, token):
            await send({"type": "websocket.close", "code": 1008})
            return
        if scope["type"] == "http" and not bearer_ok(scope, token):
            await refuse(send, 401, hint, [(b"www-authenticate", b'Bearer realm="planner"')])
            return
        await app(scope, receive, send)

    return check
