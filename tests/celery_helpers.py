"""Real `planner worker` processes against the real redis-server of PLANNER_TEST_REDIS_URL (.ci/run starts
one); the broker uses DB 9 of it. A worker can be given a fake LLM: the only part these tests fake."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

REDIS = os.environ.get("PLANNER_TEST_REDIS_URL")
VISIBILITY_S = "4"  # a job whose worker died comes back this fast
TESTS = Path(__file__).resolve().parent
# A worker whose chat model answers every prompt with the plan in PLANNER_TEST_PLAN (a fake LLM, patched in
# before the worker starts, so its forked pool process has it); everything else is the real `planner worker`.
FAKE_LLM_WORKER = f"""
import json, os, sys
sys.path.insert(0, {str(TESTS)!r})
from fake_llm import FakePlanner, plan_message
import planner.chain.llm as llm
from itertools import repeat
plan = json.loads(os.environ["PLANNER_TEST_PLAN"])
llm.init_model = lambda spec: FakePlanner(messages=repeat(plan_message(**plan)), prompts=[])
from planner.cli import main
sys.argv = ["planner", "worker", "--loglevel", "INFO"]
main()
"""


def broker_url() -> str:
    base = (REDIS or "").rsplit("/", 1)[0]
    return f"{base}/9"


def flush() -> None:
    import redis

    redis.Redis.from_url(broker_url()).flushdb()


def queued() -> int:
    """Jobs waiting in the broker's queue."""
    import redis

    return int(redis.Redis.from_url(broker_url()).llen("celery"))


class Worker:
    """A worker whose home is in the test's tmp dir; the repositories it may run are that dir's (its roots, where
    the tests make their fleets) unless `env` says otherwise. `options`: more `planner worker` options."""

    def __init__(self, home: Path, log: Path, plan: dict | None = None, env: dict[str, str] | None = None,
                 options: list[str] | None = None) -> None:
        self.log, self.home = log, home
        full = {**os.environ, "PLANNER_HOME": str(home), "PLANNER_BROKER_URL": broker_url(),
                "PLANNER_CELERY_VISIBILITY_TIMEOUT": VISIBILITY_S, "PLANNER_REPO_ROOTS": str(home.parent),
                **(env or {})}
        full.pop("PLANNER_REDIS_URL", None)
        if plan is not None:
            full.update({"PLANNER_MODEL": "fake:planner", "PLANNER_TEST_PLAN": json.dumps(plan)})
            args = [sys.executable, "-c", FAKE_LLM_WORKER]
        else:
            args = [sys.executable, "-m", "planner", "worker", "--loglevel", "INFO", *(options or [])]
        with log.open("w") as out:
            self.proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=full, start_new_session=True)

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def received(self) -> int:
        return self.text().count("] received")

    def wait_ready(self, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while "ready." not in self.text():
            assert time.monotonic() < deadline and self.proc.poll() is None, self.text()[-2000:]
            time.sleep(0.2)

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)  # the worker and its pool: a machine lost mid-run
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()
