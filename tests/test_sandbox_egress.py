"""A network step's only way out: the planner's egress proxy (planner/egress.py), through real bwrap.

A step that declares network (`--regenerate`'s lock tools) runs in a network namespace of its own; the
forwarder inside (planner/egress_inside.py) carries what the tool sends to HTTP(S)_PROXY to the proxy, which
lets through registry hosts on 443/80 and the operator's PLANNER_REGISTRY_HOSTS, and never a loopback,
private or metadata address. Real sockets, a real local HTTP server, real curl and Python clients.
"""

from __future__ import annotations

import http.server
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from planner import egress, sandbox
from subgraphs.vulnerability_remediation import regenerate

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None and not Path("/usr/bin/bwrap").exists(),
                                reason="bubblewrap is not installed (apt install bubblewrap)")
PYTHON = shutil.which("python3") or "python3"


class Server:
    """An HTTP server on 127.0.0.1 (the operator's Redis, UI or a private registry) recording each request, and
    every raw TCP connection."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        paths = self.paths

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                paths.append(self.path)
                body = b"registry says hello\n"
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.http = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.http.server_address[1]
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.http.shutdown()
        self.http.server_close()


@pytest.fixture
def server() -> Iterator[Server]:
    running = Server()
    yield running
    running.close()


@pytest.fixture
def temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private TMPDIR (deep enough that the proxy's socket path needs its short name), no registry hosts of
    the operator's, no proxy of the planner's."""
    folder = tmp_path / "a-deep-enough-temporary-folder-for-the-work-copies-of-this-test"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    for name in ("PLANNER_REGISTRY_HOSTS", "HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"):
        monkeypatch.delenv(name, raising=False)
    return folder


def _step(temp: Path, script: str, timeout: float = 60) -> sandbox.Done:
    work = temp / f"work-{secrets.token_hex(4)}"
    work.mkdir()
    try:
        return sandbox.run(sandbox.Step([PYTHON, "-c", script], work, timeout=timeout, network=True))
    finally:
        sandbox.remove(work)


FETCH = """
import os, sys, urllib.request
for url in sys.argv[1:] or {urls!r}:
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            print("OK", url, answer.read().decode().strip())
    except Exception as exc:
        body = exc.read().decode().strip() if hasattr(exc, "read") else ""
        print("FAIL", url, exc, body)
"""


def test_a_network_step_reaches_no_host_port_directly(temp: Path, server: Server) -> None:
    """Its own network namespace: the host's loopback and every other address are simply not there."""
    done = _step(temp, f"""
import socket
for address in (("127.0.0.1", {server.port}), ("1.1.1.1", 80), ("169.254.169.254", 80)):
    try:
        socket.create_connection(address, timeout=3).close()
        print("REACHED", address)
    except OSError as exc:
        print("NO", address, exc.errno)
""")
    assert done.exit_code == 0, done.output
    assert "REACHED" not in done.output and done.output.count("NO") == 3, done.output
    assert server.paths == []


def test_the_proxy_refuses_loopback_private_metadata_and_other_hosts(temp: Path, server: Server) -> None:
    urls = [f"http://127.0.0.1:{server.port}/redis", "http://169.254.169.254/latest/meta-data/",
            "http://10.1.2.3/", "http://[::1]:6379/", "http://example.com/", "http://crates.io:6379/",
            f"https://127.0.0.1:{server.port}/", "https://localhost:6379/"]
    done = _step(temp, FETCH.format(urls=urls))
    assert done.exit_code == 0, done.output
    assert "OK" not in done.output, done.output
    assert f"the planner's egress proxy refused 127.0.0.1:{server.port} (loopback)" in done.output
    assert "HTTP Error 403" in done.output and "Tunnel connection failed: 403" in done.output
    assert list(done.refused) == [
        f"127.0.0.1:{server.port} (loopback)", "169.254.169.254:80 (link-local)", "10.1.2.3:80 (private)",
        "::1:6379 (loopback)", "example.com:80 (not a registry host; PLANNER_REGISTRY_HOSTS adds one)",
        "crates.io:6379 (port 6379: registries are reached on 443 and 80)", f"127.0.0.1:{server.port} (loopback)",
        "localhost:6379 (not a registry host; PLANNER_REGISTRY_HOSTS adds one)"]
    assert server.paths == []


def test_a_registry_name_resolving_to_loopback_is_refused(
        temp: Path, server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    """The proxy resolves the name itself and connects to the address it checked (no DNS trick through)."""
    asked: list[tuple[str, int]] = []

    def resolve(host: str, port: int, *args: object, **kwargs: object) -> list[tuple]:
        asked.append((host, port))
        if host == "index.crates.io":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", server.port))]
        raise socket.gaierror(-2, "Name or service not known")

    monkeypatch.setattr(egress.socket, "getaddrinfo", resolve)
    done = _step(temp, FETCH.format(urls=["http://index.crates.io/config.json", "https://static.crates.io/x"]))
    assert asked == [("index.crates.io", 80), ("static.crates.io", 443)]  # allowed hosts: the proxy tried them
    assert list(done.refused) == ["index.crates.io:80 (127.0.0.1: loopback)",
                                  "static.crates.io:443 (the name does not resolve)"]
    assert "Tunnel connection failed: 502" in done.output, done.output
    assert server.paths == []


def test_an_operator_registry_host_is_reached_end_to_end(
        temp: Path, server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    """PLANNER_REGISTRY_HOSTS lets a private registry through, private address and all: plain HTTP (GET with
    an absolute URL), a CONNECT tunnel, by address and by name, from Python and from curl."""
    monkeypatch.setenv("PLANNER_REGISTRY_HOSTS", f"127.0.0.1:{server.port}, localhost:{server.port}")
    script = FETCH.format(urls=[f"http://127.0.0.1:{server.port}/simple/tinygem/",
                                f"http://localhost:{server.port}/by-name", "http://127.0.0.1:6379/"]) + f"""
import http.client, subprocess
tunnel = http.client.HTTPConnection("127.0.0.1", int(os.environ["HTTPS_PROXY"].rsplit(":", 1)[1]), timeout=10)
tunnel.set_tunnel("127.0.0.1", {server.port})
tunnel.request("GET", "/through-connect")
print("TUNNEL", tunnel.getresponse().status)
curl = subprocess.run(["curl", "-sS", "http://127.0.0.1:{server.port}/by-curl"], capture_output=True, text=True)
print("CURL", curl.returncode, curl.stdout.strip(), curl.stderr.strip())
"""
    done = _step(temp, script)
    assert done.exit_code == 0, done.output
    assert f"OK http://127.0.0.1:{server.port}/simple/tinygem/ registry says hello" in done.output
    assert f"OK http://localhost:{server.port}/by-name registry says hello" in done.output
    assert "TUNNEL 200" in done.output
    if shutil.which("curl"):
        assert "CURL 0 registry says hello" in done.output, done.output
    assert sorted(server.paths) == sorted(["/simple/tinygem/", "/by-name", "/through-connect"]
                                          + (["/by-curl"] if shutil.which("curl") else []))
    assert list(done.refused) == ["127.0.0.1:6379 (loopback)"]  # a listed host's port only


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_a_tool_ignoring_the_proxy_reaches_nothing(temp: Path, server: Server) -> None:
    done = _step(temp, f"""
import subprocess
for url in ("http://127.0.0.1:{server.port}/direct", "http://1.1.1.1/"):
    run = subprocess.run(["curl", "-sS", "--noproxy", "*", "--max-time", "5", url], capture_output=True, text=True)
    print("CURL", run.returncode, run.stderr.strip())
""")
    assert done.output.count("CURL 7") == 2, done.output  # couldn't connect
    assert server.paths == [] and done.refused == ()


def _left(marker: str) -> list[str]:
    found = subprocess.run(["pgrep", "-af", marker], capture_output=True, text=True).stdout.splitlines()
    return [line for line in found if "pgrep" not in line]


def test_the_forwarder_and_its_children_end_with_the_step(temp: Path) -> None:
    """The exit status comes through; on timeout the forwarder, the tool and a `setsid` child are all gone, as
    is the proxy's folder; nothing of the proxy's thread is left."""
    threads = _threads()
    assert _step(temp, "import sys; sys.exit(7)").exit_code == 7
    assert _step(temp, "import os, signal; os.kill(os.getpid(), signal.SIGTERM)").exit_code == 128 + 15
    marker = f"{secrets.randbelow(10**6) + 10**6}.5"
    work = temp / "work-timeout"
    work.mkdir()
    started = time.monotonic()
    done = sandbox.run(sandbox.Step(["sh", "-c", f"setsid sleep {marker} & sleep {marker}"], work, timeout=1.5,
                                    network=True))
    assert done.timed_out and time.monotonic() - started < 10
    assert _left(marker) == []
    assert [p.name for p in (temp / f"tccm-planner-{os.getuid()}").iterdir()] == []
    assert _threads() == threads


def test_a_failed_lock_tool_names_what_the_proxy_refused(
        temp: Path, server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A lock tool (a stand-in `npm` that fetches what a hostile package.json would) fails, and the run's
    reason says the proxy refused the loopback port."""
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "npm").write_text(f"#!/bin/sh\n{PYTHON} -c '{FETCH.format(urls=[])}' "
                               f"http://127.0.0.1:{server.port}/ http://169.254.169.254/\nexit 1\n")
    (tools / "npm").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}:{os.environ['PATH']}")
    copy = tmp_path / "copy"
    copy.mkdir()
    run = regenerate.run_command(copy, ".", "npm install --package-lock-only", timeout=60)
    assert run.exit_code == 1, run
    assert run.reason is not None and run.reason.endswith(
        f"(the sandbox's egress proxy refused 127.0.0.1:{server.port} (loopback), 169.254.169.254:80 (link-local))")
    assert server.paths == []


def test_no_sandbox_keeps_the_operators_network_as_it_was(temp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://corp-proxy.example:3128")
    sandbox.allow_unsandboxed(True)
    try:
        done = _step(temp, "import os; print('PROXY', os.environ.get('HTTPS_PROXY'))")
    finally:
        sandbox.allow_unsandboxed(False)
    assert done.isolation == "none" and "PROXY http://corp-proxy.example:3128" in done.output


def test_the_allowlist_and_the_address_classes() -> None:
    allow = egress.Allowlist.from_env("npm.corp.example, 10.0.0.5:8081,[fd00::1]:4873, ,bad:port")
    assert allow.listed("npm.corp.example", 443) and allow.listed("npm.corp.example", 80)
    assert not allow.listed("npm.corp.example", 8081)
    assert allow.listed("10.0.0.5", 8081) and not allow.listed("10.0.0.5", 443)
    assert allow.listed("fd00::1", 4873) and "bad" not in allow.operator
    assert "registry.npmjs.org" in allow.hosts and "index.crates.io" in allow.hosts
    assert egress.split_target("Index.Crates.IO.:443", 0) == ("index.crates.io", 443)
    assert egress.split_target("[::1]:6379", 443) == ("::1", 6379)
    assert egress.split_target("host:99999", 443) == ("", 0)
    assert [egress.address_class(a) for a in ("127.0.0.2", "10.0.0.1", "192.168.1.1", "169.254.169.254",
                                                "::ffff:127.0.0.1", "fe80::1", "0.0.0.0", "224.0.0.1", "240.0.0.1",
                                                "151.101.1.1", "2a04:4e42::1", "name")] == [
        "loopback", "private", "private", "link-local", "loopback", "link-local", "unspecified", "multicast",
        "reserved", None, None, None]


def test_the_forwarder_runs_with_the_standard_library_only() -> None:
    source = (Path(egress.__file__).with_name("egress_inside.py")).read_text()
    assert "planner" not in "".join(line for line in source.splitlines() if line.startswith(("import", "from")))
    done = subprocess.run([sys.executable, "-I", "-S", "-c", source], capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and "usage" in done.stderr


def test_a_registry_holding_a_connection_open_keeps_no_thread_after_the_step(
        temp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    held: list[socket.socket] = []
    silent = socket.create_server(("127.0.0.1", 0))
    threading.Thread(target=lambda: held.append(silent.accept()[0]), daemon=True).start()
    port = silent.getsockname()[1]
    monkeypatch.setenv("PLANNER_REGISTRY_HOSTS", f"127.0.0.1:{port}")
    done = _step(temp, f"""
import os, socket
proxy = socket.create_connection(("127.0.0.1", int(os.environ["HTTPS_PROXY"].rsplit(":", 1)[1])))
proxy.sendall(b"CONNECT 127.0.0.1:{port} HTTP/1.1\\r\\n\\r\\n")
print(proxy.recv(100).decode().splitlines()[0])
""")
    assert "HTTP/1.1 200 Connection established" in done.output, done.output
    # the server never closed: the proxy cut it when the step ended, and waited for its connection's thread
    assert held and not [t for t in threading.enumerate() if t.name == "egress-connection"]
    silent.close()


def _threads() -> int:
    """This process's threads, those `_thread` started (the forwarder's pumps, used by the proxy) included."""
    return len(os.listdir("/proc/self/task"))


def test_only_a_registry_name_may_resolve_to_a_private_or_reserved_address() -> None:
    """A mirror on the company or CI network (registry.npmjs.org → 203.0.113.80) is the operator's DNS's word;
    the same address written by the tool, and loopback or link-local under any name, stay refused."""
    assert {"private", "reserved"} == egress.TRUSTED_FOR_NAMES
    assert egress.address_class("203.0.113.80") in egress.TRUSTED_FOR_NAMES  # refused as a literal address
    assert egress.address_class("10.0.0.8") in egress.TRUSTED_FOR_NAMES
    assert egress.address_class("127.0.0.1") not in egress.TRUSTED_FOR_NAMES
    assert egress.address_class("169.254.169.254") not in egress.TRUSTED_FOR_NAMES
