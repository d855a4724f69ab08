"""The builder's hot-view path, against both backends: a hit is byte-identical to a miss; stale or
changed state is never served; a failing Redis costs the build nothing but the hot views."""

from __future__ import annotations

import signal
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import commit_all, write_files
from hotviews_support import HotBackend, RedisProcess, free_port, settle

from planner import service
from planner.bundle.model import Bundle
from planner.config import Settings
from planner.hotviews import backend, naming, tccms
from planner.hotviews import bundles as hot
from planner.store.provenance import record_for

pytest_plugins = ["hotviews_fixtures"]

FILES = {
    "requirements.txt": "requests==2.30.0\nPyYAML==5.3.1\n",
    "app/main.py": "import requests\nrequests.get('https://example.com')\n",
    "app/util.py": "import yaml\n",
    "Dockerfile": "FROM python:3.11-slim\nCMD python -m app.main\n",
    "pyproject.toml": "[project]\nname = 'x'\nversion = '1'\n",
}
CASES = (("vulnerability-remediation", {"package": "requests"}), ("distroless-migration", {}))


def build(repo: Path, name: str, inputs: dict[str, str], mode: hot.Mode = "all") -> tuple[Bundle, str]:
    settings = Settings.from_env()
    bundle, _view, status = hot.build_bundle(settings, service.task_class(settings, name), repo.resolve(), inputs,
                                             mode=mode)
    return bundle, status


def gathered(make_repo: Callable[..., Path], files: dict[str, str] | None = None) -> Path:
    repo = make_repo(files or FILES)
    service.gather_repo(Settings.from_env(), repo)
    return repo


def sources(bundle: Bundle) -> dict[str, str]:
    return {e.id: e.source for e in bundle.entries if e.status in ("included", "truncated")}


def test_a_hit_is_byte_identical_to_a_miss(hv_backend: HotBackend, make_repo: Callable[..., Path],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    settle(monkeypatch)
    repo = gathered(make_repo)
    settings = Settings.from_env()
    for name, inputs in CASES:
        tccm = service.task_class(settings, name)
        records = []
        for mode in ("off", "all", "all"):
            bundle, view, status = hot.build_bundle(settings, tccm, repo.resolve(), inputs, mode=mode)
            records.append((bundle, status, record_for(bundle, tccm, view, hot_views=status)))
        (cold, off, cold_rec), (first, stored, first_rec), (second, hit, second_rec) = records
        assert off == "off" and "slice hit(s)" in stored and stored.endswith("bundle stored") and hit == "hit: bundle"
        for other in (first, second):
            assert (other.text, other.sha256, other.totals) == (cold.text, cold.sha256, cold.totals)
            assert (other.slices, other.files) == (cold.slices, cold.files)
            assert [e.model_copy(update={"source": "-"}) for e in other.entries] == \
                   [e.model_copy(update={"source": "-"}) for e in cold.entries]
        assert cold_rec.stable_dict(hot_views=False) == first_rec.stable_dict(hot_views=False) \
               == second_rec.stable_dict(hot_views=False)
        assert second_rec.repocontext == cold_rec.repocontext  # commit, gathered-at, freshness without loading it
        assert "hot_view" not in sources(cold).values()
        assert set(sources(second).values()) == {"hot_view"}
        must = [e.id for e in first.entries if (e.band, e.kind, e.status) == ("must_read", "key", "included")]
        assert must and all(sources(first)[i] == "hot_view" for i in must)


def test_a_changed_file_is_never_served_stale(hv_backend: HotBackend, make_repo: Callable[..., Path],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    settle(monkeypatch)
    repo = gathered(make_repo)
    name, inputs = CASES[0]
    build(repo, name, inputs)
    assert build(repo, name, inputs)[1] == "hit: bundle"
    write_files(repo, {"requirements.txt": "requests==2.31.0\nPyYAML==6.0.1\n# pinned\n"})
    bundle, status = build(repo, name, inputs)
    assert status != "hit: bundle" and "requests==2.31.0" in bundle.text
    assert bundle.text == build(repo, name, inputs, mode="off")[0].text
    (repo / "Dockerfile").unlink()  # the snapshot still lists it; the read now finds it gone
    bundle, status = build(repo, *CASES[1])
    assert status != "hit: bundle" and bundle.text == build(repo, *CASES[1], mode="off")[0].text
    assert {e.target: e.status for e in bundle.entries if e.kind == "file"}["Dockerfile"] == "skipped"


def test_a_file_written_within_the_racy_window_is_not_stored(hv_backend: HotBackend,
                                                            make_repo: Callable[..., Path]) -> None:
    repo = gathered(make_repo)  # files written a moment ago: their stat cannot vouch for their content yet
    name, inputs = CASES[0]
    for _ in range(2):
        bundle, status = build(repo, name, inputs)
        assert "slice hit(s)" in status and "bundle stored" not in status
    assert bundle.text == build(repo, name, inputs, mode="off")[0].text


def test_a_new_commit_invalidates(hv_backend: HotBackend, make_repo: Callable[..., Path],
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    settle(monkeypatch)
    repo = gathered(make_repo)
    name, inputs = CASES[0]
    build(repo, name, inputs)
    client = hv_backend.client()
    before = {k for k in client.scan_iter(match=f"{naming.PREFIX}:*") if b":bundle:" in k or b":slices:" in k}
    assert len(before) == 2
    write_files(repo, {"requirements.txt": "requests==2.32.0\n"})
    commit_all(repo, "bump")
    bundle, status = build(repo, name, inputs)
    assert status.startswith("not used (RepoContext is stale")
    assert bundle.text == build(repo, name, inputs, mode="off")[0].text
    service.gather_repo(Settings.from_env(), repo)  # warms the new commit and retires the old keys
    assert not any(client.exists(k) for k in before)
    bundle, status = build(repo, name, inputs)
    assert "slice hit(s)" in status and "requests==2.32.0" in bundle.text


def test_bootstrap_mode_and_off(hv_backend: HotBackend, make_repo: Callable[..., Path],
                                monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(FILES)
    assert build(repo, *CASES[0])[1] == "not used (bootstrap mode: no RepoContext)"
    monkeypatch.setenv("PLANNER_REDIS_URL", "off")
    service.gather_repo(Settings.from_env(), repo)
    bundle, status = build(repo, *CASES[0])
    assert status == "off" and bundle.text == build(repo, *CASES[0], mode="off")[0].text


def test_redis_failing_mid_run(hv_backend: HotBackend, make_repo: Callable[..., Path],
                               monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    if hv_backend.kind == "redis":
        server: RedisProcess = request.getfixturevalue("private_redis")
        monkeypatch.setenv("PLANNER_REDIS_URL", server.url)
        fail = server.kill
    else:
        def fail() -> None:
            backend.embedded_server().connected = False
    settings = Settings.from_env()
    repo = gathered(make_repo)
    first, status = build(repo, *CASES[0])
    assert "slice hit(s)" in status
    fail()
    bundle, _tccm, record = service.build_bundle(settings, CASES[0][0], repo, CASES[0][1])  # timed: bench/failfast.py
    assert record.hot_views is not None and record.hot_views.startswith("unavailable (ConnectionError")
    assert bundle.text == first.text and "hot_view" not in sources(bundle).values()
    assert service.record(settings, record).is_file()  # nothing lost: the record is written as always
    context, _ = service.gather_repo(settings, repo)  # the warm after a gather fails quietly
    assert context.meta.commit is not None


def test_a_hung_server_costs_one_read_timeout(home: Path, make_repo: Callable[..., Path],
                                              monkeypatch: pytest.MonkeyPatch, private_redis: RedisProcess) -> None:
    monkeypatch.setenv("PLANNER_REDIS_URL", private_redis.url)
    repo = gathered(make_repo)
    first, status = build(repo, *CASES[1])
    assert "slice hit(s)" in status
    private_redis.process.send_signal(signal.SIGSTOP)  # alive, connected, never answering
    bundle, status = build(repo, *CASES[1])  # one read timeout: bench/failfast.py times it
    assert status.startswith("unavailable (TimeoutError") and bundle.text == first.text


def test_no_server_at_all_costs_little(home: Path, make_repo: Callable[..., Path],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANNER_REDIS_URL", f"redis://127.0.0.1:{free_port()}/0")
    repo = gathered(make_repo)
    bundle, status = build(repo, *CASES[1])  # timed: bench/failfast.py
    assert status.startswith("unavailable (ConnectionError") and bundle.loaded()


def test_parallel_builds_against_one_backend(hv_backend: HotBackend, make_repo: Callable[..., Path],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    settle(monkeypatch)
    repo = gathered(make_repo)
    expected = build(repo, *CASES[0], mode="off")[0].sha256
    with ThreadPoolExecutor(max_workers=16) as pool:
        results = list(pool.map(lambda _: build(repo, *CASES[0]), range(48)))
    assert {b.sha256 for b, _ in results} == {expected}
    assert not [s for _, s in results if "unavailable" in s]
    assert sum(s == "hit: bundle" for _, s in results) >= 1


def test_secrets_never_reach_redis(hv_backend: HotBackend, make_repo: Callable[..., Path],
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    settle(monkeypatch)
    token = "ghp_" + "A1b2C3d4E5" * 4
    files = {**FILES, ".env": "API_KEY=never-in-redis-7731\n", "tests/test_token.py": f"# {token}\nimport pytest\n"}
    repo = gathered(make_repo, files)
    in_service = len(tccms.in_service(Settings.from_env()))
    assert hot.warm(Settings.from_env(), repo.resolve(), bundles=True).bundles == in_service  # no-input bundles
    build(repo, *CASES[0])
    bundle, status = build(repo, *CASES[0])
    assert status == "hit: bundle"
    assert {e.target for e in bundle.entries if e.status == "denied"} >= {"tests/test_token.py"}
    stored = b"\n".join(hv_backend.values())
    assert stored and token.encode() not in stored and b"never-in-redis-7731" not in stored
