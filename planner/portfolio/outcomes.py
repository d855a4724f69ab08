"""A fleet's outcomes as an operator reads them: each work item with the task class's own columns and the one
reason that needs a person (the policy rule and how to allow it, the regeneration command, the blocker, the
saved prompt), and repositories grouped by outcome and reason, worst first."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from planner.run.state import SEVERITY as ITEM_SEVERITY

# worst first: what needs a person before what is done (and a change made before nothing to do); not_evaluated
# (found nothing, but did not read everything) is never green: above succeeded and nothing-to-do
SEVERITY = ("error", *ITEM_SEVERITY, "interrupted", "running", "queued", "pending", "not_evaluated", "succeeded",
            "not_applicable", "no_changes")


def rank(status: str) -> int:
    return SEVERITY.index(status) if status in SEVERITY else 0  # an unknown status counts as the worst


def worst(statuses: Iterable[str]) -> str | None:
    found = sorted(set(statuses), key=rank)
    return found[0] if found else None


def _value(item: Mapping[str, Any], path: str) -> str:
    node: Any = item
    for part in path.split("."):
        node = node.get(part) if isinstance(node, Mapping) else None
    if isinstance(node, list):
        return ", ".join(str(v) for v in node)
    return "" if node is None else str(node)


def _reason(outcome: Mapping[str, Any]) -> tuple[str, str | None, str | None]:
    """(reason, how to act on it, where) for one item outcome."""
    blockers = outcome.get("blockers") or []
    if blockers:
        first = blockers[0]
        where = f"{first['file']}:{first['line']}" if first.get("file") and first.get("line") else first.get("file")
        more = f" (+{len(blockers) - 1} more)" if len(blockers) > 1 else ""
        return f"{first.get('kind', 'blocker')}: {first.get('message', '')}{more}", first.get("fix"), where
    status = outcome.get("status")
    if status == "needs_llm":
        return "no recipe or solved example applies; needs a model or a plan", outcome.get("prompt_path"), None
    if outcome.get("error"):
        return str(outcome["error"]).splitlines()[0][:300], None, None
    if status == "not_applicable" and outcome.get("notes"):  # why the class has nothing to do here
        return str(outcome["notes"][0]).splitlines()[0][:300], None, None
    return "", None, None


def item_rows(outcomes: Sequence[Mapping[str, Any]], columns: Sequence[Mapping[str, str]],
              prompt_paths: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """Each work item of a run: id, status, the class's columns, and its reason / fix / where."""
    rows = []
    for outcome in outcomes:
        item = outcome.get("item") or {}
        view = {**outcome, "prompt_path": (prompt_paths or {}).get(str(item.get("id")))}
        reason, fix, where = _reason(view)
        rows.append({"id": item.get("id"), "status": outcome.get("status"), "reason": reason, "fix": fix,
                     "where": where, "columns": {c["title"]: _value(item, c["value"]) for c in columns}})
    return rows


def coverage_rows(coverage: Mapping[str, Any] | None, status: str) -> list[dict[str, Any]]:
    """Rows for what a run did not read (planner/advisories/source.py Coverage), beside its items: one for a
    run with no advisory source, one per manifest or lockfile not evaluated (grouped by its ecosystem)."""
    if not coverage:
        return []
    rows: list[dict[str, Any]] = []
    if (coverage.get("advisories") or {}).get("kind") == "none" and status == "not_evaluated":
        rows.append({"id": None, "status": "not_evaluated", "reason": "no advisory source",
                     "fix": "planner advisories sync (or --advisories PATH)", "where": None, "columns": {}})
    for line in coverage.get("not_evaluated") or ():
        path, _, why = str(line).removeprefix("not evaluated: ").rpartition(" (")
        rows.append({"id": None, "status": "not_evaluated", "reason": why.rstrip(")") or str(line), "fix": None,
                     "where": path or None, "columns": {}})
    return rows


def groups(repositories: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Repositories grouped by (outcome, reason), worst outcome first; a repository with items of several
    outcomes appears under each. Each group lists its repositories with their run ids and items."""
    found: dict[tuple[str, str, str | None], dict[str, Any]] = {}
    for repo in repositories:
        items = repo.get("items_detail") or []
        if not items:  # no item list (an error before the run, or an older record): the run's own outcome
            items = [{"id": None, "status": repo["status"], "reason": repo.get("error") or "", "fix": None,
                      "where": None, "columns": {}}]
        for item in items:
            key = (str(item["status"]), item["reason"], item["fix"])
            group = found.setdefault(key, {"status": key[0], "reason": key[1], "fix": key[2], "repositories": []})
            group["repositories"].append({"repo": repo["repo"], "run_id": repo.get("run_id"), "item": item["id"],
                                          "where": item["where"], "columns": item["columns"],
                                          "advisories": repo.get("advisories")})
    return sorted(found.values(), key=lambda g: (rank(g["status"]), -len(g["repositories"]), g["reason"]))


def to_csv(repositories: Sequence[Mapping[str, Any]], titles: Sequence[str]) -> str:
    """One row per work item (per repository when it has none): what a spreadsheet or a ticket import takes."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    # the run's advisory source is `advisory_source`: a task class may title one of its own columns "advisories"
    writer.writerow(["repository", "run_id", "repository_status", "item", "item_status", *titles, "reason", "fix",
                     "where", "advisory_source"])
    for repo in repositories:
        items = repo.get("items_detail") or [{"id": "", "status": repo["status"], "columns": {},
                                              "reason": repo.get("error") or "", "fix": "", "where": ""}]
        for item in items:
            writer.writerow([repo["repo"], repo.get("run_id") or "", repo["status"], item["id"] or "",
                             item["status"], *[item["columns"].get(t, "") for t in titles], item["reason"],
                             item["fix"] or "", item["where"] or "", repo.get("advisories") or ""])
    return out.getvalue()
