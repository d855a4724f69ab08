"""Redis URL → backend; the embedded default; short timeouts; no password in anything shown."""

from __future__ import annotations

import pytest
import redis
from hotviews_support import free_port

from planner.hotviews import backend


def test_no_url_is_the_embedded_default_shared_in_the_process() -> None:
    backend.reset_embedded()
    one, two = backend.connect(None), backend.connect(None)
    assert one.kind == "embedded" and one.shown == "embedded"
    assert one.client is not None and two.client is not None
    one.client.set("k", "v")
    assert two.client.get("k") == b"v"
    backend.reset_embedded()
    assert backend.connect(None).client.get("k") is None  # type: ignore[union-attr]


@pytest.mark.parametrize("value", ["off", "OFF", "none", "0"])
def test_off_disables(value: str) -> None:
    chosen = backend.connect(value)
    assert chosen.kind == "off" and chosen.client is None


def test_dead_server_fails_fast_without_retries() -> None:
    chosen = backend.connect(f"redis://127.0.0.1:{free_port()}/0")
    assert chosen.kind == "redis" and chosen.client is not None
    options = chosen.client.connection_pool.connection_kwargs
    assert options["retry"].get_retries() == 0 and options["retry_on_timeout"] is False
    assert options["socket_connect_timeout"] == backend.CONNECT_TIMEOUT_S
    with pytest.raises(redis.ConnectionError):  # how fast: bench/failfast.py
        chosen.client.ping()


def test_password_never_shown() -> None:
    url = "redis://user:s3cr3t-pw@127.0.0.1:6390/1"
    assert backend.mask(url) == "redis://user:***@127.0.0.1:6390/1"
    assert "s3cr3t" not in backend.connect(url).shown
    text = backend.reason(redis.ConnectionError("auth failed for s3cr3t-pw\nat host"), url)
    assert "s3cr3t" not in text and "\n" not in text and text.startswith("ConnectionError: ")


def test_ttl_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PLANNER_HOTVIEWS_TTL", raising=False)
    assert backend.ttl_seconds() == backend.DEFAULT_TTL_S
    monkeypatch.setenv("PLANNER_HOTVIEWS_TTL", "60")
    assert backend.ttl_seconds() == 60
    monkeypatch.setenv("PLANNER_HOTVIEWS_TTL", "-5")
    assert backend.ttl_seconds() == backend.DEFAULT_TTL_S
