"""The runs list's table (`run_list` in runs.sqlite): written by real dispatches as they run and finish, migrated
once for an older home by its first writer, served by `planner ui` without writing, and a killed run reading
as interrupted."""

from __future__ import annotations

import gc
import json
import os
import signal
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli
from fastapi.testclient import TestClient
from test_runs_durable import ADVISORY, _start, _wait_for
from ui_support import snapshot

from planner.config import Settings
from planner.run.dispatch import dispatch
from planner.store import runindex
from planner.store.provenance import ProvenanceStore, index_summary
from planner.store.runs import RunStore
from planner.ui.app import create_app

SHOP = {"requirements.txt": "requests==2.30.0\n", "app.py": "import requests\nrequests.get('https://example.com')\n"}
COLUMNS = ("kind", "task_class", "status", "repo", "created_at", "updated_at", "commit_id", "items", "tokens",
           "max_tokens", "llm_calls", "cost_usd", "complete")


@pytest.fixture
def advisories(tmp_path: Path) -> Path:
    directory = tmp_path / "osv"
    directory.mkdir()
    (directory / "PYSEC-2023-74.json").write_text(json.dumps(ADVISORY))
    return directory


def row(home: Path, run_id: str) -> dict[str, Any] | None:
    db = sqlite3.connect(home / "runs.sqlite")
    try:
        found = db.execute(f"SELECT {', '.join(COLUMNS)} FROM run_list WHERE id = ?", (run_id,)).fetchone()
    finally:
        db.close()
    return dict(zip(COLUMNS, found, strict=True)) if found else None


def duration(home: Path, run_id: str) -> float | None:
    db = sqlite3.connect(home / "runs.sqlite")
    try:
        return db.execute("SELECT duration_s FROM run_list WHERE id = ?", (run_id,)).fetchone()[0]
    finally:
        db.close()


def run_dispatch(home: Path, repo: Path, advisories: Path) -> str:
    state = dispatch(Settings.from_env(), "vulnerability-remediation", repo, {}, {"advisories": str(advisories)})
    assert state["status"] == "succeeded", state.get("error")
    gc.collect()  # the dispatch's checkpointer connection: closed now (a close checkpoints the WAL), not mid-test
    return str(state["run_id"])


def test_a_finished_run_has_its_summary_row_and_a_status_change_updates_it(
        home: Path, make_repo: Callable[..., Path], advisories: Path) -> None:
    run_id = run_dispatch(home, make_repo(SHOP), advisories)
    summary = index_summary(ProvenanceStore(home).get(run_id))
    stored = RunStore(home).get(run_id)
    found = row(home, run_id)
    assert found is not None
    assert found == {"kind": "run", "task_class": "vulnerability-remediation", "status": "succeeded",
                     "repo": stored["repo"], "created_at": stored["created_at"], "updated_at": stored["updated_at"],
                     "commit_id": summary["commit"], "items": summary["items"], "tokens": summary["tokens"],
                     "max_tokens": summary["max_tokens"], "llm_calls": summary["llm_calls"],
                     "cost_usd": summary["cost_usd"], "complete": 1}
    assert found["tokens"] > 0 and found["items"] == 1 and found["commit_id"]
    assert found["updated_at"] >= found["created_at"] and duration(home, run_id) is not None
    store = RunStore(home)
    store.set_status(run_id, "running")  # a resume: running again, under this (live) process
    assert row(home, run_id)["status"] == "running" and duration(home, run_id) is None  # type: ignore[index]
    store.set_status(run_id, "failed")
    after = row(home, run_id)
    assert after is not None and after["status"] == "failed" and after["tokens"] == found["tokens"]
    assert after["updated_at"] >= found["updated_at"] and duration(home, run_id) is not None
    store.close()


def test_a_bundle_build_has_its_row(home: Path, make_repo: Callable[..., Path]) -> None:
    built = run_cli("bundle", "vulnerability-remediation", "--repo", str(make_repo(SHOP)), "--input",
                    "package=requests", "--json")
    assert built.returncode == 0, built.stderr
    record = json.loads(built.stdout)
    found = row(home, record["id"])
    assert found is not None and (found["kind"], found["status"], found["updated_at"]) == ("bundle", "built", None)
    assert found["tokens"] == record["totals"]["tokens"] and found["complete"] == 1


def _downgrade(home: Path) -> None:
    """Make `home` look like one written before the runs list's table existed."""
    db = sqlite3.connect(home / "runs.sqlite")
    with db:
        for trigger in ("run_list_insert", "run_list_update", "run_list_delete"):
            db.execute(f"DROP TRIGGER {trigger}")
        db.execute("DROP TABLE run_list")
        db.execute("PRAGMA user_version = 0")
    db.close()


def test_a_home_without_the_table_is_listed_then_migrated_by_a_writer(
        home: Path, make_repo: Callable[..., Path], advisories: Path, tmp_path: Path) -> None:
    first = run_dispatch(home, make_repo(SHOP), advisories)
    settings = Settings.from_env()
    with (home / "runs" / "index.jsonl").open("a") as index:  # a bundle build's line from before summary keys
        index.write(json.dumps({"id": "20200101-000000-0bd000", "kind": "bundle", "task_class": "old",
                                "status": "built", "repo": "/old", "created_at": "2020-01-01T00:00:00+00:00"}) + "\n")
    _downgrade(home)
    before = snapshot(home)
    client = TestClient(create_app(settings))
    listed = client.get("/api/runs").json()
    cli = json.loads(run_cli("runs", "list", "--json").stdout)  # a writer: this migrates the home
    assert snapshot(home) != before and listed == cli and [r["id"] for r in cli] == ["20200101-000000-0bd000", first]
    page = client.get("/runs").text
    assert f'data-id="{first}"' in page and "20200101-000000-0bd000" in page
    catalog = client.app.state.catalog  # type: ignore[attr-defined]
    assert catalog.migrated  # it followed the migration: now runs.sqlite itself, no copy
    assert row(home, "20200101-000000-0bd000")["complete"] == 0  # type: ignore[index]
    assert row(home, first)["tokens"] > 0  # type: ignore[index]


def test_the_ui_does_not_migrate_and_writes_nothing(home: Path, make_repo: Callable[..., Path],
                                                    advisories: Path) -> None:
    run_id = run_dispatch(home, make_repo(SHOP), advisories)
    _downgrade(home)
    before = snapshot(home)
    client = TestClient(create_app(Settings.from_env()))
    for url in ("/runs", "/runs?status=succeeded", "/api/runs", "/api/portfolios", f"/runs/{run_id}"):
        assert client.get(url).status_code == 200, url
    assert snapshot(home) == before and not client.app.state.catalog.migrated  # type: ignore[attr-defined]
    db = sqlite3.connect(home / "runs.sqlite")
    assert db.execute("PRAGMA user_version").fetchone()[0] == 0
    db.close()
    assert [r["id"] for r in client.get("/api/runs", params={"status": "succeeded"}).json()] == [run_id]


def test_a_killed_run_shows_interrupted(home: Path, make_repo: Callable[..., Path], advisories: Path) -> None:
    repo = make_repo({**SHOP, "Makefile": "test:\n\tsleep 4\n"})
    process = _start(repo, advisories)
    seen = _wait_for(process, "verifying with")  # the verify node is running its (slow) test command
    run_id = seen[0].split()[1]
    client = TestClient(create_app(Settings.from_env()))
    assert client.get("/api/runs", params={"status": "running"}).json()[0]["id"] == run_id
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    assert row(home, run_id)["status"] == "running"  # type: ignore[index]  # as stored: nobody wrote the end
    shown = client.get("/api/runs", params={"status": "interrupted"}).json()
    assert [r["id"] for r in shown] == [run_id]
    assert f'data-id="{run_id}"' in client.get("/runs", params={"status": "interrupted"}).text
    assert client.get("/api/runs", params={"status": "running"}).json() == []


def test_migration_fills_the_table_as_the_writers_do(home: Path, make_repo: Callable[..., Path],
                                                     advisories: Path) -> None:
    run_id = run_dispatch(home, make_repo(SHOP), advisories)
    written = row(home, run_id)
    _downgrade(home)
    RunStore(home).close()  # the first writer to open the store migrates it
    assert row(home, run_id) == written
    db = sqlite3.connect(home / "runs.sqlite")
    assert runindex.current(db)
    db.close()
