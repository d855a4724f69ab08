"""What `planner portfolio status` and `report` show: per repository and totals."""

from __future__ import annotations

from collections import Counter
from typing import Any

from planner.portfolio.model import Entry, Spec
from planner.portfolio.outcomes import groups, worst
from planner.portfolio.store import PortfolioStore


def row(entry: Entry, full: bool) -> dict[str, Any]:
    result = entry.result
    data: dict[str, Any] = {"repo": entry.repo, "status": entry.status, "commit": entry.commit,
                            "attempts": entry.attempts}
    if result is None:
        return data
    data.update({"run_id": result.run_id, "exit_code": result.exit_code, "findings": result.findings,
                 "items": result.items, "versions": result.versions, "items_detail": result.items_detail,
                 "advisories": result.advisories,
                 "branch": result.branch,
                 "error": result.error, "apply_error": result.apply_error, "worker": result.worker,
                 "seconds": result.seconds})
    if full:
        data["patch"] = result.patch
    return data


def summary(store: PortfolioStore, portfolio_id: str, full: bool = False) -> dict[str, Any]:
    spec: Spec = store.spec(portfolio_id)
    status, note = store.state(portfolio_id)
    entries = store.entries(portfolio_id)
    done = [e for e in entries if e.result is not None]
    by_status = Counter(e.status for e in entries)
    rows = [row(e, full) for e in entries]
    outcome = worst(e.status for e in entries)
    return {"id": spec.id, "task_class": spec.task_class,
            # finished: its worst outcome (a fleet where every repository is blocked is not "finished")
            "status": outcome if status == "finished" and outcome else status, "state": status, "note": note,
            "engine": spec.engine, "apply": spec.apply, "inputs": spec.inputs, "repos": len(entries), "done": len(done),
            "columns": _titles(rows), "groups": groups(rows),
            # what the runs were checked against, each source once (a portfolio's runs share one, unless re-run)
            "advisories": sorted({str(r["advisories"]) for r in rows if r.get("advisories")}),
            "totals": {"by_status": dict(sorted(by_status.items())),
                       "by_task_class": {spec.task_class: dict(sorted(by_status.items()))},
                       "findings": sum(e.result.findings for e in done if e.result),
                       "patches": sum(1 for e in done if e.result and e.result.patch),
                       "branches": sum(1 for e in done if e.result and e.result.branch)},
            "repositories": rows}


def _titles(rows: list[dict[str, Any]]) -> list[str]:
    """The task class's report columns, as its runs recorded them (in declared order)."""
    for data in rows:
        for item in data.get("items_detail") or []:
            if item.get("columns"):
                return list(item["columns"])
    return []


def exit_code(report: dict[str, Any]) -> int:
    """0 when every repository succeeded (or needed no change); 5 when any failed; else the first other code."""
    rows = report["repositories"]
    if report["done"] < report["repos"]:
        return 6 if report["status"] == "paused" else 5
    codes = [r.get("exit_code") or 0 for r in rows]
    if any(r["status"] in ("failed", "error") for r in rows):
        return 5
    return next((c for c in codes if c), 0)
