"""The egress proxy of a network step: registry hosts only, never loopback, private or metadata addresses.

A step that declares network (`--regenerate`'s lock tools) runs in a network namespace of its own, with no
route out; its only way out is this proxy, which the planner runs (outside the sandbox) for the step's
lifetime on a Unix socket bound into the sandbox (planner/egress_inside.py carries the step's connections to
it). The proxy takes `CONNECT host:port` (HTTPS) and `GET`/`HEAD http://host/…` (one request a connection)
and lets one through only when

- the host is a public registry of a supported ecosystem (REGISTRY_HOSTS) on port 443 or 80, or one the
  operator lists in PLANNER_REGISTRY_HOSTS (comma-separated `host` or `host:port`: a private registry);
- the address it connects to (the proxy resolves the name, and connects to the address it checked) is not
  loopback, link-local (169.254.169.254), multicast or unspecified; a private or reserved address is taken
  only for a registry's name (a mirror on the company or CI network), never when written as an address. An
  operator's listed host is exempt (a private registry lives on a private network).

Anything else gets a 403 with one line naming the target and why, and is kept in `refusals`, so a failed
lock tool can say "refused 127.0.0.1:6379 (loopback)". Where the planner itself has HTTPS_PROXY/HTTP_PROXY,
an allowed request goes on through that proxy (the upstream resolves the name; the host allowlist and the
address check of a literal address still apply here).
"""

from __future__ import annotations

import base64
import contextlib
import ipaddress
import os
import socket
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from planner.egress_inside import bridge, pump

REGISTRY_HOSTS = frozenset({
    "crates.io", "index.crates.io", "static.crates.io",  # Cargo
    "rubygems.org", "index.rubygems.org",  # Bundler
    "packagist.org", "repo.packagist.org",  # Composer
    "registry.npmjs.org", "registry.yarnpkg.com",  # npm, Yarn
    "pypi.org", "files.pythonhosted.org",  # pip, uv, Poetry, Pipenv
    "proxy.golang.org", "sum.golang.org",  # Go
    "repo.maven.apache.org", "repo1.maven.org", "plugins.gradle.org", "services.gradle.org",
    "downloads.gradle.org",  # Maven, Gradle
    "api.nuget.org",  # NuGet
})
PORTS = (443, 80)
HEAD_LIMIT = 64 * 1024
CONNECT_TIMEOUT = 30.0


@dataclass(frozen=True)
class Allowlist:
    hosts: frozenset[str] = REGISTRY_HOSTS  # on PORTS
    operator: Mapping[str, frozenset[int]] = field(default_factory=dict)  # host → its ports (PORTS if none named)

    @classmethod
    def from_env(cls, value: str | None = None) -> Allowlist:
        """The registries plus PLANNER_REGISTRY_HOSTS (`host`, `host:port`, `[v6]:port`, comma-separated)."""
        listed: dict[str, set[int]] = {}
        for entry in (value if value is not None else os.environ.get("PLANNER_REGISTRY_HOSTS", "")).split(","):
            host, port = split_target(entry.strip(), 0)
            if host:
                listed.setdefault(host, set()).update({port} if port else PORTS)
        return cls(operator={host: frozenset(ports) for host, ports in listed.items()})

    def listed(self, host: str, port: int) -> bool:
        return port in self.operator.get(host, ())


def split_target(target: str, default_port: int) -> tuple[str, int]:
    """`host:port` / `[v6]:port` / `host` → (lower-case host, port); ("", 0) when it does not parse."""
    host, port = target, ""
    if target.startswith("["):
        host, _, tail = target[1:].partition("]")
        port = tail[1:] if tail.startswith(":") else ""
    elif target.count(":") == 1:
        host, port = target.split(":")
    if port and not (port.isdigit() and 0 < int(port) < 65536):
        return "", 0
    host = host.rstrip(".").lower()
    return (host, int(port) if port else default_port) if host else ("", 0)


# Address classes a registry *name* may resolve to (a corporate mirror, a CI network's registry): the name is on
# the allowlist, so the repository did not choose it. Loopback, link-local (metadata), unspecified and multicast
# stay refused for every name.
TRUSTED_FOR_NAMES = frozenset({"private", "reserved"})


def address_class(address: str) -> str | None:
    """Why an address is no registry's: loopback, private, link-local…; None for a public address."""
    try:
        ip = ipaddress.ip_address(address.split("%")[0])
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    for name in ("loopback", "link_local", "unspecified", "multicast", "reserved", "private"):
        if getattr(ip, f"is_{name}"):
            return name.replace("_", "-")
    return None


def _upstream() -> tuple[tuple[str, int], str] | None:
    """The planner's own proxy (HTTPS_PROXY, HTTP_PROXY, either case): (address, Proxy-Authorization line)."""
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"):
        url = urlsplit(os.environ.get(name, "").strip())
        if url.scheme == "http" and url.hostname:
            auth = ""
            if url.username:
                token = base64.b64encode(f"{url.username}:{url.password or ''}".encode()).decode()
                auth = f"Proxy-Authorization: Basic {token}\r\n"
            return (url.hostname, url.port or 80), auth
    return None


class Refused(Exception):
    """A request the proxy will not carry: `str()` is "host:port (why)"; `status` 403, or 502 when an allowed
    registry could not be reached."""

    def __init__(self, reason: str, status: int = 403) -> None:
        super().__init__(reason)
        self.status = status


@dataclass
class Proxy:
    """A running egress proxy: `path` its socket, `refusals` what it refused so far ("host:port (why)")."""

    path: Path
    allow: Allowlist
    upstream: tuple[tuple[str, int], str] | None
    refusals: list[str] = field(default_factory=list)
    live: set[socket.socket] = field(default_factory=set)  # connections under way, cut when the step ends
    workers: list[threading.Thread] = field(default_factory=list)  # one a connection, joined when the step ends
    closed: bool = False  # the step ended: a connection opened from now on is dropped, not carried
    lock: threading.Lock = field(default_factory=threading.Lock)

    def keep(self, sock: socket.socket) -> bool:
        """Track a connection until the step ends; False (nothing tracked) once it has."""
        with self.lock:
            if not self.closed:
                self.live.add(sock)
            return not self.closed

    def close(self) -> None:
        """Cut every connection under way and wait for their threads: none outlives the step."""
        with self.lock:
            self.closed, cut = True, list(self.live)
        for sock in cut:  # a registry keeping a connection open does not keep its thread
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        for worker in list(self.workers):
            worker.join()


def _handle(proxy: Proxy, client: socket.socket) -> None:
    """One connection from the sandbox: refused with a 403, or carried to its registry."""
    if not proxy.keep(client):
        client.close()
        return
    try:
        head, rest = _read_head(client)
        method, host, port, request = _parse(head)
        outbound = _open(proxy, host, port)
    except OSError:  # the step went away mid-request
        _drop(proxy, client)
        return
    except Refused as exc:
        proxy.refusals.append(str(exc))
        body = f"the planner's egress proxy refused {exc}\n".encode()
        status = b"403 Forbidden" if exc.status == 403 else b"502 Bad Gateway"
        with contextlib.suppress(OSError):
            client.sendall(b"HTTP/1.1 %s\r\nContent-Type: text/plain\r\nConnection: close\r\n"
                           b"Content-Length: %d\r\n\r\n%s" % (status, len(body), body))
        _drop(proxy, client)
        return
    if not proxy.keep(outbound):  # the step ended while the registry was being reached
        outbound.close()
        _drop(proxy, client)
        return
    with contextlib.suppress(OSError):
        if method == "CONNECT":
            client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            outbound.sendall(rest)
        else:  # one request; nothing more of the client's goes on
            outbound.sendall(request)
            pump(outbound, client)
    if method == "CONNECT":
        bridge(client, outbound)
    _drop(proxy, client, outbound)


def _drop(proxy: Proxy, *socks: socket.socket) -> None:
    for sock in socks:
        proxy.live.discard(sock)
        sock.close()


def _open(proxy: Proxy, host: str, port: int) -> socket.socket:
    listed = proxy.allow.listed(host, port)
    literal = address_class(host)
    if literal and not listed:
        raise Refused(f"{host}:{port} ({literal})")
    if not listed and host not in proxy.allow.hosts:
        raise Refused(f"{host}:{port} (not a registry host; PLANNER_REGISTRY_HOSTS adds one)")
    if not listed and port not in PORTS:
        raise Refused(f"{host}:{port} (port {port}: registries are reached on 443 and 80)")
    if proxy.upstream and not listed:
        return _through(proxy.upstream, host, port)
    return _connect(host, port, listed)


def _read_head(client: socket.socket) -> tuple[bytes, bytes]:
    data = b""
    while b"\r\n\r\n" not in data and len(data) < HEAD_LIMIT:
        chunk = client.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return head, rest


def _parse(head: bytes) -> tuple[str, str, int, bytes]:
    """(method, host, port, the request to send on for GET/HEAD: origin-form, `Connection: close`)."""
    lines = head.decode("latin-1").split("\r\n")
    words = lines[0].split(" ")
    if len(words) != 3:
        raise Refused(f"{lines[0][:80]!r} (not an HTTP request)")
    method, target, version = words
    if method == "CONNECT":
        host, port = split_target(target, 443)
        if not host:
            raise Refused(f"{target[:80]} (not host:port)")
        return method, host, port, b""
    try:
        url = urlsplit(target)
        port = url.port or 80
    except ValueError:
        raise Refused(f"{target[:80]} (not a URL)") from None
    if method not in ("GET", "HEAD") or url.scheme != "http" or not url.hostname:
        raise Refused(f"{method} {target[:80]} (only CONNECT, and GET/HEAD of http:// URLs)")
    keep = [line for line in lines[1:] if line.split(":")[0].strip().lower() not in (
        "connection", "proxy-connection", "proxy-authorization", "keep-alive")]
    path = url.path or "/"
    request = "\r\n".join([f"{method} {path}{'?' + url.query if url.query else ''} {version}", *keep,
                           "Connection: close", "", ""])
    return method, url.hostname.rstrip(".").lower(), port, request.encode("latin-1")


def _connect(host: str, port: int, listed: bool) -> socket.socket:
    """A connection to the first of `host`'s addresses that is public (any, for an operator's host)."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError:
        raise Refused(f"{host}:{port} (the name does not resolve)", 502) from None
    why = ""
    named = address_class(host) is None  # a registry's name, not an address the tool wrote
    for family, kind, proto, _, address in found:
        bad = None if listed else address_class(str(address[0]))
        if named and bad in TRUSTED_FOR_NAMES:
            bad = None  # a registry name is the operator's DNS's word: a mirror on the company network
        if bad:
            why = why or f"{host}:{port} ({address[0]}: {bad})"
            continue
        sock = socket.socket(family, kind, proto)
        sock.settimeout(CONNECT_TIMEOUT)
        try:
            sock.connect(address)
        except OSError as exc:
            sock.close()
            why = why or f"{host}:{port} (cannot connect: {exc.strerror or exc})"
            continue
        sock.settimeout(None)
        return sock
    raise Refused(why or f"{host}:{port} (no address)", 502 if "cannot connect" in why else 403)


def _through(upstream: tuple[tuple[str, int], str], host: str, port: int) -> socket.socket:
    """A tunnel to host:port through the planner's own proxy (CONNECT, for plain HTTP too)."""
    address, auth = upstream
    try:
        sock = socket.create_connection(address, timeout=CONNECT_TIMEOUT)
        sock.sendall(f"CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n{auth}\r\n".encode())
        answer = _read_head(sock)[0].split(b"\r\n")[0]
    except OSError as exc:
        raise Refused(f"{host}:{port} (the upstream proxy: {exc.strerror or exc})", 502) from None
    if answer.split(b" ")[1:2] != [b"200"]:
        sock.close()
        raise Refused(f"{host}:{port} (the upstream proxy answered {answer[:80].decode('latin-1')!r})", 502)
    sock.settimeout(None)
    return sock


def _accept(proxy: Proxy, listener: socket.socket) -> None:
    while True:
        try:
            client, _ = listener.accept()
        except OSError:  # shut down: the step is over
            return
        worker = threading.Thread(target=_handle, args=(proxy, client), name="egress-connection", daemon=True)
        proxy.workers.append(worker)
        worker.start()


@contextlib.contextmanager
def serve(folder: Path, allow: Allowlist | None = None) -> Iterator[Proxy]:
    """Run the proxy on `folder/proxy.sock` (a thread) for the duration of the block."""
    proxy = Proxy(folder / "proxy.sock", allow or Allowlist.from_env(), _upstream())
    directory = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:  # a socket's path has 108 bytes at most: a deep folder is named through its descriptor
        listener.bind(str(proxy.path) if len(str(proxy.path)) < 100 else f"/proc/self/fd/{directory}/proxy.sock")
        listener.listen(64)
        thread = threading.Thread(target=_accept, args=(proxy, listener), daemon=True)
        thread.start()
        try:
            yield proxy
        finally:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)  # wakes the accept
            thread.join()  # no connection is accepted from now on
            proxy.close()
    finally:
        listener.close()
        os.close(directory)
