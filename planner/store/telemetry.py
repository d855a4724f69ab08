"""Stage 7 usefulness telemetry: which TCCM entries actually helped, run after run.

For every finished run and every TCCM entry (band + selector) we store whether
its items were loaded, used (cited by the plan: a recipe's declared reads or
the LLM's cited entries; or drawn on by the item's report), requested mid-run, or deferred and then needed. The
report aggregates per entry and *suggests* band moves; it never edits a TCCM.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from planner.errors import EnvironmentProblem
from planner.store.sqlite import open_db, open_readonly

_SCHEMA = """
CREATE TABLE IF NOT EXISTS usage (
    run_id TEXT NOT NULL, task_class TEXT NOT NULL, tccm_version TEXT NOT NULL, band TEXT NOT NULL,
    entry INTEGER NOT NULL, selector TEXT NOT NULL, loaded INTEGER NOT NULL, used INTEGER NOT NULL,
    requested INTEGER NOT NULL, deferred_needed INTEGER NOT NULL, PRIMARY KEY (run_id, band, entry));
"""
MIN_RUNS = 3  # no suggestion from fewer runs than this


def usage_rows(state: dict[str, Any]) -> list[tuple[Any, ...]]:
    """One row per TCCM entry for a finished run (from every bundle the run built)."""
    bundles = [state.get("bundle") or {}, *(state.get("bundles") or [])]
    # used: cited by the plan (a recipe's reads, the LLM's citations) or drawn on by the item's report
    cited = {e for r in state.get("outcomes", [])
             for e in [*((r.get("plan") or {}).get("used_entries") or []), *(r.get("reported_entries") or [])]}
    requested = {r["entry"] for r in state.get("requests", []) if r.get("outcome") == "loaded"}
    rows: dict[tuple[str, int], dict[str, Any]] = {}
    for bundle in bundles:
        for entry in bundle.get("entries", []):
            key = (entry["band"], entry["entry"])
            row = rows.setdefault(key, {"selector": entry["selector"], "loaded": 0, "used": 0, "requested": 0,
                                        "deferred_needed": 0})
            row["loaded"] |= entry["status"] in ("included", "excerpt", "truncated")
            row["used"] |= entry["id"] in cited
            row["requested"] |= entry["id"] in requested
            needed = entry["id"] in requested or entry["id"] in cited
            row["deferred_needed"] |= entry["status"] == "deferred" and needed
    version = (state.get("tccm") or {}).get("version", "")
    return [(state["run_id"], state["task_class"], version, band, index, row["selector"], int(row["loaded"]),
             int(row["used"]), int(row["requested"]), int(row["deferred_needed"]))
            for (band, index), row in sorted(rows.items())]


@dataclass
class EntryStats:
    task_class: str
    band: str
    selector: str
    runs: int
    loaded: int
    used: int
    requested: int
    deferred_needed: int
    suggestion: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def suggest(stats: EntryStats) -> str | None:
    if stats.runs < MIN_RUNS:
        return None
    share = lambda n: n / stats.runs  # noqa: E731 - tiny local helper
    if stats.band == "may_read" and share(stats.requested + stats.used) >= 0.5:
        return "requested in most runs: move to should_read"
    if stats.band == "should_read" and share(stats.deferred_needed) >= 0.5:
        return "deferred but then needed in most runs: move to must_read or raise the budget"
    if stats.band == "must_read" and stats.used == 0:
        return "never used: move to should_read"
    if stats.band == "should_read" and stats.loaded and share(stats.used) < 0.1:
        return "loaded but rarely used: move to may_read"
    return None


class Telemetry:
    def __init__(self, home: Path, readonly: bool = False) -> None:
        what = f"telemetry under {home}"
        # readonly: for readers such as `planner ui`; no store yet reads as no runs recorded
        db = open_readonly(home / "telemetry.sqlite", what) if readonly else open_db(
            home / "telemetry.sqlite", _SCHEMA, what)
        self.db = db or sqlite3.connect(":memory:")
        if db is None:
            self.db.executescript(_SCHEMA)
        self.what = what

    def record(self, rows: Iterable[tuple[Any, ...]]) -> None:
        with self.db:  # INSERT OR REPLACE: a resumed run finalising twice counts once
            self.db.executemany("INSERT OR REPLACE INTO usage VALUES (?,?,?,?,?,?,?,?,?,?)", list(rows))

    def report(self, task_class: str | None = None) -> list[EntryStats]:
        query = ("SELECT task_class, band, entry, selector, count(*), sum(loaded), sum(used), sum(requested), "
                 "sum(deferred_needed) FROM usage {} GROUP BY task_class, band, entry, selector "
                 "ORDER BY task_class, CASE band WHEN 'must_read' THEN 0 WHEN 'should_read' THEN 1 ELSE 2 END, entry")
        where, args = ("WHERE task_class = ?", (task_class,)) if task_class else ("", ())
        try:
            rows = self.db.execute(query.format(where), args).fetchall()
        except sqlite3.DatabaseError as exc:  # a damaged file: one line, never a traceback
            raise EnvironmentProblem(f"cannot read {self.what}: {exc}") from None
        stats = []
        for tc, band, _, selector, runs, loaded, used, requested, needed in rows:
            entry = EntryStats(tc, band, selector, runs, loaded, used, requested, needed)
            entry.suggestion = suggest(entry)
            stats.append(entry)
        return stats

    def close(self) -> None:
        self.db.close()
