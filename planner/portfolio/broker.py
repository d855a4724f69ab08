"""What the Celery engine reads and writes in the broker's Redis directly, beside Celery itself.

Two things Celery does not give:
- which task ids are still live in the broker (queued, or taken by a worker and not yet
  acknowledged), so `planner portfolio resume` sends only jobs that have neither a result nor a
  live task. Kombu's Redis transport keeps a queue as a list of JSON messages and the taken
  ones in the `unacked` hash until acknowledged (acks_late: after the run), so both are read.
- solved examples shared between workers: each worker appends the examples its runs add to one
  stream (capped at MAX_SHARED, the oldest trimmed), and before every job pulls what other workers
  appended since the last id it read, into its own PLANNER_HOME's store. A fix learned on one
  repository is then reused by the next run on any worker, not only by later runs on the same one.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from planner.errors import PlannerError


class BrokerDown(Exception):
    """The broker or result backend went away: the portfolio pauses, `resume` continues it."""


def broker_url(given: str | None) -> str:
    url = given or os.environ.get("PLANNER_BROKER_URL")
    if not url:
        raise PlannerError("the celery engine needs a broker: --broker URL or PLANNER_BROKER_URL=redis://…")
    return url


QUEUE = "celery"  # Celery's default queue: the engine sends every job there
UNACKED = "unacked"  # kombu's Redis transport: messages taken by a worker, not yet acknowledged
EXAMPLES = "planner:solved-examples"  # a Redis stream: ids are the workers' cursors, trimming cannot shift them
MAX_SHARED = 10_000  # the newest examples kept in the stream; older ones live on in each store they reached


def is_redis(url: str) -> bool:
    return url.startswith(("redis://", "rediss://", "unix://"))


def client(url: str) -> Any:
    import redis

    return redis.Redis.from_url(url, socket_connect_timeout=3, socket_timeout=10)


def _task_id(message: Any) -> str | None:
    headers = message.get("headers") if isinstance(message, dict) else None
    return str(headers["id"]) if isinstance(headers, dict) and headers.get("id") else None


def live_task_ids(url: str) -> set[str]:
    """Ids of the tasks queued or held unacknowledged in the broker at `url`."""
    redis_client = client(url)
    found: set[str] = set()
    for raw in redis_client.lrange(QUEUE, 0, -1):
        found.add(_task_id(json.loads(raw)) or "")
    for raw in redis_client.hvals(UNACKED):
        held = json.loads(raw)
        found.add(_task_id(held[0] if isinstance(held, list) and held else held) or "")
    found.discard("")
    return found


class ExampleFeed:
    """A worker process's view of the shared solved-example list: where it has read up to."""

    def __init__(self, url: str) -> None:
        self.client = client(url)
        self.seen = "0-0"  # the last stream id read, per process: a restarted worker re-reads all (filed once)

    def pull(self, home: Path) -> int:
        """Add to this worker's store the examples other workers shared since the last pull."""
        from planner.patch.plan import Plan
        from planner.store.examples import SolvedExamples

        fresh = self.client.xrange(EXAMPLES, min=f"({self.seen}")
        if not fresh:
            return 0
        store = SolvedExamples(home / "examples.sqlite")
        try:
            for _, fields in fresh:
                example = json.loads(fields[b"example"])
                store.add(example["task_class"], example["fingerprint"], Plan.model_validate_json(example["plan"]),
                          example["patch"], example["run_id"])
        finally:
            store.close()
        self.seen = fresh[-1][0].decode()
        return len(fresh)

    def push(self, run_id: str, examples: list[dict[str, Any]]) -> None:
        if not examples:
            return
        pipe = self.client.pipeline()
        for example in examples:  # capped: a fleet's run of thousands must not grow the broker's memory forever
            pipe.xadd(EXAMPLES, {"example": json.dumps({**example, "run_id": run_id})}, maxlen=MAX_SHARED,
                      approximate=True)
        pipe.execute()
