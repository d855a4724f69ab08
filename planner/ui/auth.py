"""Who `planner ui` answers: a browser signed in with the server's token, or a script that sends it.

Signing in is opening the URL the server printed (`http://127.0.0.1:8765/?token=TOKEN`): the answer sets an
HttpOnly, SameSite=Strict cookie and redirects to the same page without the token, so the token never stays
in the address bar, the history or a Referer. The cookie holds an HMAC of the token, not the token: it opens
this UI only, never the MCP endpoint that takes the same token. A script may send `Authorization: Bearer
TOKEN` instead. Anything else gets 401 (403 for a wrong token) with a short page saying how to get in.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterable
from http.cookies import SimpleCookie
from urllib.parse import parse_qsl, quote, urlencode

from planner import hostcheck
from planner.hostcheck import ASGIApp, HostPolicy, Receive, Scope, Send

HOW_TO = ("This planner ui needs its token: open the address `planner ui` printed when it started "
          "(http://HOST:PORT/?token=…). The token is also in the file server-token in the PLANNER_HOME it "
          "serves, or is the PLANNER_SERVER_TOKEN it was started with.")
WRONG = "That token is not this server's. " + HOW_TO.split(": ", 1)[1]


def cookie_name(port: int) -> str:
    # per port: cookies ignore ports, and two UIs over two homes on one host hold two tokens
    return f"planner-ui-{port}"


def cookie_value(token: str) -> str:
    return hmac.new(token.encode(), b"planner ui session", hashlib.sha256).hexdigest()


def _cookie_ok(scope: Scope, name: str, expected: str) -> bool:
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(hostcheck.header(scope, b"cookie"))
    except Exception:  # noqa: BLE001 - a malformed Cookie header is no cookie
        return False
    morsel = jar.get(name)
    return morsel is not None and hostcheck.same_secret(morsel.value, expected)


def _without_token(scope: Scope) -> str:
    """The requested path and query, the token dropped: where a sign-in redirects to."""
    path = "/" + str(scope.get("path") or "/").lstrip("/")  # never `//host`: that would leave this server
    rest = [(k, v) for k, v in parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
            if k != "token"]
    return quote(path) + (f"?{urlencode(rest)}" if rest else "")


def _given_token(scope: Scope) -> str | None:
    pairs = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
    found = [value for key, value in pairs if key == "token"]
    return found[-1] if found else None


async def _signed_in(send: Send, location: str, name: str, value: str) -> None:
    cookie = f"{name}={value}; Path=/; HttpOnly; SameSite=Strict"
    await send({"type": "http.response.start", "status": 303,
                "headers": [(b"location", location.encode("latin-1")), (b"set-cookie", cookie.encode("latin-1")),
                            (b"cache-control", b"no-store"), (b"referrer-policy", b"no-referrer"),
                            (b"content-length", b"0")]})
    await send({"type": "http.response.body", "body": b""})


async def _refused(scope: Scope, send: Send, status: int, message: str) -> None:
    headers: Iterable[tuple[bytes, bytes]] = [(b"www-authenticate", b'Bearer realm="planner ui"')]
    if str(scope.get("path", "")).startswith("/api/"):
        await hostcheck.refuse(send, status, json.dumps({"error": message}), headers, b"application/json")
        return
    from planner.ui.render import render

    page = render("error.html", title="Sign in with the token", message=message)
    await hostcheck.refuse(send, status, page, headers, b"text/html; charset=utf-8")


def signed_in(app: ASGIApp, token: str, port: int) -> ASGIApp:
    """`app` for browsers holding the sign-in cookie and for Bearer callers; `?token=` signs a browser in."""
    name, value = cookie_name(port), cookie_value(token)

    async def gate(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await app(scope, receive, send)  # lifespan
            return
        allowed = hostcheck.bearer_ok(scope, token) or _cookie_ok(scope, name, value)
        if scope["type"] == "websocket":
            if not allowed:
                await send({"type": "websocket.close", "code": 1008})
                return
            await app(scope, receive, send)
            return
        given = _given_token(scope)
        if given is not None:
            if hostcheck.same_secret(given, token):
                await _signed_in(send, _without_token(scope), name, value)
            else:
                await _refused(scope, send, 403, WRONG)
            return
        if not allowed:
            await _refused(scope, send, 401, HOW_TO)
            return
        await app(scope, receive, send)

    return gate


def protect(app: ASGIApp, host: str, port: int, allow_hosts: Iterable[str], token: str) -> ASGIApp:
    """`app` as `planner ui` serves it: the Host check first (a rebinding page gets 400 whatever it sends),
    then the token."""
    return hostcheck.guarded(signed_in(app, token, port), HostPolicy(host, allow_hosts))


def sign_in_url(host: str, port: int, token: str) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/?token={token}"
