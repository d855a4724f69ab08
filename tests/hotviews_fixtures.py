"""Hot-view fixtures: one suite, two backends (the embedded default and a real redis-server).

A test that takes `hv_backend` runs twice. The real server comes from
PLANNER_TEST_REDIS_URL (`.ci/run` starts one); without it the fixture starts
a private `redis-server` for the session, and without the binary it fails
(never skips) saying how to install it. `private_redis` is a server of the
test's own, to kill mid-run. Test modules load this with
`pytest_plugins = ["hotviews_fixtures"]` and import helpers from hotviews_support.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hotviews_support import HotBackend, RedisProcess, clear_namespace, forget_local_state, start_redis


@pytest.fixture(scope="session")
def real_redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    url = os.environ.get("PLANNER_TEST_REDIS_URL")
    if url:
        yield url
        return
    server = start_redis(tmp_path_factory.mktemp("redis"))
    yield server.url
    server.kill()


@pytest.fixture(params=["embedded", "redis"])
def hv_backend(request: pytest.FixtureRequest, home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HotBackend]:
    """PLANNER_REDIS_URL set for one backend, with an empty hot-view namespace."""
    forget_local_state()
    if request.param == "embedded":
        monkeypatch.delenv("PLANNER_REDIS_URL", raising=False)
        yield HotBackend("embedded", None)
    else:
        url = request.getfixturevalue("real_redis_url")
        clear_namespace(url)
        monkeypatch.setenv("PLANNER_REDIS_URL", url)
        yield HotBackend("redis", url)
    forget_local_state()


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[RedisProcess]:
    server = start_redis(tmp_path)
    yield server
    if server.process.poll() is None:
        server.kill()
