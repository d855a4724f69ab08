"""The runs list as a table: `run_list` in runs.sqlite, one row per dispatched run or recorded bundle build.

Each row holds what a runs list shows (id, kind, task class, repo, status, times, and the record's summary:
commit, work items, tokens, LLM calls and cost), written when it happens, so a reader (`planner ui`) queries
one indexed table instead of copying the run table and index.jsonl first:

- triggers on `runs` write a run's own columns in the same transaction as the run's write (create, status
  change, adopt: no extra transaction, and no writer can forget it);
- `ProvenanceStore.append` adds the record's summary right after its index.jsonl line (an upsert: repeating
  it is harmless).

A home from before the table (`PRAGMA user_version` < VERSION) is migrated once, in one transaction, by the
first process that opens the run store for writing (dispatch, `planner bundle`, `planner runs list`...). The
UI never writes: until then it builds the same table in memory with `fill` (see planner/ui/catalog.py).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson

VERSION = 1
RUN_COLUMNS = ("id", "task_class", "repo", "status", "pid", "created_at", "updated_at")
SUMMARY_KEYS = ("commit", "items", "tokens", "max_tokens", "llm_calls", "cost_usd")

TABLE = [
    """CREATE TABLE IF NOT EXISTS run_list (
        id TEXT PRIMARY KEY, kind TEXT NOT NULL, task_class TEXT, status TEXT, repo TEXT, created_at TEXT,
        updated_at TEXT, commit_id TEXT, items INTEGER, tokens INTEGER, max_tokens INTEGER, llm_calls INTEGER,
        cost_usd REAL, complete INTEGER NOT NULL DEFAULT 1, pid INTEGER,
        duration_s REAL GENERATED ALWAYS AS (
            CASE WHEN updated_at IS NULL OR status IN ('running', 'interrupted') THEN NULL
            ELSE round((julianday(updated_at) - julianday(created_at)) * 86400, 3) END) STORED)""",
    "CREATE INDEX IF NOT EXISTS run_list_started ON run_list (created_at, id)",
    # a page of the list sorted by most tokens, highest cost or longest walks these instead of sorting every row
    "CREATE INDEX IF NOT EXISTS run_list_tokens ON run_list (tokens, created_at, id)",
    "CREATE INDEX IF NOT EXISTS run_list_cost ON run_list (cost_usd, created_at, id)",
    "CREATE INDEX IF NOT EXISTS run_list_duration ON run_list (duration_s, created_at, id)",
    # the runs a reader checks for a dead process on every request: a few rows, not a scan of 10,000
    "CREATE INDEX IF NOT EXISTS run_list_running ON run_list (id) WHERE status = 'running'",
]
# a run's own columns win over a record's (as `planner runs list` shows them)
_RUN_UPSERT = """INSERT INTO run_list (id, kind, task_class, repo, status, pid, created_at, updated_at)
    VALUES ({}, 'run', {}, {}, {}, {}, {}, {})
    ON CONFLICT (id) DO UPDATE SET kind = 'run', task_class = excluded.task_class, repo = excluded.repo,
    status = excluded.status, pid = excluded.pid, created_at = excluded.created_at, updated_at = excluded.updated_at"""
TRIGGERS = [
    "CREATE TRIGGER run_list_insert AFTER INSERT ON runs BEGIN "
    + _RUN_UPSERT.format(*(f"new.{c}" for c in RUN_COLUMNS)) + "; END",
    "CREATE TRIGGER run_list_update AFTER UPDATE ON runs BEGIN "
    + _RUN_UPSERT.format(*(f"new.{c}" for c in RUN_COLUMNS)) + "; END",
    "CREATE TRIGGER run_list_delete AFTER DELETE ON runs BEGIN DELETE FROM run_list WHERE id = old.id; END",
]
# a record's summary; a record without a runs row (a bundle build) also gives the row's own columns
_RECORD_UPSERT = """INSERT INTO run_list (id, kind, task_class, status, repo, created_at, commit_id, items, tokens,
    max_tokens, llm_calls, cost_usd, complete) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)
    ON CONFLICT (id) DO UPDATE SET commit_id = excluded.commit_id, items = excluded.items,
    tokens = excluded.tokens, max_tokens = excluded.max_tokens, llm_calls = excluded.llm_calls,
    cost_usd = excluded.cost_usd, complete = excluded.complete"""


def current(db: sqlite3.Connection) -> bool:
    """True when `db` (a runs.sqlite) holds an up-to-date run_list that its writers maintain."""
    if db.execute("PRAGMA user_version").fetchone()[0] < VERSION:
        return False
    return db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'run_list'").fetchone() is not None


def _record_values(line: dict[str, Any]) -> tuple[Any, ...]:
    # an index line from before the summary keys: `complete` 0 tells a reader to ask the record for them
    complete = all(k in line for k in SUMMARY_KEYS)
    return (line["id"], line.get("kind") or "bundle", line.get("task_class"), line.get("status"), line.get("repo"),
            line.get("created_at"), *(line.get(k) for k in SUMMARY_KEYS), int(complete))


def record(db: sqlite3.Connection, line: dict[str, Any]) -> None:
    """Upsert one record's summary (an index.jsonl line); the caller commits."""
    db.execute(_RECORD_UPSERT, _record_values(line))


def fill(db: sqlite3.Connection, runs: Iterable[tuple[Any, ...]], lines: Iterable[dict[str, Any]]) -> None:
    """Fill an empty run_list from runs rows (RUN_COLUMNS) and index lines, oldest line first; the caller
    commits. The migration and the UI's in-memory table of an unmigrated home both use it."""
    db.executemany(_RUN_UPSERT.format(*"???????"), runs)
    db.executemany(_RECORD_UPSERT, (_record_values(line) for line in lines))


def read_index(path: Path) -> list[dict[str, Any]]:
    """index.jsonl's lines ([] when there is none), parsed as one JSON array (one call, not 10,000); a torn
    line (a crash mid-append, or a writer mid-append now) sends it line by line, skipping that line."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    try:
        lines = orjson.loads(b"[" + data.rstrip(b"\n").replace(b"\n", b",") + b"]")
    except orjson.JSONDecodeError:
        lines = []
        for line in data.splitlines():
            try:
                lines.append(orjson.loads(line))
            except orjson.JSONDecodeError:
                continue  # the record file itself is intact: only its line in the index is lost
    return [line for line in lines if isinstance(line, dict) and isinstance(line.get("id"), str)]


def migrate(db: sqlite3.Connection, index: Path) -> None:
    """Create (or rebuild, from an older VERSION) run_list and its triggers, filled from the runs table and
    `index` (index.jsonl), once: one transaction, taken before checking again so two writers migrate once."""
    if current(db):
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        if not current(db):
            for trigger in ("run_list_insert", "run_list_update", "run_list_delete"):
                db.execute(f"DROP TRIGGER IF EXISTS {trigger}")
            db.execute("DROP TABLE IF EXISTS run_list")
            for statement in TABLE + TRIGGERS:
                db.execute(statement)
            # a record appended meanwhile upserts its line again after this commits: nothing is lost
            fill(db, db.execute(f"SELECT {', '.join(RUN_COLUMNS)} FROM runs").fetchall(), read_index(index))
            db.execute(f"PRAGMA user_version = {VERSION}")
        db.commit()
    except BaseException:
        db.rollback()
        raise
