"""The Celery engine: jobs go to `planner worker` processes on any machine sharing the broker.

Reliability settings (see the README): a job is acknowledged only after it ran (acks_late), a
worker process lost mid-run puts its job back (reject_on_worker_lost), and each worker takes
one job at a time (prefetch 1) so a killed worker holds no queue of others. With Redis as the
broker, a job whose worker died entirely comes back after the visibility timeout
(PLANNER_CELERY_VISIBILITY_TIMEOUT, default 3600 s: longer than any run, or a slow run would be
delivered twice — harmless, since results are recorded once by key, but wasted work).
"""

from __future__ import annotations

import os
import socket
import sys
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from planner.portfolio.broker import BrokerDown
from planner.portfolio.model import Job, Result

TASK = "planner.portfolio.run"
POLL_S = 0.5
BATCH = 500  # task ids per MGET
_FAST_FAIL = {"max_retries": 2, "interval_start": 0, "interval_step": 0.5, "interval_max": 1}


def visibility_timeout() -> int:
    return int(os.environ.get("PLANNER_CELERY_VISIBILITY_TIMEOUT") or 3600)


def make_app(broker: str) -> Any:
    from celery import Celery

    app = Celery("planner", broker=broker, backend=broker, set_as_current=False)
    visibility = visibility_timeout()
    transport = {"visibility_timeout": visibility, "unacked_restore_interval": max(1, min(10, visibility // 5)),
                 "unacked_restore_throttle": 1, "socket_connect_timeout": 3}
    app.conf.update(
        task_acks_late=True, task_reject_on_worker_lost=True, worker_prefetch_multiplier=1,
        task_serializer="json", result_serializer="json", accept_content=["json"],
        result_expires=7 * 86400, task_track_started=True, broker_transport_options=transport,
        broker_connection_retry_on_startup=True, task_publish_retry_policy=_FAST_FAIL,
        result_backend_transport_options={"retry_policy": _FAST_FAIL}, redis_socket_connect_timeout=3,
        redis_socket_timeout=10, worker_hijack_root_logger=False, worker_send_task_events=False,
    )
    app.task(name=TASK)(run_task)
    return app


_feed: list[Any] = []  # this worker process's ExampleFeed, made on its first job


def _shared_examples(broker: str) -> Any:
    from planner.portfolio.broker import ExampleFeed, is_redis

    if not _feed and is_redis(broker):
        _feed.append(ExampleFeed(broker))
    return _feed[0] if _feed else None


def run_task(payload: dict[str, Any]) -> dict[str, Any]:
    """In a `planner worker`: run one job in this worker's own PLANNER_HOME and ship the run back. Solved
    examples other workers learned are pulled first, and the ones this run adds are shared after. A job this
    worker does not allow (planner.portfolio.admission) is answered as failed, with the reason, unrun."""
    from redis.exceptions import RedisError

    from planner.config import Settings
    from planner.errors import ExitCode
    from planner.portfolio import admission
    from planner.portfolio.broker import broker_url
    from planner.portfolio.execute import execute

    job = Job.model_validate(payload)
    refused = admission.current().refusal(job)
    if refused:  # anyone who can write to the broker can send a job: only what this worker allows runs
        sys.stderr.write(f"planner worker: {job.repo}: {refused}\n")
        return Result(repo=job.repo, key=job.key, commit=job.commit, status="failed", exit_code=int(ExitCode.FAILED),
                      error=refused, worker=f"{socket.gethostname()}:{os.getpid()}").model_dump(mode="json")
    settings = Settings.from_env()
    feed = _shared_examples(broker_url(None))
    try:
        if feed is not None:
            feed.pull(settings.home)
    except (RedisError, OSError):
        pass  # sharing is an optimisation: the run goes on with what this worker knows
    result = execute(job, settings, shipping=True)
    try:
        if feed is not None and result.shipped is not None and result.run_id:
            feed.push(result.run_id, result.shipped.examples)
    except (RedisError, OSError):
        pass  # the examples still travel home with the result
    return result.model_dump(mode="json")


def _connection_errors() -> tuple[type[BaseException], ...]:
    from kombu.exceptions import OperationalError
    from redis.exceptions import RedisError

    # RuntimeError: celery's Redis result backend gives up reconnecting with one
    return (OperationalError, RedisError, ConnectionError, TimeoutError, RuntimeError)


class CeleryEngine:
    name = "celery"

    def __init__(self, broker: str) -> None:
        self.broker = broker
        self.app = make_app(broker)
        self.errors = _connection_errors()

    def _io(self, call: Callable[[], Any]) -> Any:
        """A broker or backend call; losing either is BrokerDown, which pauses the portfolio."""
        try:
            return call()
        except self.errors as exc:
            detail = str(exc).strip().splitlines()[0] if str(exc).strip() else "no detail"
            raise BrokerDown(f"broker {self._shown()} unreachable ({exc.__class__.__name__}: {detail})") from None

    def live(self, known: dict[str, str]) -> dict[str, str]:
        """Of `known` (job key → task id sent before), those to wait for rather than send again: a result is
        in the backend, or the task is still queued or held by a worker in the broker."""
        from planner.portfolio.broker import is_redis, live_task_ids

        if not known:
            return {}
        if not is_redis(self.broker):
            return {}  # no way to look into the queue: send again (results are recorded once anyway)
        in_broker = self._io(lambda: live_task_ids(self.broker))
        ready = self._ready(list(known.values()))
        return {key: task_id for key, task_id in known.items() if task_id in in_broker or task_id in ready}

    def run(self, jobs: list[Job], on_start: Callable[[Job, str | None], None],
            on_result: Callable[[Result], None], reattach: dict[str, str] | None = None) -> None:
        """Send `jobs` (a job whose key is in `reattach` is already live under that task id: it is waited
        for, not sent again) and hand each result to `on_result` as it arrives."""
        self._io(lambda: self.app.connection_for_write().ensure_connection(max_retries=1))
        waiting: dict[str, Job] = {}
        for job in jobs:
            task_id = (reattach or {}).get(job.key)
            if task_id is None:
                task_id = self._io(partial(self.app.send_task, TASK, args=[job.model_dump(mode="json")])).id
                on_start(job, task_id)
            waiting[task_id] = job
        self._collect(waiting, on_result)

    def _ready(self, task_ids: list[str]) -> dict[str, dict[str, Any]]:
        """Task id → result meta for those finished, in one MGET per batch (not one request per task)."""
        from celery import states

        backend, found = self.app.backend, {}
        for start in range(0, len(task_ids), BATCH):
            batch = task_ids[start:start + BATCH]
            values = self._io(partial(backend.mget, [backend.get_key_for_task(t) for t in batch]))
            for task_id, value in zip(batch, values, strict=True):
                if value is not None:
                    meta = backend.decode_result(value)
                    if meta["status"] in states.READY_STATES:
                        found[task_id] = meta
        return found

    def _collect(self, waiting: dict[str, Job], on_result: Callable[[Result], None]) -> None:
        while waiting:
            for task_id, meta in self._ready(list(waiting)).items():
                job = waiting.pop(task_id)
                if meta["status"] == "SUCCESS":
                    on_result(Result.model_validate(meta["result"]))
                else:
                    on_result(Result(repo=job.repo, key=job.key, commit=job.commit, status="error", exit_code=5,
                                     error=f"worker raised {meta.get('result')!r}"))
                self._io(partial(self.app.backend.forget, task_id))  # recorded: the backend copy can go
            if waiting:
                time.sleep(POLL_S)

    def _shown(self) -> str:
        from kombu.utils.url import maybe_sanitize_url

        return str(maybe_sanitize_url(self.broker))
