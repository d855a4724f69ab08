"""The runs list as SQL: an in-memory SQLite copy of what `/runs` filters, sorts and pages.

The runs table (runs.sqlite), the provenance index (index.jsonl) and the
portfolio store (portfolios.sqlite) are three files written by other
processes; the UI only reads them. Each request checks their (inode, size,
mtime) and copies what changed into one in-memory database, so filtering,
sorting, grouping and paging are SQL over indexed tables instead of Python
over 10,000 dicts. The copy is this process's memory, never a file: PLANNER_HOME
is opened read-only (SQLite `mode=ro`) and nothing is written there.

index.jsonl is append-only, so after the first read only the bytes appended
since are parsed. A running run's status is checked against its process on
every request, as the CLI does (a run whose process is gone is `interrupted`).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import orjson

from planner.errors import EnvironmentProblem
from planner.runs import live_status

_SCHEMA = """
CREATE TABLE runs (id TEXT PRIMARY KEY, task_class TEXT, repo TEXT, status TEXT, pid INTEGER,
                   created_at TEXT, updated_at TEXT);
CREATE TABLE idx (id TEXT PRIMARY KEY, kind TEXT, task_class TEXT, status TEXT, repo TEXT, created_at TEXT,
                  commit_id TEXT, items INTEGER, tokens INTEGER, max_tokens INTEGER, llm_calls INTEGER,
                  cost_usd REAL, complete INTEGER);
CREATE TABLE portfolios (id TEXT PRIMARY KEY, task_class TEXT, status TEXT, created_at TEXT, repos INTEGER,
                         done INTEGER);
CREATE TABLE portfolio_runs (run_id TEXT PRIMARY KEY, portfolio TEXT NOT NULL);
-- every row of the runs list: dispatched runs (with what their record's index line knows), then bundle builds
-- and records without a runs row; the CLI's `planner runs list` rows, plus the summary columns
CREATE VIEW rows AS
SELECT r.id, 'run' AS kind, r.task_class, r.status, r.repo, r.created_at, r.updated_at, i.commit_id, i.items, i.tokens,
       i.max_tokens, i.llm_calls, i.cost_usd, i.complete,
       CASE WHEN r.status IN ('running', 'interrupted') THEN NULL
            ELSE round((julianday(r.updated_at) - julianday(r.created_at)) * 86400, 3) END AS duration_s,
       p.portfolio
FROM runs r LEFT JOIN idx i ON i.id = r.id LEFT JOIN portfolio_runs p ON p.run_id = r.id
UNION ALL
SELECT i.id, i.kind, i.task_class, i.status, i.repo, i.created_at, NULL, i.commit_id, i.items, i.tokens, i.max_tokens,
       i.llm_calls, i.cost_usd, i.complete, NULL, p.portfolio
FROM idx i LEFT JOIN portfolio_runs p ON p.run_id = i.id WHERE i.id NOT IN (SELECT id FROM runs);
"""
_SUMMARY = ("commit", "items", "tokens", "max_tokens", "llm_calls", "cost_usd")
_STAMPED = {"runs": ("runs.sqlite", "runs.sqlite-wal"), "index": ("runs/index.jsonl",),
            "portfolios": ("portfolios.sqlite", "portfolios.sqlite-wal")}
T = TypeVar("T")
Stamp = tuple[tuple[int, int, int] | None, ...]


def _stamp(home: Path, names: tuple[str, ...]) -> Stamp:
    stamps: list[tuple[int, int, int] | None] = []
    for name in names:
        try:
            st = (home / name).stat()
        except OSError:
            stamps.append(None)
            continue
        stamps.append((st.st_ino, st.st_size, st.st_mtime_ns))
    return tuple(stamps)


def _index_row(data: dict[str, Any]) -> tuple[Any, ...]:
    # older index lines lack the summary keys: `complete` = 0 sends the page to the record for them
    complete = int(all(k in data for k in _SUMMARY))
    return (data["id"], data.get("kind"), data.get("task_class"), data.get("status"), data.get("repo"),
            data.get("created_at"), data.get("commit"), data.get("items"), data.get("tokens"),
            data.get("max_tokens"), data.get("llm_calls"), data.get("cost_usd"), complete)


class Catalog:
    """The in-memory copy. One connection, used under a lock: FastAPI runs sync routes on a thread pool."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.db = sqlite3.connect(":memory:", uri=True, check_same_thread=False)
        self.db.executescript(_SCHEMA)
        self.lock = threading.RLock()
        self._stamps: dict[str, Stamp] = {}
        self._index_at: tuple[int, int] = (0, 0)  # (inode, bytes of index.jsonl already read)
        self.version = 0  # grows whenever the copy changed
        self._options: tuple[int, dict[str, list[str]]] | None = None

    def refresh(self) -> None:
        """Bring the copy up to date with PLANNER_HOME; call with the lock held."""
        changed = False
        for name, files in _STAMPED.items():
            stamp = _stamp(self.home, files)
            if self._stamps.get(name) != stamp:
                getattr(self, f"_load_{name}")()
                self._stamps[name] = stamp
                changed = True
        changed |= self._check_running()
        self.version += changed

    def _attach(self, name: str, what: str) -> bool:
        """Attach a PLANNER_HOME store read-only as `disk`; False when it does not exist (yet)."""
        path = self.home / name
        if not path.is_file():
            return False
        try:
            self.db.execute("ATTACH DATABASE ? AS disk", (f"{path.resolve().as_uri()}?mode=ro",))
        except sqlite3.Error as exc:
            raise EnvironmentProblem(f"cannot read {what} under {self.home}: {exc}") from None
        return True

    def _copy(self, name: str, what: str, tables: tuple[str, ...], *statements: str) -> None:
        """Replace `tables` with what `statements` select from the store `name` (attached read-only)."""
        with self.db:
            for table in tables:
                self.db.execute(f"DELETE FROM {table}")
        if not self._attach(name, what):
            return
        try:
            with self.db:
                for sql in statements:
                    self.db.execute(sql)
        except sqlite3.DatabaseError as exc:  # a damaged file: one line, never a traceback
            raise EnvironmentProblem(f"cannot read {what} under {self.home}: {exc}") from None
        finally:
            self.db.execute("DETACH DATABASE disk")

    def _load_runs(self) -> None:
        self._copy("runs.sqlite", "the run store", ("runs",),
                   "INSERT INTO runs SELECT id, task_class, repo, status, pid, created_at, updated_at FROM disk.runs")

    def _load_portfolios(self) -> None:
        self._copy(
            "portfolios.sqlite", "the portfolio store", ("portfolios", "portfolio_runs"),
            "INSERT INTO portfolios SELECT p.id, json_extract(p.spec, '$.task_class'), p.status, p.created_at, "
            "(SELECT COUNT(*) FROM disk.portfolio_repos r WHERE r.portfolio = p.id), "
            "(SELECT COUNT(r.result) FROM disk.portfolio_repos r WHERE r.portfolio = p.id) FROM disk.portfolios p",
            # a repository's run is known once its result is recorded (the result names the run)
            "INSERT OR IGNORE INTO portfolio_runs SELECT json_extract(result, '$.run_id'), portfolio "
            "FROM disk.portfolio_repos WHERE json_extract(result, '$.run_id') IS NOT NULL")

    def _load_index(self) -> None:
        """Parse what was appended to index.jsonl since the last call (all of it when the file was replaced)."""
        path = self.home / "runs" / "index.jsonl"
        try:
            with path.open("rb") as handle:
                inode = path.stat().st_ino
                start = self._index_at[1] if self._index_at[0] == inode else 0
                handle.seek(start)
                data = handle.read()
        except FileNotFoundError:
            inode, start, data = 0, 0, b""
        if start == 0:
            with self.db:
                self.db.execute("DELETE FROM idx")
        end = data.rfind(b"\n") + 1  # a torn last line (a writer mid-append, or a crash) waits for its newline
        rows = []
        for line in data[:end].splitlines():
            try:
                rows.append(_index_row(orjson.loads(line)))
            except (orjson.JSONDecodeError, KeyError, TypeError):
                continue  # a torn line after a crash: the record file itself is intact
        with self.db:
            self.db.executemany("INSERT OR REPLACE INTO idx VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
        self._index_at = (inode, start + end)

    def _check_running(self) -> bool:
        """Mark the copy's running runs whose process is gone as interrupted; True when any was."""
        running = self.db.execute("SELECT id, pid FROM runs WHERE status = 'running'").fetchall()
        gone = [(run_id,) for run_id, pid in running if live_status("running", pid) != "running"]
        if gone:
            with self.db:
                self.db.executemany("UPDATE runs SET status = 'interrupted' WHERE id = ?", gone)
        return bool(gone)

    def read(self, reader: Callable[[sqlite3.Connection], T]) -> T:
        """`reader(db)` over an up-to-date copy, under the lock (so every query of one page sees one state)."""
        with self.lock:
            self.refresh()
            return reader(self.db)

    def options(self, columns: tuple[str, ...]) -> dict[str, list[str]]:
        """The distinct values of each filter column (for the selects), computed once per change of the copy."""
        with self.lock:
            self.refresh()
            if self._options is None or self._options[0] != self.version:
                found = {c: [v for (v,) in self.db.execute(
                    f"SELECT DISTINCT {c} FROM rows WHERE {c} IS NOT NULL AND {c} != '' ORDER BY {c}")]
                    for c in columns}
                self._options = (self.version, found)
            return self._options[1]
