"""Opening the planner's SQLite stores: processes racing to create one store never fail a run over it."""

from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path

import pytest

from planner.errors import EnvironmentProblem
from planner.store import sqlite as store_sqlite
from planner.store.runs import RunStore


class _FlakyConnect:
    """sqlite3.connect whose connections answer "database is locked" to the WAL switch `failures` times, as
    SQLite does at once (not after its busy timeout) to a process losing the race to create a store."""

    def __init__(self, failures: int, message: str = "database is locked") -> None:
        self.failures, self.message, self.calls = failures, message, 0
        self.real = sqlite3.connect

    def __call__(self, *args: object, **kwargs: object) -> sqlite3.Connection:
        self.calls += 1
        conn = self.real(*args, **kwargs)  # type: ignore[arg-type]
        if self.calls <= self.failures:
            conn.close()
            raise sqlite3.OperationalError(self.message)
        return conn


def test_a_locked_wal_switch_is_tried_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    flaky = _FlakyConnect(failures=2)
    monkeypatch.setattr(store_sqlite.sqlite3, "connect", flaky)
    monkeypatch.setattr(store_sqlite.time, "sleep", lambda seconds: None)
    db = store_sqlite.open_db(tmp_path / "s.sqlite", "CREATE TABLE IF NOT EXISTS t (x);", "the test store")
    assert flaky.calls == 3
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.execute("INSERT INTO t VALUES (1)")


def test_the_checkpointer_survives_losing_the_race(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The graph's checkpoints store opened its connection without the retry: two portfolio workers starting
    their first runs at once on a fresh PLANNER_HOME failed one repository with "database is locked"."""
    runs = RunStore(tmp_path / "home")
    flaky = _FlakyConnect(failures=1)
    monkeypatch.setattr(store_sqlite.sqlite3, "connect", flaky)
    monkeypatch.setattr(store_sqlite.time, "sleep", lambda seconds: None)
    saver = runs.checkpointer()
    assert flaky.calls == 2
    assert saver.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_store_still_locked_after_every_attempt_is_one_clear_line(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_sqlite.sqlite3, "connect", _FlakyConnect(failures=99))
    monkeypatch.setattr(store_sqlite.time, "sleep", lambda seconds: None)
    with pytest.raises(EnvironmentProblem, match="cannot open the test store: database is locked"):
        store_sqlite.open_db(tmp_path / "s.sqlite", "", "the test store")


def test_other_errors_are_not_tried_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    flaky = _FlakyConnect(failures=5, message="disk I/O error")
    monkeypatch.setattr(store_sqlite.sqlite3, "connect", flaky)
    with pytest.raises(EnvironmentProblem, match="disk I/O error"):
        store_sqlite.open_db(tmp_path / "s.sqlite", "", "the test store")
    assert flaky.calls == 1


def _open_checkpointer(home: str, barrier: multiprocessing.synchronize.Barrier) -> None:
    barrier.wait()
    RunStore(Path(home)).checkpointer().setup()


def test_processes_opening_a_fresh_checkpoint_store_at_once_all_succeed(tmp_path: Path) -> None:
    context = multiprocessing.get_context("fork")
    for round_ in range(12):
        home = tmp_path / f"home{round_}"
        RunStore(home)  # the run store exists; the checkpoints file is made by the racers
        barrier = context.Barrier(4)
        workers = [context.Process(target=_open_checkpointer, args=(str(home), barrier)) for _ in range(4)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        assert [w.exitcode for w in workers] == [0, 0, 0, 0], f"round {round_}"
