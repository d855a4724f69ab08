"""The coordinator's record of portfolios: `portfolios.sqlite` under PLANNER_HOME.

A repository's result is written once: the UPDATE only matches while no result is
recorded for that key, so a run redelivered after a worker died, or a resume racing a
late result, never records twice.
"""

from __future__ import annotations

import builtins
import json
from datetime import UTC, datetime
from pathlib import Path

from planner.errors import PlannerError
from planner.portfolio.model import Entry, Result, Spec
from planner.store.sqlite import open_db, open_readonly

_SCHEMA = """
CREATE TABLE IF NOT EXISTS portfolios (
    id TEXT PRIMARY KEY, spec TEXT NOT NULL, status TEXT NOT NULL, note TEXT,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS portfolio_repos (
    portfolio TEXT NOT NULL, repo TEXT NOT NULL, position INTEGER NOT NULL, key TEXT NOT NULL,
    commit_id TEXT, status TEXT NOT NULL, task_id TEXT, attempts INTEGER NOT NULL DEFAULT 0,
    result TEXT, updated_at TEXT NOT NULL, PRIMARY KEY (portfolio, repo));
"""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


class PortfolioStore:
    def __init__(self, home: Path, readonly: bool = False) -> None:
        self.home = home
        what = f"the portfolio store under {home}"
        if not readonly:
            self.db = open_db(home / "portfolios.sqlite", _SCHEMA, what)
            return
        db = open_readonly(home / "portfolios.sqlite", what)  # a reader (the UI) never creates a store
        if db is None:
            raise PlannerError("no portfolios yet (try `planner portfolio dispatch TASK_CLASS --repos DIR`)")
        self.db = db

    def close(self) -> None:
        self.db.close()

    def create(self, spec: Spec, entries: list[Entry]) -> None:
        with self.db:
            self.db.execute("INSERT INTO portfolios VALUES (?,?,?,?,?,?)",
                            (spec.id, spec.model_dump_json(), "running", None, _now(), _now()))
            self.db.executemany(
                "INSERT INTO portfolio_repos (portfolio, repo, position, key, commit_id, status, updated_at) "
                "VALUES (?,?,?,?,?,?,?)",
                [(spec.id, e.repo, e.position, e.key, e.commit, "pending", _now()) for e in entries])

    def resolve(self, portfolio_id: str) -> str:
        """A full id from an id or a unique prefix."""
        rows = [r[0] for r in self.db.execute("SELECT id FROM portfolios WHERE id = ? OR id LIKE ? ORDER BY id",
                                              (portfolio_id, f"{portfolio_id}%"))]
        if portfolio_id in rows:
            return portfolio_id
        if len(rows) != 1:
            why = "is ambiguous" if rows else "does not exist"
            raise PlannerError(f"portfolio {portfolio_id!r} {why} (see `planner portfolio list`)")
        return rows[0]

    def spec(self, portfolio_id: str) -> Spec:
        row = self.db.execute("SELECT spec FROM portfolios WHERE id = ?", (portfolio_id,)).fetchone()
        if row is None:
            raise PlannerError(f"portfolio {portfolio_id!r} does not exist")
        return Spec.model_validate_json(row[0])

    def state(self, portfolio_id: str) -> tuple[str, str | None]:
        row = self.db.execute("SELECT status, note FROM portfolios WHERE id = ?", (portfolio_id,)).fetchone()
        return (row[0], row[1]) if row else ("unknown", None)

    def set_state(self, portfolio_id: str, status: str, note: str | None = None) -> None:
        with self.db:
            self.db.execute("UPDATE portfolios SET status = ?, note = ?, updated_at = ? WHERE id = ?",
                            (status, note, _now(), portfolio_id))

    def list(self) -> list[dict[str, object]]:
        rows = self.db.execute(
            "SELECT p.id, p.spec, p.status, p.created_at, COUNT(r.repo), COUNT(r.result) FROM portfolios p "
            "LEFT JOIN portfolio_repos r ON r.portfolio = p.id GROUP BY p.id ORDER BY p.created_at, p.id")
        return [{"id": pid, "task_class": json.loads(spec)["task_class"], "status": status, "created_at": created,
                 "repos": total, "done": done} for pid, spec, status, created, total, done in rows]

    # `list` in this class body is the method above
    def entries(self, portfolio_id: str) -> builtins.list[Entry]:
        rows = self.db.execute(
            "SELECT repo, position, key, commit_id, status, task_id, attempts, result FROM portfolio_repos "
            "WHERE portfolio = ? ORDER BY position", (portfolio_id,))
        return [Entry(repo=repo, position=pos, key=key, commit=commit, status=status, task_id=task_id,
                      attempts=attempts, result=Result.model_validate_json(result) if result else None)
                for repo, pos, key, commit, status, task_id, attempts, result in rows]

    def mark(self, portfolio_id: str, repo: str, status: str, task_id: str | None = None) -> None:
        """A job handed out (queued) or started: never overwrites a recorded result."""
        with self.db:
            self.db.execute(
                "UPDATE portfolio_repos SET status = ?, task_id = COALESCE(?, task_id), attempts = attempts + ?, "
                "updated_at = ? WHERE portfolio = ? AND repo = ? AND result IS NULL",
                (status, task_id, 1 if status == "queued" else 0, _now(), portfolio_id, repo))

    def record(self, portfolio_id: str, result: Result) -> bool:
        """Record `result` once; False when this key already has one (a duplicate delivery)."""
        with self.db:
            cursor = self.db.execute(
                "UPDATE portfolio_repos SET status = ?, result = ?, updated_at = ? "
                "WHERE portfolio = ? AND repo = ? AND key = ? AND result IS NULL",
                (result.status, result.model_dump_json(exclude={"shipped"}), _now(), portfolio_id, result.repo,
                 result.key))
        return cursor.rowcount == 1

    def update_result(self, portfolio_id: str, result: Result) -> None:
        """Amend a recorded result (the branch an --apply made)."""
        with self.db:
            self.db.execute("UPDATE portfolio_repos SET result = ?, updated_at = ? WHERE portfolio = ? AND repo = ?",
                            (result.model_dump_json(exclude={"shipped"}), _now(), portfolio_id, result.repo))
