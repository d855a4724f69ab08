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

import os
import sqlite3
import threading
from collections.abc import Callable, Iterable
from operator import itemgetter
from pathlib import Path
from typing import Any, TypeVar

import orjson

from planner.errors import EnvironmentProblem
from planner.runs import live_status
from planner.sqlite import open_readonly

_SCHEMA = """
CREATE TABLE portfolios (id TEXT PRIMARY KEY, task_class TEXT, status TEXT, created_at TEXT, repos INTEGER,
                         done INTEGER);
-- every row of the runs list: the CLI's `planner runs list` row (a dispatched run, or a bundle build / record
-- without a runs row) plus its index line's summary columns, its duration and its portfolio
-- no primary key and the one index built after a full load: inserting 10,000 rows is the cold page's main cost
CREATE TABLE base (id TEXT, kind TEXT, task_class TEXT, status TEXT, repo TEXT, created_at TEXT, updated_at TEXT,
                   commit_id TEXT, items INTEGER, tokens INTEGER, max_tokens INTEGER, llm_calls INTEGER, cost_usd REAL,
                   complete INTEGER, portfolio TEXT, pid INTEGER);
-- the duration is computed when read (for a page's rows, or all of them when sorting by it), not on load
CREATE VIEW rows AS SELECT *,
    CASE WHEN updated_at IS NULL OR status IN ('running', 'interrupted') THEN NULL
         ELSE round((julianday(updated_at) - julianday(created_at)) * 86400, 3) END AS duration_s FROM base;
"""
_INDEX = "CREATE INDEX base_started ON base (created_at, id)"
_KEYS = ("id", "kind", "task_class", "status", "repo", "created_at", "commit", "items", "tokens", "max_tokens",
         "llm_calls", "cost_usd")
_FULL = itemgetter(*_KEYS[6:])
_NO_SUMMARY = (None,) * 6
Run = tuple[str, str, str, str, int | None, str, str]  # id, task class, repo, status, pid, created, updated
T = TypeVar("T")
Stamp = tuple[tuple[int, int, int] | None, ...]


def _parse_index(data: bytes) -> list[dict[str, Any]]:
    """index.jsonl lines. The whole text is parsed as one JSON array (one call, not 10,000); a torn line
    somewhere (a crash mid-append) sends it line by line, skipping that line."""
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


def _summary(line: dict[str, Any] | None) -> tuple[Any, ...]:
    """(commit, items, tokens, max_tokens, llm_calls, cost_usd, complete) of an index line."""
    if line is None:
        return (*_NO_SUMMARY, 1)
    try:
        return (*_FULL(line), 1)
    except KeyError:  # an older line without the summary keys: the page asks the record for them
        return (*(line.get(k) for k in _KEYS[6:]), 0)


_RUNS_SQL = "SELECT id, task_class, repo, status, pid, created_at, updated_at FROM runs"
_PORTFOLIOS_SQL = """SELECT p.id, json_extract(p.spec, '$.task_class'), p.status, p.created_at,
    (SELECT COUNT(*) FROM portfolio_repos r WHERE r.portfolio = p.id),
    (SELECT COUNT(r.result) FROM portfolio_repos r WHERE r.portfolio = p.id) FROM portfolios p"""
_LINKS_SQL = ("SELECT json_extract(result, '$.run_id'), portfolio FROM portfolio_repos "
              "WHERE json_extract(result, '$.run_id') IS NOT NULL")


class Catalog:
    """The in-memory copy. One connection, used under a lock: FastAPI runs sync routes on a thread pool."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.db = sqlite3.connect(":memory:", uri=True, check_same_thread=False)
        self.db.executescript(_SCHEMA)
        self.lock = threading.RLock()
        self._stamps: dict[str, Stamp] = {}
        self._watch: dict[str, tuple[int, sqlite3.Connection]] = {}  # store → (inode, connection held open)
        self._index_at: tuple[int, int] | None = None  # (inode, bytes of index.jsonl read); (0, 0): no file
        self._runs: dict[str, Run] = {}
        self._index: dict[str, dict[str, Any]] = {}  # index lines by id
        self._links: dict[str, str] = {}  # run id → portfolio
        self.version = 0  # grows whenever the copy changed
        self._options: tuple[int, dict[str, list[str]]] | None = None

    def refresh(self) -> None:
        """Bring the copy up to date with PLANNER_HOME; call with the lock held. After the first load only the
        rows that changed are rewritten: a new run, a status, an appended index line, a portfolio's result."""
        first = self._index_at is None
        changed: set[str] = set()
        runs = self._stamp("runs.sqlite", "the run store")
        if self._stamps.get("runs") != runs:
            fresh = {r[0]: r for r in self._read("runs.sqlite", "the run store", _RUNS_SQL)}
            changed |= {i for i, row in fresh.items() if self._runs.get(i) != row} | (self._runs.keys() - fresh.keys())
            self._runs, self._stamps["runs"] = fresh, runs
        portfolios = self._stamp("portfolios.sqlite", "the portfolio store")
        if self._stamps.get("portfolios") != portfolios:
            before = self._links
            self._load_portfolios()
            changed |= {i for i in before.keys() | self._links.keys() if before.get(i) != self._links.get(i)}
            self._stamps["portfolios"] = portfolios
            self.version += 1  # a portfolio's status or counts may have changed even when no link did
        appended = self._load_index()
        if first or appended is None:
            self._write(self._runs.keys() | self._index.keys(), replace=True)
        elif changed or appended:
            self._write(changed | set(appended), replace=False)
        self.version += bool(first or appended is None or changed or appended) | self._check_running()

    def _stamp(self, name: str, what: str) -> Stamp:
        """Changes whenever another process commits to the store: SQLite's data_version on a connection kept
        open (file times can miss two commits within one clock tick), and the file's inode (replaced)."""
        path = self.home / name
        try:
            inode = path.stat().st_ino
        except OSError:
            self._watch.pop(name, None)
            return (None,)
        held = self._watch.get(name)
        if held is None or held[0] != inode:
            db = open_readonly(path, f"{what} under {self.home}")
            if db is None:
                return (None,)
            held = self._watch[name] = (inode, db)
        try:
            version = held[1].execute("PRAGMA data_version").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            raise EnvironmentProblem(f"cannot read {what} under {self.home}: {exc}") from None
        return ((inode, version, 0),)

    def _write(self, ids: Iterable[str], replace: bool) -> None:
        """(Re)write the rows of `ids`; `replace`: every row, the table emptied first."""
        rows, ids = [], list(ids)
        for run_id in ids:
            run, line = self._runs.get(run_id), self._index.get(run_id)
            if run is not None:
                rid, task_class, repo, status, pid, created, updated = run
                rows.append((rid, "run", task_class, status, repo, created, updated, *_summary(line),
                             self._links.get(rid), pid))
            elif line is not None:
                rows.append((run_id, line.get("kind"), line.get("task_class"), line.get("status"), line.get("repo"),
                             line.get("created_at"), None, *_summary(line), self._links.get(run_id), None))
        with self.db:
            if replace:
                self.db.execute("DROP INDEX IF EXISTS base_started")  # rebuilt once below, not per insert
                self.db.execute("DELETE FROM base")
            else:  # a removed run (or record) has no row to insert: its old row goes all the same
                self.db.executemany("DELETE FROM base WHERE id = ?", ((run_id,) for run_id in ids))
            self.db.executemany("INSERT INTO base VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
            if replace:
                self.db.execute(_INDEX)

    def _read(self, name: str, what: str, sql: str) -> list[tuple[Any, ...]]:
        """Rows of a PLANNER_HOME store, opened read-only ([] when it does not exist yet)."""
        db = open_readonly(self.home / name, f"{what} under {self.home}")
        if db is None:
            return []
        try:
            return db.execute(sql).fetchall()
        except sqlite3.DatabaseError as exc:  # a damaged file: one line, never a traceback
            raise EnvironmentProblem(f"cannot read {what} under {self.home}: {exc}") from None
        finally:
            db.close()

    def _load_portfolios(self) -> None:
        found = self._read("portfolios.sqlite", "the portfolio store", _PORTFOLIOS_SQL)
        # a repository's run is known once its result is recorded (the result names the run)
        links = self._read("portfolios.sqlite", "the portfolio store", _LINKS_SQL)
        with self.db:
            self.db.execute("DELETE FROM portfolios")
            self.db.executemany("INSERT INTO portfolios VALUES (?,?,?,?,?,?)", found)
        self._links = {run_id: portfolio for run_id, portfolio in links}

    def _load_index(self) -> list[str] | None:
        """Parse what was appended to index.jsonl since the last call: the ids appended ([] for none), or None
        when the whole file was read (the first time, or the file was replaced or removed)."""
        path = self.home / "runs" / "index.jsonl"
        try:
            with path.open("rb") as handle:
                st = os.fstat(handle.fileno())
                known = self._index_at is not None and self._index_at[0] == st.st_ino
                start = self._index_at[1] if known and st.st_size >= self._index_at[1] else 0  # type: ignore[index]
                if known and start == st.st_size:
                    return []
                handle.seek(start)
                data, inode = handle.read(), st.st_ino
        except FileNotFoundError:
            if self._index_at == (0, 0):
                return []
            data, inode, start = b"", 0, 0
        end = data.rfind(b"\n") + 1  # a torn last line (a writer mid-append, or a crash) waits for its newline
        lines = _parse_index(data[:end])
        if start == 0:
            self._index = {}
        self._index.update((line["id"], line) for line in lines)
        self._index_at = (inode, start + end)
        return None if start == 0 else [line["id"] for line in lines]

    def _check_running(self) -> bool:
        """Mark running runs whose process is gone as interrupted (in the copy); True when any was."""
        running = self.db.execute("SELECT id, pid FROM base WHERE status = 'running'").fetchall()
        gone = [(run_id,) for run_id, pid in running if live_status("running", pid) != "running"]
        if gone:
            with self.db:
                self.db.executemany("UPDATE base SET status = 'interrupted' WHERE id = ?", gone)
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
