"""Durable runs: the run table, the LangGraph checkpointer, and each run's artifacts.

Everything lives under PLANNER_HOME: `runs.sqlite` (one row per dispatched
run, with what is needed to resume it), `checkpoints.sqlite` (LangGraph's
SqliteSaver, thread id = run id) and `runs/<id>/` (patch, report, prompt,
ledger). A run killed at any node resumes from its last checkpoint. runs.sqlite
also holds the runs list's table (`run_list`, planner/store/runindex.py), which
triggers keep in step with `runs`.
"""

from __future__ import annotations

import json
import os
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planner.errors import EnvironmentProblem, PlannerError
from planner.sandbox import pid_alive
from planner.store import runindex
from planner.store.sqlite import connect, open_db, open_readonly
from repocontext.secrets import redact, redact_tree
from repocontext.store import atomic_write

if TYPE_CHECKING:
    from langgraph.checkpoint.sqlite import SqliteSaver

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY, task_class TEXT NOT NULL, repo TEXT NOT NULL, inputs TEXT NOT NULL,
    options TEXT NOT NULL, status TEXT NOT NULL, pid INTEGER, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS final_states (id TEXT PRIMARY KEY, nodes TEXT NOT NULL, state TEXT NOT NULL);
"""


EXACT_PATCH = "patch.exact.diff"  # 0600, only where the shown patch.diff had a secret redacted


def exact_patch(home: Path, run_id: str | None, shown: str) -> str:
    """The patch to apply for a run: its exact copy where one was kept (`shown`, the stored patch, has
    secret values redacted then), else `shown` itself."""
    path = home / "runs" / str(run_id) / EXACT_PATCH
    try:
        return path.read_text(encoding="utf-8") if run_id and path.is_file() else shown
    except OSError:
        return shown


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def _alive(pid: int | None) -> bool:
    return pid is not None and pid != 0 and pid_alive(pid)


def live_status(status: str, pid: int | None) -> str:
    # a run whose process is gone is interrupted: `planner runs resume` continues it
    return "interrupted" if status == "running" and not _alive(pid) else status


class RunStore:
    def __init__(self, home: Path, readonly: bool = False) -> None:
        self.home = home
        what = f"the run store under {home}"
        # A reader (`planner ui`) opens read-only and creates nothing; no store yet reads as no runs.
        self.db: sqlite3.Connection | None = (open_readonly(home / "runs.sqlite", what) if readonly
                                              else open_db(home / "runs.sqlite", _SCHEMA, what))
        self.what, self.readonly = what, readonly
        if not readonly:
            self._migrate()

    def _migrate(self) -> None:
        """A home from before the runs list's table gets it once, from its first writer."""
        try:
            runindex.migrate(self._writable(), self.home / "runs" / "index.jsonl")
        except sqlite3.Error as exc:
            raise EnvironmentProblem(f"cannot update {self.what}: {exc}") from None

    def checkpointer(self) -> SqliteSaver:
        from langgraph.checkpoint.sqlite import SqliteSaver  # langgraph only where a run's state is read

        conn = connect(self.home / "checkpoints.sqlite", f"checkpoints under {self.home}", check_same_thread=False)
        from planner.store.scrub import RedactingSerializer  # a checkpoint never holds a secret value

        return SqliteSaver(conn, serde=RedactingSerializer())

    def artifacts(self, run_id: str) -> Path:
        return self.home / "runs" / run_id

    def write_artifact(self, run_id: str, name: str, text: str) -> Path:
        """A run's file (report, patch, prompt, ledger), its secret values redacted: the UI shows these."""
        path = self.artifacts(run_id) / name
        atomic_write(path, redact(text))
        return path

    def write_exact_patch(self, run_id: str, patch: str) -> Path | None:
        """The exact patch, where it differs from its redacted `patch.diff` (context lines next to a secret),
        in a file only the owner may read (0600): what `git apply` needs, kept out of every shown copy."""
        if redact(patch) == patch:
            return None
        path = self.artifacts(run_id) / EXACT_PATCH
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(patch)
        os.chmod(path, 0o600)  # an existing file keeps its mode on O_CREAT
        return path

    def create(self, run_id: str, task_class: str, repo: str, inputs: dict[str, str], options: dict[str, Any]) -> None:
        db = self._writable()
        with db:
            db.execute("INSERT INTO runs VALUES (?,?,?,?,?,?,?,?,?)",
                       (run_id, task_class, repo, json.dumps(inputs, sort_keys=True),
                        json.dumps(options, sort_keys=True), "running", os.getpid(), _now(), _now()))

    def adopt(self, row: dict[str, Any]) -> bool:
        """Add a run made in another PLANNER_HOME (a portfolio worker's); False when this id is already known."""
        db = self._writable()
        with db:
            cursor = db.execute(
                "INSERT OR IGNORE INTO runs VALUES (?,?,?,?,?,?,?,?,?)",
                (row["id"], row["task_class"], row["repo"], json.dumps(row["inputs"], sort_keys=True),
                 json.dumps(row["options"], sort_keys=True), row["status"], None, row["created_at"],
                 row["updated_at"]))
        return cursor.rowcount == 1

    def summarize(self, line: dict[str, Any]) -> None:
        """A provenance record's summary (its index.jsonl line) into the runs list's table."""
        db = self._writable()
        with db:
            runindex.record(db, line)

    def set_status(self, run_id: str, status: str) -> None:
        db = self._writable()
        with db:
            db.execute("UPDATE runs SET status = ?, pid = ?, updated_at = ? WHERE id = ?",
                       (status, os.getpid() if status == "running" else None, _now(), run_id))

    def keep_final(self, run_id: str, nodes: list[str], state: dict[str, Any]) -> dict[str, Any]:
        """The final state of a run finished without the graph (planner/run/shortcut.py), which has no checkpoint:
        its secret values redacted, as a checkpoint's are. Returns the state as stored (what a reader gets back)."""
        stored = json.loads(json.dumps(redact_tree(state)))
        db = self._writable()
        with db:
            db.execute("INSERT OR REPLACE INTO final_states VALUES (?,?,?)",
                       (run_id, json.dumps(nodes), json.dumps(stored)))
        return stored

    def final(self, run_id: str) -> dict[str, Any] | None:
        """The state `keep_final` kept for this run (None for a run of the graph: its state is its checkpoint)."""
        rows = self._query("SELECT state FROM final_states WHERE id = ?", (run_id,))
        return json.loads(rows[0][0]) if rows else None

    def supersede(self, portfolio_key: str, keep: str) -> list[str]:
        """Mark `superseded` every other run of one portfolio job (options.portfolio_key) whose process is gone
        without finishing: a pool process killed mid-run leaves one, and its rerun `keep` replaced it. A run
        still alive is left alone. Returns the ids marked."""
        db = self._writable()
        rows = db.execute("SELECT id, status, pid FROM runs WHERE json_extract(options, '$.portfolio_key') = ? "
                          "AND id != ?", (portfolio_key, keep)).fetchall()
        stale = [run_id for run_id, status, pid in rows if live_status(status, pid) == "interrupted"]
        with db:
            db.executemany("UPDATE runs SET status = 'superseded', pid = NULL, updated_at = ? WHERE id = ?",
                           [(_now(), run_id) for run_id in stale])
        return stale

    def _writable(self) -> sqlite3.Connection:
        if self.db is None or self.readonly:
            raise EnvironmentProblem(f"{self.what} was opened read-only")
        return self.db

    def _query(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        if self.db is None:
            return []
        try:
            return self.db.execute(sql, args).fetchall()
        except sqlite3.DatabaseError as exc:  # a damaged file: one line, never a traceback
            raise EnvironmentProblem(f"cannot read {self.what}: {exc}") from None

    def get(self, run_id: str) -> dict[str, Any]:
        rows = self._query("SELECT * FROM runs WHERE id = ? OR id LIKE ? ORDER BY id", (run_id, f"{run_id}%"))
        exact = [r for r in rows if r[0] == run_id]
        if len(exact) != 1 and len(rows) != 1:
            why = "is ambiguous" if rows else "does not exist"
            raise PlannerError(f"run {run_id!r} {why} (see `planner runs list`)")
        return self._row(exact[0] if exact else rows[0])

    def matching(self, prefix: str) -> list[dict[str, Any]]:
        """Runs whose id starts with `prefix` (exactly: no LIKE wildcards)."""
        sql = "SELECT * FROM runs WHERE substr(id, 1, ?) = ? ORDER BY id"
        return [self._row(r) for r in self._query(sql, (len(prefix), prefix))]

    def summaries(self, keep_pid: bool = False) -> list[dict[str, Any]]:
        """Every run's id, task class, repo, live status and times, oldest first: what a list shows, without
        parsing each run's inputs and options. keep_pid: the stored status and pid, for a caller that caches
        the rows and applies `live_status` itself."""
        keys = ("id", "task_class", "repo", "status", "pid", "created_at", "updated_at")
        rows = [dict(zip(keys, row, strict=True))
                for row in self._query(f"SELECT {', '.join(keys)} FROM runs ORDER BY created_at, id")]
        if not keep_pid:
            for data in rows:
                data["status"] = live_status(data["status"], data.pop("pid"))
        return rows

    def list(self) -> list[dict[str, Any]]:
        return [self._row(r) for r in self._query("SELECT * FROM runs ORDER BY created_at, id")]

    def close(self) -> None:
        if self.db is not None:
            self.db.close()

    def _row(self, row: tuple[Any, ...]) -> dict[str, Any]:
        keys = ("id", "task_class", "repo", "inputs", "options", "status", "pid", "created_at", "updated_at")
        data = dict(zip(keys, row, strict=True))
        data["inputs"], data["options"] = json.loads(data["inputs"]), json.loads(data["options"])
        if data["status"] == "running" and not _alive(data.pop("pid")):
            data["status"] = "interrupted"  # its process is gone: `planner runs resume` continues it
        data.pop("pid", None)
        return data


def read_state(home: Path, run_id: str) -> dict[str, Any]:
    """A run's latest checkpointed state, read without building the graph or writing anything ({} if none).
    The same values `final_state` returns, so a reader can follow a run while its nodes finish. A run finished
    without the graph has no checkpoint: its kept final state is read instead."""
    final = _final_state(home, run_id)
    if final:
        return final
    from langgraph.checkpoint.sqlite import SqliteSaver  # langgraph only where a run's state is read

    db = open_readonly(home / "checkpoints.sqlite", f"checkpoints under {home}")
    if db is None:
        return {}
    try:
        saved = SqliteSaver(db).get_tuple({"configurable": {"thread_id": run_id, "checkpoint_ns": ""}})
    except sqlite3.DatabaseError as exc:
        raise EnvironmentProblem(f"cannot read checkpoints under {home}: {exc}") from None
    finally:
        db.close()
    if saved is None:
        return {}
    values = {k: v for k, v in saved.checkpoint["channel_values"].items() if not k.startswith("__")}
    done = [n for n in saved.checkpoint.get("versions_seen", {}) if not n.startswith("__")]
    return {**values, "nodes_done": done}


def _final_state(home: Path, run_id: str) -> dict[str, Any]:
    """A run finished without the graph, in `read_state`'s shape ({} if it is none)."""
    db = open_readonly(home / "runs.sqlite", f"the run store under {home}")
    if db is None:
        return {}
    try:
        rows = db.execute("SELECT nodes, state FROM final_states WHERE id = ?", (run_id,)).fetchall()
    except sqlite3.DatabaseError as exc:
        if "no such table" in str(exc):
            return {}  # a store from before final_states: none of its runs finished without the graph
        raise EnvironmentProblem(f"cannot read the run store under {home}: {exc}") from None
    finally:
        db.close()
    return {**json.loads(rows[0][1]), "nodes_done": json.loads(rows[0][0])} if rows else {}


def show_payload(state: dict[str, Any]) -> dict[str, Any]:
    """What `planner runs show --json` prints (and `planner ui` serves at /api/runs/ID)."""
    return {"run": state["run"], "status": state.get("status"), "artifacts": state.get("artifacts"),
            "patch": state.get("patch", ""), "report": state.get("report", ""),
            "stages": state.get("stages", []), "llm_calls": state.get("llm_calls", []), **run_coverage(state)}


def run_coverage(state: dict[str, Any]) -> dict[str, Any]:
    """What a run read, for a class that says (planner/advisories/source.py Coverage): its advisory source,
    the files it found but could not evaluate, and why it is not_evaluated; nothing for other classes."""
    coverage = state.get("coverage")
    if not coverage:
        return {}
    return {"advisories": coverage.get("advisories"), "not_evaluated": coverage.get("not_evaluated") or [],
            "not_evaluated_reason": coverage.get("reason") if state.get("status") == "not_evaluated" else None}


def run_items(state: dict[str, Any]) -> list[dict[str, Any]]:
    """A run's work items and how each ended (`planner dispatch --json`'s items, the MCP dispatch tool's)."""
    return [{"id": r["item"]["id"], "status": r["status"], "source": r.get("source"),
             "error": r.get("error"), "blockers": r.get("blockers", []),
             "data": r["item"].get("data", {}), "recipe": (r.get("plan") or {}).get("recipe"),
             "plan_data": (r.get("plan") or {}).get("data", {}), "notes": r.get("notes", [])}
            for r in state.get("outcomes", [])]
