"""Hot-view test support: a real redis-server of the tests' own, the backend under test, helpers.

The fixtures themselves are in hotviews_fixtures.py (loaded with `pytest_plugins`).
"""

from __future__ import annotations

import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import redis
from conftest import free_port

from planner.hotviews import backend, naming, parsed, tccms

INSTALL_HINT = ("the hot-view tests need a real Redis: install redis-server (Debian/Ubuntu: "
                "`apt-get install -y redis-server`; macOS: `brew install redis`) or set PLANNER_TEST_REDIS_URL "
                "to a server the tests may write to (.ci/run does this)")


@dataclass
class RedisProcess:
    port: int
    process: subprocess.Popen[bytes]

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(timeout=10)


def start_redis(tmp: Path) -> RedisProcess:
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.fail(INSTALL_HINT)
    port = free_port()
    process = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly",
                                "no", "--dir", str(tmp)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    client = redis.Redis(port=port, socket_timeout=0.5)
    for _ in range(200):
        try:
            if client.ping():
                return RedisProcess(port, process)
        except redis.ConnectionError:
            time.sleep(0.02)
    process.kill()
    pytest.fail(f"redis-server did not answer on port {port}")


def forget_local_state() -> None:
    backend.reset_embedded()
    parsed.clear()
    tccms.clear()


def clear_namespace(url: str) -> None:
    """Delete the hot-view keys only: PLANNER_TEST_REDIS_URL may be a server others use too."""
    client = redis.Redis.from_url(url)
    keys = list(client.scan_iter(match=f"{naming.PREFIX}:*", count=1000))
    if keys:
        client.delete(*keys)


@dataclass
class HotBackend:
    kind: str  # "embedded" or "redis"
    url: str | None

    def client(self) -> redis.Redis:
        if self.url is None:
            return backend.connect(None).client  # type: ignore[return-value]
        return redis.Redis.from_url(self.url)

    def values(self) -> list[bytes]:
        """Every value stored under the hot-view namespace (to look for what must never be there)."""
        client = self.client()
        out: list[bytes] = []
        for key in client.scan_iter(match=f"{naming.PREFIX}:*"):
            kind = client.type(key)
            kind = kind.decode() if isinstance(kind, bytes) else kind
            if kind == "hash":
                out.extend(client.hvals(key))
            elif kind == "string":
                out.append(client.get(key))
            elif kind == "set":
                out.extend(client.smembers(key))
        return out


def settle(monkeypatch: pytest.MonkeyPatch) -> None:
    """Trust file stats at once: tests write files and build within the racy window."""
    from planner.hotviews import bundles

    monkeypatch.setattr(bundles, "RACY_S", 0.0)
