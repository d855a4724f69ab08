"""Per-file probe results, kept between gathers: `probe-cache.sqlite` in the repository's store directory.

Rows are (slot, key, value): slot is "probe@version", key "path\\0blob sha", value
the JSON of what the probe's `analyze` returned. A full gather reads and
replaces a whole slot; a re-gather after a small commit looks up and writes
only the files that changed. A missing or unreadable cache is an empty one:
it only saves work, it never decides a result.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import orjson

from repocontext.lazyjson import StoreError
from repocontext.parallel import gc_paused

FILE = "probe-cache.sqlite"
_SCHEMA = "CREATE TABLE IF NOT EXISTS results (slot TEXT, key TEXT, value BLOB, PRIMARY KEY (slot, key))"


class ProbeCache:
    def __init__(self, directory: Path) -> None:
        self.path = directory / FILE
        self._db: sqlite3.Connection | None = None

    def _conn(self) -> sqlite3.Connection:
        """The connection (sqlite3 errors propagate: readers treat them as an empty cache, writers see _write)."""
        if self._db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")  # a lost last write costs a re-analysis, nothing more
            db.execute(_SCHEMA)
            self._db = db
        return self._db

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def load(self, slot: str) -> dict[str, Any]:
        """Every cached result of one probe (empty when the cache is unreadable)."""
        try:
            rows = self._conn().execute("SELECT key, value FROM results WHERE slot = ?", (slot,)).fetchall()
        except (sqlite3.Error, OSError):
            return {}
        with gc_paused():
            return {key: orjson.loads(value) for key, value in rows}

    def get(self, slot: str, key: str) -> Any:
        """One cached result; KeyError when there is none (or the cache is unreadable)."""
        try:
            row = self._conn().execute("SELECT value FROM results WHERE slot = ? AND key = ?", (slot, key)).fetchone()
        except (sqlite3.Error, OSError):
            row = None
        if row is None:
            raise KeyError(key)
        return orjson.loads(row[0])

    def slots(self) -> list[str]:
        try:
            return [row[0] for row in self._conn().execute("SELECT DISTINCT slot FROM results ORDER BY slot")]
        except (sqlite3.Error, OSError):
            return []

    def replace(self, slot: str, results: Mapping[str, Any]) -> None:
        """Make `results` the whole cache of one probe."""
        self._write([slot], {slot: results}, {})

    def update(self, slot: str, added: Mapping[str, Any], removed: Iterable[str]) -> None:
        self._write([], {slot: added}, {slot: list(removed)})

    def replace_all(self, cache: Mapping[str, Mapping[str, Any]]) -> None:
        """Make `cache` (slot → results) the whole cache: other slots (older probe versions) go."""
        self._write(None, cache, {})

    def _write(self, cleared: list[str] | None, added: Mapping[str, Mapping[str, Any]],
               removed: Mapping[str, list[str]]) -> None:
        try:
            try:
                self._write_locked(cleared, added, removed)
            except sqlite3.DatabaseError as exc:
                if isinstance(exc, sqlite3.OperationalError):  # locked, read-only, disk full: not damage
                    raise
                # Not a database any more (a damaged file): the cache only saves work, so start it afresh.
                self.close()
                for suffix in ("", "-wal", "-shm"):
                    Path(f"{self.path}{suffix}").unlink(missing_ok=True)
                self._write_once(cleared, added, removed)
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"cannot write the probe cache {self.path} ({exc})") from exc

    def _write_locked(self, cleared: list[str] | None, added: Mapping[str, Mapping[str, Any]],
                      removed: Mapping[str, list[str]]) -> None:
        """_write_once, again after a moment when another process holds the database: SQLite answers "locked"
        at once, without waiting out its busy timeout, when many connections open a fresh WAL database together
        (twenty dispatches on a new home did)."""
        for attempt in range(8):
            try:
                self._write_once(cleared, added, removed)
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or attempt == 7:
                    raise
                self.close()  # a connection that failed half-way through its set-up is not reused
                time.sleep(0.05 * 2 ** attempt)

    def _write_once(self, cleared: list[str] | None, added: Mapping[str, Mapping[str, Any]],
                    removed: Mapping[str, list[str]]) -> None:
        db = self._conn()
        with db:
            db.execute("BEGIN IMMEDIATE")
            if cleared is None:
                db.execute("DELETE FROM results")
            for slot in cleared or ():
                db.execute("DELETE FROM results WHERE slot = ?", (slot,))
            for slot, keys in removed.items():
                db.executemany("DELETE FROM results WHERE slot = ? AND key = ?", ((slot, k) for k in keys))
            for slot, results in added.items():
                db.executemany("INSERT OR REPLACE INTO results VALUES (?, ?, ?)",
                               ((slot, key, orjson.dumps(value)) for key, value in results.items()))
