"""Advisory sources compiled once into a SQLite index that later processes open in milliseconds.

Parsing the 2,661 PyPI records of a real OSV snapshot takes seconds of YAML and validation; every CLI
process paid it again. `open_db(sources)` fingerprints the sources (paths, sizes, mtimes), opens
`<index dir>/<fingerprint>.sqlite` when it exists, else loads the sources the usual way and writes that
file (to a temporary name, then renamed: a reader never sees half an index, and two builders race
harmlessly). A changed source has another fingerprint, so it rebuilds; the newest KEEP indexes are kept.

The index answers the lookups the vulnerabilities probe makes (by package, by id or alias) and parses only
the advisories they return. What it holds is what `load` made — advisories after the same-id merge, and the
load issues — so results are the same as loading the sources directly (tested on the real snapshot).

Where: PLANNER_ADVISORY_INDEX, else `advisory-index` in the planner's home (repocontext.home).
An index that cannot be written or read costs only speed: the sources are loaded in memory instead.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
from collections.abc import Iterator
from functools import cached_property
from pathlib import Path

from repocontext.home import planner_home
from repocontext.osv.db import AdvisoryDB, lookup_names, package_keys
from repocontext.osv.load import Sources, fingerprint, load
from repocontext.osv.schema import Advisory, LoadIssue
from repocontext.osv.versions import ecosystem_key, normalize_name

FORMAT = "1"  # bump when the tables or the stored advisory JSON change
KEEP = 8  # indexes kept in the folder, newest first

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE advisories (id TEXT PRIMARY KEY, source TEXT NOT NULL, body BLOB NOT NULL);
CREATE TABLE packages (ecosystem TEXT NOT NULL, name TEXT NOT NULL, id TEXT NOT NULL);
CREATE TABLE names (name TEXT NOT NULL, id TEXT NOT NULL);
CREATE TABLE issues (seq INTEGER PRIMARY KEY, source TEXT NOT NULL, reason TEXT NOT NULL);
"""
_INDEXES = """
CREATE INDEX packages_by_key ON packages (ecosystem, name);
CREATE INDEX names_by_name ON names (name);
"""


def index_dir() -> Path:
    explicit = os.environ.get("PLANNER_ADVISORY_INDEX", "").strip()
    if explicit:
        return Path(explicit).expanduser()
    return planner_home() / "advisory-index"


def open_db(sources: Sources, stamp: str | None = None) -> AdvisoryDB:
    """The advisories of `sources`, from their index (built now when missing). `stamp` is their
    fingerprint when the caller has it already."""
    stamp = stamp or fingerprint(sources)
    folder = index_dir()
    path = folder / f"{stamp}.sqlite"
    indexed = IndexedDB.open(path)
    if indexed is not None:
        return indexed
    db = load(sources)
    try:
        _write(folder, path, db)
    except (OSError, sqlite3.Error):
        return db  # an unwritable index dir: this process keeps the in-memory load
    return IndexedDB.open(path) or db


def _write(folder: Path, path: Path, db: AdvisoryDB) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".building-", suffix=".sqlite", dir=folder)
    os.close(fd)
    try:
        conn = sqlite3.connect(tmp)
        try:
            _fill(conn, db)
        finally:
            conn.close()
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    _prune(folder, keep=path)


def _prune(folder: Path, keep: Path) -> None:
    """Keep the KEEP most recently built indexes: a changed source leaves its old index behind, and users
    with several sources (or snapshots) switch between them."""
    try:
        built = sorted((p for p in folder.glob("*.sqlite") if p != keep and not p.name.startswith(".")),
                       key=lambda p: p.stat().st_mtime_ns, reverse=True)
        for old in built[KEEP - 1:]:
            old.unlink(missing_ok=True)
    except OSError:
        pass  # another process pruned first


def _fill(conn: sqlite3.Connection, db: AdvisoryDB) -> None:
    conn.executescript(_SCHEMA)
    rows: list[tuple[str, str, bytes]] = []
    packages: list[tuple[str, str, str]] = []
    names: list[tuple[str, str]] = []
    for advisory in db:
        rows.append((advisory.id, db.source(advisory.id) or "", advisory.model_dump_json().encode()))
        names.extend((n, advisory.id) for n in lookup_names(advisory))
        packages.extend((eco, name, advisory.id) for eco, name in package_keys(advisory))
    conn.executemany("INSERT INTO advisories VALUES (?,?,?)", rows)
    conn.executemany("INSERT INTO packages VALUES (?,?,?)", packages)
    conn.executemany("INSERT INTO names VALUES (?,?)", names)
    conn.executemany("INSERT INTO issues (source, reason) VALUES (?,?)", [(i.source, i.reason) for i in db.issues])
    conn.executescript(_INDEXES)
    conn.executemany("INSERT INTO meta VALUES (?,?)", [("format", FORMAT), ("count", str(len(rows)))])
    conn.commit()


class IndexedDB(AdvisoryDB):
    """An AdvisoryDB answering from an index file; advisories are parsed when first asked for."""

    def __init__(self, conn: sqlite3.Connection, count: int, issues: list[LoadIssue]) -> None:
        super().__init__()
        self._conn, self._count, self.issues = conn, count, issues
        self._parsed: dict[str, Advisory] = {}

    @classmethod
    def open(cls, path: Path) -> IndexedDB | None:
        """The index at `path`, or None when it is missing, of another format, or unreadable."""
        if not path.is_file():
            return None
        try:
            conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
            meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
            if meta.get("format") != FORMAT:
                conn.close()
                return None
            issues = [LoadIssue(source=s, reason=r) for s, r in
                      conn.execute("SELECT source, reason FROM issues ORDER BY seq")]
        except sqlite3.Error:
            return None
        return cls(conn, int(meta["count"]), issues)

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Advisory]:
        ids = [row[0] for row in self._conn.execute("SELECT id FROM advisories ORDER BY id")]
        return iter(self._many(ids))

    def source(self, advisory_id: str) -> str | None:
        row = self._conn.execute("SELECT source FROM advisories WHERE id = ?", (advisory_id,)).fetchone()
        return row[0] if row else None

    def find(self, name: str) -> list[Advisory]:
        rows = self._conn.execute("SELECT DISTINCT id FROM names WHERE name = ? ORDER BY id",
                                  (name.strip().casefold(),))
        return self._many([r[0] for r in rows])

    def get(self, name: str) -> Advisory | None:
        exact = self._many([name.strip()])
        if exact:
            return exact[0]
        found = self.find(name)
        return found[0] if found else None

    @cached_property
    def _ecosystems(self) -> frozenset[str]:
        """The ecosystems any advisory names: a package of another one needs no query (an npm monorepo's
        thousands of locked packages against the PyPA database)."""
        return frozenset(row[0] for row in self._conn.execute("SELECT DISTINCT ecosystem FROM packages"))

    def ecosystems(self) -> dict[str, int]:
        rows = self._conn.execute("SELECT ecosystem, COUNT(DISTINCT id) FROM packages GROUP BY ecosystem")
        return dict(sorted((str(eco), int(n)) for eco, n in rows))

    def for_package(self, ecosystem: str, name: str) -> list[Advisory]:
        if ecosystem_key(ecosystem) not in self._ecosystems:
            return []
        rows = self._conn.execute("SELECT DISTINCT id FROM packages WHERE ecosystem = ? AND name = ? ORDER BY id",
                                  (ecosystem_key(ecosystem), normalize_name(ecosystem, name)))
        return self._many([r[0] for r in rows])

    def add(self, advisory: Advisory, source: str = "") -> None:
        raise TypeError("an advisory index is read-only; change its sources instead")

    def _many(self, ids: list[str]) -> list[Advisory]:
        missing = [i for i in ids if i not in self._parsed]
        for start in range(0, len(missing), 500):  # SQLite's bound-parameter limit
            chunk = missing[start:start + 500]
            marks = ",".join("?" * len(chunk))
            for advisory_id, body in self._conn.execute(
                    f"SELECT id, body FROM advisories WHERE id IN ({marks})", chunk):
                self._parsed[advisory_id] = Advisory.model_validate_json(body)
        return [self._parsed[i] for i in ids if i in self._parsed]
