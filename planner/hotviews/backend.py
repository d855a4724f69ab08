"""Which Redis serves hot views: PLANNER_REDIS_URL, or an embedded in-process default.

The embedded default is a fakeredis server: the same redis-py client API and
the same code path as a real server, with no process to run. It lives as long
as the planner process does, so it serves a long-running planner (or a test);
hot views shared across CLI invocations and git hooks need a real server.
`PLANNER_REDIS_URL=off` turns hot views off.

Timeouts are short and retries off: a dead server must cost a build little,
and the build then goes on without hot views. A stopped or unreachable server
is refused at once; a host that drops packets costs CONNECT_TIMEOUT_S; a
server that hangs mid-reply costs READ_TIMEOUT_S (long enough for a loaded
machine to stream a multi-megabyte bundle), once per build.
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

if TYPE_CHECKING:  # redis-py costs ~0.15 s to import: only a build that uses a backend pays it (see errors())
    import fakeredis
    import redis

CONNECT_TIMEOUT_S = 0.25
READ_TIMEOUT_S = 1.0
DEFAULT_TTL_S = 7 * 24 * 3600
OFF = frozenset({"off", "none", "0", "false", "disabled"})


def errors() -> tuple[type[Exception], ...]:
    """What a failing Redis raises (a client already exists by then, so redis is already imported)."""
    import redis

    return (redis.RedisError, OSError)


_lock = threading.Lock()
_clients: dict[str, redis.Redis] = {}
_embedded: tuple[fakeredis.FakeServer, fakeredis.FakeRedis] | None = None


@dataclass(frozen=True)
class Backend:
    kind: str  # "redis", "embedded" or "off"
    url: str | None  # the real server's URL (None otherwise)
    client: redis.Redis | None

    @property
    def shown(self) -> str:
        return mask(self.url) if self.url else self.kind


def mask(url: str) -> str:
    """The URL without its password, for output and provenance."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username or ''}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def reason(exc: BaseException, url: str | None = None) -> str:
    """One line saying why Redis failed, never carrying the URL's password."""
    text = f"{exc.__class__.__name__}: {exc}".replace("\n", " ").strip()
    if url:
        password = urlsplit(url).password
        if password:
            text = text.replace(password, "***")
    return re.sub(r"\s+", " ", text)[:300]


def _real(url: str) -> redis.Redis:
    import redis
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    with _lock:
        client = _clients.get(url)
        if client is None:
            client = redis.Redis.from_url(
                url, socket_timeout=READ_TIMEOUT_S, socket_connect_timeout=CONNECT_TIMEOUT_S,
                retry=Retry(NoBackoff(), 0), retry_on_timeout=False, health_check_interval=0,
            )
            _clients[url] = client
        return client


def _embedded_pair() -> tuple[fakeredis.FakeServer, fakeredis.FakeRedis]:
    global _embedded
    import fakeredis  # only when used: a configured server should not pay for importing it

    with _lock:
        if _embedded is None:
            server = fakeredis.FakeServer()
            _embedded = (server, fakeredis.FakeRedis(server=server))
        return _embedded


def embedded_server() -> fakeredis.FakeServer:
    return _embedded_pair()[0]


def reset_embedded() -> None:
    """Forget the embedded server's contents (tests; a fresh process starts empty anyway)."""
    global _embedded
    with _lock:
        _embedded = None


def connect(url: str | None) -> Backend:
    """The backend for a PLANNER_REDIS_URL value. Never touches the network: failures show on first use."""
    if url and url.strip().lower() in OFF:
        return Backend("off", None, None)
    if url:
        return Backend("redis", url, _real(url))
    return Backend("embedded", None, _embedded_pair()[1])


def text(reply: bytes | str) -> str:
    """A reply as text. Our clients read bytes (decode_responses is off); redis-py types a reply as either."""
    return reply.decode() if isinstance(reply, bytes) else reply


def data(reply: bytes | str) -> bytes:
    """A reply as bytes (see text)."""
    return reply if isinstance(reply, bytes) else reply.encode()


def ttl_seconds() -> int:
    """PLANNER_HOTVIEWS_TTL (seconds) or a week; every hot-view key expires."""
    raw = os.environ.get("PLANNER_HOTVIEWS_TTL", "")
    return int(raw) if raw.isdigit() and int(raw) > 0 else DEFAULT_TTL_S
