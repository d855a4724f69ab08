"""The recipe_match stage's part for a TCCM's declared recipes: run them, make the plan, say why not.

Every recipe runs in order; the plan holds all their edits and names each recipe that changed something
(name@version), with a row per recipe (files, matches, time) for the report and provenance. Matches of
ast-grep rules that have no `fix:` are findings: each becomes a Decline at its file:line, so the item is
blocked on them (or an LLM, when configured, gets to plan them) instead of the run passing them by.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from planner.bundle.view import open_view
from planner.chain.recipes import Decline
from planner.chain.work import WorkItem
from planner.patch.plan import Plan
from planner.recipes import engine
from planner.recipes.edits import file_edits
from planner.tccm.model import TCCM
from repocontext.store import RepoContextStore


def scope_of(item: WorkItem) -> tuple[set[str] | None, int | None]:
    """(files, line) a YAML work item narrows the recipes to; (None, None) for the whole-task item."""
    if item.data.get("source") != "work_items":
        return None, None
    file, line = item.data.get("file"), item.data.get("line")
    files = {file} if isinstance(file, str) else set(item.data.get("files") or ())
    return files, (line if isinstance(line, int) else None)


def _where(changes: list[dict[str, Any]]) -> str:
    """`a.py` lines 3, 7; `b.py` line 2 — every change's place, file by file (a command's: the file)."""
    by_file: dict[str, list[int]] = {}
    for change in changes:
        by_file.setdefault(change["file"], [])
        if change["line"] is not None:
            by_file[change["file"]].append(change["line"])
    parts = []
    for path, lines in by_file.items():
        numbers = ", ".join(map(str, lines))
        parts.append(f"`{path}`" + (f" line{'s' if len(lines) > 1 else ''} {numbers}" if lines else ""))
    return "; ".join(parts)


def _steps(rows: list[engine.Row]) -> list[str]:
    """One step per recipe, then one line per rule that changed something: its id (and its own `message:`),
    how many changes, and each at file and line, so the rules' lines add up to the recipe's count."""
    steps = []
    for row in rows:
        did = (f"{row.matches} change(s) in {len(row.changed)} file(s)" if row.changed
               else "no change")
        extra = f"; {len(row.findings)} finding(s) without a fix" if row.findings else ""
        lines = [f"{row.id} ({row.kind}): {row.files} file(s) considered, {did}{extra}"]
        by_rule: dict[str, list[dict[str, Any]]] = {}
        for change in row.changes:
            by_rule.setdefault(change["rule"], []).append(change)
        for rule, changes in by_rule.items():
            message = changes[0].get("message") or ""
            said = f" ({message})" if message else ""
            lines.append(f"   - `{rule}`{said}: {len(changes)} change(s): {_where(changes)}")
        steps.append("\n".join(lines))
    return steps


def _edits(result: engine.Result, line: int | None) -> list[Any]:
    edits = []
    for path in result.changed:
        reason = "recipe " + ", ".join(r.id for r in result.rows if path in r.changed)
        found = file_edits(path, result.before[path], result.after[path], reason, shifted=line is None)
        if line is not None:  # one match's item: only the block that holds its line (others are their own items)
            found = [e for e in found if e.line is not None and e.line <= line < e.line + max(e.old.count("\n"), 1)]
            found = [e.model_copy(update={"line": None}) if result.before[path].count(e.old) == 1 else e
                     for e in found]
        edits += found
    return edits


def run(tccm: TCCM, repo: str, home: Path, inputs: dict[str, str], item: WorkItem,
        network: bool) -> tuple[Plan | None, list[Decline], dict[str, Any]]:
    """(plan or None, declines, the stage's record). Raises engine.RecipeError when a recipe cannot run."""
    view = open_view(Path(repo), RepoContextStore(home))
    scope, line = scope_of(item)
    result = engine.run(tccm.recipes, Path(repo), view, inputs, scope, network)
    if line is not None:  # one match's item: only the changes on its line are this item's
        for row in result.rows:
            row.changes = [c for c in row.changes if c["line"] in (None, line)]
            row.matches = len(row.changes)
    rows = [asdict(r) for r in result.rows]
    # the plan (and so the report and patch) is the same on every run; times go to the stage record only
    steady = [{k: v for k, v in row.items() if k != "seconds"} for row in rows]
    declines = [Decline(reason=f"{r.id}: rule {f['rule']}" + (f" ({f['message']})" if f.get("message") else "")
                        + f" matches `{f['text']}` (no fix: needs a hand or an LLM)",
                        file=f["file"], line=f["line"]) for r in result.rows for f in r.findings
                if line is None or f["line"] == line]
    edits = _edits(result, line)
    if not edits:
        return None, declines, {"recipes": rows}
    used = [r.id for r in result.rows if r.changed]
    notes = [f"{r.id}: {n}" for r in result.rows for n in r.notes]
    changes = sum(r.matches for r in result.rows)
    plan = Plan(summary=f"recipes {', '.join(used)}: {changes} change(s) in {len({e.file for e in edits})} file(s), "
                        f"patched as {len(edits)} edit(s) (changes on neighbouring lines share one)",
                steps=_steps(result.rows), edits=edits, notes=notes, source="recipe",
                recipe=", ".join(used), data={"recipes": steady})
    return plan, declines, {"recipes": rows}
