"""Durable runs: the run table, the LangGraph checkpointer, and each run's artifacts.

Everything lives under PLANNER_HOME: `runs.sqlite` (one row per dispatched
run, with what is needed to resume it), `checkpoints.sqlite` (LangGraph's
SqliteSaver, thread id = run id) and `runs/<id>/` (patch, report, prompt,
ledger). A run killed at any node resumes from its last checkpoint.
"""

from __future__ import annotations

import json
import os
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planner.errors import EnvironmentProblem, PlannerError
from planner.sqlite import durable_enough, open_db
from repocontext.store import atomic_write

if TYPE_CHECKING:
    from langgraph.checkpoint.sqlite import SqliteSaver

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY, task_class TEXT NOT NULL, repo TEXT NOT NULL, inputs TEXT NOT NULL,
    options TEXT NOT NULL, status TEXT NOT NULL, pid INTEGER, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
"""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class RunStore:
    def __init__(self, home: Path) -> None:
        self.home = home
        self.db = open_db(home / "runs.sqlite", _SCHEMA, f"the run store under {home}")

    def checkpointer(self) -> SqliteSaver:
        from langgraph.checkpoint.sqlite import SqliteSaver  # langgraph only where a run's state is read

        try:
            conn = sqlite3.connect(self.home / "checkpoints.sqlite", check_same_thread=False, timeout=30)
            durable_enough(conn)
        except sqlite3.Error as exc:
            raise EnvironmentProblem(f"cannot open checkpoints under {self.home}: {exc}") from None
        return SqliteSaver(conn)

    def artifacts(self, run_id: str) -> Path:
        return self.home / "runs" / run_id

    def write_artifact(self, run_id: str, name: str, text: str) -> Path:
        path = self.artifacts(run_id) / name
        atomic_write(path, text)
        return path

    def create(self, run_id: str, task_class: str, repo: str, inputs: dict[str, str], options: dict[str, Any]) -> None:
        with self.db:
            self.db.execute("INSERT INTO runs VALUES (?,?,?,?,?,?,?,?,?)",
                            (run_id, task_class, repo, json.dumps(inputs, sort_keys=True),
                             json.dumps(options, sort_keys=True), "running", os.getpid(), _now(), _now()))

    def adopt(self, row: dict[str, Any]) -> bool:
        """Add a run made in another PLANNER_HOME (a portfolio worker's); False when this id is already known."""
        with self.db:
            cursor = self.db.execute(
                "INSERT OR IGNORE INTO runs VALUES (?,?,?,?,?,?,?,?,?)",
                (row["id"], row["task_class"], row["repo"], json.dumps(row["inputs"], sort_keys=True),
                 json.dumps(row["options"], sort_keys=True), row["status"], None, row["created_at"],
                 row["updated_at"]))
        return cursor.rowcount == 1

    def set_status(self, run_id: str, status: str) -> None:
        with self.db:
            self.db.execute("UPDATE runs SET status = ?, pid = ?, updated_at = ? WHERE id = ?",
                            (status, os.getpid() if status == "running" else None, _now(), run_id))

    def get(self, run_id: str) -> dict[str, Any]:
        rows = self.db.execute("SELECT * FROM runs WHERE id = ? OR id LIKE ? ORDER BY id",
                               (run_id, f"{run_id}%")).fetchall()
        exact = [r for r in rows if r[0] == run_id]
        if len(exact) != 1 and len(rows) != 1:
            why = "is ambiguous" if rows else "does not exist"
            raise PlannerError(f"run {run_id!r} {why} (see `planner runs list`)")
        return self._row(exact[0] if exact else rows[0])

    def list(self) -> list[dict[str, Any]]:
        return [self._row(r) for r in self.db.execute("SELECT * FROM runs ORDER BY created_at, id")]

    def _row(self, row: tuple[Any, ...]) -> dict[str, Any]:
        keys = ("id", "task_class", "repo", "inputs", "options", "status", "pid", "created_at", "updated_at")
        data = dict(zip(keys, row, strict=True))
        data["inputs"], data["options"] = json.loads(data["inputs"]), json.loads(data["options"])
        if data["status"] == "running" and not _alive(data.pop("pid")):
            data["status"] = "interrupted"  # its process is gone: `planner runs resume` continues it
        data.pop("pid", None)
        return data
