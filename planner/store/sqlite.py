"""Opening the planner's SQLite stores (runs, solved examples, telemetry) the same way."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

from planner.errors import EnvironmentProblem

ATTEMPTS = 8  # ~6 s of backoff in all


def open_db(path: Path, schema: str, what: str, timeout: float = 30) -> sqlite3.Connection:
    """A connection to `path` with `schema` applied; any failure is one EnvironmentProblem line naming `what`."""
    return connect(path, what, timeout=timeout, schema=schema)


def connect(path: Path, what: str, timeout: float = 30, schema: str = "", **options: Any) -> sqlite3.Connection:
    """A durable connection (`durable_enough`) to `path`, `schema` applied. Processes opening one new store at
    once race on its switch to WAL, where SQLite may answer "locked" at once instead of waiting out `timeout`
    (4 processes opening a fresh file: 1 in 200 times here); that is tried again shortly, not a failed run."""
    for attempt in range(ATTEMPTS):
        db: sqlite3.Connection | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(path, timeout=timeout, **options)
            durable_enough(db)
            if schema:
                db.executescript(schema)
            return db
        except (OSError, sqlite3.Error) as exc:
            if db is not None:
                db.close()
            locked = isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)
            if not locked or attempt == ATTEMPTS - 1:
                raise EnvironmentProblem(f"cannot open {what}: {exc}") from None
            time.sleep(0.05 * 2 ** attempt)
    raise AssertionError("unreachable")


def durable_enough(db: sqlite3.Connection) -> None:
    """WAL with synchronous=NORMAL: a commit survives the process being killed at any point (kill -9, a
    crash mid-run) without an fsync per record; only an OS crash or power loss may lose the last commits."""
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")


def open_readonly(path: Path, what: str) -> sqlite3.Connection | None:
    """A read-only connection to an existing store (None when there is none yet): readers such as `planner ui`
    must never create a store, a directory or a schema. A corrupt file is one EnvironmentProblem line."""
    if not path.is_file():
        return None
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=5, check_same_thread=False)
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()  # a corrupt file fails here, not mid-page
    except sqlite3.Error as exc:
        raise EnvironmentProblem(f"cannot read {what}: {exc}") from None
    return db
