"""Opening the planner's SQLite stores (runs, solved examples, telemetry) the same way."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from planner.errors import EnvironmentProblem


def open_db(path: Path, schema: str, what: str, timeout: float = 30) -> sqlite3.Connection:
    """A connection to `path` with `schema` applied; any failure is one EnvironmentProblem line naming `what`."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(path, timeout=timeout)
        db.executescript(schema)
    except (OSError, sqlite3.Error) as exc:
        raise EnvironmentProblem(f"cannot open {what}: {exc}") from None
    return db
