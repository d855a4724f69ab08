"""`hotviews stats`: keys, slices, bundles, hit/miss counts and memory, against both backends."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hotviews_support import HotBackend, free_port, settle

from planner import service
from planner.config import Settings
from planner.hotviews import stats
from planner.hotviews.store import HotViews

pytest_plugins = ["hotviews_fixtures"]


def test_counts_after_a_warm_a_miss_and_a_hit(hv_backend: HotBackend, make_repo: Callable[..., Path],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    settle(monkeypatch)
    repo = make_repo({"requirements.txt": "requests==2.30.0\n", "Dockerfile": "FROM python:3.11-slim\n"})
    settings = Settings.from_env()
    service.gather_repo(settings, repo)
    for _ in range(2):
        service.build_bundle(settings, "distroless-migration", repo, {})
    result = stats.collect(HotViews.open(settings))
    assert result.reachable and result.error is None
    assert (result.repos, result.snapshots, result.bundles, result.warms) == (1, 1, 1, 1)
    assert result.keys == 4  # slices, meta, repository index, one bundle
    assert result.slices >= 3  # containers.dockerfiles, containers.shell_evidence, dependencies...
    assert (result.bundle_hits, result.bundle_misses) == (1, 1)
    # containers.dockerfiles hits twice (its key entry and the files_of entry that follows it); shell_evidence
    # is warmed-for but empty in this repo, so both of its entries fall through
    assert (result.slice_hits, result.slice_misses) == (2, 2)
    assert result.slice_hit_ratio == 0.5 and result.bundle_hit_ratio == 0.5
    assert result.value_bytes > 1000
    assert (result.server_used_memory is not None) == (hv_backend.kind == "redis")
    assert set(result.as_json()) >= {"slice_hit_ratio", "bundle_hit_ratio", "keys", "value_bytes"}


def test_unreachable_and_off(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANNER_REDIS_URL", f"redis://127.0.0.1:{free_port()}/0")
    result = stats.collect(HotViews.open(Settings.from_env()))
    assert not result.reachable and result.error is not None and "ConnectionError" in result.error
    monkeypatch.setenv("PLANNER_REDIS_URL", "off")
    result = stats.collect(HotViews.open(Settings.from_env()))
    assert not result.reachable and result.error == "hot views are off"
