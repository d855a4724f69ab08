"""The runs list as SQL: what `/runs` filters, sorts, groups and pages, queried where it is stored.

Writers keep one row per run or bundle build in runs.sqlite's `run_list` table (planner/store/runindex.py), so the
UI opens runs.sqlite read-only (SQLite `mode=ro`) and queries that table with WHERE / ORDER BY / LIMIT: nothing
is copied, however many runs there are. What is not in that file is held in this connection's TEMP schema
(the process's memory, never PLANNER_HOME): the portfolios and which run belongs to which (from
portfolios.sqlite, a few rows per portfolio), and the running runs whose process is gone (shown
`interrupted`, as the CLI does). The `rows` view joins them.

A home no writer has opened since the table was added (an older PLANNER_HOME) has no `run_list`: the UI never
writes, so it builds the same table in memory from the run table and index.jsonl (the migration's own code),
again whenever either changes, until a writer (`planner runs list`, a dispatch...) migrates the home.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from planner.errors import EnvironmentProblem
from planner.store import runindex
from planner.store.runs import live_status
from planner.store.sqlite import open_readonly

_TEMP = """
CREATE TEMP TABLE portfolios (id TEXT PRIMARY KEY, task_class TEXT, status TEXT, created_at TEXT, repos INTEGER,
                              done INTEGER);
CREATE TEMP TABLE links (run_id TEXT PRIMARY KEY, portfolio TEXT NOT NULL);
CREATE TEMP TABLE gone (id TEXT PRIMARY KEY);
-- every row of the runs list (a run whose process is gone has no duration: it is stored as running)
CREATE TEMP VIEW rows AS SELECT s.id, s.kind, s.task_class,
    CASE WHEN s.status = 'running' AND s.id IN gone THEN 'interrupted' ELSE s.status END AS status,
    s.repo, s.created_at, s.updated_at, s.commit_id, s.items, s.tokens, s.max_tokens, s.llm_calls, s.cost_usd,
    s.complete, l.portfolio, s.duration_s
FROM run_list s LEFT JOIN links l ON l.run_id = s.id;
"""
_PORTFOLIOS_SQL = """SELECT p.id, json_extract(p.spec, '$.task_class'), p.status, p.created_at,
    (SELECT COUNT(*) FROM portfolio_repos r WHERE r.portfolio = p.id),
    (SELECT COUNT(r.result) FROM portfolio_repos r WHERE r.portfolio = p.id) FROM portfolios p"""
# a repository's run is known once its result is recorded (the result names the run)
_LINKS_SQL = ("SELECT json_extract(result, '$.run_id'), portfolio FROM portfolio_repos "
              "WHERE json_extract(result, '$.run_id') IS NOT NULL")
T = TypeVar("T")
Stamp = tuple[int, int] | None  # (inode, SQLite data_version) of a store; None: no store


class Catalog:
    """One read-only connection, used under a lock: FastAPI runs sync routes on a thread pool."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.lock = threading.RLock()
        self.db: sqlite3.Connection | None = None
        self.migrated = False  # True: self.db is runs.sqlite itself; False: a table built in memory
        self._watch: dict[str, tuple[int, sqlite3.Connection]] = {}  # store → (inode, connection held open)
        self._source: tuple[object, ...] | None = None  # what self.db was opened on (`_key`)
        self._runs: Stamp = None
        self._portfolios: Stamp | None = None
        self._gone: frozenset[str] | None = None
        self.version = 0  # grows whenever what the list shows may have changed
        self._options: tuple[int, dict[str, list[str]]] | None = None

    def refresh(self) -> sqlite3.Connection:
        """The connection, up to date with PLANNER_HOME; call with the lock held."""
        runs = self._stamp("runs.sqlite", "the run store")
        if self.db is None or self._key(runs) != self._source:
            self._open()  # a migrated store is followed by SQLite itself: reopened only when replaced
            self._source, self.version = self._key(runs), self.version + 1
        if runs != self._runs:
            self._runs, self.version = runs, self.version + 1
        db = self.db
        assert db is not None
        portfolios = self._stamp("portfolios.sqlite", "the portfolio store")
        if portfolios != self._portfolios:
            self._load_portfolios(db)
            self._portfolios, self.version = portfolios, self.version + 1
        self._check_running(db)
        return db

    def _key(self, runs: Stamp) -> tuple[object, ...]:
        """What self.db depends on: runs.sqlite's inode (migrated), or everything the memory table was built from."""
        return (runs and runs[0],) if self.migrated else (runs, self._index_stamp())

    def _open(self) -> None:
        """Query runs.sqlite itself when its writers keep run_list; else build run_list in memory."""
        if self.db is not None:
            self.db.close()
        self.db, self._portfolios, self._gone = None, None, None
        what = f"the run store under {self.home}"
        store = open_readonly(self.home / "runs.sqlite", what)
        try:
            self.migrated = store is not None and runindex.current(store)
            db = store if self.migrated else self._in_memory(store)
        except sqlite3.DatabaseError as exc:  # a damaged file: one line, never a traceback
            raise EnvironmentProblem(f"cannot read {what}: {exc}") from None
        finally:
            if store is not None and not self.migrated:
                store.close()
        assert db is not None
        db.isolation_level = None  # autocommit: read() takes one read transaction per page
        db.execute("PRAGMA temp_store = MEMORY")
        db.executescript(_TEMP)
        self.db = db

    def _in_memory(self, store: sqlite3.Connection | None) -> sqlite3.Connection:
        db = sqlite3.connect(":memory:", check_same_thread=False)
        for statement in runindex.TABLE:
            db.execute(statement)
        runs = store.execute(f"SELECT {', '.join(runindex.RUN_COLUMNS)} FROM runs").fetchall() if store else []
        runindex.fill(db, runs, runindex.read_index(self.home / "runs" / "index.jsonl"))
        db.commit()
        return db

    def _index_stamp(self) -> tuple[int, int, int] | None:
        try:
            st = (self.home / "runs" / "index.jsonl").stat()
        except OSError:
            return None
        return st.st_ino, st.st_size, st.st_mtime_ns

    def _stamp(self, name: str, what: str) -> Stamp:
        """Changes whenever another process commits to the store: SQLite's data_version on a connection kept
        open (file times can miss two commits within one clock tick), and the file's inode (replaced)."""
        path = self.home / name
        try:
            inode = path.stat().st_ino
        except OSError:
            self._watch.pop(name, None)
            return None
        held = self._watch.get(name)
        if held is None or held[0] != inode:
            db = open_readonly(path, f"{what} under {self.home}")
            if db is None:
                return None
            held = self._watch[name] = (inode, db)
        try:
            return inode, held[1].execute("PRAGMA data_version").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            raise EnvironmentProblem(f"cannot read {what} under {self.home}: {exc}") from None

    def _load_portfolios(self, db: sqlite3.Connection) -> None:
        found, links = [], []
        if "portfolios.sqlite" in self._watch:
            store = self._watch["portfolios.sqlite"][1]
            try:
                found, links = store.execute(_PORTFOLIOS_SQL).fetchall(), store.execute(_LINKS_SQL).fetchall()
            except sqlite3.DatabaseError as exc:
                raise EnvironmentProblem(f"cannot read the portfolio store under {self.home}: {exc}") from None
        with db:
            db.execute("DELETE FROM temp.portfolios")
            db.execute("DELETE FROM temp.links")
            db.executemany("INSERT INTO temp.portfolios VALUES (?,?,?,?,?,?)", found)
            db.executemany("INSERT OR REPLACE INTO temp.links VALUES (?,?)", links)

    def _check_running(self, db: sqlite3.Connection) -> None:
        """Which running runs' processes are gone (shown interrupted): a few rows, by a partial index."""
        running = db.execute("SELECT id, pid FROM run_list WHERE status = 'running'").fetchall()
        gone = frozenset(run_id for run_id, pid in running if live_status("running", pid) != "running")
        if gone != self._gone:
            with db:
                db.execute("DELETE FROM temp.gone")
                db.executemany("INSERT INTO temp.gone VALUES (?)", ((run_id,) for run_id in gone))
            self._gone, self.version = gone, self.version + 1

    def read(self, reader: Callable[[sqlite3.Connection], T]) -> T:
        """`reader(db)` in one read transaction (every query of a page sees one state), under the lock."""
        with self.lock:
            return _transaction(self.refresh(), reader)

    def options(self, columns: tuple[str, ...]) -> dict[str, list[str]]:
        """The distinct values of each filter column (for the selects), computed once per change."""
        def distinct(db: sqlite3.Connection) -> dict[str, list[str]]:
            # one scan for every column, not one each: the combinations are few
            combos = db.execute(f"SELECT DISTINCT {', '.join(columns)} FROM rows").fetchall()
            return {c: sorted({combo[n] for combo in combos} - {None, ""}) for n, c in enumerate(columns)}

        with self.lock:
            db = self.refresh()
            if self._options is None or self._options[0] != self.version:
                self._options = (self.version, _transaction(db, distinct))
            return self._options[1]


def _transaction(db: sqlite3.Connection, reader: Callable[[sqlite3.Connection], T]) -> T:
    db.execute("BEGIN")
    try:
        return reader(db)
    finally:
        db.execute("COMMIT")
