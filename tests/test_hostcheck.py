"""The UI answers only the names it was started under (DNS rebinding cannot read runs through it), even a
caller holding its token."""

from __future__ import annotations

import http.client
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import free_port, planner_server

from planner.hostcheck import HostPolicy, host_name


@pytest.mark.parametrize(("header", "name"), [("127.0.0.1:8765", "127.0.0.1"), ("[::1]:80", "::1"),
                                              ("Example.COM:80", "example.com"), ("localhost", "localhost"),
                                              ("::1", "::1")])
def test_host_name_drops_the_port(header: str, name: str) -> None:
    assert host_name(header) == name


def test_the_policy_for_loopback_and_for_every_interface(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PLANNER_ALLOWED_HOSTS", raising=False)
    loop = HostPolicy("127.0.0.1")
    assert loop.allows("127.0.0.1:8765") and loop.allows("localhost:8765") and loop.allows("[::1]:8765")
    assert not loop.allows("evil.example:8765")
    assert not loop.allows("127.0.0.1.nip.io:8765")
    assert not loop.allows("")
    assert not loop.allows(None)
    anywhere = HostPolicy("0.0.0.0", ["ci.internal"])
    assert anywhere.allows("10.1.2.3:8765") and anywhere.allows("CI.internal")
    assert not anywhere.allows("evil.example") and not anywhere.allows("localhost")
    monkeypatch.setenv("PLANNER_ALLOWED_HOSTS", "box.lan, other.lan")
    assert HostPolicy("127.0.0.1").allows("box.lan:1")


@pytest.fixture
def ui_server(home: Path) -> Iterator[int]:
    port = free_port()
    env = {**os.environ, "PLANNER_DAEMON": "off"}
    env.pop("PLANNER_SERVER_TOKEN", None)  # the token it keeps in the home
    with planner_server(["ui", "--port", str(port), "--allow-host", "box.lan"], port, env):
        yield port


def _get(port: int, host: str, token: str) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.putrequest("GET", "/api/runs", skip_host=True)
    conn.putheader("Host", host)
    conn.putheader("Authorization", f"Bearer {token}")  # the token alone does not pass the Host check
    conn.endheaders()
    answer = conn.getresponse()
    return answer.status, answer.read()


def test_a_real_ui_refuses_other_host_names(ui_server: int, home: Path) -> None:
    token = (home / "server-token").read_text().strip()
    status, body = _get(ui_server, f"attacker.example:{ui_server}", token)
    assert status == 400 and b"invalid Host header" in body
    for host in (f"127.0.0.1:{ui_server}", f"localhost:{ui_server}", "box.lan"):
        status, body = _get(ui_server, host, token)
        assert status == 200, (host, body)
