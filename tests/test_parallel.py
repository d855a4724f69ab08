"""Process-parallel per-file work: same results, same order, as a plain loop — and the gather along with it."""

from __future__ import annotations

import multiprocessing
import os
import re
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from repocontext import parallel
from repocontext.gather import gather
from repocontext.store import RepoContextStore, StoreError


def _pid_and_square(item: int) -> tuple[int, int]:
    return os.getpid(), item * item


def _fails_on_seven(item: int) -> int:
    if item == 7:
        raise ValueError("seven")
    return item


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "BREAK_EVEN_S", 0.0)  # let tiny test batches take the process path


def test_map_ordered_uses_child_processes_and_keeps_order(small_batches: None) -> None:
    assert parallel.can_fork(), "another thread is running: the process path cannot be tested"
    pending = parallel.start_map(_pid_and_square, list(range(50)), 2, 1.0)
    workers = pending.pids
    assert len(workers) == 1  # one forked worker; this process is the other once it asks for the results
    results = pending.result()
    assert [square for _, square in results] == [i * i for i in range(50)]
    assert {pid for pid, _ in results} <= {os.getpid(), *workers}


def test_map_ordered_runs_in_process_when_parallelism_does_not_pay(small_batches: None,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    assert {pid for pid, _ in parallel.map_ordered(_pid_and_square, [1, 2, 3], 1, 1.0)} == {os.getpid()}
    monkeypatch.setattr(parallel, "BREAK_EVEN_S", 0.5)  # work estimated under the break-even point
    assert {pid for pid, _ in parallel.map_ordered(_pid_and_square, [1, 2, 3], 2, 0.4)} == {os.getpid()}
    pending = parallel.start_map(_pid_and_square, [1, 2, 3], 2, 0.6)
    assert pending.forked
    assert [square for _, square in pending.result()] == [1, 4, 9]


def test_map_ordered_stays_in_process_when_other_threads_run(small_batches: None) -> None:
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        assert not parallel.can_fork()
        assert {pid for pid, _ in parallel.map_ordered(_pid_and_square, list(range(20)), 2, 1.0)} == {os.getpid()}
    finally:
        release.set()
        other.join()


def test_chunks_give_each_large_item_its_own_chunk_first_and_keep_every_index_once() -> None:
    costs = [1.0] * 20 + [30.0, 30.0, 30.0] + [1.0] * 20  # three large files side by side, as in dist/
    planned = parallel.chunks(costs, 8)
    assert planned[:3] == [[20], [21], [22]]  # the costliest first, each alone: the workers split them
    assert sorted(i for chunk in planned for i in chunk) == list(range(len(costs)))
    assert max(sum(costs[i] for i in chunk) for chunk in planned[3:]) <= sum(costs) / 8 + 1.0


def test_chunks_of_equal_costs_are_contiguous_runs_of_equal_count() -> None:
    assert parallel.chunks([1.0] * 12, 4) == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10, 11]]
    assert parallel.chunks([], 4) == []


def test_map_ordered_with_uneven_costs_keeps_the_items_order(small_batches: None) -> None:
    items = list(range(40))
    costs = [50.0 if i % 13 == 0 else 1.0 for i in items]
    pending = parallel.start_map(_pid_and_square, items, 2, costs)
    assert pending.forked
    assert [square for _, square in pending.result()] == [i * i for i in items]


def test_map_ordered_raises_what_the_function_raises(small_batches: None) -> None:
    with pytest.raises(ValueError, match="seven"):
        parallel.map_ordered(_fails_on_seven, list(range(20)), 2, 1.0)


def test_default_workers_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(parallel.WORKERS_ENV, "1")
    assert parallel.default_workers() == 1
    monkeypatch.setenv(parallel.WORKERS_ENV, "3")
    assert parallel.default_workers() == 3
    monkeypatch.delenv(parallel.WORKERS_ENV)
    assert 1 <= parallel.default_workers() <= parallel.MAX_WORKERS


REPO_FILES = {
    "requirements.txt": "requests==2.30.0\nPyYAML==5.3.1\n",
    "package.json": '{"name": "web", "dependencies": {"lodash": "4.17.20"}, "devDependencies": {"vitest": "1"}}\n',
    "go.mod": "module example.com/svc\n\ngo 1.22\n\nrequire github.com/gin-gonic/gin v1.9.0\n",
    "Dockerfile": "FROM python:3.11-slim\nCOPY run.sh /run.sh\nCOPY app /app\nENTRYPOINT [\"/run.sh\"]\n",
    "run.sh": "#!/bin/sh\nexec python -m app\n",
    "app/__init__.py": "",
    "app/core.py": "import yaml\nimport requests\n\n\ndef load(p):\n    return yaml.safe_load(requests.get(p).text)\n",
    "app/util.py": "from . import core\nfrom .core import load\n\n\ndef go():\n    return core.load('x') or load()\n",
    "app/broken.py": "def (:\n",
    "tests/test_core.py": "import unittest\nfrom app import core\n\n\nclass T(unittest.TestCase):\n    pass\n",
    "tests/helpers.py": "class HelperTestCase:\n    pass\n",
    "web/index.js": "import _ from 'lodash';\nexport const f = () => _.map([1], x => x);\n",
    "web/index.test.js": "import { f } from './index.js';\nimport { test } from 'vitest';\ntest('f', () => f());\n",
    "svc/main.go": "package main\n\nimport \"github.com/gin-gonic/gin\"\n\nfunc main() { gin.Default() }\n",
    "svc/main_test.go": "package main\n\nimport \"testing\"\n\nfunc TestMain(t *testing.T) {}\n",
    **{f"app/copy{i}.py": "import yaml\nyaml.safe_load('a')\n" for i in range(12)},  # identical blobs
    **{f"web/copy{i}.ts": "import axios from 'axios';\naxios.get('/');\n" for i in range(6)},
}


def _json(context: object) -> str:
    return re.sub(r'"gathered_at":"[^"]*"', '"gathered_at":""', context.model_dump_json())  # type: ignore[attr-defined]


def test_parallel_gather_equals_serial_gather(make_repo: Callable[..., Path], small_batches: None,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    assert parallel.can_fork(), "another thread is running: the process path cannot be tested"
    forked_batches: list[int] = []
    original = parallel.map_ordered

    def counting(func: Callable[[object], object], items: list[object], workers: int,
                 seconds: float) -> list[object]:
        if workers > 1 and items:
            forked_batches.append(len(items))
        return original(func, items, workers, seconds)

    monkeypatch.setattr(parallel, "map_ordered", counting)
    repo = make_repo(REPO_FILES)
    serial_cache: dict = {}
    parallel_cache: dict = {}
    serial = gather(repo, workers=1, cache=serial_cache)
    assert forked_batches == []
    forked = gather(repo, workers=2, cache=parallel_cache)
    assert forked_batches  # call_sites went through the workers
    assert _json(forked) == _json(serial)
    assert parallel_cache == serial_cache
    assert serial.call_sites["yaml"].sites and serial.tests.files  # the repo exercises the probes


def test_incremental_gather_equals_a_fresh_one(make_repo: Callable[..., Path], tmp_path: Path,
                                               small_batches: None) -> None:
    repo = make_repo(REPO_FILES)
    store = RepoContextStore(tmp_path / "home")
    cache: dict = {}
    first = gather(repo, cache=cache, workers=2)
    path = store.save(first)
    assert path.is_file() and store.load_raw(repo) == first.model_dump(mode="json")
    (repo / "app" / "core.py").write_text("import yaml\n\n\ndef load(p):\n    return yaml.full_load(p)\n")
    (repo / "app" / "copy3.py").write_text("import flask\nflask.Flask('x')\n")
    (repo / "tests" / "test_new.py").write_text("import requests\n\n\ndef test_x():\n    requests.get('/')\n")
    again = gather(repo, previous=store.load_raw(repo), cache=cache, workers=2)
    fresh = gather(repo, workers=1)
    assert _json(again).replace('"reused":true', '"reused":false') == _json(fresh)
    assert again.meta.probes["containers"].reused and not again.meta.probes["call_sites"].reused


def _forks_from_a_daemonic_worker(_: int) -> list[tuple[int, int]]:
    return parallel.map_ordered(_pid_and_square, list(range(20)), 2, 1.0)


def test_a_daemonic_worker_maps_in_process(small_batches: None) -> None:
    """A pool's worker may not have children: there the work runs in the worker itself, with the same result."""
    with multiprocessing.get_context("fork").Pool(1) as pool:  # pool workers are daemonic
        found = pool.map(_forks_from_a_daemonic_worker, [0])[0]
    assert [square for _, square in found] == [n * n for n in range(20)]
    assert len({pid for pid, _ in found}) == 1 and found[0][0] != os.getpid()


_TEST_PROCESS = os.getpid()


def _exits(item: int) -> int:
    if os.getpid() != _TEST_PROCESS:
        os._exit(7)  # a forked worker dies at its first item (as when the kernel kills it for memory)
    return item


def _wait_until_ended(pid: int) -> None:
    """Block until child `pid` has ended, leaving it to be reaped (WNOWAIT): the code under test reaps it."""
    os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)


_told: list[int] = []  # the write end of a pipe a forked worker tells its niceness through (test_workers_run_…)


def _niceness_and_item(item: int) -> tuple[int, int]:
    nice = os.nice(0)
    if os.getpid() != _TEST_PROCESS and _told:
        os.write(_told[0], bytes([nice]))
    return nice, item


def test_start_map_returns_before_the_results_and_keeps_their_order(small_batches: None, tmp_path: Path) -> None:
    """The workers compute while the caller goes on; results come back in item order, large ones too (more than
    a pipe holds: each worker sends its results once its work is done, so none waits on the caller)."""
    gate = tmp_path / "gate"
    items = list(range(40))

    def wait_then_pad(item: int) -> bytes:
        while not gate.exists():  # the caller opens the gate after start_map returned
            os.sched_yield()
        return bytes([item]) * 20_000

    pending = parallel.start_map(wait_then_pad, items, 2, 1.0)
    assert pending.forked
    gate.write_text("open")
    assert pending.result() == [bytes([i]) * 20_000 for i in items]
    assert pending.result() is pending.result()  # collected once


def test_start_map_without_parallelism_computes_on_result(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "BREAK_EVEN_S", 10.0)
    calls: list[int] = []
    pending = parallel.start_map(lambda item: calls.append(item) or item, [1, 2, 3], 2, 1.0)
    assert not pending.forked and calls == []  # nothing ran yet
    assert pending.result() == [1, 2, 3] and calls == [1, 2, 3]


def test_a_worker_that_dies_is_reported_and_reaped(small_batches: None) -> None:
    pending = parallel.start_map(_exits, list(range(10)), 3, 1.0)
    pids = pending.pids
    assert len(pids) == 2
    for pid in pids:  # both took a chunk and died, before this process takes any
        _wait_until_ended(pid)
    with pytest.raises(parallel.WorkerDied, match="exit status 7"):
        pending.result()
    assert pending.pids == []
    for pid in pids:
        with pytest.raises(ChildProcessError):  # waited for already
            os.waitpid(pid, os.WNOHANG)


def test_cancel_stops_and_reaps_the_workers(small_batches: None) -> None:
    pending = parallel.start_map(lambda item: threading.Event().wait(60), list(range(4)), 3, 1.0)
    pids = pending.pids
    assert len(pids) == 2
    pending.cancel()  # at once: the workers' minute-long waits are not waited for
    assert pending.pids == []
    for pid in pids:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


def test_workers_run_at_the_niceness_asked(small_batches: None) -> None:
    own = os.nice(0)
    heard, told = os.pipe()
    _told.append(told)
    try:
        pending = parallel.start_map(_niceness_and_item, list(range(64)), 3, 1.0, nice=5)
        assert len(pending.pids) == 2  # three workers: two forked, and this process once it asks for the results
        assert os.read(heard, 1)[0] == min(own + 5, 19)  # blocks until a worker has computed an item
        found = pending.result()
    finally:
        _told.clear()
        os.close(told)
        os.close(heard)
    assert {nice for nice, _ in found} <= {own, min(own + 5, 19)}  # this process computes at its own
    assert [item for _, item in found] == list(range(64))


def test_start_call_runs_in_a_worker_when_it_pays() -> None:
    pending = parallel.start_call(_pid_and_square, 7, 2, 1.0)
    assert pending.forked and len(pending.pids) == 1
    _wait_until_ended(pending.pids[0])  # it took the call: this process finds nothing left to compute
    [(pid, square)] = pending.result()
    assert square == 49 and pid != os.getpid()
    assert pending.pids == []


@pytest.mark.parametrize(("workers", "seconds"), [(1, 1.0), (2, parallel.FORK_S / 2)])
def test_start_call_computes_here_when_a_fork_does_not_pay(workers: int, seconds: float) -> None:
    pending = parallel.start_call(_pid_and_square, 3, workers, seconds)
    assert not pending.forked
    assert pending.result() == [(os.getpid(), 9)]


def test_start_call_raises_what_the_call_raised() -> None:
    pending = parallel.start_call(_fails_on_seven, 7, 2, 1.0)
    assert pending.forked
    with pytest.raises(ValueError, match="seven"):
        pending.result()


def _big_cache(results: int) -> dict[str, dict[str, object]]:
    return {"call_sites@9": {f"src/m{i}.py@{i:040x}": {"sites": [i], "imports": ["yaml"]} for i in range(results)}}


@pytest.fixture
def started_calls(monkeypatch: pytest.MonkeyPatch) -> list[parallel.Pending]:
    """What parallel.start_call started, on a machine with two cores."""
    started: list[parallel.Pending] = []
    real = parallel.start_call
    monkeypatch.setattr(parallel, "start_call", lambda *a: started.append(real(*a)) or started[-1])
    monkeypatch.setattr(parallel, "default_workers", lambda: 2)
    return started


def test_save_all_writes_the_cache_in_a_worker_while_saving_the_snapshot(
        make_repo: Callable[..., Path], tmp_path: Path, started_calls: list[parallel.Pending]) -> None:
    repo = make_repo({"app.py": "import yaml\nyaml.safe_load('a')\n", "requirements.txt": "pyyaml==6.0\n"})
    store = RepoContextStore(tmp_path / "home")
    context = gather(repo, workers=1)
    cache = _big_cache(2_000)  # ~36 ms of writes by the store's estimate: worth a fork
    path = store.save_all(repo, context, cache)
    assert [p.forked for p in started_calls] == [True] and started_calls[0].pids == []  # reaped on return
    assert store.load_cache(repo) == cache
    assert path == store.latest_path(repo) and store.load(repo) == context


def test_save_all_raises_the_workers_failure(make_repo: Callable[..., Path], tmp_path: Path,
                                             started_calls: list[parallel.Pending]) -> None:
    repo = make_repo({"app.py": "print('hi')\n"})
    store = RepoContextStore(tmp_path / "home")
    context = gather(repo, workers=1)
    (store.repo_dir(repo) / "probe-cache.sqlite").mkdir(parents=True)  # a directory where the cache file goes
    with pytest.raises(StoreError, match="cannot write the probe cache"):
        store.save_all(repo, context, _big_cache(2_000))
    assert [p.forked for p in started_calls] == [True]
