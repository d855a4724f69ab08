"""The runs list (`/runs`, `/api/runs`, `/api/portfolios`): filtered, sorted, grouped by portfolio and paged in SQL.

A portfolio's runs are one entry of the list: the group sorts by its runs'
totals (earliest start, wall time, summed tokens and cost, the portfolio's
status) and pages as one row; its runs are listed under it in the same order.
"""

from __future__ import annotations

import sqlite3
from typing import Any, Literal
from urllib.parse import urlencode

from pydantic import BaseModel, Field

from planner.errors import PlannerError
from planner.ui.catalog import Catalog
from planner.ui.home import Home, RunRow

PAGE_SIZE = 50
FILTERS = ("status", "task_class", "repo", "kind")
# sort name → the column of the `rows` view (and of a portfolio group) it orders by
SORTS = {"started": "created_at", "duration": "duration_s", "tokens": "tokens", "cost": "cost_usd",
         "status": "status"}
Sort = Literal["started", "duration", "tokens", "cost", "status"]
COLUMNS = ("id", "kind", "task_class", "status", "repo", "created_at", "commit_id", "items", "tokens", "max_tokens",
           "llm_calls", "cost_usd", "duration_s", "complete")
# one portfolio's runs as one entry, in the columns of a run's line: wall time from its first start to its last
# update; cost unknown when any run's is (a partial sum would read as the whole cost). `f`: the matching runs
# of portfolios (few: the join starts from the portfolio links, not from every run)
_GROUP = """SELECT f.portfolio AS group_id, f.portfolio, NULL, NULL, p.status, NULL, MIN(f.created_at), NULL, NULL,
    SUM(f.tokens), NULL, NULL,
    CASE WHEN SUM(f.llm_calls > 0 AND f.cost_usd IS NULL) > 0 THEN NULL ELSE SUM(f.cost_usd) END,
    CASE WHEN COUNT(f.duration_s) = COUNT(*)
         THEN round((julianday(MAX(f.updated_at)) - julianday(MIN(f.created_at))) * 86400, 3) END, NULL
FROM (SELECT * FROM rows WHERE {where} AND portfolio IS NOT NULL) f JOIN portfolios p ON p.id = f.portfolio
GROUP BY f.portfolio"""


class BadQuery(PlannerError):
    """A query parameter out of its range (a 400 page with one line)."""


class RunFilters(BaseModel):
    status: str | None = None
    task_class: str | None = None
    repo: str | None = None
    kind: str | None = None
    sort: Sort = "started"
    order: Literal["asc", "desc"] = "desc"
    flat: bool = False  # True: every run on its own line, portfolios not grouped
    page: int = Field(default=1, ge=1)

    @classmethod
    def parse(cls, sort: str | None = None, order: str | None = None, **values: Any) -> RunFilters:
        """From query parameters; an unknown sort or order is one clear line."""
        if sort and sort not in SORTS:
            raise BadQuery(f"sort={sort!r}: expected one of {', '.join(SORTS)}")
        if order and order not in ("asc", "desc"):
            raise BadQuery(f"order={order!r}: expected asc or desc")
        return cls.model_validate({"sort": sort or "started", "order": order or "desc", **values})

    def active(self) -> list[tuple[str, str]]:
        return [(f, value) for f in FILTERS if (value := getattr(self, f))]

    def where(self) -> tuple[str, tuple[str, ...]]:
        active = self.active()
        sql = " AND ".join(f"{name} = ?" for name, _ in active) or "1"  # names from FILTERS only
        return sql, tuple(value for _, value in active)

    def order_by(self) -> str:
        """ORDER BY for `rows` and for groups: empty values last; ties newest first (as `planner runs list`)."""
        direction = self.order.upper()
        if self.sort == "started":
            return f"created_at {direction}, id {direction}"
        column = SORTS[self.sort]
        if direction == "DESC":  # SQLite sorts NULL lowest, so last here: an index on the column can serve it
            return f"{column} DESC, created_at DESC, id DESC"
        return f"({column} IS NULL), {column} {direction}, created_at DESC, id DESC"

    def query(self, **changes: Any) -> str:
        """The query string of these filters with `changes` (for pagination and sort links)."""
        defaults = {"page": 1, "sort": "started", "order": "desc", "flat": False}
        values = {**self.model_dump(), **changes}
        return urlencode({k: int(v) if isinstance(v, bool) else v for k, v in values.items()
                          if v and defaults.get(k) != v})

    def sort_link(self, sort: str) -> str:
        """The link a column header sorts by: that column descending, or flipped when it is the current one."""
        flipped = "asc" if self.sort == sort and self.order == "desc" else "desc"
        return self.query(sort=sort, order=flipped, page=1)


class Group(BaseModel):
    """A portfolio's runs on this page, with totals by status over its runs that match the filters."""

    id: str
    task_class: str | None
    status: str
    repos: int
    by_status: dict[str, int]
    rows: list[RunRow]
    tokens: int | None = None
    cost_usd: float | None = None
    duration_s: float | None = None
    created_at: str | None = None


class Entry(BaseModel):
    row: RunRow | None = None
    group: Group | None = None


class RunsPage(BaseModel):
    entries: list[Entry]
    total: int  # runs matching the filters
    page: int
    pages: int
    filters: RunFilters
    options: dict[str, list[str]]
    grouped: bool


def _select(db: sqlite3.Connection, filters: RunFilters, extra: str = "", args: tuple[Any, ...] = (),
            limit: str = "") -> list[dict[str, Any]]:
    where, values = filters.where()
    sql = f"SELECT {', '.join(COLUMNS)} FROM rows WHERE {where}{extra} ORDER BY {filters.order_by()}{limit}"
    return [dict(zip(COLUMNS, row, strict=True)) for row in db.execute(sql, values + args)]


def _run_row(home: Home, data: dict[str, Any]) -> RunRow:
    return home.run_row({**data, "commit": data.pop("commit_id")})


def _group(db: sqlite3.Connection, home: Home, filters: RunFilters, head: dict[str, Any]) -> Group:
    portfolio = head["id"]
    where, values = filters.where()
    counts = db.execute(f"SELECT status, COUNT(*) FROM rows WHERE {where} AND portfolio = ? GROUP BY status "
                        "ORDER BY status", (*values, portfolio)).fetchall()
    task_class, repos = db.execute("SELECT task_class, repos FROM portfolios WHERE id = ?", (portfolio,)).fetchone()
    rows = [_run_row(home, r) for r in _select(db, filters, " AND portfolio = ?", (portfolio,))]
    return Group(id=portfolio, task_class=task_class, status=head["status"], repos=repos, by_status=dict(counts),
                 rows=rows, tokens=head["tokens"], cost_usd=head["cost_usd"], duration_s=head["duration_s"],
                 created_at=head["created_at"])


def _entries(db: sqlite3.Connection, home: Home, filters: RunFilters, grouped: bool,
             page_size: int) -> tuple[list[Entry], int, int, int]:
    """(entries of the page, runs matching, page, pages): the page counts a portfolio as one entry."""
    where, values = filters.where()
    columns = ", ".join(COLUMNS)
    matching = db.execute(f"SELECT COUNT(*) FROM rows WHERE {where}", values).fetchone()[0]
    lone = f"FROM rows WHERE {where} AND portfolio IS NULL"  # (grouped) runs outside a portfolio
    groups = _GROUP.format(where=where)  # (grouped) one entry per portfolio
    count = db.execute(f"SELECT (SELECT COUNT(*) {lone}) + (SELECT COUNT(*) FROM ({groups}))",
                       values * 2).fetchone()[0] if grouped else matching
    pages = max(1, -(-count // page_size))
    page = min(filters.page, pages)
    if grouped:  # a page needs at most its offset + size of the lone runs, in order (by an index when sorting
        # by start), not every run sorted
        source = (f"SELECT * FROM (SELECT * FROM (SELECT NULL AS group_id, {columns} {lone} "
                  f"ORDER BY {filters.order_by()} LIMIT {page * page_size}) UNION ALL {groups})")
        values *= 2
    else:  # one query over the table: sorting by start uses its index
        source = f"SELECT NULL AS group_id, {columns} FROM rows WHERE {where}"
    heads = db.execute(f"{source} ORDER BY {filters.order_by()} LIMIT ? OFFSET ?",
                       (*values, page_size, (page - 1) * page_size)).fetchall()
    entries = []
    for group_id, *row in heads:
        data = dict(zip(COLUMNS, row, strict=True))
        entries.append(Entry(group=_group(db, home, filters, data)) if group_id is not None
                       else Entry(row=_run_row(home, data)))
    return entries, matching, page, pages


def runs_page(home: Home, catalog: Catalog, filters: RunFilters) -> RunsPage:
    """One page of PAGE_SIZE entries; only the shown rows are enriched from their records (older index lines)."""
    options = catalog.options(FILTERS)

    def read(db: sqlite3.Connection) -> RunsPage:
        has_portfolios = db.execute("SELECT 1 FROM rows WHERE portfolio IS NOT NULL LIMIT 1").fetchone() is not None
        grouped = has_portfolios and not filters.flat
        entries, total, page, pages = _entries(db, home, filters, grouped, PAGE_SIZE)
        return RunsPage(entries=entries, total=total, page=page, pages=pages, grouped=has_portfolios,
                        filters=filters.model_copy(update={"page": page}), options=options)

    return catalog.read(read)


def api_rows(catalog: Catalog, filters: RunFilters, cli_order: bool) -> list[dict[str, Any]]:
    """`planner runs list --json` rows (oldest first, as the CLI prints them), or in the asked sort order."""
    keys = ("id", "kind", "task_class", "status", "repo", "created_at")
    where, values = filters.where()
    order = "created_at, id" if cli_order else filters.order_by()
    sql = f"SELECT {', '.join(keys)} FROM rows WHERE {where} ORDER BY {order}"
    return [dict(zip(keys, row, strict=True)) for row in catalog.read(lambda db: db.execute(sql, values).fetchall())]


def api_portfolios(catalog: Catalog) -> list[dict[str, Any]]:
    """`planner portfolio list --json` rows, each with its runs (oldest first) and their totals by status."""
    def read(db: sqlite3.Connection) -> list[dict[str, Any]]:
        found = []
        for pid, task_class, status, created, repos, done in db.execute(
                "SELECT id, task_class, status, created_at, repos, done FROM portfolios ORDER BY created_at, id"
        ).fetchall():
            runs = db.execute("SELECT id, status FROM rows WHERE portfolio = ? ORDER BY created_at, id",
                              (pid,)).fetchall()
            by_status: dict[str, int] = {}
            for _, run_status in runs:
                by_status[run_status] = by_status.get(run_status, 0) + 1
            found.append({"id": pid, "task_class": task_class, "status": status, "created_at": created,
                          "repos": repos, "done": done, "runs": [r[0] for r in runs],
                          "by_status": dict(sorted(by_status.items()))})
        return found

    return catalog.read(read)
