"""The solved-example feed Celery workers share, against a real redis-server: capped, and each worker's cursor
survives the trimming of old examples."""

from __future__ import annotations

from pathlib import Path

import pytest
from celery_helpers import REDIS, broker_url, flush

from planner.patch.plan import Plan
from planner.portfolio import broker
from planner.store.examples import SolvedExamples

pytestmark = pytest.mark.skipif(not REDIS, reason="PLANNER_TEST_REDIS_URL not set (.ci/run starts a redis-server)")


def _example(n: int) -> dict[str, str]:
    plan = Plan(summary=f"title {n}")
    return {"task_class": "readme-title", "fingerprint": f"readme-title fingerprint {n}",
            "plan": plan.model_dump_json(), "patch": f"--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-x\n+{n}\n"}


def test_the_feed_is_capped_and_cursors_survive_trimming(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    flush()
    monkeypatch.setattr(broker, "MAX_SHARED", 20)
    writer, reader = broker.ExampleFeed(broker_url()), broker.ExampleFeed(broker_url())
    writer.push("run-1", [_example(n) for n in range(5)])
    assert reader.pull(tmp_path / "b") == 5  # the other worker's five, filed in its own store
    writer.push("run-2", [_example(n) for n in range(5, 400)])
    length = writer.client.xlen(broker.EXAMPLES)
    assert length < 400 and length >= 20  # trimmed near the cap (approximately, in whole radix-tree nodes)
    fresh = reader.pull(tmp_path / "b")
    assert fresh == length  # what is left after its cursor: the trimmed ones are gone, nothing is read twice
    assert reader.pull(tmp_path / "b") == 0
    store = SolvedExamples(tmp_path / "b" / "examples.sqlite")
    try:
        assert store.count() == 5 + length
    finally:
        store.close()
