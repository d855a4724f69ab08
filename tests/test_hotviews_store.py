"""Warming and reading hot views, against both backends: keys, TTLs, invalidation, lookups, failures."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import orjson
import pytest
from conftest import commit_all, write_files
from hotviews_support import HotBackend

from planner import service
from planner.bundle import render
from planner.config import Settings
from planner.errors import PlannerError
from planner.hotviews import bundles as hot
from planner.hotviews import naming, slices, tccms
from planner.hotviews.store import TEMPLATES, HotViews, SliceLookup
from repocontext.store import RepoContextStore

pytest_plugins = ["hotviews_fixtures"]

FILES = {"requirements.txt": "requests==2.30.0\nPyYAML==5.3.1\n", "Dockerfile": "FROM python:3.11-slim\n"}


def snapshot(repo: Path) -> naming.Snapshot:
    snap = naming.snapshot(RepoContextStore(Settings.from_env().home), repo)
    assert snap is not None
    return snap


def test_gather_warms_the_slice_set_with_ttls(hv_backend: HotBackend, make_repo: Callable[..., Path],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANNER_HOTVIEWS_TTL", "3600")
    repo = make_repo(FILES)
    service.gather_repo(Settings.from_env(), repo)
    client, snap = hv_backend.client(), snapshot(repo)
    in_service = tccms.in_service(Settings.from_env())
    key = naming.slices_key(snap, naming.tccm_set(in_service))
    fields = {f.decode() for f in client.hkeys(key)}
    assert TEMPLATES in fields
    dockerfile = naming.slice_field("containers.dockerfiles[path=${inputs.dockerfile}]", {"dockerfile": "Dockerfile"})
    assert dockerfile in fields
    assert naming.slice_field("dependencies.${inputs.package}", {"package": "requests"}) in fields
    assert naming.slice_field("dependencies.${inputs.package}", {}) in fields  # the widened form
    for name in (key, naming.meta_key(snap), naming.repo_index(snap.repo_id)):
        assert 0 < client.ttl(name) <= 3600
    assert all(k.startswith(naming.PREFIX.encode() + b":") for k in client.scan_iter(match="*"))


def test_lookup_hits_misses_and_unwarmed_keys(hv_backend: HotBackend, make_repo: Callable[..., Path]) -> None:
    repo = make_repo(FILES)
    service.gather_repo(Settings.from_env(), repo)
    settings = Settings.from_env()
    tccm = service.task_class(settings, "vulnerability-remediation")
    views = HotViews.open(settings)
    lookup = views.slices(snapshot(repo), naming.tccm_set(tccms.in_service(settings)), tccm, {"package": "requests"})
    assert isinstance(lookup, SliceLookup)
    hit = lookup.get("dependencies.${inputs.package}", {"package": "requests"})
    assert hit is not None and hit.key == "dependencies.requests" and hit.body == render.render_value(hit.value)
    # a warmed key, absent from the snapshot (no advisories were given)
    assert lookup.get("vulnerabilities[package=${inputs.package}]", {"package": "requests"}) is None
    assert lookup.get("call_sites.${inputs.package}", {"package": "requests"}) is None  # not in the slice set
    assert (lookup.hits, lookup.misses) == (1, 1)
    other = views.slices(snapshot(repo), "0" * 16, tccm, {})  # a different TCCM set: nothing warmed for it
    assert other.templates == frozenset() and other.get("dependencies.${inputs.package}", {}) is None


def test_a_new_snapshot_retires_the_old_keys(hv_backend: HotBackend, make_repo: Callable[..., Path]) -> None:
    repo = make_repo(FILES)
    settings = Settings.from_env()
    service.gather_repo(settings, repo)
    old = snapshot(repo)
    client = hv_backend.client()
    old_keys = {k for k in client.smembers(naming.repo_index(old.repo_id))}
    assert old_keys and all(client.exists(k) for k in old_keys)
    write_files(repo, {"requirements.txt": "requests==2.32.0\n"})
    commit_all(repo)
    service.gather_repo(settings, repo)
    report = hot.warm(settings, repo.resolve())
    assert report.removed_keys == 0 and report.commit == snapshot(repo).commit != old.commit
    assert not any(client.exists(k) for k in old_keys)
    assert all(k.decode().startswith(snapshot(repo).base) for k in client.smembers(naming.repo_index(old.repo_id)))


def test_warm_needs_a_gathered_repository(hv_backend: HotBackend, make_repo: Callable[..., Path]) -> None:
    repo = make_repo(FILES)
    with pytest.raises(PlannerError, match="planner gather"):
        hot.warm(Settings.from_env(), repo.resolve())


def test_a_redis_error_is_recorded_not_raised(hv_backend: HotBackend, make_repo: Callable[..., Path]) -> None:
    views = HotViews.open(Settings.from_env())
    assert views.call(lambda r: r.execute_command("NO-SUCH-COMMAND")) is None
    assert views.error is not None and views.error.startswith("ResponseError")
    assert views.call(lambda r: r.ping()) is None  # the store stays unavailable for the rest of the build
    assert not views.usable


def _slices(client: object, repo: Path) -> dict[bytes, bytes]:
    key = naming.slices_key(snapshot(repo), naming.tccm_set(tccms.in_service(Settings.from_env())))
    return {f: v for f, v in client.hgetall(key).items() if f.startswith(b"[")}  # type: ignore[attr-defined]


def test_a_warm_carries_slices_of_unchanged_sections_byte_for_byte(hv_backend: HotBackend,
                                                                     make_repo: Callable[..., Path]) -> None:
    settings = Settings.from_env()
    repo = make_repo({**FILES, "app.py": "import requests\n"})
    service.gather_repo(settings, repo)
    client = hv_backend.client()
    write_files(repo, {"app.py": "import requests\nimport yaml\n"})  # source only: dependencies unchanged
    commit_all(repo)
    service.gather_repo(settings, repo, warm=False)
    report = hot.warm(settings, repo.resolve())
    carried = _slices(client, repo)
    dependency_slices = sum(orjson.loads(f)[0].startswith("dependencies") for f in carried)
    assert dependency_slices and report.carried >= dependency_slices and report.slices == len(carried)
    for name in client.scan_iter(match=f"{naming.PREFIX}:*"):  # the same snapshot warmed from nothing
        client.delete(name)
    cold = hot.warm(settings, repo.resolve())
    assert cold.carried == 0 and _slices(client, repo) == carried

    write_files(repo, {"requirements.txt": "requests==2.32.0\nPyYAML==5.3.1\n"})  # the dependencies change
    commit_all(repo)
    service.gather_repo(settings, repo, warm=False)
    changed = hot.warm(settings, repo.resolve())
    assert changed.carried < report.carried
    hit = HotViews.open(settings).slices(snapshot(repo), naming.tccm_set(tccms.in_service(settings)),
                                         service.task_class(settings, "vulnerability-remediation"),
                                         {"package": "requests"}).get("dependencies.${inputs.package}",
                                                                      {"package": "requests"})
    assert hit is not None and "2.32.0" in hit.body and "2.30.0" not in hit.body


def test_a_capped_warm_is_not_carried_from(hv_backend: HotBackend, make_repo: Callable[..., Path],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    settings = Settings.from_env()
    repo = make_repo({**FILES, "app.py": "x = 1\n"})
    monkeypatch.setattr(slices, "MAX_SLICES", 2)
    service.gather_repo(settings, repo)
    monkeypatch.setattr(slices, "MAX_SLICES", 5_000)
    write_files(repo, {"app.py": "x = 2\n"})
    commit_all(repo)
    service.gather_repo(settings, repo, warm=False)
    report = hot.warm(settings, repo.resolve())
    assert report.carried == 0 and report.slices > 2
