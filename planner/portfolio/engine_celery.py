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
import time
from collections.abc import Callable
from typing import Any

from planner.portfolio.coordinator import BrokerDown
from planner.portfolio.model import Job, Result

TASK = "planner.portfolio.run"
POLL_S = 0.5
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


def run_task(payload: dict[str, Any]) -> dict[str, Any]:
    """In a `planner worker`: run one job in this worker's own PLANNER_HOME and ship the run back."""
    from planner.config import Settings
    from planner.portfolio.execute import execute

    return execute(Job.model_validate(payload), Settings.from_env(), shipping=True).model_dump(mode="json")


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

    def run(self, jobs: list[Job], on_start: Callable[[Job, str | None], None],
            on_result: Callable[[Result], None]) -> None:
        self._io(lambda: self.app.connection_for_write().ensure_connection(max_retries=1))
        waiting = {}
        for job in jobs:
            async_result = self._io(lambda job=job: self.app.send_task(TASK, args=[job.model_dump(mode="json")]))
            waiting[async_result.id] = (job, async_result)
            on_start(job, async_result.id)
        self._collect(waiting, on_result)

    def _collect(self, waiting: dict[str, tuple[Job, Any]], on_result: Callable[[Result], None]) -> None:
        while waiting:
            for task_id in list(waiting):
                job, async_result = waiting[task_id]
                if not self._io(async_result.ready):
                    continue
                del waiting[task_id]
                if self._io(async_result.successful):
                    on_result(Result.model_validate(self._io(lambda r=async_result: r.result)))
                else:
                    on_result(Result(repo=job.repo, key=job.key, commit=job.commit, status="error", exit_code=5,
                                     error=f"worker raised {async_result.result!r}"))
                self._io(async_result.forget)
            if waiting:
                time.sleep(POLL_S)

    def _shown(self) -> str:
        from kombu.utils.url import maybe_sanitize_url

        return str(maybe_sanitize_url(self.broker))
